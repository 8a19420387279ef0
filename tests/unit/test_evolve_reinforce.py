"""Edge weights: the reinforcement/decay rule, associations from co-access, access counts."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sage_memory.config import EvolveConfig
from sage_memory.evolve import reinforce
from sage_memory.evolve.proposal import weight_clock
from sage_memory.types import Edge, Memory, Node, Scope

T0 = datetime(2026, 3, 1, tzinfo=UTC)
S = Scope(user_id="u")
CFG = EvolveConfig()


def edge(a: str, b: str, rel: str = "USES", weight: float = 1.0, **kw: Any) -> Edge:
    return Edge(
        id=f"{a}-{b}",
        scope=S,
        source_id=a,
        target_id=b,
        relation=rel,
        weight=weight,
        created_at=T0,
        **kw,
    )


def node(nid: str) -> Node:
    return Node(id=nid, scope=S, name=nid.upper(), created_at=T0, updated_at=T0)


def put_edge(p: Any) -> Edge:
    (record,) = p.puts
    assert isinstance(record, Edge)
    return record


def rule(w: float, co: float, days: float) -> float:
    return reinforce.step_weight(
        w, co, days, decay=0.98, learning_rate=0.1, min_weight=0.1, max_weight=5.0
    )


def test_the_rule_is_clip_of_decayed_weight_plus_co_access() -> None:
    assert rule(1.0, 0, 1) == pytest.approx(0.98)
    assert rule(1.0, 3, 1) == pytest.approx(0.98 + 0.3)
    assert rule(4.9, 10, 0) == 5.0  # ceiling
    assert rule(0.2, 0, 365) == 0.1  # floor
    assert rule(1.0, -20, 0) == 0.1  # negative feedback cannot go below the floor


def test_decay_is_the_same_however_often_a_run_visits_the_edge() -> None:
    e = edge("a", "b", weight=2.0)
    once = reinforce.decay([e], T0 + timedelta(days=10), CFG)[0].puts[0]
    first = reinforce.decay([e], T0 + timedelta(days=5), CFG)[0].puts[0]
    assert isinstance(first, Edge)
    again = reinforce.decay([first], T0 + timedelta(days=10), CFG)[0].puts[0]
    assert isinstance(once, Edge) and isinstance(again, Edge)
    assert once.weight == pytest.approx(again.weight, abs=1e-5)
    assert once.weight == pytest.approx(2.0 * 0.98**10, abs=1e-5)
    assert weight_clock(again) == T0 + timedelta(days=10)


def test_decay_skips_fresh_expired_structural_and_floored_edges() -> None:
    now = T0 + timedelta(days=30)
    fresh = dataclasses.replace(edge("a", "b"), created_at=now - timedelta(hours=2))
    expired = edge("a", "c", expired_at=T0, valid_to=T0)
    structural = edge("s", "a", rel="SUMMARIZES")
    floored = edge("a", "d", weight=0.1)
    assert reinforce.decay([fresh, expired, structural, floored], now, CFG) == []


def test_reinforce_strengthens_edges_between_co_accessed_nodes_and_reports_the_rest() -> None:
    ab, bc = edge("a", "b"), edge("c", "b")
    now = T0 + timedelta(days=1)
    props, unlinked = reinforce.reinforce(
        [("a", "b", 6.0, 2), ("b", "c", 3.0, 1), ("a", "d", 9.0, 3)], [ab, bc], now, CFG
    )
    weights = {put_edge(p).id: put_edge(p).weight for p in props}
    assert weights == {"a-b": pytest.approx(0.98 + 0.6), "c-b": pytest.approx(0.98 + 0.3)}
    assert all(p.op == "reinforce" for p in props)
    assert unlinked == [("a", "d", 9.0, 3)]


def test_association_needs_repeated_and_weighty_co_access() -> None:
    nodes = {i: node(i) for i in "abcd"}
    props = reinforce.associate(
        [
            ("a", "b", 9.0, 3),  # three uses: associated
            ("a", "c", 2.0, 8),  # returned together often but weightless (0.25 each)
            ("a", "d", 6.0, 2),  # heavy but only twice
        ],
        nodes,
        S,
        T0,
        CFG,
    )
    assert len(props) == 1
    new = props[0].puts[0]
    assert isinstance(new, Edge)
    assert (new.source_id, new.target_id, new.relation) == ("a", "b", "ASSOCIATED_WITH")
    assert new.weight == pytest.approx(0.9)
    assert new.confidence == reinforce.ASSOCIATION_CONFIDENCE
    assert new.attributes["origin"] == "co_access"


def test_an_unused_association_fades_away_but_a_stated_fact_only_weakens() -> None:
    learnt = edge("a", "b", rel="ASSOCIATED_WITH", attributes={"origin": "co_access"})
    stated = edge("a", "c")
    props = reinforce.decay([learnt, stated], T0 + timedelta(days=400), CFG)
    by_edge = {p.evidence["edge"]: p for p in props}
    assert by_edge["a-b"].removes == (learnt,) and by_edge["a-b"].puts == ()
    assert put_edge(by_edge["a-c"]).weight == pytest.approx(0.1)


def test_horizon_is_when_a_unit_weight_reaches_the_floor() -> None:
    days = reinforce.horizon_days(CFG)
    assert rule(1.0, 0, days) == pytest.approx(0.1)
    assert rule(1.0, 0, days - 5) > 0.1


def test_record_use_adds_counts_and_keeps_the_latest_time() -> None:
    n = dataclasses.replace(node("a"), access_count=2, last_accessed=T0 + timedelta(days=9))
    m = Memory(id="m", text="x", scope=S, timestamp=T0, created_at=T0, updated_at=T0)
    props = reinforce.record_use(
        [n, m], {"a": (3, T0 + timedelta(days=5)), "m": (1, T0 + timedelta(days=1))}
    )
    a, mm = (p.puts[0] for p in props)
    assert isinstance(a, Node) and isinstance(mm, Memory)
    assert (a.access_count, a.last_accessed) == (5, T0 + timedelta(days=9))
    assert (mm.access_count, mm.last_accessed) == (1, T0 + timedelta(days=1))
