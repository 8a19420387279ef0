"""The in-memory store's data: one partition per scope, and the attributes its parts share."""

from __future__ import annotations

import threading
from collections import defaultdict
from datetime import datetime

import networkx as nx

from sage_memory.store.lexical import BM25Index
from sage_memory.types import Change, Memory, Scope, Vector


class Partition:
    """One scope partition: its memories, its graph and their lexical indexes."""

    def __init__(self) -> None:
        self.memories: dict[str, Memory] = {}
        self.graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        self.names: dict[str, set[str]] = defaultdict(set)
        self.memory_text = BM25Index()
        self.node_text = BM25Index()
        # Memories in (timestamp, created_at, insertion number) order, for adjacent_memories.
        self.order: list[tuple[datetime, datetime, int, str]] = []
        self.order_key: dict[str, tuple[datetime, datetime, int, str]] = {}


class InMemoryData:
    """What every part of :class:`~sage_memory.store.memory.InMemoryGraphStore` works over
    (set by its ``__init__``)."""

    _parts: dict[str, Partition]
    _where: dict[str, str]  # record id -> partition key
    _ends: dict[str, tuple[str, str]]  # edge id -> (source, target)
    _vectors: dict[str, Vector]
    _provenance: defaultdict[str, set[tuple[str, str]]]
    _journal: list[tuple[int, Change]]
    _meta: dict[str, str]
    _lock: threading.RLock

    def _part(self, key: str) -> Partition:
        if key not in self._parts:
            self._parts[key] = Partition()
        return self._parts[key]

    def _memories(self, scope: Scope) -> list[Memory]:
        part = self._parts.get(scope.key)
        if part is None:
            return []
        run = scope.run_id if scope.partition.run_id is None else None
        return [m for m in part.memories.values() if run is None or m.scope.run_id == run]

    def _graph(self, scope: Scope) -> nx.MultiDiGraph[str] | None:
        part = self._parts.get(scope.key)
        return None if part is None else part.graph
