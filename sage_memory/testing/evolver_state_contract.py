"""The EvolverState contract: one suite every backend of the optional evolver-state port runs.

    class TestMyEvolverState(EvolverStateContract):
        def make_state(self, path):      # path: a fresh folder for this test
            return MyStore(path / "db")

The evolver's access log (co-access pairs, uses), its pruning and the review queue.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sage_memory.store.base import EvolverState
from sage_memory.types import AccessEvent, Scope, Suggestion

T0 = datetime(2026, 3, 1, tzinfo=UTC)
U = Scope(user_id="u")
V = Scope(user_id="v")


def event(scope: Scope, at: datetime, nodes: tuple[str, ...], **kw: Any) -> AccessEvent:
    return AccessEvent(id=f"e{at.day}{nodes}", scope=scope, at=at, node_ids=nodes, **kw)


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


class EvolverStateContract:
    """Behaviour every EvolverState must have. Subclass and implement :meth:`make_state`."""

    def make_state(self, path: Path) -> EvolverState:
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[EvolverState]:
        s = self.make_state(tmp_path)
        yield s
        close = getattr(s, "close", None)
        if close is not None:
            close()

    def test_co_access_pairs_items_and_context_but_not_context_with_context(
        self, store: EvolverState
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

    def test_unused_feedback_lowers_the_pair_and_does_not_count_as_use(
        self, store: EvolverState
    ) -> None:
        store.log_access([event(U, T0, ("a",), kind="unused", weight=-1.0, context_ids=("q",))])
        assert store.co_access(U) == [("a", "q", -1.0, 1)]
        assert store.accessed(U) == {}

    def test_access_window_and_pruning(self, store: EvolverState) -> None:
        assert store.access_seq() == 0
        store.log_access([event(U, T0, ("a", "b"))])
        mid = store.access_seq()
        store.log_access([event(U, T0 + timedelta(days=10), ("a", "b"))])
        assert store.co_access(U, after_seq=mid) == [("a", "b", 1.0, 1)]
        assert store.co_access(U, until_seq=mid) == [("a", "b", 1.0, 1)]
        assert store.prune_access(T0 + timedelta(days=5)) == 2
        assert store.co_access(U) == [("a", "b", 1.0, 1)]

    def test_review_queue_dedupes_by_key_and_tracks_status(self, store: EvolverState) -> None:
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
