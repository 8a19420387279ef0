"""The current-value pass reads a bounded number of a subject's facts, the latest first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory.retrieve import current
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.testing.store_contract import write
from sage_memory.types import Edge, Node, Scope, new_id

_AT = datetime(2026, 3, 1, tzinfo=UTC)
_SCOPE = Scope(user_id="u")


def _insert(store: SQLiteGraphStore, row: Node | Edge) -> None:
    write(store, (None, row))


def _mover(tmp_path: Path, moves: int) -> tuple[SQLiteGraphStore, Node, list[Edge]]:
    """A subject who moved ``moves`` times, each move told by its own memory m0, m1, ..."""
    store = SQLiteGraphStore(tmp_path / "s.db")
    mids = [f"m{i}" for i in range(moves)]
    who = Node(new_id(), _SCOPE, "Odile", created_at=_AT, updated_at=_AT, memory_ids=tuple(mids))
    _insert(store, who)
    edges = []
    for i, mid in enumerate(mids):
        town = Node(new_id(), _SCOPE, f"Town {i}", created_at=_AT, updated_at=_AT)
        _insert(store, town)
        e = Edge(
            new_id(),
            _SCOPE,
            who.id,
            town.id,
            "LIVES_IN",
            valid_from=_AT + timedelta(days=i),
            created_at=_AT,
            memory_ids=(mid,),
        )
        _insert(store, e)
        edges.append(e)
    return store, who, edges


def test_all_values_of_a_slot_within_the_bound(tmp_path: Path) -> None:
    store, who, edges = _mover(tmp_path, 6)
    slots = current.read_slots(store, _SCOPE, ["m5"], ["LIVES_IN"])
    assert [v.edge.id for v in slots.values[(who.id, "LIVES_IN")]] == [e.id for e in edges]
    assert [v.edge.id for v in slots.stated["m5"]] == [edges[5].id]


def test_a_busy_subject_has_its_latest_facts_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, who, edges = _mover(tmp_path, 6)
    monkeypatch.setattr(current, "SLOT_EDGES", 3)
    slots = current.read_slots(store, _SCOPE, ["m5"], ["LIVES_IN"])
    assert [v.edge.id for v in slots.values[(who.id, "LIVES_IN")]] == [e.id for e in edges[3:]]
    assert [v.edge.id for v in slots.stated["m5"]] == [edges[5].id]
