"""A node write changes only the provenance rows that differ, and readers see what a rewrite
of all of them would have left: the same rows, a memory's nodes in the order last written."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from sage_memory.store.sqlite import SQLiteGraphStore
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


def _inserted(store: SQLiteGraphStore, before: Node, after: Node) -> int:
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        write(store, (before, after))
    finally:
        store._db.set_trace_callback(None)
    return sum("INSERT INTO provenance" in s for s in seen)


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
