"""A node write changes only the provenance rows that differ, and readers see what a rewrite
of all of them would have left: the same rows, a memory's nodes in the order last written."""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from sage_memory.store.base import PROVENANCE_MENTION, PROVENANCE_NODE
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.store.sqlite_writes import _provenance
from sage_memory.testing.store_contract import write
from sage_memory.types import Node, Scope, new_id

_AT = datetime(2026, 3, 1, tzinfo=UTC)
_SCOPE = Scope(user_id="owner")


def _node(name: str, memories: tuple[str, ...], mentions: tuple[str, ...] = ()) -> Node:
    return Node(
        id=new_id(),
        scope=_SCOPE,
        name=name,
        memory_ids=memories,
        mention_ids=mentions,
        created_at=_AT,
        updated_at=_AT,
    )


def _rows(store: SQLiteGraphStore, nid: str) -> list[tuple[str, str]]:
    return sorted(
        store._db.execute(
            "SELECT memory_id, entity FROM provenance WHERE entity_id = ?", (nid,)
        ).fetchall()
    )


def _statements(store: SQLiteGraphStore, before: Node, after: Node) -> list[str]:
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        write(store, (before, after))
    finally:
        store._db.set_trace_callback(None)
    return seen


def _inserted(store: SQLiteGraphStore, before: Node, after: Node) -> int:
    return sum("INSERT INTO provenance" in s for s in _statements(store, before, after))


def test_a_hub_gaining_one_memory_writes_one_row(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    hub = _node("Harbour", tuple(f"m{i}" for i in range(50)), ("x1",))
    write(store, (None, hub))
    grown = dataclasses.replace(hub, memory_ids=(*hub.memory_ids, "m50"))
    assert _inserted(store, hub, grown) == 1
    assert _rows(store, hub.id) == sorted(
        [(f"m{i}", "node") for i in range(51)] + [("x1", "mention")]
    )
    # Losing memories, a mention becoming a fact, and going away altogether.
    shrunk = dataclasses.replace(grown, memory_ids=("m3", "x1"), mention_ids=("m4",))
    write(store, (grown, shrunk))
    assert _rows(store, hub.id) == [("m3", "node"), ("m4", "mention"), ("x1", "node")]
    write(store, (shrunk, None))
    assert _rows(store, hub.id) == []


def test_a_hub_gaining_a_memory_reads_none_of_its_rows(tmp_path: Path) -> None:
    """Its rows hold its journaled image's lists: the new pair is added without reading the
    thousands of others (the cost of an add that names the user grew with the user's size)."""
    store = SQLiteGraphStore(tmp_path / "s.db")
    hub = _node("Harbour", tuple(f"m{i}" for i in range(50)), ("x1",))
    write(store, (None, hub))
    grown = dataclasses.replace(hub, memory_ids=(*hub.memory_ids, "m50"), mention_ids=("x1", "x2"))
    seen = _statements(store, hub, grown)
    assert not [s for s in seen if "FROM provenance" in s]
    assert _rows(store, hub.id) == sorted(
        [(f"m{i}", "node") for i in range(51)] + [("x1", "mention"), ("x2", "mention")]
    )


def test_a_write_whose_image_the_journal_lacks_compares_the_rows(tmp_path: Path) -> None:
    """Without the journal's last image of the node (purged) its rows are not known to hold
    ``before``'s lists: they are read and compared, and end as ``after`` lists."""
    store = SQLiteGraphStore(tmp_path / "s.db")
    hub = _node("Harbour", ("m1", "m2"))
    write(store, (None, hub))
    store.purge_journal([hub.id])
    stale = dataclasses.replace(hub, memory_ids=("m1",))  # not what the rows hold
    grown = dataclasses.replace(hub, memory_ids=("m1", "m3"))
    seen = _statements(store, stale, grown)
    assert [s for s in seen if "FROM provenance" in s]
    assert _rows(store, hub.id) == [("m1", "node"), ("m3", "node")]


def test_a_cached_list_of_a_memorys_nodes_follows_a_hub_written_again(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    hub, quay = _node("hub", ("m1", "m2")), _node("quay", ("m1",))
    for row in (hub, quay):
        write(store, (None, row))
    assert store.memory_nodes(_SCOPE, ["m1", "m2"]) == {"m1": [hub.id, quay.id], "m2": [hub.id]}
    grown = dataclasses.replace(hub, memory_ids=("m1", "m2", "m3"))
    write(store, (hub, grown))
    # The hub moved last in m1's list (written last), m3 gained it, m2 is unchanged.
    want = {"m1": [quay.id, hub.id], "m2": [hub.id], "m3": [hub.id]}
    assert store.memory_nodes(_SCOPE, ["m1", "m2", "m3"]) == want
    reader = SQLiteGraphStore(tmp_path / "s.db", read_only=True)  # keeps no cache
    try:
        assert reader.memory_nodes(_SCOPE, ["m1", "m2", "m3"]) == want
    finally:
        reader.close()
    # And a list read after the write is kept (read again only after another write).
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        assert store.memory_nodes(_SCOPE, ["m1", "m2", "m3"]) == want
    finally:
        store._db.set_trace_callback(None)
    assert not seen


def test_a_memorys_nodes_are_listed_in_the_order_last_written(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    quay, ferry, crane = (_node(n, ("m1", "m2")) for n in ("quay", "ferry", "crane"))
    for row in (quay, ferry, crane):
        write(store, (None, row))
    # The quay is written again with its rows unchanged: it now comes last, as it did when
    # every write rewrote all of a node's rows.
    moved = dataclasses.replace(quay, summary="the old quay")
    write(store, (quay, moved))
    reader = SQLiteGraphStore(tmp_path / "s.db", read_only=True)  # keeps no cache
    try:
        for s in (store, reader):
            assert s.memory_nodes(_SCOPE, ["m1", "m2"]) == {
                "m1": [ferry.id, crane.id, quay.id],
                "m2": [ferry.id, crane.id, quay.id],
            }
            nodes, _ = s.derived_from(_SCOPE, "m1")
            assert [n.id for n in nodes] == [ferry.id, crane.id, quay.id]
    finally:
        reader.close()


def _pairs(after: dict[str, list[str]]) -> Counter[tuple[str, str]]:
    return Counter(
        [(m, PROVENANCE_NODE) for m in after["memory_ids"]]
        + [(m, PROVENANCE_MENTION) for m in after["mention_ids"]]
    )


def test_the_provenance_diff_keeps_the_overlap_and_writes_only_the_difference() -> None:
    """Over random histories of one node (growing, shrinking, repeats, mentions), judged by
    multiset arithmetic rather than by a second copy of the algorithm: the rows end as
    ``after``'s pairs, the pairs both sides share keep their rows, exactly the surplus is
    deleted and exactly the shortfall inserted, and the memories returned are the ones the
    rows named before."""
    rng = random.Random(7)
    pool = [f"m{i}" for i in range(12)]
    for _ in range(200):
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE provenance (memory_id TEXT, entity TEXT, entity_id TEXT)")
        mems: list[str] = []
        for _step in range(6):
            if rng.random() < 0.6:
                mems = [*mems, rng.choice(pool)]  # grows, sometimes with a repeat
            else:
                mems = rng.sample(mems, k=len(mems) // 2)  # loses some
            after = {"memory_ids": list(mems), "mention_ids": rng.sample(pool, k=rng.randrange(3))}
            rows_before = db.execute("SELECT rowid, memory_id, entity FROM provenance").fetchall()
            had = Counter((mid, kind) for _, mid, kind in rows_before)
            seen: list[str] = []
            db.set_trace_callback(seen.append)
            was = _provenance(db, "n1", after)
            db.set_trace_callback(None)
            rows_after = db.execute("SELECT rowid, memory_id, entity FROM provenance").fetchall()
            want = _pairs(after)
            assert Counter((mid, kind) for _, mid, kind in rows_after) == want
            assert sorted(was) == sorted(mid for _, mid, _ in rows_before)
            kept = set(rows_before) & set(rows_after)  # same rowid, same pair
            assert len(kept) == sum((had & want).values())
            assert sum(s.startswith("DELETE") for s in seen) == sum((had - want).values())
            assert sum(s.startswith("INSERT") for s in seen) == sum((want - had).values())
