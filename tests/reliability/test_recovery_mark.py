"""An open after a crash repairs the vector index from its high-water mark, not from scratch.

The crash itself is simulated in-process (the index made to miss what a kill between the
SQLite commit and the index write leaves missing); ``test_crash.py`` kills real writers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from reliability_kit import open_memory

from sage_memory import SageConfig
from sage_memory.engine import index_mark, wiring
from sage_memory.index.base import collection_name
from sage_memory.types import Scope

TEXTS = [f"Person{i} lives in Town{i % 7} and works with Tool{i % 5}." for i in range(40)]
#: Every partition mirrored into Chroma (by default one this small is served from SQLite alone,
#: with nothing derived to repair): the repair is what these tests are about.
MIRROR_ALL = SageConfig(vector_index="chroma")


def _listing_spy(monkeypatch: pytest.MonkeyPatch, index: Any) -> list[str]:
    listed: list[str] = []
    real_ids = index.ids

    def ids(collection: str) -> set[str]:
        listed.append(collection)
        return set(real_ids(collection))

    monkeypatch.setattr(index, "ids", ids)
    return listed


def test_only_the_changes_after_the_mark_are_mirrored_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = open_memory(tmp_path / "m", config=MIRROR_ALL)
    try:
        ctx = mem._ctx
        mem.add_many(TEXTS[:30], user_id="u")
        index_mark.write_mark(ctx.store)  # the index is in sync up to here
        late = [r.memory_id for r in mem.add_many(TEXTS[30:], user_id="u")]
        gone = mem.get_all(user_id="u")[0].id
        mem.delete(gone)
        coll = collection_name(Scope(user_id="u").partition.key, "memory")
        chroma = ctx.index.real()
        # What a kill between SQLite's commit and the index write leaves: the last adds'
        # vectors missing (a delete writes the index first, so it cannot leave one behind).
        chroma.delete(coll, late[:4])
        listed = _listing_spy(monkeypatch, chroma)
        wiring.reconcile_index(ctx)
        truth = ctx.store.vector_ids(Scope(user_id="u"), "memory")
        assert chroma.ids(coll) == truth
        assert set(late) <= truth and gone not in truth
        assert coll not in listed[:-1]  # repaired without listing the collection's ids
        assert index_mark.read_mark(ctx.store) == ctx.store.journal_seq()
    finally:
        mem.close()


def test_a_collection_lost_before_the_mark_is_rebuilt_by_its_count(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", config=MIRROR_ALL)
    try:
        ctx = mem._ctx
        mem.add_many(TEXTS, user_id="u")
        coll = collection_name(Scope(user_id="u").partition.key, "memory")
        chroma = ctx.index.real()
        chroma.drop(coll)  # nothing in the journal after the mark says so
        index_mark.write_mark(ctx.store)
        wiring.reconcile_index(ctx)
        assert chroma.ids(coll) == ctx.store.vector_ids(Scope(user_id="u"), "memory")
        assert len(chroma.ids(coll)) == len(TEXTS)
    finally:
        mem.close()


def test_a_backup_copy_has_no_mark(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", config=MIRROR_ALL)
    try:
        mem.add_many(TEXTS[:5], user_id="u")
        copy = mem.backup(tmp_path / "copy")
    finally:
        mem.close()
    again = open_memory(copy, config=MIRROR_ALL)
    try:
        assert len(again.search("Person1", user_id="u", limit=5).memories) >= 1
        assert (
            again._ctx.index.real().count(
                collection_name(Scope(user_id="u").partition.key, "memory")
            )
            == 5
        )
    finally:
        again.close()
