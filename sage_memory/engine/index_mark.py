"""How far the vector index is known to agree with the journal (a high-water mark).

The index is derived from SQLite and written after it, so a crash can leave it behind (rows
without vectors) or, for a delete, ahead. Comparing every id of both after a crash costs time
in proportion to the whole memory (121 s at 120k vectors, opening and listing Chroma); the mark
bounds it by what changed since: the SQLite store numbers every change, and the engine records
the last number the index had caught up with at each open, every :data:`MARK_EVERY` mirrored
changes and at close. An open after a crash re-mirrors the rows changed after the mark, then
checks each collection's count against SQLite's (a cheap net for what the journal does not
show, such as a dropped collection) and compares ids only where they differ.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.store.base import GraphStore, JournalHead

#: Meta key holding the journal sequence number the index is in sync with.
MARK_KEY = "index_synced_seq"
#: Mirrored changes between two marks: an open after a crash repairs at most about this many
#: rows more than the writes the crash interrupted.
MARK_EVERY = 5_000
_PAGE = 5_000


def read_mark(store: GraphStore) -> int | None:
    """The recorded mark, or None (no mark: an older folder, or a copy without its index)."""
    raw = store.get_meta(MARK_KEY) if isinstance(store, JournalHead) else None
    return int(raw) if raw is not None and raw.isdigit() else None


def write_mark(store: GraphStore) -> None:
    """Record that the index agrees with every journaled change so far (call it under the
    write lock, after the index was written)."""
    if isinstance(store, JournalHead) and store.persistent:
        seq = str(store.journal_seq())
        if store.get_meta(MARK_KEY) != seq:  # a read-only command writes nothing
            store.set_meta(MARK_KEY, seq)


def clear_mark(store: GraphStore) -> None:
    """Forget the mark (a copy of the database whose index is not copied with it)."""
    store.set_meta(MARK_KEY, "")


def catch_up(store: GraphStore, index: VectorIndex, mark: int) -> int:
    """Mirror into ``index`` every memory and node journaled after ``mark`` as SQLite has it
    now (its vector, or nothing if the row or its vector is gone). Returns the rows seen."""
    touched: dict[str, set[str]] = {}
    for entity, scope_key, entity_id in _changed_since(store, mark):
        touched.setdefault(collection_name(scope_key, entity), set()).add(entity_id)
    for coll, ids in touched.items():
        ordered = sorted(ids)
        for start in range(0, len(ordered), 1000):
            chunk = ordered[start : start + 1000]
            vectors = store.get_vectors(chunk)
            present = [i for i in chunk if i in vectors]
            gone = [i for i in chunk if i not in vectors]
            if gone:
                index.delete(coll, gone)
            if present:
                index.upsert(coll, present, np.stack([vectors[i] for i in present]))
    return sum(len(ids) for ids in touched.values())


def _changed_since(store: GraphStore, mark: int) -> Iterable[tuple[str, str, str]]:
    seq = mark
    while page := store.journal(after_seq=seq, limit=_PAGE):
        for _, change in page:
            if change.entity != "edge":
                yield change.entity, change.scope_key, change.entity_id
        seq = page[-1][0]
