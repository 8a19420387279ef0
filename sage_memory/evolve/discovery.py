"""Relation discovery: typed relations for vague edges, and new relation types. Suggest only.

Three patterns, each a review item with its counts (never applied without review):

- label pairs: when most typed edges from one label to another share one relation (Task -> Tool
  is USES in 9 of 10 edges), a RELATED_TO / POSSIBLY_RELATED_TO edge between nodes of those
  labels is suggested as that relation;
- usage: a POSSIBLY_RELATED_TO edge whose two nodes are used together in several events is
  suggested as RELATED_TO;
- new types: an extractor's relation that the schema did not know (kept on RELATED_TO edges as
  ``original_relation``) and seen several times is suggested as a new relation type, a schema
  change, for those edges.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from sage_memory.evolve.proposal import Proposal, is_current
from sage_memory.evolve.reinforce import STRUCTURAL, CoAccess
from sage_memory.schema import relation_key
from sage_memory.types import Edge

GENERIC = frozenset({"RELATED_TO", "POSSIBLY_RELATED_TO"})
#: Relations that say nothing about a label pair's typical link.
_UNTYPED = GENERIC | STRUCTURAL | {"ASSOCIATED_WITH", "MENTIONS", "CONTRADICTS"}
_VAGUE_LABELS = frozenset({"Entity", "Concept"})
#: A pattern needs this many examples ...
MIN_SUPPORT = 3
#: ... and this share of its label pair's typed edges.
MIN_SHARE = 0.6
#: Edges one suggestion covers at most.
MAX_EDGES = 50

Patterns = dict[tuple[str, str], Counter[str]]


def _digest(ids: Iterable[str]) -> str:
    return hashlib.blake2b("|".join(sorted(ids)).encode(), digest_size=8).hexdigest()


def label_patterns(edges: Iterable[Edge], labels: Mapping[str, str]) -> Patterns:
    """Typed current relations counted per (source label, target label)."""
    out: Patterns = defaultdict(Counter)
    for e in edges:
        if not is_current(e) or e.relation in _UNTYPED:
            continue
        pair = (labels.get(e.source_id), labels.get(e.target_id))
        if pair[0] is None or pair[1] is None or {pair[0], pair[1]} <= _VAGUE_LABELS:
            continue
        out[pair[0], pair[1]][e.relation] += 1
    return out


def upgraded(edge: Edge, relation: str, now: datetime) -> Edge:
    """``edge`` with a more specific relation; the old one is kept in its attributes."""
    attributes = {**edge.attributes, "upgraded_from": edge.relation, "upgraded_at": now.isoformat()}
    return dataclasses.replace(edge, relation=relation, attributes=attributes)


def plan_upgrade(
    edges: Sequence[Edge], relation: str, now: datetime, *, op: str = "upgrade_relation"
) -> Proposal:
    """The rows of upgrading ``edges`` to ``relation`` (used again when a review accepts)."""
    return Proposal(
        op=op,
        summary=f"relabel {len(edges)} edge(s) as {relation}",
        puts=tuple(upgraded(e, relation, now) for e in edges),
        payload={"relation": relation, "edges": [e.id for e in edges]},
        key=f"{op}:{relation}:{_digest(e.id for e in edges)}",
    )


def by_label_pattern(
    edges: Iterable[Edge], labels: Mapping[str, str], patterns: Patterns, now: datetime
) -> list[Proposal]:
    """Upgrades of vague edges whose label pair has a dominant typed relation."""
    todo: dict[tuple[str, str, str], list[Edge]] = defaultdict(list)
    for e in edges:
        if e.relation not in GENERIC or not is_current(e):
            continue
        pair = (labels.get(e.source_id, ""), labels.get(e.target_id, ""))
        counts = patterns.get(pair)
        if not counts:
            continue
        relation, n = counts.most_common(1)[0]
        if n >= MIN_SUPPORT and n / sum(counts.values()) >= MIN_SHARE:
            todo[(*pair, relation)].append(e)
    out = []
    for (src, dst, relation), group in sorted(todo.items()):
        group = sorted(group, key=lambda e: e.id)[:MAX_EDGES]
        counts = patterns[src, dst]
        base = plan_upgrade(group, relation, now)
        out.append(
            dataclasses.replace(
                base,
                summary=f"{src} -> {dst} edges are usually {relation}: relabel {len(group)}"
                " vague edge(s)",
                confidence=round(counts[relation] / sum(counts.values()), 3),
                evidence={
                    "pattern": f"{src} -> {dst}",
                    "relation_counts": dict(counts.most_common(5)),
                    "facts": [e.fact for e in group[:5] if e.fact],
                },
                needs_review=True,
            )
        )
    return out


def by_usage(
    edges: Iterable[Edge], co_access: Sequence[CoAccess], min_events: int, now: datetime
) -> list[Proposal]:
    """POSSIBLY_RELATED_TO edges whose ends are used together often -> RELATED_TO."""
    events = {(a, b): n for a, b, _, n in co_access}
    out = []
    for e in edges:
        if e.relation != "POSSIBLY_RELATED_TO" or not is_current(e):
            continue
        a, b = sorted((e.source_id, e.target_id))
        n = events.get((a, b), 0)
        if n >= min_events:
            base = plan_upgrade([e], "RELATED_TO", now)
            out.append(
                dataclasses.replace(
                    base,
                    summary=f"used together in {n} events: confirm {e.fact or e.id!r} as"
                    " RELATED_TO",
                    confidence=min(0.9, 0.5 + 0.05 * n),
                    evidence={"co_access_events": n, "fact": e.fact},
                    needs_review=True,
                )
            )
    return out


def new_relation_types(
    edges: Iterable[Edge], known: Iterable[str], now: datetime
) -> list[Proposal]:
    """New relation types from the unknown relations extractors keep proposing."""
    known_set = set(known)
    seen: dict[str, list[Edge]] = defaultdict(list)
    for e in edges:
        original = e.attributes.get("original_relation")
        if e.relation not in GENERIC or not is_current(e) or not isinstance(original, str):
            continue
        key = relation_key(original)
        if key and key not in known_set:
            seen[key].append(e)
    out = []
    for relation, group in sorted(seen.items()):
        if len(group) < MIN_SUPPORT:
            continue
        group = sorted(group, key=lambda e: e.id)[:MAX_EDGES]
        base = plan_upgrade(group, relation, now, op="new_relation")
        out.append(
            dataclasses.replace(
                base,
                summary=f"add relation type {relation} (proposed {len(group)} times) and use it"
                " for those edges",
                confidence=min(0.9, 0.4 + 0.1 * len(group)),
                evidence={"examples": [e.fact for e in group[:5] if e.fact], "count": len(group)},
                key=f"new_relation:{relation}",
                needs_review=True,
                schema_change=True,
            )
        )
    return out
