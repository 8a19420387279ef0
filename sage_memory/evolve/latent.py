"""Latent associations: links the topology implies but nobody stated. Suggest only.

Two nodes that are not linked but share neighbours (Alice and Bob both work at Acme and both
live in Berlin) are probably related. For each node that changed since the last run, the step
walks two hops (through at most ``MAX_SECOND_HOP`` neighbours, skipping hubs), and scores each
unlinked node it reaches:

- **common neighbours**: how many neighbours the two share;
- **Adamic-Adar**: the same, each shared neighbour counted ``1 / log(degree)``, so a neighbour
  that links to everything (a hub, "user") says little;
- **name similarity**: cosine of the two names' embeddings, which must back a single shared
  neighbour (two common neighbours stand on their own).

Each pair that passes becomes a review item (never applied on its own) with that evidence;
accepting it writes one POSSIBLY_RELATED_TO edge, which retrieval then follows like any other
edge, and which ``undo`` removes. Cost: bounded by the changed nodes a run looks at, times
``MAX_SECOND_HOP`` neighbour reads, whatever the graph's size.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from sage_memory.evolve.proposal import Proposal, is_current, pair_key
from sage_memory.evolve.reinforce import STRUCTURAL
from sage_memory.types import Edge, Node, Scope, Vector, new_id

#: The relation an accepted latent link gets (vague on purpose: the topology says "related",
#: not how; relation discovery may later upgrade it from usage).
RELATION = "POSSIBLY_RELATED_TO"
#: Neighbours of a node whose own neighbours are read (the second hop), lowest degree first.
MAX_SECOND_HOP = 12
#: A neighbour with more links than this is a hub: sharing it says nothing, so it is skipped.
MAX_HUB_DEGREE = 50
#: Suggestions one node may yield in a run (best first).
MAX_PER_NODE = 3
#: Two shared neighbours suffice; one needs names this alike (cosine of name embeddings).
MIN_COMMON = 2
MIN_NAME_COSINE_WITH_ONE = 0.6
#: Labels never linked: summaries are the evolver's own structure.
_SKIP_LABELS = frozenset({"Summary"})


@dataclass(frozen=True, slots=True)
class LatentPair:
    """A candidate link and the evidence for it."""

    a: str
    b: str
    common: tuple[str, ...]
    adamic_adar: float
    name_cosine: float | None

    @property
    def confidence(self) -> float:
        """Grows with the shared neighbours' Adamic-Adar weight and the names' likeness."""
        base = 1.0 - math.exp(-0.5 * self.adamic_adar)
        if self.name_cosine is not None:
            base = 0.7 * base + 0.3 * max(0.0, self.name_cosine)
        return round(min(0.9, base), 4)


def _adjacency(edges: Iterable[Edge]) -> dict[str, set[str]]:
    """Undirected neighbours through current, non-structural edges."""
    out: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if is_current(e) and e.relation not in STRUCTURAL and e.source_id != e.target_id:
            out[e.source_id].add(e.target_id)
            out[e.target_id].add(e.source_id)
    return out


def _cosine(x: Vector | None, y: Vector | None) -> float | None:
    if x is None or y is None:
        return None
    a, b = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    if a.shape != b.shape or norm == 0.0:
        return None
    return float(a @ b / norm)


def score_pairs(
    node_id: str,
    first_hop: Iterable[Edge],
    second_hop: Iterable[Edge],
    vectors: Mapping[str, Vector],
) -> list[LatentPair]:
    """Unlinked nodes two hops from ``node_id`` worth a link, best first.

    Args:
        node_id: The node whose neighbourhood is searched.
        first_hop: The edges of ``node_id``.
        second_hop: The edges of (some of) its neighbours.
        vectors: Name embeddings by node id (pairs without one use topology alone).
    """
    own = _adjacency(first_hop).get(node_id, set())
    around = _adjacency(second_hop)
    shared: dict[str, list[str]] = defaultdict(list)
    for z in sorted(own):
        if len(around.get(z, ())) > MAX_HUB_DEGREE:
            continue
        for v in around.get(z, ()):
            if v != node_id and v not in own:
                shared[v].append(z)
    found = []
    for v, common in shared.items():
        cos = _cosine(vectors.get(node_id), vectors.get(v))
        if len(common) < MIN_COMMON and (cos is None or cos < MIN_NAME_COSINE_WITH_ONE):
            continue
        aa = sum(1.0 / math.log(max(len(around.get(z, ())), 2)) for z in common)
        found.append(LatentPair(node_id, v, tuple(sorted(common)), round(aa, 4), cos))
    found.sort(key=lambda p: (-p.confidence, p.b))
    return found[:MAX_PER_NODE]


def link_edge(
    scope: Scope, a: Node, b: Node, now: datetime, confidence: float, evidence: Mapping[str, object]
) -> Edge:
    """The edge an accepted latent link writes (its evidence kept in its attributes)."""
    return Edge(
        id=new_id(),
        scope=scope,
        source_id=a.id,
        target_id=b.id,
        relation=RELATION,
        fact=f"{a.name} may be related to {b.name}",
        weight=1.0,
        confidence=confidence,
        valid_from=now,
        created_at=now,
        attributes={"origin": "latent", **evidence},
    )


def plan_link(
    scope: Scope,
    a: Node,
    b: Node,
    now: datetime,
    confidence: float,
    evidence: Mapping[str, object],
) -> Proposal:
    """The proposal of linking ``a`` and ``b`` (used again when a review accepts it)."""
    edge = link_edge(scope, a, b, now, confidence, evidence)
    return Proposal(
        op="suggest_links",
        summary=f"link {a.name!r} and {b.name!r} ({RELATION}): {evidence.get('why', '')}",
        puts=(edge,),
        confidence=edge.confidence,
        evidence=dict(evidence),
        key=f"suggest_links:{pair_key(a.id, b.id)}",
        payload={"a": a.id, "b": b.id},
        needs_review=True,
    )


def proposals(
    scope: Scope,
    pairs: Sequence[LatentPair],
    nodes: Mapping[str, Node],
    now: datetime,
) -> list[Proposal]:
    """Review items for ``pairs`` (each unordered pair once; summaries and gone nodes skipped)."""
    out: list[Proposal] = []
    seen: set[str] = set()
    for p in pairs:
        a, b = nodes.get(p.a), nodes.get(p.b)
        key = pair_key(p.a, p.b)
        if a is None or b is None or key in seen:
            continue
        if a.label in _SKIP_LABELS or b.label in _SKIP_LABELS:
            continue
        seen.add(key)
        names = [nodes[z].name if z in nodes else z for z in p.common]
        why = f"{len(p.common)} shared neighbour(s): {', '.join(names[:5])}"
        evidence: dict[str, object] = {
            "common_neighbours": names,
            "adamic_adar": p.adamic_adar,
            "name_cosine": None if p.name_cosine is None else round(p.name_cosine, 4),
            "why": why,
        }
        out.append(plan_link(scope, a, b, now, p.confidence, evidence))
    return out


__all__ = [
    "RELATION",
    "LatentPair",
    "link_edge",
    "plan_link",
    "proposals",
    "score_pairs",
]
