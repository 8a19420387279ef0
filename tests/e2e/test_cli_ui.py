"""`sage-memory explore --format svg|html` and `sage-memory demo` then `sage-memory ui`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from sage_memory.cli import main


def test_explore_writes_a_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--path", str(tmp_path / "mem"), "--user", "alice", "--embedder", "hashing"]
    assert (
        main([*base, "add", "I want to build a personal blog. First I'll design the database."])
        == 0
    )
    svg, html = tmp_path / "blog.svg", tmp_path / "blog.html"
    assert main([*base, "explore", "personal blog", "--format", "svg", "-o", str(svg)]) == 0
    assert main([*base, "explore", "personal blog", "--format", "html", "-o", str(html)]) == 0
    assert svg.read_text().startswith("<svg") and "personal blog" in svg.read_text()
    assert "<svg" in html.read_text() and "<table>" in html.read_text()
    capsys.readouterr()
    assert main([*base, "explore", "personal blog", "--format", "svg"]) == 0
    assert capsys.readouterr().out.startswith("<svg")


def test_ui_refuses_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--path", str(tmp_path / "nothing"), "--no-browser"]) == 2
    assert "sage-memory demo" in capsys.readouterr().err
    assert not (tmp_path / "nothing").exists()


@pytest.mark.slow
def test_demo_then_ui_shows_the_blog_plan(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cli = [sys.executable, "-m", "sage_memory.cli", "--embedder", "hashing"]
    folder = tmp_path / "demo"
    demo = subprocess.run(
        [*cli, "demo", "--demo-path", str(folder)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    assert demo.returncode == 0, demo.stderr
    assert f"sage-memory ui --path {folder}" in demo.stdout
    ui = subprocess.Popen(  # the command the demo prints, with no scope named
        [*cli, "ui", "--path", str(folder), "--port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert ui.stdout is not None
        line = ui.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url and "user_id=demo" in line and "read-only" in line, line
        with urllib.request.urlopen(url[0] + "api/graph", timeout=60) as res:
            graph = json.loads(res.read())
        for name in ("personal blog", "design the database", "build the backend API", "FastAPI"):
            assert name in graph["svg"]
        assert 'data-relation="PRECEDES"' in graph["svg"]
    finally:
        ui.terminate()
        ui.wait(timeout=30)


def test_ui_with_several_scopes_and_none_named_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to open the empty user 'default' of a folder holding only users a and b."""
    base = ["--path", str(tmp_path / "mem"), "--embedder", "hashing"]
    assert main([*base, "--user", "ann", "add", "Ann likes tea"]) == 0
    assert main([*base, "--user", "ben", "add", "Ben likes coffee"]) == 0
    capsys.readouterr()
    ui = ["--embedder", "hashing", "ui", "--path", str(tmp_path / "mem")]
    assert main([*ui, "--port", "0", "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "--user ann" in err and "--user ben" in err
