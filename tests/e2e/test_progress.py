"""Progress bars: opt-in in the API, on a terminal in the CLI, never with --quiet or a pipe."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.cli import main


def test_api_bars_are_opt_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "all.jsonl"
    with SageMemory(embedder="hashing") as mem:
        mem.add_many(["Alice lives in Paris", "Bob likes tea"], user_id="u")
        mem.export(out)
        mem.evolve(user_id="u")
        assert capsys.readouterr().err == ""
        mem.export(out, progress=True)
        mem.evolve(user_id="u", progress=True)
        err = capsys.readouterr().err
    assert "exporting" in err and "evolving 1 scope(s)" in err
    with SageMemory.load(out, embedder="hashing", progress=True):
        assert "loading" in capsys.readouterr().err


class _Terminal:
    """stderr as a terminal sees it (tqdm writes to it; ``isatty`` says yes)."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_cli_bars_show_on_a_terminal_unless_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--path", str(tmp_path / "m"), "--user", "u", "--embedder", "hashing"]
    notes = tmp_path / "notes.txt"
    notes.write_text("Alice lives in Paris\nBob likes tea\n")
    assert main([*base, "import", str(notes)]) == 0  # stderr is captured: not a terminal
    assert "adding" not in capsys.readouterr().err
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main([*base, "export", str(tmp_path / "a.jsonl")]) == 0
    assert "exporting" in term.text
    term.text = ""
    assert main([*base, "export", str(tmp_path / "b.jsonl"), "--quiet"]) == 0
    assert "exporting" not in term.text


def test_an_index_rebuild_at_open_shows_a_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SageMemory(tmp_path / "m", embedder="hashing") as mem:
        mem.add("Alice lives in Paris", user_id="u")
        copy = mem.backup(tmp_path / "copy")  # a backup's index is rebuilt on first open
    capsys.readouterr()
    with SageMemory(copy, embedder="hashing", progress=True) as again:
        assert again.search("Paris", user_id="u").memories
    assert "checking the index" in capsys.readouterr().err
