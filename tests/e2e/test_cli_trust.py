"""Issue 12, points 5-8: the command line as a newcomer meets it (each test failed before)."""

from __future__ import annotations

import json
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


# -- 5. imports keep the good lines ----------------------------------------------------------
def test_import_skips_bad_json_and_bad_bytes_with_line_numbers(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_bytes(
        b'{"text": "Alice likes tea"}\n'
        b"{not json\n"
        b'{"text": "caf\xe9 latte"}\n'  # latin-1, not UTF-8
        b'{"note": "no text key"}\n'
        b'"Bob likes coffee"\n'
    )
    code, out, err = run(capsys, *base, "import", str(f), "--quiet", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["imported"] == 2
    assert [s["line"] for s in data["skipped"]] == [2, 3, 4]
    assert f"{f}:2: not JSON" in err and f"{f}:3: not UTF-8" in err and f"{f}:4:" in err
    code, out, _ = run(capsys, *base, "search", "tea", "--json")
    assert {m["text"] for m in json.loads(out)["memories"]} == {
        "Alice likes tea",
        "Bob likes coffee",
    }


def test_import_strict_stops_at_the_first_bad_line(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    f = tmp_path / "notes.txt"
    f.write_bytes(b"good line\nbad \xff\xfe line\nanother\n")
    code, out, err = run(capsys, *base, "import", str(f), "--quiet", "--strict")
    assert code == 2 and err.startswith("error:") and f"{f}:2: not UTF-8" in err
    assert "Traceback" not in err
    code, out, _ = run(capsys, *base, "import", str(f), "--quiet")
    assert code == 0 and "imported 2 memories; skipped 1 bad line(s): 2" in out


def test_import_of_a_file_that_is_not_utf8_at_all_is_an_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    f = tmp_path / "utf16.txt"
    f.write_bytes("Alice lives in Paris\n".encode("utf-16"))
    code, _, err = run(capsys, *base, "import", str(f), "--quiet")
    assert code == 2 and "\nerror: " in err and "no line could be imported" in err


def test_import_of_an_export_suggests_load(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    run(capsys, *base, "add", "Alice lives in Paris")
    dump = tmp_path / "dump.jsonl"
    assert run(capsys, *base, "export", str(dump))[0] == 0
    code, _, err = run(capsys, *base, "import", str(dump), "--quiet")
    assert code == 2 and "sage-memory export" in err and f"load {dump}" in err


def test_import_help_documents_the_record_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    out = capsys.readouterr().out
    assert '"text"' in out and '"timestamp"' in out and "--strict" in out and "load" in out
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert '{"text": "...", "timestamp": ' in readme and "--strict" in readme


# -- 6. ids --------------------------------------------------------------------------------------
def test_printed_id_prefixes_are_accepted_back(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    run(capsys, *base, "add", "Alice lives in Paris")
    code, out, _ = run(capsys, *base, "search", "Paris")
    short = out.split("[")[1][:8]  # the 8-character id search prints
    code, out, _ = run(capsys, *base, "get", short)
    assert code == 0 and "Alice lives in Paris" in out
    code, out, _ = run(capsys, *base, "history", short)
    assert code == 0 and "insert" in out
    code, out, _ = run(capsys, *base, "delete", short)
    assert code == 0
    code, out, _ = run(capsys, *base, "search", "Paris")
    assert "no memories found" in out


def test_ambiguous_prefix_lists_the_candidates(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    ids = [
        json.loads(run(capsys, *base, "add", f"note {i}", "--json")[1])["memory_id"]
        for i in range(40)
    ]
    # 40 random hex ids: some pair shares a first character.
    first = next(c for c in "0123456789abcdef" if sum(i.startswith(c) for i in ids) > 1)
    code, _, err = run(capsys, *base, "get", first)
    assert code == 2 and "ambiguous" in err
    assert all(i in err for i in ids if i.startswith(first))


def test_history_of_an_unknown_id_exits_2(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    run(capsys, *base, "add", "Alice lives in Paris")
    code, _, err = run(capsys, *base, "history", "0" * 32)
    assert code == 2 and err.startswith("error:")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from sage_memory import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and __version__ in capsys.readouterr().out


# -- 7. no silent defaults -----------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["search", "x"], ["stats"], ["get", "abc"], ["explore", "x"]])
def test_read_commands_on_a_missing_folder_say_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    folder = tmp_path / "typo"
    code, _, err = run(capsys, "--path", str(folder), "--embedder", "hashing", *argv)
    assert code == 2 and "no memory folder" in err
    assert not folder.exists()


def test_default_scope_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["--path", str(tmp_path / "m"), "--embedder", "hashing"]
    code, _, err = run(capsys, *argv, "add", "Alice lives in Paris")
    assert code == 0 and "using user 'default'" in err
    code, _, err = run(capsys, *argv, "search", "Paris", "--json")
    assert code == 0 and "using user 'default'" in err


def test_undo_refusal_names_the_cli_flag(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    run(capsys, *base, "add", "Alice lives in Paris", "--timestamp", "2026-01-01")
    node = json.loads(run(capsys, *base, "explore", "Alice", "--json")[1])["start"][0]
    first = json.loads(run(capsys, *base, "history", node, "--json")[1])[0]["batch_id"]
    run(capsys, *base, "add", "Alice works at Acme", "--timestamp", "2026-02-01")
    code, _, err = run(capsys, *base, "undo", first[:8])
    assert code == 2 and "--force" in err and "force=True" not in err


def test_delete_all_needs_yes(capsys: pytest.CaptureFixture[str], base: list[str]) -> None:
    run(capsys, *base, "add", "Alice lives in Paris")
    code, _, err = run(capsys, *base, "delete", "all")
    assert code == 2 and "--yes" in err and "1 memories" in err
    assert "Alice" in run(capsys, *base, "search", "Paris")[1]
    code, out, _ = run(capsys, *base, "delete", "all", "--yes")
    assert code == 0 and "deleted 1" in out


# -- 8. search output ----------------------------------------------------------------------------
def test_plain_search_marks_memories_whose_facts_expired(
    capsys: pytest.CaptureFixture[str], base: list[str]
) -> None:
    run(capsys, *base, "add", "Alice lives in Paris", "--timestamp", "2026-01-01")
    run(capsys, *base, "add", "Alice moved to Berlin", "--timestamp", "2026-06-01")
    out = run(capsys, *base, "search", "where does alice live?")[1]
    lines = {line.split("  ")[1]: line for line in out.splitlines()}
    assert "(facts no longer hold)" in lines["Alice lives in Paris"]
    assert "(facts no longer hold)" not in lines["Alice moved to Berlin"]


def test_search_hits_are_sorted_by_the_score_they_print(
    capsys: pytest.CaptureFixture[str], base: list[str], tmp_path: Path
) -> None:
    # Near-duplicates are what MMR reorders: each pair pushes its twin down the list.
    f = tmp_path / "notes.txt"
    f.write_text(
        "\n".join(
            f"Alice {verb} {thing} on day {d}"
            for verb in ("likes", "bought", "lost")
            for thing in ("green tea", "a red bike")
            for d in (1, 2)
        )
    )
    run(capsys, *base, "import", str(f), "--quiet")
    for query in ("what does Alice like?", "green tea", "red bike lost"):
        out = run(capsys, *base, "search", query, "--json")[1]
        scores = [m["score"] for m in json.loads(out)["memories"]]
        assert scores == sorted(scores, reverse=True), query
