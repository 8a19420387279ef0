"""SageMemory: the facade over the four stages (extract, store, retrieve, evolve).

The facade owns its parts and delegates to them; it holds no logic of its own:

    EngineContext (context.py)   store, index, embedder, extractor, retriever, schema, config,
                                 lock, clock, open state, index sync
    Lookup (lookup.py)           a memory by id, a node by name or id, an id's journal
    WritePath (writes.py)        add -> validate -> embed -> extract (outside the lock)
                                 -> plan in a unit of work -> one transaction -> index sync
    ReadPath (reads.py)          search, explore, structure queries, stats
    Evolution (evolution.py)     feedback, evolve, the review queue, merge, as_of
    Maintenance (maintenance.py) undo, export, backup

Each part takes the context (and the parts it calls), never the facade. The public keywords
``user_id`` / ``agent_id`` / ``run_id`` become one :class:`~sage_memory.types.Scope` here.
SQLite is the source of truth; the vector index is derived and repaired from it on open.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sage_memory.config import SageConfig
from sage_memory.embed import make_embedder
from sage_memory.embed.base import Embedder
from sage_memory.engine import wiring
from sage_memory.engine.context import Clock, ContextField, EngineContext, required, scope_of
from sage_memory.engine.evolution import Evolution
from sage_memory.engine.focus import focus_block, focus_names
from sage_memory.engine.lookup import Lookup
from sage_memory.engine.maintenance import Maintenance
from sage_memory.engine.reads import ReadPath
from sage_memory.errors import ConfigError, SageMemoryError, ValidationError
from sage_memory.extract.base import Extractor
from sage_memory.index.base import VectorIndex
from sage_memory.llm.base import ChatModel
from sage_memory.retrieve.fusion import check_weights, preset
from sage_memory.schema import Schema
from sage_memory.store.base import EvolvingStore, GraphStore
from sage_memory.store.local_evolver import with_evolver_state
from sage_memory.types import (
    AddResult,
    Change,
    EdgeHit,
    EdgeSpec,
    Memory,
    MemoryKind,
    Node,
    NodeHit,
    NodeSpec,
    RetrievalResult,
    Scope,
    Subgraph,
    Suggestion,
    utcnow,
)

if TYPE_CHECKING:
    from sage_memory.engine.writes import WritePath
    from sage_memory.evolve.history import MemoryAsOf
    from sage_memory.evolve.report import EvolutionReport
    from sage_memory.evolve.triggers import Schedule
    from sage_memory.retrieve import Retriever


class SageMemory:
    """Graph-structured long-term memory for LLM agents.

    Args:
        path: a folder for the embedded persistent store (SQLite + Chroma), created if needed;
            None keeps everything in memory.
        config: a :class:`SageConfig` (defaults work offline).
        embedder: an :class:`Embedder` or a spec string; overrides ``config.embedder``.
        llm: a :class:`ChatModel` or a litellm model string; enables the LLM extractor.
        extractor: a custom :class:`Extractor`; overrides the default choice.
        clock: returns "now" (UTC); inject one in tests of time-dependent behaviour.
        url: ``postgresql://...[?schema=NAME]``: server mode, the store and vectors in
            PostgreSQL + pgvector, shared by many processes and machines (README "Server
            mode").
        read_only: open the folder ``path`` beside the process that owns it, for reading
            (search, explore, get, stats, export): SQLite's WAL shows each write the owner
            commits, and dense search is exact over the stored vectors as of opening. Writes
            raise StorageError; usage notes for the evolver stay in this process.
        reranker: the chat model of the optional LLM rerank stage (a :class:`ChatModel` or a
            litellm model string; ``search(..., rerank=True)``); defaults to ``llm``.

    Example:
        >>> mem = SageMemory()
        >>> r = mem.add("Alice lives in Paris", user_id="alice")
        >>> mem.search("where does alice live?", user_id="alice").memories[0].text
        'Alice lives in Paris'
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        config: SageConfig | None = None,
        embedder: Embedder | str | None = None,
        llm: ChatModel | str | None = None,
        extractor: Extractor | None = None,
        store: GraphStore | None = None,
        index: VectorIndex | None = None,
        clock: Clock | None = None,
        url: str | None = None,
        read_only: bool = False,
        progress: bool = False,
        reranker: ChatModel | str | None = None,
    ) -> None:
        config = config or SageConfig()
        if not isinstance(config, SageConfig):
            raise ConfigError(f"config must be a SageConfig, got {type(config).__name__}")
        if url is not None:
            if path is not None or store is not None or index is not None:
                raise ConfigError(
                    "pass either url= (server mode) or a folder / store= / index=, not both"
                )
            store, index = wiring.server_backends(url)
        folder = None if path is None else Path(path)
        if read_only:
            if folder is None or store is not None:
                raise ConfigError("read_only=True opens a memory folder: pass its path")
            store, index = wiring.read_only_backends(folder, index)
            self._folder_lock = None  # the owner keeps its lock; readers take none
        else:
            self._folder_lock = None if folder is None else wiring.open_folder(folder)
        self._schedule: Schedule | None = None
        opened: list[Any] = []  # closed again when building a later part fails
        try:
            # A store without the evolver-state port gets a process-local one.
            own_store = with_evolver_state(store or wiring.default_store(folder))
            opened.append(own_store)
            own_embedder = make_embedder(embedder or config.embedder)
            own_index = index or wiring.default_index(config, folder, own_store)
            opened.append(own_index)
            wiring.check_embedder(own_store, own_embedder)
            chat = wiring.make_llm(config, llm)
            schema = Schema.default(config.extract.node_labels, config.extract.relation_types)
            # The retriever is built on the first search (EngineContext.retriever); a bad
            # preset still fails here, at open.
            check_weights(preset(config.retrieve.preset))
            self._ctx = EngineContext(
                config=config,
                path=folder,
                store=own_store,
                index=own_index,
                embedder=own_embedder,
                llm=chat,
                extractor=extractor or wiring.lazy_default_extractor(config, chat),
                schema=schema,
                clock=clock or utcnow,
            )
            wiring.reconcile_or_rebuild(self._ctx, own_index=index is None, progress=progress)
            self._reranker = wiring.make_llm(config.but(llm=None), reranker)
            self._wire_parts()
        except BaseException:
            ctx = getattr(self, "_ctx", None)
            self._release([ctx.built_retriever, ctx.index, ctx.store] if ctx else opened[::-1])
            raise

    def _wire_parts(self) -> None:
        """The parts over the context, and the evolver's schedule (logic in evolve/)."""
        ctx = self._ctx
        self._lookup = Lookup(ctx)
        self._evolution = Evolution(ctx, self._lookup, self._open_view)
        self._reads = ReadPath(ctx, self._lookup, self._evolution, self._reranker)
        self._write_path: WritePath | None = None  # built on the first write (_writes)
        self._maintenance = Maintenance(ctx)
        if ctx.config.evolve.schedule_seconds > 0:
            from sage_memory.evolve.triggers import Schedule

            self._schedule = Schedule(ctx.config.evolve.schedule_seconds, self.evolve)
            self._schedule.start()

    @property
    def _writes(self) -> WritePath:
        """The write path, built on first use: a process that only reads (the command line's
        ``search``) never imports it, nor what it imports (ingest, forget, salience). It keeps
        no state of its own, so two threads building it at once are harmless."""
        writes = self._write_path
        if writes is None:
            from sage_memory.engine.writes import WritePath

            writes = self._write_path = WritePath(self._ctx, self._lookup, self._evolution)
        return writes

    def _open_view(
        self, config: SageConfig, store: GraphStore, index: VectorIndex, clock: Clock
    ) -> SageMemory:
        """A second engine over a snapshot store (for :meth:`as_of`), sharing no folder."""
        ctx = self._ctx
        return SageMemory(
            config=config,
            embedder=ctx.embedder,
            extractor=ctx.extractor,
            store=store,
            index=index,
            clock=clock,
        )

    # -- the wiring, readable (and replaceable, as tests do with the extractor) ------------
    config: ContextField[SageConfig] = ContextField("The :class:`SageConfig` in use.")
    path: ContextField[Path | None] = ContextField("The memory folder; None: in memory.")
    store: ContextField[EvolvingStore] = ContextField("The graph store (the source of truth).")
    index: ContextField[VectorIndex] = ContextField("The vector index (derived).")
    embedder: ContextField[Embedder] = ContextField("The embedder of texts and names.")
    llm: ContextField[ChatModel | None] = ContextField("The chat model, or None.")
    extractor: ContextField[Extractor] = ContextField("Turns text into nodes and edges.")
    schema: ContextField[Schema] = ContextField("The node labels and relation types.")
    retriever: ContextField[Retriever] = ContextField("The retriever behind search.")

    def now(self) -> datetime:
        """The engine's clock (UTC); injectable through ``SageMemory(clock=...)``."""
        return self._ctx.now()

    # -- writing ---------------------------------------------------------------------------
    def add(
        self,
        data: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: MemoryKind | None = None,
        source: str | None = None,
        infer: bool = True,
        dedup: bool = True,
        defer: bool = False,
    ) -> AddResult:
        """Remember a text, a chat message or a list of messages.

        The text is stored and embedded, then (unless ``infer=False``) turned into nodes and
        edges. If extraction fails the memory is still stored, with the failure recorded on it.
        A list of messages becomes one memory per message; the result describes the first, and
        ``memory_ids`` lists all.

        ``defer=True`` returns once the memory is stored (durable, and found by search through
        its vector and words) with its extraction "pending": no extractor runs or loads.
        :meth:`extract_pending` builds its nodes and edges later (the command line's ``add``
        does this in a background process). The result then lists no nodes or edges.

        Adding is idempotent by content: the same text with the same scope and ``timestamp``
        (or the same ``metadata={"id": ...}``) added again is not stored twice; the result's
        ``skipped`` is True and ``memory_id`` is the stored memory's. ``dedup=False`` stores it
        again anyway. Without a timestamp or id each add is a new episode.

        Returns:
            AddResult with the memory id, the nodes and edges it created or touched, the facts it
            expired, the journal change ids and the LLM tokens used.
        """
        return self._writes.add(
            data,
            scope_of(user_id, agent_id, run_id),
            timestamp=timestamp,
            metadata=metadata,
            kind=kind,
            source=source,
            infer=infer,
            dedup=dedup,
            defer=defer,
        )

    def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
        progress: bool = False,
        batch_size: int | None = None,
        dedup: bool = True,
        defer: bool = False,
    ) -> list[AddResult]:
        """Remember many items with batched embedding and extraction.

        Items are strings or dicts ``{text, timestamp?, metadata?, kind?, source?, role?}``.
        Each batch is one transaction: a batch that returned is durable. Items already stored
        (see ``add``) come back with ``skipped`` True; ``dedup=False`` stores them again.
        ``defer=True``: store them with extraction pending (see ``add``).
        """
        return self._writes.add_many(
            items,
            scope_of(user_id, agent_id, run_id),
            infer=infer,
            progress=progress,
            batch_size=batch_size,
            dedup=dedup,
            defer=defer,
        )

    def extract_pending(
        self,
        *,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[AddResult]:
        """Build the nodes and edges of memories added with ``defer=True``, oldest first.

        Safe to run in several threads or processes at once (each memory's graph is written
        once, by whichever run claims it first) and to stop at any point: what was not
        extracted stays pending for the next run. Each memory's graph joins the journal batch
        of the add that stored it, so undoing that batch still removes both. ``stats()``
        counts what is left under ``"pending"``.

        Args:
            limit: extract at most this many (None: every pending memory).
            user_id: only this scope's memories (no scope given: every scope).
            agent_id: as ``user_id``.
            run_id: as ``user_id``.

        Returns:
            One AddResult per memory extracted, with the nodes and edges it created.
        """
        return self._writes.extract_pending(scope_of(user_id, agent_id, run_id), limit=limit)

    def update(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
    ) -> AddResult:
        """Replace a memory's text; what only the old text supported is removed, the new text
        is extracted again. Journaled as one batch (undo restores the old text and graph)."""
        return self._writes.update(
            memory_id, text, scope_of(user_id, agent_id, run_id), infer=infer
        )

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> None:
        """Forget a memory and everything derived only from it (nodes, edges, vectors, and the
        journal entries that held its text). Deletion is final: it cannot be undone."""
        self._writes.delete(memory_id, scope_of(user_id, agent_id, run_id))

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> int:
        """Forget every memory of a scope (and the graph derived from them). Returns the count."""
        return self._writes.delete_all(scope_of(user_id, agent_id, run_id))

    def add_graph(
        self,
        text: str,
        *,
        nodes: Sequence[NodeSpec],
        edges: Sequence[EdgeSpec] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
        kind: MemoryKind | None = None,
    ) -> AddResult:
        """Remember ``text`` together with the nodes and edges it states, as given.

        No extractor runs: each node is the existing node of that exact name or alias, or a new
        one; each edge links two of ``nodes`` by their ``key``. Journaled as one batch.
        """
        return self._writes.add_graph(
            text,
            scope_of(user_id, agent_id, run_id),
            nodes=nodes,
            edges=edges,
            timestamp=timestamp,
            metadata=metadata,
            source=source,
            kind=kind,
        )

    def delete_node(
        self, name_or_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Change]:
        """Remove a node (by id or exact name) and its edges; undoable. Memories stay."""
        return self._writes.delete_node(name_or_id, required(scope_of(user_id, agent_id)))

    def delete_edge(
        self, edge_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Change]:
        """Remove one edge by id; undoable. Its nodes and memories stay."""
        return self._writes.delete_edge(edge_id, required(scope_of(user_id, agent_id)))

    def graph(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_expired: bool = False,
    ) -> Subgraph:
        """Every node and (current, unless ``include_expired``) edge of a scope's graph."""
        scope = required(scope_of(user_id, agent_id))
        return self._writes.graph(scope, include_expired=include_expired)

    def scopes(self) -> list[Scope]:
        """Every scope partition (user_id, agent_id) that holds memories or graph items."""
        return self._reads.scopes()

    # -- reading ---------------------------------------------------------------------------
    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Memory:
        """One memory by id. With a scope, a memory of another scope is not found."""
        return self._lookup.get(memory_id, scope_of(user_id, agent_id, run_id))

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        include_archived: bool = False,
    ) -> list[Memory]:
        """Memories of a scope in time order."""
        return self._reads.get_all(
            scope_of(user_id, agent_id, run_id),
            limit=limit,
            offset=offset,
            include_archived=include_archived,
        )

    def history(self, memory_id: str) -> list[Change]:
        """The journal of one memory, node or edge id: every change, oldest first."""
        return self._lookup.history(memory_id)

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        as_of: datetime | None = None,
        context_tokens: int | None = None,
        focus: str | Sequence[str] | None = None,
        kind: MemoryKind | None = None,
        rerank: bool | None = None,
    ) -> RetrievalResult:
        """Hybrid search: ranked memories, graph nodes and edges, and a packed context.

        Args:
            focus: what the agent works on (node names or ids): seeds the graph walk and lifts
                the memories near it. None: the open :meth:`focus` block's, else inferred from
                the run's recent memories when ``run_id`` is given; ``()``: no focus.
            kind: "experience" or "knowledge" keeps only memories of that kind.
            rerank: ask the chat model to rerank the best candidates (one call, with a
                timeout that keeps the fused order); None: ``config.retrieve.rerank``.
        """
        return self._reads.search(
            query,
            scope_of(user_id, agent_id, run_id),
            limit=limit,
            as_of=as_of,
            context_tokens=context_tokens,
            focus=focus,
            kind=kind,
            rerank=rerank,
        )

    def focus(
        self,
        *names: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        """A block whose searches focus on ``names`` (node names or ids).

        ``with mem.focus("personal blog", user_id="ann"): mem.search(...)``. With a scope,
        only searches of that scope's user/agent take it. The block belongs to the thread or
        asyncio task that opened it (a context variable), so concurrent callers never mix.
        """
        chosen = focus_names(names)
        if not chosen:
            raise ValidationError("focus() needs at least one node name or id")
        given = scope_of(user_id, agent_id, run_id)
        return focus_block(self._ctx, chosen, given)

    def add_experience(
        self,
        *,
        task: str,
        actions: Sequence[str | Mapping[str, Any]] = (),
        outcome: str | None = None,
        lesson: str | None = None,
        success: bool | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:
        """Remember something the agent did: a memory of kind "experience" and its graph.

        Each action is a tool call ``{"tool", "arguments", "result", "success"}`` or a plain
        string. The graph is built from the record, with no extractor: task USES each tool,
        RESULTED_IN the outcome, RELATED_TO the lesson; ``metadata["experience"]`` keeps the
        record. Journaled as one batch.
        """
        from sage_memory.engine.experience import experience_record

        record = experience_record(task, actions, outcome, lesson, success)
        return self._writes.add_graph(
            record.text,
            scope_of(user_id, agent_id, run_id),
            nodes=record.nodes,
            edges=record.edges,
            timestamp=timestamp,
            metadata={**(metadata or {}), **record.metadata},
            source="experience",
            kind="experience",
        )

    def explore(
        self,
        name_or_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        hops: int = 2,
        relations: Sequence[str] | None = None,
        include_expired: bool = False,
        max_nodes: int = 200,
    ) -> Subgraph:
        """The subgraph around a node (found by id, exact name/alias, or best lexical match)."""
        return self._reads.explore(
            name_or_id,
            required(scope_of(user_id, agent_id, run_id)),
            hops=hops,
            relations=relations,
            include_expired=include_expired,
            max_nodes=max_nodes,
        )

    def find_node(
        self,
        name_or_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        exact: bool = False,
    ) -> Node:
        """A node by id, by exact name or alias, or (unless ``exact``) by the best lexical match
        of its name."""
        return self._lookup.find_node(
            name_or_id, required(scope_of(user_id, agent_id, run_id)), exact=exact
        )

    def predecessors(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What comes before ``task`` (PRECEDES into it, its BLOCKED_BY / DEPENDS_ON targets),
        nearest first; ``transitive=True`` walks back up to 10 steps. Each hit's ``why`` names
        the fact and the status."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.predecessors(task, scope, transitive=transitive, as_of=as_of)

    def successors(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What comes after ``task``, nearest first (see :meth:`predecessors`)."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.successors(task, scope, transitive=transitive, as_of=as_of)

    def requirements(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What ``task`` needs: its REQUIRES, DEPENDS_ON, BLOCKED_BY and USES targets;
        ``transitive=True`` also what those need, level by level (up to 10), nearest first."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.requirements(task, scope, transitive=transitive, as_of=as_of)

    def blockers(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What holds ``task`` up (its BLOCKED_BY / DEPENDS_ON targets); ``transitive=True``
        adds what blocks those in turn, in chain order (the furthest blocker last)."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.blockers(task, scope, transitive=transitive, as_of=as_of)

    def ancestors(
        self,
        kind: str,
        *,
        transitive: bool = True,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Every broader kind of ``kind`` along IS_A, nearest first, the most general last
        (the taxonomy; ``transitive=False``: only the kinds it is directly)."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.ancestors(kind, scope, transitive=transitive, as_of=as_of)

    def causes(
        self,
        effect: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What caused ``effect`` (CAUSED_BY targets, CAUSES sources); ``transitive=True``
        follows the causes back, so the last hit is the root cause as far as memory knows."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.causes(effect, scope, transitive=transitive, as_of=as_of)

    def next_steps(
        self,
        project_or_task: str,
        *,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """The unfinished plan, what to do first at the front: for a project its open tasks
        (ready ones first, in order); for a task its open predecessors, itself, what follows."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.next_steps(project_or_task, scope, as_of=as_of)

    def path_between(
        self,
        source: str,
        target: str,
        *,
        max_hops: int = 4,
        relations: Sequence[str] | None = None,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[EdgeHit]:
        """A shortest chain of current facts between two nodes (either direction); [] if none
        within ``max_hops``."""
        scope = required(scope_of(user_id, agent_id, run_id))
        return self._reads.path_between(
            source, target, scope, max_hops=max_hops, relations=relations, as_of=as_of
        )

    def neighbors(
        self,
        node: str,
        *,
        relations: Sequence[str] | None = None,
        direction: Literal["out", "in", "both"] = "both",
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Nodes one current fact away, through ``relations`` (all when None)."""
        return self._reads.neighbors(
            node,
            scope_of(user_id, agent_id, run_id),
            relations=relations,
            direction=direction,
            as_of=as_of,
        )

    def stats(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Counts for a scope, or for the whole store when no scope is given."""
        return self._reads.stats(scope_of(user_id, agent_id, run_id))

    # -- evolution (logic in sage_memory/evolve/) -----------------------------------------
    def feedback(
        self,
        ids: str | Sequence[str],
        *,
        used: bool = True,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        result: RetrievalResult | None = None,
    ) -> str:
        """Say which memories or nodes were actually used (``used=False``: were useless).

        Feedback counts more than being returned by a search. It is paired with the nodes of
        ``result``, or else of the scope's last search within the hour, so the evolver learns
        which answers go with which questions. Returns the access event id.
        """
        scope = scope_of(user_id, agent_id, run_id)
        return self._evolution.feedback(ids, scope, used=used, result=result)

    def evolve(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        dry_run: bool = False,
        operations: Sequence[str] | None = None,
        progress: bool = False,
    ) -> EvolutionReport:
        """One bounded evolution pass over a scope (every scope when none is given).

        Reinforces and decays edge weights from the access log, settles clear conflicts, finds
        duplicates, communities and relation patterns, archives stale memories and removes
        orphans. What ``config.evolve.auto_apply`` allows is applied as one journal batch
        (``undo(report.batch_id)`` reverts it); the rest is queued for :meth:`review`.
        ``dry_run=True`` writes nothing and reports what would happen; ``progress=True`` shows
        a progress bar on stderr.
        """
        scope = scope_of(user_id, agent_id, run_id)
        return self._evolution.evolve(
            scope, dry_run=dry_run, operations=operations, progress=progress
        )

    def review(
        self, *, user_id: str | None = None, agent_id: str | None = None, status: str = "open"
    ) -> list[Suggestion]:
        """The review queue: suggestions the evolver may not apply on its own, oldest first."""
        return self._evolution.review(scope_of(user_id, agent_id), status)

    def accept(self, suggestion_id: str) -> list[Change]:
        """Apply a suggestion (planned again on the graph as it is now) as one batch.

        Returns the changes; ``undo(changes[0].batch_id)`` reverts them.
        """
        return self._evolution.accept(suggestion_id)

    def reject(self, suggestion_id: str) -> Suggestion:
        """Drop a suggestion from the queue; the same suggestion is not made again."""
        return self._evolution.reject(suggestion_id)

    def merge(
        self,
        keep: str,
        other: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Change]:
        """Merge node ``other`` into node ``keep`` (names or ids): every edge is re-pointed and
        the names kept as aliases. One batch; ``undo(changes[0].batch_id)`` restores both."""
        return self._evolution.merge(keep, other, required(scope_of(user_id, agent_id)))

    def as_of(self, at: datetime) -> MemoryAsOf:
        """A read-only view of the whole memory as it was at system time ``at``, rebuilt from
        the journal: get, get_all, search, explore, find_node, graph, stats, history, export."""
        return self._evolution.as_of(at)

    # -- journal, export, backup ------------------------------------------------------------
    def undo(self, change_or_batch_id: str, *, force: bool = False) -> list[Change]:
        """Undo one journaled change, or every change of a batch (an add, a merge, a run).

        Refuses when a later change touched the same rows, unless ``force=True`` (which then
        overwrites the later changes too); likewise it refuses a memory's insert while nodes
        or edges outside the undo cite it (undo its batch). Returns the changes the undo applied.
        """
        return self._maintenance.undo(change_or_batch_id, force=force)

    def export(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        format: str = "jsonl",
        progress: bool = False,
    ) -> int:
        """Write memories, nodes and edges to a file: "jsonl" (lossless, for :meth:`load`) or
        "graphml" (the graph, for graph tools and :meth:`load`). Returns the number of records
        written; ``progress=True`` shows a progress bar on stderr."""
        return self._maintenance.export(
            path, scope_of(user_id, agent_id), format, progress=progress
        )

    def backup(self, target: str | os.PathLike[str]) -> Path:
        """A consistent copy of the memory folder while it stays in use (SQLite online backup;
        the vector index is rebuilt from it when the copy is opened)."""
        return self._maintenance.backup(target)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Flush and release the folder. Safe to call twice."""
        if self._schedule is not None:
            self._schedule.stop()  # outside the lock: a scheduled pass holds it while it runs
        ctx = self._ctx
        with ctx.lock:
            if ctx.closed:
                return
            ctx.closed = True
            with contextlib.suppress(SageMemoryError, OSError):
                self._evolution.flush_access()
            if ctx.store.persistent:
                with contextlib.suppress(SageMemoryError, OSError):
                    wiring.record_index_counts(ctx)
                    ctx.store.set_meta("clean_shutdown", "1")
            self._release([ctx.built_retriever, ctx.index, ctx.store])

    def _release(self, closers: Sequence[Any]) -> None:
        for closer in closers:
            if closer is not None:
                with contextlib.suppress(Exception):
                    closer.close()
        if self._folder_lock is not None:
            self._folder_lock.release()
            self._folder_lock = None

    def __enter__(self) -> SageMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def load(
        cls,
        export_path: str | os.PathLike[str],
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        progress: bool = False,
        **kwargs: Any,
    ) -> SageMemory:
        """A new SageMemory (at ``path``, or in memory) holding the records of an export: a
        jsonl export, or a GraphML file (ours, or another tool's: see
        ``sage_memory.engine.transfer.graphml_records`` for how its attributes map). GraphML
        nodes without a scope go to ``user_id``. ``progress=True`` shows a progress bar."""
        from sage_memory.engine.transfer import load_file

        mem = cls(path, **kwargs)
        try:
            load_file(mem._ctx, Path(export_path), user_id=user_id, progress=progress)
        except BaseException:
            mem.close()
            raise
        return mem
