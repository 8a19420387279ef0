"""The GraphStore port: the durable source of truth for memories, nodes, edges and the journal.

Every write is a list of :class:`~sage_memory.types.Change` applied atomically: each change
sets one row to its ``after`` state (``None`` deletes it) and is appended to the journal, so
undo is applying the inverse changes. Every read names a scope; a store never returns a row of
another partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from sage_memory.types import Change, Edge, Memory, Node, Scope

Vector = npt.NDArray[np.float32]
Direction = Literal["out", "in", "both"]
TextEntity = Literal["memory", "node"]


def name_key(name: str) -> str:
    """The store's lookup key for a name or alias: case-folded, spaces collapsed."""
    return " ".join(name.casefold().split())


@runtime_checkable
class GraphStore(Protocol):
    """Memories, nodes, edges, their vectors and the change journal, partitioned by scope."""

    #: True when the data survives the process.
    persistent: bool

    # -- writes ----------------------------------------------------------------------------
    def apply(self, changes: Sequence[Change], vectors: Mapping[str, Vector] | None = None) -> None:
        """Apply and journal ``changes`` atomically; ``vectors`` are embeddings of inserted or
        re-embedded memories and nodes, keyed by id."""
        ...

    # -- memories --------------------------------------------------------------------------
    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        """The memories of ``ids`` that exist in ``scope`` (a run scope sees only its run)."""
        ...

    def find_memory(self, memory_id: str) -> Memory | None:
        """A memory by id in any scope (ids are random; callers that hold one may read it)."""
        ...

    def list_memories(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        offset: int = 0,
        include_archived: bool = False,
        before: datetime | None = None,
    ) -> list[Memory]:
        """Memories of ``scope`` ordered by (timestamp, created_at)."""
        ...

    def count_memories(self, scope: Scope) -> int: ...

    # -- graph -----------------------------------------------------------------------------
    def get_nodes(self, scope: Scope, ids: Sequence[str]) -> list[Node]: ...

    def get_edges(self, scope: Scope, ids: Sequence[str]) -> list[Edge]: ...

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]:
        """Nodes whose name or an alias has the same :func:`name_key` as one of ``names``."""
        ...

    def list_nodes(
        self, scope: Scope, *, limit: int | None = None, offset: int = 0
    ) -> list[Node]: ...

    def list_edges(
        self, scope: Scope, *, limit: int | None = None, offset: int = 0
    ) -> list[Edge]: ...

    def count_graph(self, scope: Scope) -> tuple[int, int]:
        """(nodes, edges) in the partition of ``scope``."""
        ...

    def edges_of(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        *,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
    ) -> list[Edge]:
        """Edges touching ``node_ids`` (expired ones included; callers filter by time)."""
        ...

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        """Nodes and edges that list ``memory_id`` in their provenance."""
        ...

    # -- lexical and vectors ---------------------------------------------------------------
    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        """Lexical (BM25-style) search; (id, score) best first, scores positive."""
        ...

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Stored embeddings of memories or nodes."""
        ...

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        """Ids of the rows of ``entity`` in the partition that have a stored vector."""
        ...

    # -- journal, scopes, metadata ---------------------------------------------------------
    def journal(
        self,
        *,
        scope: Scope | None = None,
        entity_id: str | None = None,
        batch_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, Change]]:
        """(sequence number, change) pairs in order of application."""
        ...

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        """Drop journal entries about ``entity_ids`` (deletion that means it). Returns count."""
        ...

    def partitions(self) -> list[Scope]:
        """Every scope partition that holds data."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def close(self) -> None: ...
