"""The SQLite store's cache of link reads (edges by node, nodes by memory) is never stale."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.testing.store_contract import write
from sage_memory.types import Edge, Node, Scope, new_id

_AT = datetime(2026, 3, 1, tzinfo=UTC)
_SCOPE = Scope(user_id="owner")


def _put(store: SQLiteGraphStore, before: Node | Edge | None, after: Node | Edge | None) -> None:
    write(store, (before, after))


def _node(name: str, *memories: str) -> Node:
    return Node(
        id=new_id(),
        scope=_SCOPE,
        name=name,
        memory_ids=tuple(memories),
        created_at=_AT,
        updated_at=_AT,
    )


def _edge(source: Node, target: Node, relation: str) -> Edge:
    return Edge(
        id=new_id(),
        scope=_SCOPE,
        source_id=source.id,
        target_id=target.id,
        relation=relation,
        created_at=_AT,
    )


def _ids(edges: list[Edge]) -> list[str]:
    return [e.id for e in edges]


def test_edge_reads_follow_every_write_at_either_end(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    kiln, clay, glaze, shed = _node("kiln"), _node("clay"), _node("glaze"), _node("shed")
    fires = _edge(kiln, clay, "USES")
    for row in (kiln, clay, glaze, shed, fires):
        _put(store, None, row)
    # Each shape of read is cached on its own: unbounded, bounded, by relation, by direction.
    assert _ids(store.edges_of(_SCOPE, [clay.id])) == [fires.id]
    assert _ids(store.edges_of(_SCOPE, [clay.id], per_node=5)) == [fires.id]
    assert _ids(store.edges_of(_SCOPE, [kiln.id], relations=["USES"], direction="out")) == [
        fires.id
    ]
    # A new edge at an end already read shows up in every shape, the latest first when bounded.
    coats = _edge(glaze, clay, "USES")
    _put(store, None, coats)
    assert _ids(store.edges_of(_SCOPE, [clay.id])) == [fires.id, coats.id]
    assert _ids(store.edges_of(_SCOPE, [clay.id], per_node=1)) == [coats.id]
    # An edge moved to another end leaves the old end's reads and joins the new end's.
    moved = dataclasses.replace(fires, target_id=shed.id)
    _put(store, fires, moved)
    assert _ids(store.edges_of(_SCOPE, [clay.id])) == [coats.id]
    assert _ids(store.edges_of(_SCOPE, [shed.id], direction="in")) == [moved.id]
    assert _ids(store.edges_of(_SCOPE, [kiln.id], relations=["USES"], direction="out")) == [
        moved.id
    ]
    # A deleted edge is gone from both ends.
    _put(store, moved, None)
    assert store.edges_of(_SCOPE, [kiln.id, shed.id]) == []
    store.close()


def test_nodes_of_a_memory_follow_node_writes(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    harbour = _node("harbour", "m1", "m2")
    ferry = _node("ferry", "m2")
    for row in (harbour, ferry):
        _put(store, None, row)
    assert store.memory_nodes(_SCOPE, ["m1", "m2", "m3"]) == {
        "m1": [harbour.id],
        "m2": [harbour.id, ferry.id],
    }
    # A node that loses one memory and gains another.
    shifted = dataclasses.replace(harbour, memory_ids=("m2", "m3"))
    _put(store, harbour, shifted)
    assert store.memory_nodes(_SCOPE, ["m1", "m2", "m3"]) == {
        "m2": [ferry.id, harbour.id],
        "m3": [harbour.id],
    }
    # A row written again with no record of its previous state still drops what it listed.
    _put(store, None, dataclasses.replace(ferry, memory_ids=("m1",)))
    assert store.memory_nodes(_SCOPE, ["m1", "m2"]) == {"m1": [ferry.id], "m2": [harbour.id]}
    _put(store, shifted, None)
    assert store.memory_nodes(_SCOPE, ["m2", "m3"]) == {}
    # Another partition never sees this one's nodes, cached or not.
    assert store.memory_nodes(Scope(user_id="guest"), ["m1"]) == {}
    store.close()
