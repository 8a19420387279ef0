"""No tracked text file keeps the markers of an unfinished merge.

A merge that stops on a conflict in prose (docs, CHANGELOG) leaves text that still parses and
renders, so nothing else would notice it; this test does.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^(<{7}|>{7})( |$)|^={7}$", re.MULTILINE)
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".txt",
    ".cfg",
    ".ini",
    ".yaml",
    ".yml",
    ".json",
    ".html",
    ".js",
    ".css",
}


def _tracked_text_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed if Path(name).suffix in TEXT_SUFFIXES]


def test_no_file_keeps_merge_conflict_markers() -> None:
    offenders = []
    for path in _tracked_text_files():
        if path.is_file() and MARKER.search(path.read_text(encoding="utf-8", errors="replace")):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"unresolved merge conflict markers in: {offenders}"
