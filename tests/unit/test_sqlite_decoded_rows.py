"""The SQLite store's cache of decoded rows never answers with a stale record."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from sage_memory.codec import to_dict
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import Change, Edge, Node, Scope, new_id

_AT = datetime(2026, 1, 1, tzinfo=UTC)
_SCOPE = Scope(user_id="u")


def _put(store: SQLiteGraphStore, before: Node | Edge | None, after: Node | Edge | None) -> None:
    ref = after if after is not None else before
    assert ref is not None
    store.apply(
        [
            Change(
                id=new_id(),
                batch_id=new_id(),
                scope_key=_SCOPE.key,
                entity="node" if isinstance(ref, Node) else "edge",
                entity_id=ref.id,
                op="insert" if before is None else "delete" if after is None else "update",
                before=None if before is None else to_dict(before),
                after=None if after is None else to_dict(after),
                at=_AT,
                actor="test",
                reason="test",
            )
        ]
    )


def test_reads_after_writes_see_the_writes(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    a = Node(id=new_id(), scope=_SCOPE, name="Alice", created_at=_AT, updated_at=_AT)
    b = Node(id=new_id(), scope=_SCOPE, name="Paris", created_at=_AT, updated_at=_AT)
    e = Edge(
        id=new_id(),
        scope=_SCOPE,
        source_id=a.id,
        target_id=b.id,
        relation="LIVES_IN",
        created_at=_AT,
    )
    for row in (a, b, e):
        _put(store, None, row)
    assert store.get_nodes(_SCOPE, [a.id]) == [a]
    assert store.edges_of(_SCOPE, [a.id]) == [e]
    renamed = dataclasses.replace(a, name="Alicia")
    _put(store, a, renamed)
    moved = dataclasses.replace(e, relation="WORKS_IN")
    _put(store, e, moved)
    assert store.get_nodes(_SCOPE, [a.id]) == [renamed]
    assert store.edges_of(_SCOPE, [b.id]) == [moved]
    assert store.get_nodes(Scope(user_id="other"), [a.id]) == []  # the partition still counts
    _put(store, moved, None)
    assert store.edges_of(_SCOPE, [a.id]) == []
    assert store.get_edges(_SCOPE, [e.id]) == []
    # A read-only handle beside the owner keeps nothing: it sees each committed write.
    reader = SQLiteGraphStore(tmp_path / "s.db", read_only=True)
    assert reader.get_nodes(_SCOPE, [a.id]) == [renamed]
    _put(store, renamed, a)
    assert reader.get_nodes(_SCOPE, [a.id]) == [a]
    reader.close()
    store.close()


def test_vectors_read_after_writes_see_the_writes(tmp_path: Path) -> None:
    import numpy as np
    import pytest

    store = SQLiteGraphStore(tmp_path / "s.db")
    a = Node(id=new_id(), scope=_SCOPE, name="Alice", created_at=_AT, updated_at=_AT)
    first, second = np.eye(384, dtype=np.float32)[:2]

    def put_vector(before: Node | None, after: Node | None, vec: np.ndarray) -> None:
        ref = after if after is not None else before
        assert ref is not None
        change = Change(
            id=new_id(),
            batch_id=new_id(),
            scope_key=_SCOPE.key,
            entity="node",
            entity_id=ref.id,
            op="insert" if before is None else "delete" if after is None else "update",
            before=None if before is None else to_dict(before),
            after=None if after is None else to_dict(after),
            at=_AT,
            actor="test",
            reason="test",
        )
        store.apply([change], {ref.id: vec})

    put_vector(None, a, first)
    kept = store.get_vectors([a.id, "missing"])
    assert list(kept) == [a.id]
    np.testing.assert_array_equal(kept[a.id], first)
    # What the store keeps for later reads cannot be changed by a caller.
    with pytest.raises(ValueError):
        kept[a.id][0] = 5.0
    np.testing.assert_array_equal(store.get_vectors([a.id])[a.id], first)
    put_vector(a, dataclasses.replace(a, name="Alicia"), second)
    np.testing.assert_array_equal(store.get_vectors([a.id])[a.id], second)
    put_vector(a, None, second)
    assert store.get_vectors([a.id]) == {}
    store.close()
