"""The command line's focus, kind and rerank options (``search --focus/--kind/--rerank``,
``add --kind``), as a user runs them."""

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
    return ["--path", str(tmp_path / "mem"), "--user", "ann", "--embedder", "hashing"]


def test_search_focus_and_kind(capsys: pytest.CaptureFixture[str], base: list[str]) -> None:
    for text in (
        "Project Kestrel is a recipe website.",
        "Project Osprey is a recipe website.",
        "In Kestrel, the release step waits for the translation review.",
        "In Osprey, the release step waits for the load test.",
    ):
        assert run(capsys, *base, "add", text)[0] == 0
    code, out, _ = run(
        capsys, *base, "add", "--kind", "experience", "We ran the load test with k6.", "--json"
    )  # fmt: skip
    assert code == 0
    exp_id = json.loads(out)["memory_id"]
    for project, detail in (("Project Kestrel", "translation"), ("Project Osprey", "load test")):
        code, out, _ = run(capsys, *base, "search", "release step", "--focus", project, "--json")
        data = json.loads(out)
        assert code == 0 and data["focus"] == [project] and data["rerank"] is None
        assert detail in data["memories"][0]["text"]
    code, out, _ = run(capsys, *base, "search", "load test", "--kind", "experience", "--json")
    data = json.loads(out)
    assert [m["id"] for m in data["memories"]] == [exp_id]
    assert data["memories"][0]["kind"] == "experience"
    with pytest.raises(SystemExit):  # argparse names the choices
        main([*base, "search", "x", "--kind", "facts"])
    assert "invalid choice" in capsys.readouterr().err
