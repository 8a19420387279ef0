"""A folder's Chroma index opens on first need; small reads are exact from SQLite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sage_memory import SageMemory
from sage_memory.engine.folder_index import FolderIndex

TEXTS = [
    "Alice moved to Berlin in May.",
    "Bob prefers PostgreSQL for side projects.",
    "The outage was caused by a Redis timeout.",
    "Carol works at a startup in Lisbon.",
]

_READER = """
import json, sys
from sage_memory import SageMemory
with SageMemory(sys.argv[1], embedder="hashing") as mem:
    hits = [m.text for m in mem.search("who moved to Berlin?", user_id="u", limit=3).memories]
print(json.dumps({"hits": hits, "chromadb": "chromadb" in sys.modules}))
"""


def _fill(folder: Path) -> list[str]:
    with SageMemory(folder, embedder="hashing") as mem:
        mem.add_many(TEXTS, user_id="u")
        hits = [m.text for m in mem.search("who moved to Berlin?", user_id="u", limit=3).memories]
        assert isinstance(mem.index, FolderIndex) and mem.index.opened
    return hits


def _read_in_new_process(folder: Path) -> dict[str, object]:
    import json

    out = subprocess.run(
        [sys.executable, "-c", _READER, str(folder)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_search_after_a_clean_close_needs_no_chromadb(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    expected = _fill(folder)
    first = _read_in_new_process(folder)
    assert first["hits"] == expected
    assert first["chromadb"] is False  # answered exactly from SQLite's vectors


def test_a_write_after_exact_reads_goes_to_chroma_and_is_found(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    _fill(folder)
    with SageMemory(folder, embedder="hashing") as mem:
        mem.search("Berlin", user_id="u")
        assert isinstance(mem.index, FolderIndex) and not mem.index.opened
        mem.add("Dan moved to Oslo last week.", user_id="u")
        assert mem.index.opened
        texts = [m.text for m in mem.search("who moved to Oslo?", user_id="u").memories]
        assert "Dan moved to Oslo last week." in texts
    # The next clean open trusts the counts recorded at close, and sees the new memory.
    again = _read_in_new_process(folder)
    assert again["chromadb"] is False


def test_a_lost_index_folder_is_rebuilt_on_open(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "mem"
    _fill(folder)
    shutil.rmtree(folder / "chroma")  # the recorded counts no longer describe any index
    with SageMemory(folder, embedder="hashing") as mem:
        assert isinstance(mem.index, FolderIndex) and mem.index.opened  # reconciled
        assert len(mem.index.ids(next(iter(_collections(mem))))) == len(TEXTS)


def _collections(mem: SageMemory) -> list[str]:
    from sage_memory.index.base import collection_name
    from sage_memory.types import Scope

    return [collection_name(Scope("u").key, "memory")]
