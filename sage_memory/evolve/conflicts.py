"""Contradictions between facts, and how they are settled. Pure functions.

Three kinds are found among the edges of a node:

- single-valued relations (lives in, works at, status...; ``ExtractConfig.single_valued``) with
  two current values, or whose history is out of order: facts added out of time order leave an
  edge expired by an *older* one (its validity ends before it starts);
- a statement and its explicit negation, both current ("Alice likes tea" / "... does not");
- CONTRADICTS edges between two nodes.

The two sides vote: recency (``valid_from``, else when it was learnt) has two votes, a clearly
higher confidence one, more supporting memories one. A side with no vote against it wins, as
does a side two votes ahead; anything closer becomes a review item. The loser is expired
(``expired_at``, and ``valid_to`` when the winner started later: it becomes history), never
deleted. A CONTRADICTS edge always goes to review: which node is right is a judgement.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sage_memory.evolve.proposal import Proposal, is_current, pair_key
from sage_memory.types import Edge, Node

#: Two facts learnt within this time of each other are "as recent".
RECENCY_TOLERANCE = timedelta(days=1)
#: A confidence this much higher counts as "more confident".
CONFIDENCE_MARGIN = 0.1


@dataclass(frozen=True, slots=True)
class Verdict:
    winner: Edge
    loser: Edge
    decisive: bool
    votes: Mapping[str, str]  # criterion -> "winner" | "loser"


def _when(e: Edge) -> datetime:
    return e.valid_from or e.created_at


def judge(a: Edge, b: Edge) -> Verdict:
    """Which of two conflicting facts should stand, and whether the evidence is clear."""
    votes: dict[str, Edge] = {}
    ta, tb = _when(a), _when(b)
    if abs(ta - tb) > RECENCY_TOLERANCE:
        votes["recency"] = a if ta > tb else b
    if abs(a.confidence - b.confidence) >= CONFIDENCE_MARGIN - 1e-9:
        votes["confidence"] = a if a.confidence > b.confidence else b
    sa, sb = len(set(a.memory_ids)), len(set(b.memory_ids))
    if sa != sb:
        votes["sources"] = a if sa > sb else b
    weight = {"recency": 2, "confidence": 1, "sources": 1}
    score = {a.id: 0, b.id: 0}
    for criterion, side in votes.items():
        score[side.id] += weight[criterion]
    if score[a.id] != score[b.id]:
        winner = a if score[a.id] > score[b.id] else b
    else:  # a tie: suggest the newer fact (the review decides)
        winner = a if (ta, a.created_at, a.id) >= (tb, b.created_at, b.id) else b
    loser = b if winner is a else a
    lead = score[winner.id] - score[loser.id]
    decisive = bool(votes) and (score[loser.id] == 0 or lead >= 2)
    named = {c: ("winner" if side is winner else "loser") for c, side in votes.items()}
    return Verdict(winner, loser, decisive, named)


def _expired(loser: Edge, winner: Edge, now: datetime) -> Edge:
    valid_to = loser.valid_to
    start, end = loser.valid_from, winner.valid_from
    if end is not None and (start is None or start < end):
        valid_to = end  # the winner took over: the loser is history until then
    elif valid_to is None:
        valid_to = start or now  # never held: an empty period keeps it out of as-of reads
    attributes = {**loser.attributes, "superseded_by": winner.id, "expired_by": "evolver"}
    return dataclasses.replace(loser, valid_to=valid_to, expired_at=now, attributes=attributes)


def _reinstated(edge: Edge) -> Edge:
    attributes = {
        k: v
        for k, v in edge.attributes.items()
        if k
        not in ("superseded_by_memory", "superseded_by", "expired_by", "competing", "competes_with")
    }
    attributes["reinstated"] = True
    return dataclasses.replace(edge, valid_to=None, expired_at=None, attributes=attributes)


def _inverted(e: Edge) -> bool:
    """Expired by a fact that started earlier: the sign of facts added out of order."""
    return (
        e.expired_at is not None
        and e.valid_to is not None
        and e.valid_from is not None
        and e.valid_to < e.valid_from
        and "superseded_by_memory" in e.attributes
        and e.attributes.get("expired_by") != "evolver"
    )


def _evidence(v: Verdict, kind: str, names: Mapping[str, str]) -> dict[str, Any]:
    def side(e: Edge) -> dict[str, Any]:
        return {
            "edge": e.id,
            "fact": e.fact
            or f"{names.get(e.source_id, '?')} {e.relation} {names.get(e.target_id, '?')}",
            "valid_from": None if e.valid_from is None else e.valid_from.isoformat(),
            "confidence": e.confidence,
            "sources": len(set(e.memory_ids)),
        }

    return {"kind": kind, "winner": side(v.winner), "loser": side(v.loser), "votes": dict(v.votes)}


def _proposal(v: Verdict, kind: str, now: datetime, names: Mapping[str, str]) -> Proposal:
    evidence = _evidence(v, kind, names)
    puts: list[Edge] = [_expired(v.loser, v.winner, now)]
    if not is_current(v.winner):
        puts.insert(0, _reinstated(v.winner))
    verb = "expire" if v.decisive else "review"
    return Proposal(
        op="expire_conflicts",
        summary=f"{verb} {evidence['loser']['fact']!r}: conflicts with "
        f"{evidence['winner']['fact']!r}",
        puts=tuple(puts),
        confidence=0.9 if v.decisive else 0.5,
        evidence=evidence,
        key="conflict:" + pair_key(v.winner.id, v.loser.id),
        payload={"winner": v.winner.id, "loser": v.loser.id},
        needs_review=not v.decisive,
    )


def edge_conflicts(
    edges: Iterable[Edge],
    single_valued: Iterable[str],
    now: datetime,
    names: Mapping[str, str] | None = None,
) -> list[Proposal]:
    """Conflicting facts among ``edges`` (typically all edges of some nodes), settled or queued.

    Args:
        edges: Edges to examine, current and expired.
        single_valued: Relations whose source has one value at a time.
        now: The run's time (``expired_at`` of losers).
        names: Node names for readable evidence.
    """
    single = frozenset(single_valued)
    unique = {e.id: e for e in edges}
    groups: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    statements: dict[tuple[str, str, str], list[Edge]] = defaultdict(list)
    for e in unique.values():
        negated = bool(e.attributes.get("negated"))
        if is_current(e):
            statements[e.source_id, e.relation, e.target_id].append(e)
        if e.relation in single and not negated and (is_current(e) or _inverted(e)):
            groups[e.source_id, e.relation].append(e)
    settling = _Settling(now, names or {})
    for group in groups.values():
        for best, other in _single_valued_pairs(group):
            settling.consider(judge(best, other), "single_valued")
    for group in statements.values():
        pos = [e for e in group if not e.attributes.get("negated")]
        neg = [e for e in group if e.attributes.get("negated")]
        for p in pos:
            for n in neg:
                settling.consider(judge(p, n), "negation")
    return settling.out


def _latest(items: Iterable[Edge]) -> Edge:
    return max(items, key=lambda e: (_when(e), e.confidence, len(e.memory_ids), e.id))


def _single_valued_pairs(group: Sequence[Edge]) -> Iterator[tuple[Edge, Edge]]:
    """The pairs of one source's values of one relation to judge, the latest first."""
    live = [e for e in group if is_current(e)]
    if not live or len({e.target_id for e in group}) < 2:
        return
    # The latest fact of the whole history first (it may have been expired out of order),
    # then the latest current one against the other current ones.
    firsts = {e.id: e for e in (_latest(group), _latest(live))}
    for best in firsts.values():
        for other in sorted(live, key=lambda e: e.id):
            if other.id != best.id and other.target_id != best.target_id:
                yield best, other


class _Settling:
    """The verdicts of one call, each pair and each expired fact considered once."""

    def __init__(self, now: datetime, names: Mapping[str, str]) -> None:
        self.now = now
        self.names = names
        self.out: list[Proposal] = []
        self.seen: set[str] = set()
        self.expired: set[str] = set()

    def consider(self, v: Verdict, kind: str) -> None:
        key = pair_key(v.winner.id, v.loser.id)
        if key in self.seen or v.loser.id in self.expired or v.winner.id in self.expired:
            return
        if not is_current(v.loser):
            return  # the loser is history already
        if not is_current(v.winner) and not v.decisive:
            return  # an out-of-order history that is not clearly wrong stays as it is
        self.seen.add(key)
        if v.decisive:
            self.expired.add(v.loser.id)
        self.out.append(_proposal(v, kind, self.now, self.names))


def competing_claim(
    weak: Edge, standing: Edge, now: datetime, names: Mapping[str, str] | None = None
) -> Proposal:
    """The review item for a claim kept beside a much more confident fact (engine/timeline.py).

    Accepting it makes the weaker claim the value from its start and the standing fact its
    history; rejecting it leaves both as they are.
    """
    votes = {"confidence": "loser"}
    proposal = _proposal(Verdict(weak, standing, False, votes), "competing_claim", now, names or {})
    new, old = proposal.evidence["winner"], proposal.evidence["loser"]
    summary = (
        f"competing claim {new['fact']!r} (confidence {new['confidence']:.2f}) against "
        f"{old['fact']!r} (confidence {old['confidence']:.2f}): accept to make it current"
    )
    return dataclasses.replace(proposal, summary=summary)


def contradictions(
    edges: Iterable[Edge],
    nodes: Mapping[str, Node],
    now: datetime,
    claims: Mapping[str, Edge] | None = None,
) -> list[Proposal]:
    """A review item for each open CONTRADICTS edge between two known nodes.

    Accepting one (see :func:`settle_contradiction`) lowers the confidence of the node judged
    weaker and marks the edge resolved; nothing is deleted. A CONTRADICTS edge between two
    competing claims of one relation (its ``claims`` attribute) becomes the claims' review item
    (:func:`competing_claim`) when ``claims`` holds their edges.
    """
    out = []
    names = {nid: n.name for nid, n in nodes.items()}
    for e in edges:
        if e.relation != "CONTRADICTS" or not is_current(e) or e.attributes.get("resolved"):
            continue
        pair = e.attributes.get("claims")
        if pair:
            weak, standing = (claims or {}).get(pair[0]), (claims or {}).get(pair[1])
            if weak is not None and standing is not None and weak.attributes.get("competing"):
                out.append(competing_claim(weak, standing, now, names))
            continue
        a, b = nodes.get(e.source_id), nodes.get(e.target_id)
        if a is None or b is None:
            continue
        winner, loser = _stronger(a, b)
        out.append(
            Proposal(
                op="expire_conflicts",
                summary=f"{a.name!r} contradicts {b.name!r}: trust {winner.name!r}?",
                confidence=0.5,
                evidence={
                    "kind": "contradicts",
                    "edge": e.id,
                    "fact": e.fact,
                    "winner": {
                        "node": winner.id,
                        "name": winner.name,
                        "sources": len(winner.memory_ids),
                    },
                    "loser": {
                        "node": loser.id,
                        "name": loser.name,
                        "sources": len(loser.memory_ids),
                    },
                },
                key="contradicts:" + e.id,
                payload={"edge": e.id, "winner_node": winner.id, "loser_node": loser.id},
                needs_review=True,
            )
        )
    return out


def _stronger(a: Node, b: Node) -> tuple[Node, Node]:
    def rank(n: Node) -> tuple[float, int, datetime, str]:
        return (n.confidence, len(n.memory_ids), n.updated_at, n.id)

    return (a, b) if rank(a) >= rank(b) else (b, a)


def settle_contradiction(edge: Edge, winner: Node, loser: Node, now: datetime) -> Proposal:
    """The rows accepting a CONTRADICTS review item writes."""
    weakened = dataclasses.replace(
        loser,
        confidence=min(loser.confidence, 0.3),
        attributes={**loser.attributes, "contradicted_by": winner.id},
        updated_at=now,
    )
    resolved = dataclasses.replace(edge, attributes={**edge.attributes, "resolved": winner.id})
    return Proposal(
        op="expire_conflicts",
        summary=f"trust {winner.name!r} over {loser.name!r}",
        puts=(weakened, resolved),
        key="contradicts:" + edge.id,
        payload={"edge": edge.id, "winner_node": winner.id, "loser_node": loser.id},
    )


def settle(winner: Edge, loser: Edge, now: datetime) -> Proposal:
    """The rows of deciding a conflict for ``winner`` (what accepting a review item writes)."""
    votes: Mapping[str, str] = {}
    return _proposal(Verdict(winner, loser, True, votes), "reviewed", now, {})
