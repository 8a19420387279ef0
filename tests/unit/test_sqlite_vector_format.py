"""SQLite keeps vectors as float16; a store written with float32 vectors is converted on open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from sage_memory import SageMemory
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.store.sqlite_schema import HALF_VECTORS_META
from sage_memory.testing.store_contract import ALICE, memory, node, write

DIM = 384


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _blob_lengths(path: Path) -> set[int]:
    db = sqlite3.connect(path)
    try:
        return {
            n
            for table in ("memory_vectors", "node_vectors")
            for (n,) in db.execute(f"SELECT length(vec) FROM {table}")
        }
    finally:
        db.close()


def _as_older_version(path: Path) -> None:
    """What an older version left: float32 blobs and no format record."""
    db = sqlite3.connect(path)
    with db:
        for table in ("memory_vectors", "node_vectors"):
            rows = db.execute(f"SELECT rid, vec FROM {table}").fetchall()
            db.executemany(
                f"UPDATE {table} SET vec = ? WHERE rid = ?",
                [
                    (np.frombuffer(v, dtype=np.float16).astype(np.float32).tobytes(), rid)
                    for rid, v in rows
                ],
            )
        db.execute("DELETE FROM meta WHERE key = ?", (HALF_VECTORS_META[0],))
    db.close()


def test_vectors_are_stored_at_half_precision_and_read_as_float32(tmp_path: Path) -> None:
    path = tmp_path / "sage.db"
    store = SQLiteGraphStore(path)
    m, n = memory("x"), node("y")
    write(store, (None, m), (None, n), vectors={m.id: _unit(1), n.id: _unit(2)})
    got = store.get_vectors([m.id, n.id])
    store.close()
    assert _blob_lengths(path) == {2 * DIM}
    assert got[m.id].dtype == np.float32
    assert float(got[m.id] @ _unit(1)) > 0.99999
    assert float(got[n.id] @ _unit(2)) > 0.99999


def test_a_store_with_float32_vectors_is_converted_on_open(tmp_path: Path) -> None:
    path = tmp_path / "sage.db"
    store = SQLiteGraphStore(path)
    m, n = memory("x"), node("y")
    write(store, (None, m), (None, n), vectors={m.id: _unit(1), n.id: _unit(2)})
    store.close()
    _as_older_version(path)
    assert _blob_lengths(path) == {4 * DIM}

    # A reader beside an owner that has not converted yet reads the float32 it finds.
    reader = SQLiteGraphStore(path, read_only=True)
    assert float(reader.get_vectors([m.id])[m.id] @ _unit(1)) > 0.99999
    reader.close()

    store = SQLiteGraphStore(path)
    assert store.get_meta(HALF_VECTORS_META[0]) == HALF_VECTORS_META[1]
    got = store.get_vectors([m.id, n.id])
    assert store.vector_ids(ALICE, "memory") == {m.id}
    store.close()
    assert _blob_lengths(path) == {2 * DIM}
    assert float(got[m.id] @ _unit(1)) > 0.99999
    assert float(got[n.id] @ _unit(2)) > 0.99999


def test_a_folder_written_with_float32_vectors_opens_and_finds_its_memories(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "mem"
    texts = ["Alice moved to Berlin in May.", "Bob prefers PostgreSQL for side projects."]
    with SageMemory(folder, embedder="hashing") as mem:
        mem.add_many(texts, user_id="u")
    _as_older_version(folder / "sage.db")
    with SageMemory(folder, embedder="hashing") as mem:
        hits = mem.search("who moved to Berlin?", user_id="u", limit=2).memories
        assert hits[0].text == texts[0]
        mem.add("Carol works in Lisbon.", user_id="u")
        dim = mem.embedder.dim
    assert _blob_lengths(folder / "sage.db") == {2 * dim}
