"""A store seen from one run (session): graph items only when a memory of the run supports them.

The graph is kept per partition (user/agent), but a read that names a run must see only that
run's memories "and the graph items they support" (:class:`~sage_memory.types.Scope`). Rather
than teaching every retrieval step about runs, a run-scoped search reads through this view:
nodes and edges come back only when one of their provenance memories belongs to the run.
Visibility of a memory id is looked up once per search, in batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from sage_memory.retrieve.reader import GraphReader
from sage_memory.store.base import Direction, TextEntity
from sage_memory.types import Edge, Memory, Node, Scope, Vector

Item = TypeVar("Item", Node, Edge)


def needs_view(scope: Scope) -> bool:
    """True for a run inside a user/agent partition (a run-only scope is its own partition)."""
    return scope.run_id is not None and scope.partition.run_id is None


class RunView:
    """A :class:`GraphReader` over ``store`` that hides graph items outside ``run``."""

    def __init__(self, store: GraphReader, run: Scope) -> None:
        self._store = store
        self._run = run
        self._visible: dict[str, bool] = {}

    # -- visibility ------------------------------------------------------------------------
    def _check(self, memory_ids: Sequence[str]) -> None:
        unknown = [m for m in dict.fromkeys(memory_ids) if m not in self._visible]
        if unknown:
            found = {m.id for m in self._store.get_memories(self._run, unknown)}
            self._visible.update((m, m in found) for m in unknown)

    def _keep(self, items: Sequence[Item]) -> list[Item]:
        self._check([m for item in items for m in item.memory_ids])
        return [i for i in items if any(self._visible[m] for m in i.memory_ids)]

    # -- filtered reads --------------------------------------------------------------------
    def get_nodes(self, scope: Scope, ids: Sequence[str]) -> list[Node]:
        return self._keep(self._store.get_nodes(scope, ids))

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]:
        return self._keep(self._store.find_nodes(scope, names))

    def list_nodes(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Node]:
        kept = self._keep(self._store.list_nodes(scope))
        return kept[offset : None if limit is None else offset + limit]

    def edges_of(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        *,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        per_node: int | None = None,
    ) -> list[Edge]:
        # The bound applies before the run's filter: a run sees the latest edges it supports
        # among those, as a busy node's walk reads only its latest edges anyway.
        found = self._store.edges_of(
            scope, node_ids, direction=direction, relations=relations, per_node=per_node
        )
        return self._keep(found)

    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        if entity == "memory":
            return self._store.search_text(self._run, query, entity="memory", limit=limit)
        hits = self._store.search_text(scope, query, entity="node", limit=limit * 3)
        kept = {n.id for n in self.get_nodes(scope, [i for i, _ in hits])}
        return [h for h in hits if h[0] in kept][:limit]

    # -- memories (the store already scopes them by run) -----------------------------------
    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        return self._store.get_memories(scope, ids)

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        return self._store.adjacent_memories(scope, memory_ids)

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return self._store.get_vectors(ids)

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        # A node that lists a memory of the run is visible to the run by definition.
        self._check(memory_ids)
        return self._store.memory_nodes(scope, [m for m in memory_ids if self._visible[m]])
