"""What every stored memory passes before its graph is planned, and what an ingest returns.

Its own module so that a write with no graph to plan (``add(infer=False)``, the command line's
``add --no-infer``) scores salience without importing the ingest and what it brings (entity
resolution, rapidfuzz, the timeline of changing facts): :mod:`sage_memory.engine.ingest`
loads on the first write that has a graph.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from sage_memory.config import ExtractConfig
from sage_memory.extract.salience import assess
from sage_memory.types import GraphDelta, Memory


@dataclass
class IngestOutcome:
    """The graph rows one memory's ingest created, changed or expired (empty: none)."""

    node_ids: list[str] = field(default_factory=list)
    edge_ids: list[str] = field(default_factory=list)
    expired_edge_ids: list[str] = field(default_factory=list)
    #: (new claim, standing claim) pairs where a much weaker claim did not replace a fact.
    competing: list[tuple[str, str]] = field(default_factory=list)


def salience_gate(
    memory: Memory, delta: GraphDelta | None, config: ExtractConfig
) -> tuple[Memory, bool]:
    """Score the memory's write-time salience and apply the gates of ``config``.

    Returns the memory with its salience set (and archived when it falls below the
    ``min_salience`` of its kind), and whether it deserves nodes and edges.
    """
    found = assess(memory.text, delta)
    floor = config.min_salience.get(memory.kind)
    archived = memory.archived or (floor is not None and found.score < floor)
    memory = dataclasses.replace(memory, salience=found.score, archived=archived)
    return memory, found.score >= config.graph_min_salience
