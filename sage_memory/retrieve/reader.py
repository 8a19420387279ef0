"""The part of the store that retrieval reads: a small Protocol.

Every :class:`~sage_memory.store.base.GraphStore` is one; so is
:class:`~sage_memory.retrieve.runview.RunView`, the run-scoped view of a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sage_memory.store.base import Direction, TextEntity
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
