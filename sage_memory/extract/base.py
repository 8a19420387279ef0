"""The Extractor port: a memory (plus nearby graph context) in, a proposed GraphDelta out.

Extractors never write: the engine resolves the proposed nodes against the store and applies
the delta through the journal.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
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


class LazyExtractor:
    """An extractor built on its first extraction, so what it loads (a lexicon, word tables, a
    parser model) costs nothing to a process that only reads.

    Args:
        name: The built extractor's ``name``, answered before it is built.
        build: Builds the extractor (called once, under a lock: adds may run in threads).
    """

    def __init__(self, name: str, build: Callable[[], Extractor]) -> None:
        self.name = name
        self._build = build
        self._built: Extractor | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether the extractor was built (an extraction ran)."""
        return self._built is not None

    def extractor(self) -> Extractor:
        """The extractor, built on first call."""
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    self._built = self._build()
                    self.name = self._built.name
                built = self._built
        return built

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        return self.extractor().extract(memory, context)

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        return self.extractor().extract_many(items)

    def __repr__(self) -> str:
        return f"LazyExtractor({self.name!r}, built={self.built})"
