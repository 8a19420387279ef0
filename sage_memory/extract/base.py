"""The Extractor port: a memory (plus nearby graph context) in, a proposed GraphDelta out.

Extractors never write: the engine resolves the proposed nodes against the store and applies
the delta through the journal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sage_memory.types import GraphDelta, Memory, Node


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """What an extractor may know besides the text: existing nodes near it (bounded)."""

    nearby_nodes: Sequence[Node] = ()


@runtime_checkable
class Extractor(Protocol):
    name: str

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        """Propose nodes and edges for one memory. Must not raise on odd text: return an
        empty delta (with ``error`` set) instead."""
        ...

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        """Batch form (an LLM extractor makes one call per batch). Same order as ``items``."""
        ...
