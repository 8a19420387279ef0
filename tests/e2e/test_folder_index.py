"""A folder's small partitions are served exactly from SQLite; large ones are mirrored to Chroma."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sage_memory import SageConfig, SageMemory
from sage_memory.engine import folder_index
from sage_memory.engine.folder_index import MIRRORED_KEY, FolderIndex
from sage_memory.index.base import collection_name
from sage_memory.types import Scope

TEXTS = [
    "Alice moved to Berlin in May.",
    "Bob prefers PostgreSQL for side projects.",
    "The outage was caused by a Redis timeout.",
    "Carol works at a startup in Lisbon.",
]
MEMORIES = collection_name(Scope("u").partition.key, "memory")

_READER = """
import json, sys
from sage_memory import SageMemory
with SageMemory(sys.argv[1], embedder="hashing") as mem:
    hits = [m.text for m in mem.search("who moved to Berlin?", user_id="u", limit=3).memories]
print(json.dumps({"hits": hits, "chromadb": "chromadb" in sys.modules}))
"""


def _fill(folder: Path, **kwargs: object) -> list[str]:
    with SageMemory(folder, embedder="hashing", **kwargs) as mem:  # type: ignore[arg-type]
        mem.add_many(TEXTS, user_id="u")
        hits = [m.text for m in mem.search("who moved to Berlin?", user_id="u", limit=3).memories]
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


def test_a_small_partition_is_never_copied_into_chroma(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    with SageMemory(folder, embedder="hashing") as mem:
        mem.add_many(TEXTS, user_id="u")
        mem.add("Dan moved to Oslo last week.", user_id="u")
        texts = [m.text for m in mem.search("who moved to Oslo?", user_id="u").memories]
        assert "Dan moved to Oslo last week." in texts
        mem.delete(mem.get_all(user_id="u")[0].id)
        assert isinstance(mem.index, FolderIndex) and not mem.index.opened
        assert mem.index.count(MEMORIES) == len(TEXTS)  # 5 added, 1 deleted
    assert not (folder / "chroma").exists()  # no Chroma bytes, no Chroma work


def test_search_after_a_clean_close_needs_no_chromadb(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    expected = _fill(folder)
    first = _read_in_new_process(folder)
    assert first["hits"] == expected
    assert first["chromadb"] is False  # answered exactly from SQLite's vectors


def test_the_same_answers_with_or_without_a_chroma_copy(tmp_path: Path) -> None:
    exact = _fill(tmp_path / "exact")
    mirrored = _fill(tmp_path / "mirrored", config=SageConfig(vector_index="chroma"))
    assert exact == mirrored
    assert (tmp_path / "mirrored" / "chroma").is_dir()


def test_a_partition_that_outgrows_the_limit_is_mirrored_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_index, "EXACT_LIMIT", 3)
    folder = tmp_path / "mem"
    with SageMemory(folder, embedder="hashing") as mem:
        mem.add_many(TEXTS[:2], user_id="u")
        assert isinstance(mem.index, FolderIndex) and MEMORIES not in mem.index.mirrored()
        mem.add_many(TEXTS[2:], user_id="u")  # 4 > 3: copied into Chroma now
        assert MEMORIES in mem.index.mirrored()
        kept = mem.get_all(user_id="u")
        stored = {m.id for m in kept}
        assert mem.index.real().ids(MEMORIES) == stored
        # Not the memory the search below must find (ids are random: sorting them is not).
        gone = min(m.id for m in kept if m.text != TEXTS[0])
        mem.delete(gone)  # a delete of a mirrored partition reaches Chroma
        assert gone not in mem.index.real().ids(MEMORIES)
    with SageMemory(folder, embedder="hashing") as mem:
        assert isinstance(mem.index, FolderIndex)
        assert MEMORIES in mem.index.mirrored()  # recorded in the store, kept after a shrink
        assert mem.index.ids(MEMORIES) == stored - {gone}
        hits = [m.text for m in mem.search("who moved to Berlin?", user_id="u").memories]
        assert hits[0] == TEXTS[0]


def test_a_lost_index_folder_is_rebuilt_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    monkeypatch.setattr(folder_index, "EXACT_LIMIT", 2)
    folder = tmp_path / "mem"
    _fill(folder)
    shutil.rmtree(folder / "chroma")  # the recorded counts no longer describe any index
    with SageMemory(folder, embedder="hashing") as mem:
        assert isinstance(mem.index, FolderIndex) and mem.index.opened  # reconciled
        assert len(mem.index.real().ids(MEMORIES)) == len(TEXTS)


def test_a_folder_from_before_the_record_keeps_mirroring_its_partitions(tmp_path: Path) -> None:
    """Older versions mirrored every partition: without the record, each one it has stays
    mirrored (its Chroma copy kept in step), and a new partition starts exact."""
    folder = tmp_path / "mem"
    _fill(folder, config=SageConfig(vector_index="chroma"))
    db = sqlite3.connect(folder / "sage.db")
    with db:
        db.execute("DELETE FROM meta WHERE key = ?", (MIRRORED_KEY,))
    db.close()
    with SageMemory(folder, embedder="hashing") as mem:
        added = mem.add("Erin moved to Cork.", user_id="u").memory_id
        mem.add("Farid moved to Lima.", user_id="v")
        assert isinstance(mem.index, FolderIndex)
        assert added in mem.index.real().ids(MEMORIES)
        assert MEMORIES in mem.index.mirrored()
        assert collection_name(Scope("v").partition.key, "memory") not in mem.index.mirrored()


def test_a_mirrored_partition_is_searched_exactly_before_chroma_is_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-shot search of a partition Chroma mirrors loads its vectors from SQLite instead
    of importing chromadb (about a second); the copy then follows every write."""
    monkeypatch.setattr(folder_index, "EXACT_LIMIT", 2)
    folder = tmp_path / "mem"
    expected = _fill(folder)  # 4 > 2: mirrored
    reader = _read_in_new_process(folder)  # the default limit: still mirrored, as recorded
    assert reader == {"hits": expected, "chromadb": False}
    with SageMemory(folder, embedder="hashing") as mem:
        index = mem.index
        assert isinstance(index, FolderIndex) and MEMORIES in index.mirrored()
        hits = [m.text for m in mem.search("who moved to Berlin?", user_id="u", limit=3).memories]
        assert hits == expected and not index.opened
        added = mem.add("Dan moved to Oslo last week.", user_id="u").memory_id
        assert index.opened and added in index.real().ids(MEMORIES)  # Chroma still mirrors
        found = [m.id for m in mem.search("who moved to Oslo?", user_id="u").memories]
        assert added in found
        mem.delete(added)
        assert added not in index.real().ids(MEMORIES)
        found = [m.id for m in mem.search("who moved to Oslo?", user_id="u").memories]
        assert added not in found
        stored = {m.id for m in mem.get_all(user_id="u")}
        assert {i for i, _ in index.query(MEMORIES, mem.embedder.embed(["x"])[0], 10)} == stored


def test_a_partition_of_ten_thousand_vectors_needs_no_chroma_copy(tmp_path: Path) -> None:
    """Up to 20,000 vectors the exact scan is as fast as Chroma's HNSW query (measured in
    folder_index.EXACT_LIMIT's note), so a 10,000-memory partition has no Chroma upsert per
    add and no Chroma copy."""
    import numpy as np

    folder = tmp_path / "mem"
    with SageMemory(folder, embedder="hashing") as mem:
        mem.add(TEXTS[0], user_id="u")
        index = mem.index
        assert isinstance(index, FolderIndex)
        rng = np.random.default_rng(0)
        vectors = rng.standard_normal((10_000, mem.embedder.dim)).astype(np.float32)
        index.upsert(MEMORIES, [f"v{i}" for i in range(10_000)], vectors)
        assert MEMORIES not in index.mirrored() and not index.opened
        assert index.query(MEMORIES, vectors[7], 1)[0][0] == "v7"
    assert not (folder / "chroma").exists()
