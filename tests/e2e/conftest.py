"""Fixtures the end-to-end tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sage_memory import SageMemory


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[SageMemory]:
    """A fresh folder with the offline defaults (SQLite + the default vector index)."""
    mem = SageMemory(tmp_path / "mem")
    yield mem
    mem.close()
