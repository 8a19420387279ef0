"""The ``sage-memory`` command line, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sage_memory.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def base(tmp_path: Path) -> list[str]:
    return ["--path", str(tmp_path / "mem"), "--user", "alice", "--embedder", "hashing"]


def test_add_search_get_history_delete(capsys: pytest.CaptureFixture[str], base: list[str]) -> None:
    code, out, _ = run(capsys, *base, "add", "Alice lives in Paris", "--json")
    assert code == 0
    added = json.loads(out)
    mid = added["memory_id"]
    code, out, _ = run(capsys, *base, "search", "where does Alice live", "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) >= {"query", "memories", "nodes", "edges", "context", "took_ms"}
    assert data["memories"][0]["id"] == mid
    assert set(data["memories"][0]) >= {"id", "text", "score", "timestamp", "channels", "why"}
    code, out, _ = run(capsys, *base, "get", mid)
    assert "Alice lives in Paris" in out
    code, out, _ = run(capsys, *base, "history", mid, "--json")
    assert [c["op"] for c in json.loads(out)] == ["insert"]
    code, out, _ = run(capsys, *base, "delete", mid)
    assert code == 0
    code, _, err = run(capsys, *base, "get", mid)
    assert code == 2 and "no memory with id" in err


def test_import_jsonl_and_text_then_stats_and_export(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    jsonl = tmp_path / "notes.jsonl"
    jsonl.write_text(
        "\n".join(json.dumps({"text": f"note number {i}", "metadata": {"n": i}}) for i in range(12))
    )
    code, out, _ = run(capsys, *base, "import", str(jsonl), "--json")
    assert code == 0 and json.loads(out)["imported"] == 12
    txt = tmp_path / "notes.txt"
    txt.write_text("first line\n\nsecond line\n")
    code, out, _ = run(capsys, *base, "import", str(txt), "--quiet")
    assert "imported 2" in out
    code, out, _ = run(capsys, *base, "stats", "--json")
    assert json.loads(out)["memories"] == 14
    export = tmp_path / "out.jsonl"
    code, out, _ = run(capsys, *base, "export", str(export))
    assert code == 0 and export.read_text().count("\n") == 15
    code, out, _ = run(
        capsys, "--path", str(tmp_path / "copy"), "--embedder", "hashing", "load", str(export)
    )
    assert code == 0 and "14 memories" in out


def test_errors_exit_2_with_a_message(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, *base, "add", "   ")
    assert code == 2 and err.startswith("error:") and "empty" in err
    code, _, err = run(capsys, *base, "import", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "does not exist" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{not json\n')
    code, _, err = run(capsys, *base, "import", str(bad), "--strict")
    assert code == 2 and "bad.jsonl:2" in err
    code, _, err = run(capsys, *base, "search", "x", "--as-of", "yesterday")
    assert code == 2 and "ISO-8601" in err


def test_console_script_runs_in_a_fresh_process(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("sage-memory")
    if not exe.exists():
        pytest.skip("sage-memory console script not installed (pip install -e .)")
    env = {**os.environ, "SAGE_MEMORY_PATH": str(tmp_path / "m"), "SAGE_EMBEDDER": "hashing"}
    add = subprocess.run(
        [str(exe), "--user", "bob", "add", "Bob lives in Oslo", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    mid = json.loads(add.stdout)["memory_id"]
    found = subprocess.run(
        [str(exe), "--user", "bob", "search", "Oslo", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert json.loads(found.stdout)["memories"][0]["id"] == mid


def test_plan_and_path_answer_structure_questions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = ["--path", str(tmp_path / "m"), "--user", "dev"]  # the default MiniLM embedder
    story = (
        "I want to build a personal blog. First I'll design the database, then build the "
        "backend API, and finally the frontend. The backend will use Python's FastAPI."
    )
    assert run(capsys, *base, "add", story)[0] == 0
    code, out, _ = run(capsys, *base, "plan", "next", "personal blog", "--json")
    steps = [s["name"] for s in json.loads(out)["steps"]]
    assert code == 0
    assert steps == ["design the database", "build the backend API", "build the frontend"]
    code, out, _ = run(capsys, *base, "plan", "needs", "backend API")
    assert "FastAPI" in out
    code, out, _ = run(capsys, *base, "path", "design the database", "FastAPI", "--json")
    path = json.loads(out)["path"]
    # "the backend will use FastAPI": a requirement or a use (docs/relations.md), either way
    # the path runs from the first task through the next one to the framework
    assert [p["relation"] for p in path] in (["PRECEDES", "REQUIRES"], ["PRECEDES", "USES"])
    code, _, err = run(capsys, *base, "plan", "next", "no such project anywhere")
    assert code == 2 and "no node" in err


def test_history_names_the_batch_that_undo_takes(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    """The README's `history <id> | undo <batch-id>`: the batch id must be in the plain output."""
    code, out, _ = run(capsys, *base, "add", "Bob lives in Rome", "--json")
    mid = json.loads(out)["memory_id"]
    code, out, _ = run(capsys, *base, "history", mid[:8])
    assert code == 0
    words = out.split()
    batch = words[words.index("batch") + 1]
    code, out, err = run(capsys, *base, "undo", batch)
    assert code == 0, err
    code, out, _ = run(capsys, *base, "stats", "--json")
    assert json.loads(out)["memories"] == 0 and json.loads(out)["edges"] == 0
    code, _, err = run(capsys, *base, "explore", "Bob")
    assert code == 2


def test_undo_of_a_memory_insert_alone_keeps_no_fact_citing_it(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    """Undoing only the memory's insert used to leave its extracted fact in search, citing a
    memory that no longer existed; now it is refused and points to the batch."""
    code, out, _ = run(capsys, *base, "add", "Bob lives in Rome", "--json")
    mid = json.loads(out)["memory_id"]
    code, out, _ = run(capsys, *base, "history", mid, "--json")
    (change,) = json.loads(out)
    code, _, err = run(capsys, *base, "undo", change["id"])
    assert code == 2 and change["batch_id"] in err
    code, out, _ = run(capsys, *base, "search", "where does Bob live", "--json")
    assert [m["id"] for m in json.loads(out)["memories"]] == [mid]
    code, out, err = run(capsys, *base, "undo", change["batch_id"])
    assert code == 0, err
    code, out, _ = run(capsys, *base, "search", "where does Bob live", "--json")
    found = json.loads(out)
    assert found["memories"] == [] and found["edges"] == [] and "Rome" not in found["context"]


def test_a_memory_of_another_embedder_names_the_flag_that_opens_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A memory made with embedder="hashing" (the README's server-mode example) opened by the
    CLI with another embedder: the error must say the CLI's way to open it."""
    folder = ["--path", str(tmp_path / "mem"), "--user", "alice"]
    assert main([*folder, "--embedder", "hashing", "add", "Alice moved to Berlin"]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, *folder, "--embedder", "hashing:64", "search", "Berlin")
    assert code == 2 and "--embedder hashing-256" in err
    code, out, _ = run(capsys, *folder, "--embedder", "hashing-256", "search", "Berlin")
    assert code == 0 and "Alice moved to Berlin" in out
