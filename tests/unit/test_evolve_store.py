"""The evolver's state in both stores: access log, co-access, review queue, graph metrics."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sage_memory.engine.journal import Batch
from sage_memory.store.base import GraphStore
from sage_memory.store.memory import InMemoryGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import AccessEvent, Edge, Node, Scope, Suggestion

T0 = datetime(2026, 3, 1, tzinfo=UTC)
U = Scope(user_id="u")
V = Scope(user_id="v")


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    s: GraphStore = (
        InMemoryGraphStore()
        if request.param == "memory"
        else SQLiteGraphStore(tmp_path / "sage.db")
    )
    yield s
    s.close()


def event(scope: Scope, at: datetime, nodes: tuple[str, ...], **kw: Any) -> AccessEvent:
    return AccessEvent(id=f"e{at.day}{nodes}", scope=scope, at=at, node_ids=nodes, **kw)


def test_co_access_pairs_items_and_context_but_not_context_with_context(
    store: GraphStore,
) -> None:
    store.log_access(
        [
            event(U, T0, ("a", "b", "c"), weight=0.25),
            event(
                U,
                T0 + timedelta(days=1),
                ("f",),
                kind="used",
                weight=3.0,
                context_ids=("a", "b"),
                memory_ids=("m1",),
            ),
            event(V, T0, ("a", "b")),  # another scope never mixes in
        ]
    )
    pairs = store.co_access(U)
    assert pairs == [
        ("a", "f", 3.0, 1),
        ("b", "f", 3.0, 1),
        ("a", "b", 0.25, 1),  # only the search paired them; the feedback's context did not
        ("a", "c", 0.25, 1),
        ("b", "c", 0.25, 1),
    ]
    assert store.co_access(U, node_ids=["a", "b", "c"]) == pairs[2:]
    assert store.co_access(U, since=T0 + timedelta(hours=1)) == pairs[:2]
    assert store.co_access(U, limit=1) == pairs[:1]
    assert store.co_access(U, after_seq=store.access_seq()) == []
    used = store.accessed(U)
    assert used["f"] == (1, T0 + timedelta(days=1)) and used["m1"][0] == 1
    assert "a" in used and used["a"][0] == 1  # context rows are not uses


def test_unused_feedback_lowers_the_pair_and_does_not_count_as_use(store: GraphStore) -> None:
    store.log_access([event(U, T0, ("a",), kind="unused", weight=-1.0, context_ids=("q",))])
    assert store.co_access(U) == [("a", "q", -1.0, 1)]
    assert store.accessed(U) == {}


def test_access_window_and_pruning(store: GraphStore) -> None:
    assert store.access_seq() == 0
    store.log_access([event(U, T0, ("a", "b"))])
    mid = store.access_seq()
    store.log_access([event(U, T0 + timedelta(days=10), ("a", "b"))])
    assert store.co_access(U, after_seq=mid) == [("a", "b", 1.0, 1)]
    assert store.co_access(U, until_seq=mid) == [("a", "b", 1.0, 1)]
    assert store.prune_access(T0 + timedelta(days=5)) == 2
    assert store.co_access(U) == [("a", "b", 1.0, 1)]


def suggestion(sid: str, key: str, scope: Scope = U) -> Suggestion:
    return Suggestion(
        id=sid,
        scope=scope,
        op="merge",
        key=key,
        summary=f"merge {key}",
        confidence=0.8,
        created_at=T0,
        evidence={"why": ["names"]},
        payload={"keep": "a", "drop": "b"},
    )


def test_review_queue_dedupes_by_key_and_tracks_status(store: GraphStore) -> None:
    queued = store.put_suggestions([suggestion("s1", "k1"), suggestion("s2", "k2")])
    assert [s.id for s in queued] == ["s1", "s2"]
    assert store.put_suggestions([suggestion("s3", "k1"), suggestion("s4", "k1", V)]) == [
        suggestion("s4", "k1", V)
    ]
    assert [s.id for s in store.list_suggestions(U)] == ["s1", "s2"]
    assert [s.id for s in store.list_suggestions()] == ["s1", "s2", "s4"]
    store.set_suggestion_status(["s1"], "rejected", T0, None)
    store.set_suggestion_status(["s2"], "accepted", T0, "batch-1")
    assert [s.id for s in store.list_suggestions(U)] == []
    (s2,) = store.list_suggestions(status=None, ids=["s2"])
    assert (s2.status, s2.batch_id, s2.updated_at, s2.evidence) == (
        "accepted",
        "batch-1",
        T0,
        {"why": ["names"]},
    )
    assert store.put_suggestions([suggestion("s5", "k1")]) == []  # rejected stays rejected


def test_graph_metrics_count_current_edges_isolated_nodes_and_confidence(
    store: GraphStore,
) -> None:
    batch = Batch("test", "seed", T0)
    for nid in ("a", "b", "c", "lonely"):
        batch.record(None, Node(id=nid, scope=U, name=nid, created_at=T0, updated_at=T0))
    for eid, a, b, rel, conf, expired in (
        ("e1", "a", "b", "USES", 0.8, None),
        ("e2", "b", "c", "USES", 0.6, None),
        ("e3", "a", "c", "IS_A", 1.0, T0),
    ):
        batch.record(
            None,
            Edge(
                id=eid,
                scope=U,
                source_id=a,
                target_id=b,
                relation=rel,
                confidence=conf,
                expired_at=expired,
                created_at=T0,
            ),
        )
    store.apply(batch.changes)
    m = store.graph_metrics(U)
    assert m["relations"] == {"USES": 2}
    assert {k: m[k] for k in ("nodes", "edges", "current_edges", "isolated_nodes")} == {
        "nodes": 4,
        "edges": 3,
        "current_edges": 2,
        "isolated_nodes": 1,
    }
    assert m["confidence_sum"] == pytest.approx(1.4)
    assert store.graph_metrics(V)["nodes"] == 0
