"""Conflicts: who wins, when it is close, and what happens to the loser (expired, kept)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from sage_memory.evolve import conflicts
from sage_memory.evolve.proposal import is_current
from sage_memory.types import Edge, Node, Scope

MARCH = datetime(2026, 3, 1, tzinfo=UTC)
JUNE = datetime(2026, 6, 1, tzinfo=UTC)
NOW = datetime(2026, 7, 1, tzinfo=UTC)
S = Scope(user_id="u")
SINGLE = ("LIVES_IN", "WORKS_AT")


def fact(eid: str, target: str, start: datetime, rel: str = "LIVES_IN", **kw: Any) -> Edge:
    return Edge(
        id=eid,
        scope=S,
        source_id="alice",
        target_id=target,
        relation=rel,
        valid_from=start,
        created_at=NOW - timedelta(days=1),
        **kw,
    )


def test_votes_newer_more_confident_better_sourced() -> None:
    old = fact("p", "paris", MARCH, confidence=0.9, memory_ids=("m1", "m2"))
    new = fact("b", "berlin", JUNE, confidence=0.9, memory_ids=("m3",))
    v = conflicts.judge(old, new)
    # recency (2 votes) against sources (1): too close to call
    assert v.winner is new and not v.decisive
    assert v.votes == {"recency": "winner", "sources": "loser"}
    confident = dataclasses.replace(new, confidence=1.0)
    assert conflicts.judge(old, confident).decisive  # recency + confidence beat sources
    same_day = fact("b2", "berlin", MARCH, confidence=0.5)
    v2 = conflicts.judge(same_day, dataclasses.replace(old, memory_ids=("m1",)))
    assert v2.winner.id == "p" and v2.decisive  # only confidence votes
    tie = conflicts.judge(fact("x", "x", MARCH), fact("y", "y", MARCH))
    assert not tie.decisive and tie.votes == {}


def test_facts_added_out_of_order_are_put_back_in_time_order() -> None:
    # Berlin (June) was added first; Paris (March) was added later and expired it at ingest.
    berlin = fact(
        "b",
        "berlin",
        JUNE,
        valid_to=MARCH,
        expired_at=NOW - timedelta(days=1),
        attributes={"superseded_by_memory": "m2"},
    )
    paris = fact("p", "paris", MARCH)
    (p,) = conflicts.edge_conflicts([berlin, paris], SINGLE, NOW)
    assert p.op == "expire_conflicts" and not p.needs_review
    rows = {e.id: e for e in p.puts if isinstance(e, Edge)}
    assert is_current(rows["b"]) and rows["b"].attributes.get("reinstated") is True
    assert "superseded_by_memory" not in rows["b"].attributes
    assert (rows["p"].valid_from, rows["p"].valid_to, rows["p"].expired_at) == (MARCH, JUNE, NOW)
    assert rows["p"].is_current(datetime(2026, 4, 15, tzinfo=UTC))  # Paris held in April
    assert p.removes == ()  # the loser is kept as history


def test_two_current_values_settle_or_go_to_review() -> None:
    acme = fact("a", "acme", MARCH, rel="WORKS_AT", confidence=0.9, memory_ids=("m1", "m2"))
    globex = fact("g", "globex", JUNE, rel="WORKS_AT", confidence=0.5, memory_ids=("m3",))
    (close,) = conflicts.edge_conflicts([acme, globex], SINGLE, NOW)
    assert close.needs_review and close.confidence == 0.5
    assert close.evidence["votes"] == {
        "recency": "winner",
        "confidence": "loser",
        "sources": "loser",
    }
    clear = dataclasses.replace(globex, confidence=0.95, memory_ids=("m3", "m4"))
    (settled,) = conflicts.edge_conflicts([acme, clear], SINGLE, NOW)
    assert not settled.needs_review
    (loser,) = settled.puts
    assert isinstance(loser, Edge)
    assert (loser.id, loser.valid_to, loser.attributes["superseded_by"]) == ("a", JUNE, "g")


def test_history_and_multi_valued_relations_are_not_conflicts() -> None:
    past = fact("p", "paris", MARCH, valid_to=JUNE, expired_at=JUNE)
    now_ = fact("b", "berlin", JUNE)
    likes = [fact("t", "tea", MARCH, rel="LIKES"), fact("c", "coffee", JUNE, rel="LIKES")]
    assert conflicts.edge_conflicts([past, now_, *likes], SINGLE, NOW) == []


def test_a_statement_and_its_negation_both_current() -> None:
    yes = fact("y", "tea", MARCH, rel="LIKES")
    no = fact("n", "tea", JUNE, rel="LIKES", attributes={"negated": True})
    (p,) = conflicts.edge_conflicts([yes, no], SINGLE, NOW)
    assert p.evidence["kind"] == "negation" and not p.needs_review
    (expired,) = p.puts
    assert isinstance(expired, Edge)
    assert expired.id == "y" and expired.valid_to == JUNE


def test_contradicts_edges_always_ask_and_accepting_weakens_the_loser() -> None:
    a = Node(id="a", scope=S, name="coffee is healthy", confidence=0.6, memory_ids=("m1",))
    b = Node(
        id="b",
        scope=S,
        name="coffee raises blood pressure",
        confidence=0.9,
        memory_ids=("m2", "m3"),
    )
    e = Edge(id="c", scope=S, source_id="a", target_id="b", relation="CONTRADICTS")
    (p,) = conflicts.contradictions([e], {"a": a, "b": b}, NOW)
    assert p.needs_review and p.payload == {"edge": "c", "winner_node": "b", "loser_node": "a"}
    settled = conflicts.settle_contradiction(e, b, a, NOW)
    weakened, resolved = settled.puts
    assert isinstance(weakened, Node) and isinstance(resolved, Edge)
    assert weakened.confidence == 0.3 and weakened.attributes["contradicted_by"] == "b"
    assert resolved.attributes["resolved"] == "b"
    assert conflicts.contradictions([resolved], {"a": a, "b": b}, NOW) == []
