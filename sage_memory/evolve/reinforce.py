"""Reinforcement and decay of edge weights, and associations learnt from use. Pure functions.

One rule moves every weight:

    w <- clip(w * decay ** days_unused + co_access * learning_rate, min_weight, max_weight)

``days_unused`` is the time since the weight was last set (kept on the edge as the
``weight_at`` attribute, so a weight decays by the same amount whether a run visits it daily or
once a month); ``co_access`` is the summed weight of the access events that returned or used
both ends of the edge since the last run (a search counts 1, an item marked used counts
``feedback_weight``, an item marked unused counts negative). Two nodes used together in
``associate_after`` or more events, with a summed weight of at least ``associate_after``, and
no edge between them get a weak ASSOCIATED_WITH edge, whose weight then follows the same rule;
only use within :func:`horizon_days` counts, and an association whose weight falls to the
floor has faded: it is removed (journaled), so a stopped habit stops steering retrieval.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sage_memory.config import EvolveConfig
from sage_memory.evolve.proposal import Proposal, is_current, weight_clock
from sage_memory.types import Edge, Memory, Node, Scope, new_id

DAY_SECONDS = 86_400.0
#: Relations that record structure the evolver built, not knowledge: they do not decay.
STRUCTURAL = frozenset({"SUMMARIZES", "MEMBER_OF"})
#: Confidence of a learnt association: usage says "together", not what the relation is, so
#: its pull in retrieval comes from its weight, which fades when the usage stops.
ASSOCIATION_CONFIDENCE = 0.6
#: A weight change smaller than this is not worth a journal entry.
EPSILON = 1e-3

#: (node a, node b, summed event weight, number of events), a < b, as the store reports them.
CoAccess = tuple[str, str, float, int]


def step_weight(
    weight: float,
    co_access: float,
    days: float,
    *,
    decay: float,
    learning_rate: float,
    min_weight: float,
    max_weight: float,
) -> float:
    """One application of the weight rule (see the module docstring)."""
    decayed: float = weight * decay ** max(days, 0.0)
    return float(min(max_weight, max(min_weight, decayed + co_access * learning_rate)))


def elapsed_days(since: datetime, now: datetime) -> float:
    """Days from ``since`` to ``now``; 0 when ``since`` is in the future."""
    return max(0.0, (now - since).total_seconds() / DAY_SECONDS)


def _new_weight(edge: Edge, co_access: float, now: datetime, cfg: EvolveConfig) -> float:
    return step_weight(
        edge.weight,
        co_access,
        elapsed_days(weight_clock(edge), now),
        decay=cfg.decay,
        learning_rate=cfg.learning_rate,
        min_weight=cfg.min_weight,
        max_weight=cfg.max_weight,
    )


def horizon_days(cfg: EvolveConfig) -> float:
    """Days for an unused weight of 1 to decay to ``min_weight``: how far back co-access
    still counts towards a new association (older use would have faded by now)."""
    if not 0 < cfg.decay < 1 or cfg.min_weight <= 0:
        return 365.0
    return math.log(cfg.min_weight) / math.log(cfg.decay)


def _faded(edge: Edge, weight: float, cfg: EvolveConfig) -> bool:
    """A learnt association whose use stopped: it goes (journaled; undo brings it back)."""
    return edge.attributes.get("origin") == "co_access" and weight <= cfg.min_weight + 1e-9


def _weighted(
    op: str, edge: Edge, weight: float, now: datetime, cfg: EvolveConfig, **evidence: Any
) -> Proposal:
    """The proposal setting ``edge``'s weight (or removing a faded association)."""
    if _faded(edge, weight, cfg):
        return Proposal(
            op=op,
            summary=f"association {edge.fact or edge.id!r} faded: unused, removed",
            removes=(edge,),
            evidence={**evidence, "edge": edge.id, "faded": True},
            key=f"{op}:{edge.id}",
        )
    attributes = {**edge.attributes, "weight_at": now.isoformat()}
    return Proposal(
        op=op,
        summary=f"{edge.relation} edge weight {edge.weight:.2f} -> {weight:.2f}",
        puts=(dataclasses.replace(edge, weight=round(weight, 6), attributes=attributes),),
        evidence={**evidence, "edge": edge.id},
        key=f"{op}:{edge.id}",
    )


def reinforce(
    pairs: Sequence[CoAccess], edges: Iterable[Edge], now: datetime, cfg: EvolveConfig
) -> tuple[list[Proposal], list[CoAccess]]:
    """Apply the weight rule to the current edges between co-accessed nodes.

    Args:
        pairs: Co-access of the window since the last run.
        edges: Edges touching the nodes of ``pairs`` (any others are ignored).
        now: The run's time.
        cfg: Weight parameters.

    Returns:
        The reweighting proposals, and the pairs that have no current edge between them
        (candidates for :func:`associate`).
    """
    between: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for e in edges:
        if is_current(e) and e.source_id != e.target_id:
            a, b = sorted((e.source_id, e.target_id))
            if e not in between[a, b]:
                between[a, b].append(e)
    out: list[Proposal] = []
    unlinked: list[CoAccess] = []
    for a, b, weight, events in pairs:
        found = between.get((a, b))
        if not found:
            unlinked.append((a, b, weight, events))
            continue
        for e in found:
            new = _new_weight(e, weight, now, cfg)
            out.append(
                _weighted("reinforce", e, new, now, cfg, co_access=round(weight, 3), events=events)
            )
    return out, unlinked


def associate(
    lifetime: Sequence[CoAccess],
    nodes: Mapping[str, Node],
    scope: Scope,
    now: datetime,
    cfg: EvolveConfig,
) -> list[Proposal]:
    """A weak ASSOCIATED_WITH edge for each pair used together in enough events.

    Args:
        lifetime: Co-access over the whole access log, for pairs without an edge.
        nodes: The nodes of those pairs (pairs whose nodes are gone are skipped).
        scope: The partition.
        now: The run's time.
        cfg: ``associate_after`` and the weight parameters.
    """
    out = []
    for a, b, weight, events in lifetime:
        # Repeatedly *and* with weight: three uses suffice, but pairs a search merely returned
        # together (weight ``retrieved_weight`` each) need several times more events.
        strong = events >= cfg.associate_after and weight >= cfg.associate_after
        if not strong or a not in nodes or b not in nodes:
            continue
        w = step_weight(
            0.0,
            weight,
            0.0,
            decay=cfg.decay,
            learning_rate=cfg.learning_rate,
            min_weight=cfg.min_weight,
            max_weight=cfg.max_weight,
        )
        na, nb = nodes[a], nodes[b]
        edge = Edge(
            id=new_id(),
            scope=scope,
            source_id=a,
            target_id=b,
            relation="ASSOCIATED_WITH",
            fact=f"{na.name} and {nb.name} are often used together",
            weight=round(w, 6),
            confidence=ASSOCIATION_CONFIDENCE,
            valid_from=now,
            created_at=now,
            attributes={"weight_at": now.isoformat(), "origin": "co_access", "events": events},
        )
        out.append(
            Proposal(
                op="associate",
                summary=f"associate {na.name!r} with {nb.name!r} ({events} co-access events)",
                puts=(edge,),
                confidence=edge.confidence,
                evidence={"co_access": round(weight, 3), "events": events},
                key=f"associate:{a}|{b}",
            )
        )
    return out


def decay(edges: Iterable[Edge], now: datetime, cfg: EvolveConfig) -> list[Proposal]:
    """Apply the weight rule with no co-access to current edges unused for a day or more."""
    out = []
    for e in edges:
        if not is_current(e) or e.relation in STRUCTURAL:
            continue
        days = elapsed_days(weight_clock(e), now)
        if days < 1.0:
            continue
        new = _new_weight(e, 0.0, now, cfg)
        if abs(new - e.weight) < EPSILON and not _faded(e, new, cfg):
            continue  # already at the floor: nothing to write
        out.append(_weighted("decay", e, new, now, cfg, days_unused=round(days, 2)))
    return out


def record_use(
    records: Iterable[Node | Memory], used: Mapping[str, tuple[int, datetime]]
) -> list[Proposal]:
    """Access counts and last-access times of the nodes and memories used in the window."""
    out = []
    for rec in records:
        if rec.id not in used:
            continue
        times, last = used[rec.id]
        latest = last if rec.last_accessed is None else max(last, rec.last_accessed)
        updated = dataclasses.replace(
            rec, access_count=rec.access_count + times, last_accessed=latest
        )
        kind = "node" if isinstance(rec, Node) else "memory"
        out.append(
            Proposal(
                op="reinforce",
                summary=f"{kind} {rec.id[:8]} used {times} more time(s)",
                puts=(updated,),
                evidence={"uses": times},
                key=f"use:{rec.id}",
            )
        )
    return out
