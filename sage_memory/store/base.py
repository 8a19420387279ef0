"""The store ports: the durable source of truth for memories, nodes, edges and the journal
(:class:`GraphStore`), the evolver's usage log and review queue (:class:`EvolverState`,
optional), a cross-process partition lock (:class:`ScopeLocking`, optional), and reads a
search makes together, in one round trip to a server (:class:`BatchedReads`, optional).

Every write is a list of :class:`~sage_memory.types.Change` applied atomically: each change
sets one row to its ``after`` state (``None`` deletes it) and is appended to the journal, so
undo is applying the inverse changes. Every read names a scope; a store never returns a row of
another partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from sage_memory.types import (
    AccessEvent,
    Change,
    Edge,
    Memory,
    Node,
    Scope,
    Suggestion,
    SuggestionStatus,
    Vector,
)

Direction = Literal["out", "in", "both"]
TextEntity = Literal["memory", "node"]


def name_key(name: str) -> str:
    """The store's lookup key for a name or alias: case-folded, spaces collapsed."""
    return " ".join(name.casefold().split())


@runtime_checkable
class JournalHead(Protocol):
    """A store whose journal numbers every change in order (the SQLite store): a derived index
    kept beside it records how far it is in sync (a high-water mark), so that an open after a
    crash repairs only what changed after that mark."""

    def journal_seq(self) -> int:
        """The sequence number of the last journaled change (0 when there is none)."""
        ...


#: Provenance link kinds (the ``entity`` column of the stores' provenance rows): a node or an
#: edge the memory states, and a node the memory only mentions (``Node.mention_ids``).
PROVENANCE_NODE, PROVENANCE_EDGE, PROVENANCE_MENTION = "node", "edge", "mention"
#: The link kinds that join a memory to a node.
NODE_LINKS = frozenset({PROVENANCE_NODE, PROVENANCE_MENTION})


@runtime_checkable
class GraphStore(Protocol):
    """The core store port: memories, nodes, edges, their vectors and the change journal,
    partitioned by scope. A third backend implements this; :class:`EvolverState` is optional.
    """

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
        per_node: int | None = None,
    ) -> list[Edge]:
        """Edges touching ``node_ids`` (expired ones included; callers filter by time).

        ``per_node`` bounds the read around a busy node: at most that many edges leaving and
        that many arriving at each node, the latest added first (an index seek per node, so
        the cost follows the nodes asked for, never their degree). None reads every edge.
        The order is the same as without it, with the edges past the bound left out.
        """
        ...

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        """Nodes and edges that list ``memory_id`` in their provenance, and the nodes that
        list it among their mentions (``Node.mention_ids``): all that its deletion touches."""
        ...

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``memory_ids`` that some node of ``scope``'s partition lists in its
        provenance: the ids of those nodes (the entities the memory states facts about; a
        node it only mentions, ``Node.mention_ids``, is not listed). Batched: the
        associative walk steps from memories to their entities with it."""
        ...

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        """For each of ``memory_ids`` found in ``scope``: the ids of the previous and the next
        memory of the same partition and run in (timestamp, created_at) order, ties in insertion
        order, archived ones skipped: the turns around a turn of a conversation."""
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

    def rewrite_journal(self, entries: Sequence[tuple[int, Change]]) -> None:
        """Replace the before/after images of the journal entries at these sequence numbers
        (deletion that means it: a surviving row's history must not quote a forgotten text)."""
        ...

    def partitions(self) -> list[Scope]:
        """Every scope partition that holds data."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def graph_metrics(self, scope: Scope) -> dict[str, Any]:
        """Raw graph-quality counts of a partition, all summable across partitions: nodes,
        edges, current_edges, isolated_nodes, confidence_sum (of current edges) and relations
        (current edges per relation type)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class EvolverState(Protocol):
    """The optional evolver-state port: the access log and the review queue.

    A store that also implements this keeps what the evolver learns from usage across
    processes and restarts. One that does not is paired with a process-local state by
    :func:`sage_memory.store.local_evolver.with_evolver_state` (usage statistics and
    suggestions then last as long as the process).
    """

    def log_access(self, events: Sequence[AccessEvent]) -> None:
        """Append usage events to the access log (statistics: not journaled, not undone)."""
        ...

    def access_seq(self) -> int:
        """The sequence number of the newest access-log entry (0 when the log is empty)."""
        ...

    def co_access(
        self,
        scope: Scope,
        *,
        after_seq: int = 0,
        until_seq: int | None = None,
        node_ids: Sequence[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, str, float, int]]:
        """Node pairs seen in the same events of the window ``(after_seq, until_seq]``:
        ``(a, b, summed event weight, event count)`` with ``a < b``, heaviest first. Two
        context nodes of one event do not pair. ``node_ids`` keeps pairs inside that set;
        ``since`` drops events older than that time."""
        ...

    def accessed(
        self, scope: Scope, *, after_seq: int = 0, until_seq: int | None = None
    ) -> dict[str, tuple[int, datetime]]:
        """Memory and node ids used in the window: id -> (times, last time). Context rows and
        events with a negative weight do not count."""
        ...

    def prune_access(self, before: datetime) -> int:
        """Drop access-log entries older than ``before``. Returns how many went."""
        ...

    def purge_evolver_state(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> int:
        """Forget what the evolver noted about deleted data (deletion that means it): the
        access-log rows of ``entity_ids`` and the review-queue items that mention them, or the
        partition's whole access log, queue and per-partition meta entries (keys ending with
        the partition key) when ``entity_ids`` is None. Returns the count."""
        ...

    def put_suggestions(self, items: Sequence[Suggestion]) -> list[Suggestion]:
        """Queue suggestions whose (scope, key) was never queued; returns those queued."""
        ...

    def list_suggestions(
        self,
        scope: Scope | None = None,
        *,
        status: str | None = "open",
        ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Suggestion]:
        """Suggestions, oldest first; ``status=None`` lists every status."""
        ...

    def set_suggestion_status(
        self,
        ids: Sequence[str],
        status: SuggestionStatus,
        at: datetime,
        batch_id: str | None = None,
    ) -> None:
        """Mark suggestions accepted or rejected (or open again), with the batch that applied
        them."""
        ...


@runtime_checkable
class EvolvingStore(GraphStore, EvolverState, Protocol):
    """A store with both ports: what the engine and the evolver work over."""


@runtime_checkable
class ScopeLocking(Protocol):
    """Optional: a store shared by processes (PostgreSQL) locks one partition across them, so
    that a write which reads what is stored before it decides (entity resolution, the current
    value of a single-valued relation) never interleaves with another process's write."""

    def scope_lock(self, scope_key: str) -> AbstractContextManager[None]:
        """Hold the partition ``scope_key`` for the duration of the ``with`` block."""
        ...


@runtime_checkable
class MetaItems(Protocol):
    """Optional: meta values kept one key each under a shared prefix, read and written
    together. A growing set (the queue of deferred extractions) then costs one small row per
    item written, where one ``set_meta`` value holding the whole set is rewritten on every
    change (quadratic in its size); a store without it gets that single value."""

    def meta_items(self, prefix: str) -> dict[str, str]:
        """Every meta key that starts with ``prefix``, with its value."""
        ...

    def set_meta_many(self, items: Mapping[str, str | None]) -> None:
        """Set each key to its value, or delete it for None, in one transaction."""
        ...


@runtime_checkable
class WriteEpoch(Protocol):
    """Optional: a store that sees every write to its rows (one writer owns the folder) says
    when they last changed, so a reader may keep what it derived from them (the associative
    walk's links) from one search to the next until the next write."""

    def write_epoch(self) -> int | None:
        """A number that changes with every write to memories, nodes, edges or provenance;
        None when rows may change without this handle knowing (a read-only handle: another
        process writes)."""
        ...


@runtime_checkable
class BatchedReads(Protocol):
    """Optional: a store on a server (PostgreSQL), where each read is a round trip, answers the
    reads a search makes at one step together. Each method returns exactly what the
    :class:`GraphStore` calls it stands for return; a store without it gets those calls."""

    def word_reads(
        self, scope: Scope, query: str, names: Sequence[str], *, limit: int, node_limit: int
    ) -> tuple[list[tuple[str, float]], list[Node], list[tuple[str, float]]]:
        """``search_text(scope, query, limit=limit)``, ``find_nodes(scope.partition, names)``
        and ``search_text(scope.partition, query, entity="node", limit=node_limit)``."""
        ...

    def candidate_reads(
        self, scope: Scope, ids: Sequence[str], around: Sequence[str]
    ) -> tuple[dict[str, tuple[str | None, str | None]], list[Memory], dict[str, Vector]]:
        """``adjacent_memories(scope, around)``; ``get_memories(scope, ...)`` of ``ids`` then
        the neighbours found, in that order; ``get_vectors`` of the memories returned."""
        ...
