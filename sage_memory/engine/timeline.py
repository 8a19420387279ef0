"""The history of a single-valued relation, decided by world time and by confidence.

"Alice lives in Paris" (March) and "Alice moved to Berlin" (June) are two *claims* about one
subject and relation. Which value is current depends on when each became true
(``valid_from``), never on the order the memory learnt them: every value holds until the next
one starts, the latest is current, and an older claim learnt late becomes history at once.
Each time a claim arrives the whole timeline of that (subject, relation) is recomputed, so
intervals are always well formed (``valid_to >= valid_from``) and never overlap.

Confidence counts too: a claim much less confident than the fact it would cut short (by more
than ``ExtractConfig.contradiction_margin``) does not replace it. It is kept as a *competing
claim* (expired in system time, marked ``competing``), linked to the standing fact's value by a
CONTRADICTS edge, and the write reports it for the review queue; the context shows both with
their confidence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sage_memory.types import Edge, EdgeSpec, Memory, new_id

if TYPE_CHECKING:
    from sage_memory.engine.gate import IngestOutcome
    from sage_memory.engine.unit import UnitOfWork

_EARLIEST = datetime.min.replace(tzinfo=UTC)
#: How much a repeated statement of a value strengthens its edge.
REINFORCE_STEP = 0.1
MAX_WEIGHT = 5.0


@dataclass(frozen=True, slots=True)
class Claim:
    """A value for (source, relation) that one memory states."""

    spec: EdgeSpec
    source_id: str
    target_id: str
    relation: str
    valid_from: datetime
    attributes: Mapping[str, Any]
    #: The targets of the values the same sentence states with this one ("a producer and an
    #: engineer"): they hold together, none replaces another.
    together: frozenset[str] = frozenset()


def is_claim(edge: Edge) -> bool:
    """An edge that takes part in its relation's timeline (not a negation, not competing)."""
    return not edge.attributes.get("negated") and not edge.attributes.get("competing")


def _start(edge: Edge) -> datetime:
    return edge.valid_from or _EARLIEST


Order = Callable[[Edge], tuple[datetime, datetime, int, str]]


def learnt_order(uow: UnitOfWork) -> Order:
    """Claims by world time, then by when they were learnt. Claims of one add_many chunk share
    both times ("a violinist and a composer": one sentence, one instant): among them the one
    the unit of work took in later was learnt later, as a reader of the text would take it.
    The (random) id comes last, so the same text ingested twice keeps the same value current."""

    def key(edge: Edge) -> tuple[datetime, datetime, int, str]:
        return (_start(edge), edge.created_at, uow.position(edge.id), edge.id)

    return key


class Timeline:
    """Places claims on the timeline of their (source, relation), inside a unit of work."""

    def __init__(self, margin: float) -> None:
        self.margin = margin

    def add(
        self,
        uow: UnitOfWork,
        memory: Memory,
        claim: Claim,
        existing: Sequence[Edge],
        now: datetime,
        out: IngestOutcome,
    ) -> None:
        order = learnt_order(uow)
        claims = sorted((e for e in existing if is_claim(e)), key=order)
        twin = _adjacent_same_value(claims, claim)
        if twin is not None:
            claims = [e for e in claims if e.id != twin.id]
            edge = _reinforced(twin, claim, memory)
        else:
            edge = _new_edge(memory, claim, now)
            standing = _holding_at(claims, claim.valid_from, order)
            if standing is not None and standing.confidence - edge.confidence > self.margin:
                self._compete(uow, memory, edge, standing, now, out)
                return
        claims, edge = _link_together(claims, edge, claim, memory)
        uow.put(edge)
        out.edge_ids.append(edge.id)
        for changed in _recompute([*claims, edge], now, order):
            uow.put(changed)
            if changed.expired_at == now and changed.id != edge.id:
                out.expired_edge_ids.append(changed.id)
            elif changed.id == edge.id and changed.expired_at is not None:
                out.expired_edge_ids.append(changed.id)  # an older value learnt late

    def _compete(
        self,
        uow: UnitOfWork,
        memory: Memory,
        edge: Edge,
        standing: Edge,
        now: datetime,
        out: IngestOutcome,
    ) -> None:
        attributes = {**edge.attributes, "competing": True, "competes_with": standing.id}
        weak = dataclasses.replace(edge, expired_at=now, attributes=attributes)
        uow.put(weak)
        out.edge_ids.append(weak.id)
        out.competing.append((weak.id, standing.id))
        if weak.target_id == standing.target_id:
            return
        link = Edge(
            id=new_id(),
            scope=edge.scope,
            source_id=weak.target_id,
            target_id=standing.target_id,
            relation="CONTRADICTS",
            fact=f"competing claims for {edge.relation}: {weak.fact or weak.id} "
            f"(confidence {weak.confidence:.2f}) vs {standing.fact or standing.id} "
            f"(confidence {standing.confidence:.2f})",
            confidence=weak.confidence,
            valid_from=weak.valid_from,
            created_at=now,
            memory_ids=(memory.id,),
            attributes={"claims": [weak.id, standing.id], "about": edge.source_id},
        )
        uow.put(link)
        out.edge_ids.append(link.id)


#: The edge attribute listing the ids of the claims one sentence stated with this one.
STATED_WITH = "stated_with"


def _link_together(
    claims: Sequence[Edge], edge: Edge, claim: Claim, memory: Memory
) -> tuple[list[Edge], Edge]:
    """Mark ``edge`` and the claims this memory stated with it as holding together."""
    peers = [
        e
        for e in claims
        if e.target_id in claim.together and memory.id in e.memory_ids and e.id != edge.id
    ]
    if not peers:
        return list(claims), edge
    ids = {e.id for e in peers}
    edge = _with_peers(edge, ids)
    return [_with_peers(e, {edge.id}) if e.id in ids else e for e in claims], edge


def _with_peers(edge: Edge, ids: set[str]) -> Edge:
    known = [i for i in edge.attributes.get(STATED_WITH, ()) if isinstance(i, str)]
    return dataclasses.replace(
        edge, attributes={**edge.attributes, STATED_WITH: sorted({*known, *ids})}
    )


def _together(a: Edge, b: Edge) -> bool:
    return b.id in a.attributes.get(STATED_WITH, ()) or a.id in b.attributes.get(STATED_WITH, ())


def _adjacent_same_value(claims: Sequence[Edge], claim: Claim) -> Edge | None:
    """A claim of the same value with no other value between it and the new one in time."""
    best: Edge | None = None
    for e in claims:
        if e.target_id != claim.target_id:
            continue
        lo, hi = sorted((_start(e), claim.valid_from))
        between = [o for o in claims if o.target_id != claim.target_id and lo < _start(o) <= hi]
        if not between and (
            best is None or abs(_start(e) - claim.valid_from) < abs(_start(best) - claim.valid_from)
        ):
            best = e
    return best


def _holding_at(claims: Sequence[Edge], at: datetime, order: Order) -> Edge | None:
    """The claim whose value holds at ``at`` (the latest that started by then), if any."""
    started = [e for e in claims if _start(e) <= at]
    if not started:
        return None
    last = max(started, key=order)
    if last.attributes.get("ended") and last.valid_to is not None and last.valid_to <= at:
        return None
    return last


def _new_edge(memory: Memory, claim: Claim, now: datetime) -> Edge:
    spec = claim.spec
    return Edge(
        id=new_id(),
        scope=memory.scope.partition,
        source_id=claim.source_id,
        target_id=claim.target_id,
        relation=claim.relation,
        fact=spec.fact,
        weight=1.0,
        confidence=spec.confidence,
        valid_from=claim.valid_from,
        valid_to=spec.valid_to,
        created_at=now,
        memory_ids=(memory.id,),
        attributes={**claim.attributes, **({"ended": True} if spec.valid_to else {})},
    )


def _reinforced(edge: Edge, claim: Claim, memory: Memory) -> Edge:
    start = min(_start(edge), claim.valid_from)
    return dataclasses.replace(
        edge,
        weight=min(MAX_WEIGHT, edge.weight + REINFORCE_STEP),
        confidence=max(edge.confidence, claim.spec.confidence),
        valid_from=None if start == _EARLIEST else start,
        memory_ids=tuple(dict.fromkeys((*edge.memory_ids, memory.id))),
    )


def _recompute(claims: Sequence[Edge], now: datetime, order: Order) -> list[Edge]:
    """Each claim's interval from the claims around it; returns the edges that changed."""
    ordered = sorted(claims, key=order)
    changed: list[Edge] = []
    for i, e in enumerate(ordered):
        # the next value replaces this one, unless one sentence stated both
        nxt = next((o for o in ordered[i + 1 :] if not _together(e, o)), None)
        # An end that is itself a fact ("no longer lives there") or a review's verdict stays.
        fixed = e.attributes.get("ended") or e.attributes.get("expired_by") == "evolver"
        stated = e.valid_to if fixed else None
        end = stated
        if nxt is not None:
            cut = max(_start(nxt), _start(e))
            end = cut if stated is None else min(stated, cut)
        if end is not None and e.valid_from is not None and end < e.valid_from:
            end = e.valid_from
        attributes = dict(e.attributes)
        if end is None:
            expired_at = None
            attributes.pop("superseded_by_memory", None)
        else:
            expired_at = e.expired_at or now
            if nxt is not None and stated is None:
                attributes["superseded_by"] = nxt.id
        if (end, expired_at) != (e.valid_to, e.expired_at) or attributes != dict(e.attributes):
            changed.append(
                dataclasses.replace(e, valid_to=end, expired_at=expired_at, attributes=attributes)
            )
    return changed
