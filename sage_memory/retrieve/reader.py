"""The part of the store that retrieval reads: a small Protocol, and the reads a search makes
together at one step (one round trip on a store with
:class:`~sage_memory.store.base.BatchedReads`, the separate calls on any other).

Every :class:`~sage_memory.store.base.GraphStore` is one; so is
:class:`~sage_memory.retrieve.runview.RunView`, the run-scoped view of a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sage_memory.store.base import BatchedReads, Direction, TextEntity
from sage_memory.types import Edge, Memory, Node, Scope, Vector


class GraphReader(Protocol):
    """What search, expansion and structure queries read."""

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]: ...

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]: ...

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]: ...

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]: ...

    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]: ...

    def get_nodes(self, scope: Scope, ids: Sequence[str]) -> list[Node]: ...

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]: ...

    def list_nodes(
        self, scope: Scope, *, limit: int | None = None, offset: int = 0
    ) -> list[Node]: ...

    def edges_of(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        *,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        per_node: int | None = None,
    ) -> list[Edge]: ...


def word_reads(
    store: GraphReader,
    scope: Scope,
    query: str,
    names: Sequence[str],
    *,
    limit: int,
    node_limit: int,
) -> tuple[list[tuple[str, float]], list[Node], list[tuple[str, float]]]:
    """The BM25 memories of ``scope``, the nodes of its partition named ``names``, and the
    partition's BM25 nodes: what a query's words find."""
    if isinstance(store, BatchedReads):
        return store.word_reads(scope, query, names, limit=limit, node_limit=node_limit)
    part = scope.partition
    return (
        store.search_text(scope, query, entity="memory", limit=limit),
        store.find_nodes(part, list(names)),
        store.search_text(part, query, entity="node", limit=node_limit),
    )


def candidate_reads(
    store: GraphReader, scope: Scope, ids: Sequence[str], around: Sequence[str]
) -> tuple[dict[str, tuple[str | None, str | None]], list[Memory], dict[str, Vector]]:
    """The previous and next memory of each of ``around``; the memories ``ids`` and those
    neighbours (in that order); the stored vectors of the memories found."""
    if isinstance(store, BatchedReads):
        return store.candidate_reads(scope, ids, around)
    adjacent = store.adjacent_memories(scope, around) if around else {}
    near = [n for pair in adjacent.values() for n in pair if n is not None]
    memories = store.get_memories(scope, list(dict.fromkeys([*ids, *near])))
    return adjacent, memories, store.get_vectors([m.id for m in memories])
