"""Hygiene and quality: archive stale memories, remove orphan nodes, measure the graph.

- Archive: a memory with salience below ``archive_salience`` whose last use (or, never used,
  its creation) is older than ``archive_after_days`` is archived: hidden from search and
  ``get_all``, kept, and restored by undo.
- Orphans: a node with no edge whose supporting memories are all gone carries nothing; it is
  removed (journaled, so undo brings it back).
- Quality metrics, from the store's raw counts: node and edge counts, isolated nodes,
  duplicate-candidate rate (open merge suggestions per node), relation-type entropy (bits, over
  current edges; low means one relation says everything), mean confidence of current edges,
  and their change since the previous run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sage_memory.config import EvolveConfig
from sage_memory.evolve.proposal import Proposal
from sage_memory.types import Memory, Node

#: Metrics reported for a run (and compared with the previous run).
METRICS = (
    "nodes",
    "edges",
    "current_edges",
    "isolated_nodes",
    "duplicate_candidate_rate",
    "relation_entropy",
    "mean_confidence",
)


def stale_memories(memories: Iterable[Memory], now: datetime, cfg: EvolveConfig) -> list[Proposal]:
    """Archive proposals for low-salience memories unused for ``archive_after_days``."""
    horizon = now - timedelta(days=cfg.archive_after_days)
    out = []
    for m in memories:
        if m.archived or m.salience >= cfg.archive_salience:
            continue
        last = m.last_accessed or m.created_at
        if last >= horizon:
            continue
        out.append(
            Proposal(
                op="archive",
                summary=f"archive memory {m.id[:8]} (salience {m.salience:.2f}, unused since"
                f" {last.date().isoformat()})",
                puts=(dataclasses.replace(m, archived=True, updated_at=now),),
                evidence={"salience": m.salience, "last_used": last.isoformat()},
                key=f"archive:{m.id}",
                payload={"memories": [m.id]},
            )
        )
    return out


def orphans(
    nodes: Iterable[Node], degree: Mapping[str, int], live_memories: set[str]
) -> list[Proposal]:
    """Removal proposals for nodes with no edges and no surviving supporting memory.

    Args:
        nodes: Nodes to check.
        degree: Edge count per node id (current and expired edges both count).
        live_memories: Which of the nodes' memory ids still exist.
    """
    out = []
    for n in nodes:
        held = (*n.memory_ids, *n.mention_ids)  # a name a live memory mentions is no orphan
        if degree.get(n.id, 0) or any(m in live_memories for m in held):
            continue
        out.append(
            Proposal(
                op="remove_orphans",
                summary=f"remove orphan node {n.name!r} (no edges, no memories)",
                removes=(n,),
                evidence={"memory_ids": list(n.memory_ids)},
                key=f"orphan:{n.id}",
                payload={"nodes": [n.id]},
            )
        )
    return out


def entropy(counts: Mapping[str, int]) -> float:
    """Shannon entropy in bits of a distribution given by counts."""
    total = sum(counts.values())
    if total <= 0:
        return 0.0
    return abs(-sum(c / total * math.log2(c / total) for c in counts.values() if c > 0))


def combine(raws: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Add up the raw counts of several partitions (``GraphStore.graph_metrics``)."""
    out: dict[str, Any] = {
        "nodes": 0,
        "edges": 0,
        "current_edges": 0,
        "isolated_nodes": 0,
        "confidence_sum": 0.0,
        "relations": {},
    }
    for raw in raws:
        for k in ("nodes", "edges", "current_edges", "isolated_nodes", "confidence_sum"):
            out[k] += raw.get(k, 0)
        for rel, n in raw.get("relations", {}).items():
            out["relations"][rel] = out["relations"].get(rel, 0) + n
    return out


def quality(raw: Mapping[str, Any], merge_candidates: int) -> dict[str, float]:
    """The reported metrics from combined raw counts and the open merge suggestions."""
    nodes = int(raw.get("nodes", 0))
    current = int(raw.get("current_edges", 0))
    return {
        "nodes": nodes,
        "edges": int(raw.get("edges", 0)),
        "current_edges": current,
        "isolated_nodes": int(raw.get("isolated_nodes", 0)),
        "duplicate_candidate_rate": round(merge_candidates / nodes, 4) if nodes else 0.0,
        "relation_entropy": round(entropy(raw.get("relations", {})), 4),
        "mean_confidence": round(float(raw.get("confidence_sum", 0.0)) / current, 4)
        if current
        else 0.0,
    }


def deltas(current: Mapping[str, float], previous: Mapping[str, float] | None) -> dict[str, float]:
    """Change of each metric since the previous run (empty when there was none)."""
    if not previous:
        return {}
    return {
        k: round(float(current[k]) - float(previous.get(k, 0.0)), 4)
        for k in METRICS
        if k in current
    }
