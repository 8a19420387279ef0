"""The read path: search, explore, structure queries, stats (single lookups: lookup.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from sage_memory.engine.inputs import check_unicode
from sage_memory.errors import (
    ConfigError,
    NotFoundError,
    ValidationError,
)
from sage_memory.llm.base import ChatModel
from sage_memory.types import (
    Edge,
    Memory,
    MemoryKind,
    Node,
    RetrievalResult,
    Scope,
    Subgraph,
)

if TYPE_CHECKING:
    from sage_memory.types import EdgeHit, NodeHit

from sage_memory.engine.context import EngineContext, required
from sage_memory.engine.evolution import Evolution
from sage_memory.engine.focus import FocusArg, search_focus
from sage_memory.engine.lookup import Lookup
from sage_memory.engine.pending import pending_count
from sage_memory.retrieve import structure as st
from sage_memory.retrieve.reader import GraphReader


class ReadPath:
    """The read path: search, explore, structure queries and stats over the context."""

    def __init__(
        self,
        ctx: EngineContext,
        lookup: Lookup,
        evolution: Evolution,
        reranker: ChatModel | None = None,
    ) -> None:
        self.ctx = ctx
        self.lookup = lookup
        self.evolution = evolution
        #: The chat model of the optional LLM rerank stage (else the engine's llm).
        self.reranker = reranker

    def get_all(
        self, scope: Scope | None, *, limit: int | None, offset: int, include_archived: bool
    ) -> list[Memory]:
        """Memories of a scope in time order."""
        return self.ctx.store.list_memories(
            required(scope), limit=limit, offset=offset, include_archived=include_archived
        )

    def search(
        self,
        query: str,
        scope: Scope | None,
        *,
        limit: int | None,
        as_of: datetime | None,
        context_tokens: int | None,
        focus: FocusArg = None,
        kind: MemoryKind | None = None,
        rerank: bool | None = None,
    ) -> RetrievalResult:
        """Hybrid search: ranked memories, graph nodes and edges, and a packed context."""
        ctx = self.ctx
        ctx.check_open()
        config = ctx.config
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty; ask something, e.g. 'where does alice live?'")
        if len(query) > config.max_text_chars:
            raise ValidationError(
                f"query has {len(query):,} characters; the limit is {config.max_text_chars:,}"
            )
        check_unicode(query, "query")
        for name, value in (("limit", limit), ("context_tokens", context_tokens)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValidationError(f"{name}={value!r} must be an integer or None")
            if value is not None and value < 1:
                raise ValidationError(f"{name}={value} must be at least 1 (None: the default)")
        if as_of is not None and not isinstance(as_of, datetime):
            raise ValidationError(f"as_of={as_of!r} must be a datetime or None")
        from sage_memory.retrieve.kinds import check_kind  # with the search's modules

        kind = check_kind(kind)
        if rerank is not None and not isinstance(rerank, bool):
            raise ValidationError(f"rerank={rerank!r} must be True, False or None (the config)")
        asked = required(scope)
        result = ctx.retriever.search(
            query,
            asked,
            limit=limit or config.retrieve.limit,
            as_of=as_of,
            context_tokens=context_tokens or config.retrieve.context_tokens,
            now=ctx.now(),
            focus=search_focus(ctx, self.lookup, focus, asked),
            kind=kind,
            rerank=self._rerank_model(rerank),
        )
        self.evolution.record_search(result)  # buffered; the evolver learns from it
        return result

    def _rerank_model(self, rerank: bool | None) -> ChatModel | None:
        """The chat model of the LLM rerank stage when it is on for this search, else None."""
        on = self.ctx.config.retrieve.rerank if rerank is None else rerank
        if not on:
            return None
        model = self.reranker or self.ctx.llm
        if model is None:
            raise ConfigError(
                "rerank=True needs a chat model: pass SageMemory(reranker=...) or llm=... "
                "(a ChatModel or a litellm model string)"
            )
        return model

    def explore(
        self,
        name_or_id: str,
        asked: Scope,
        *,
        hops: int,
        relations: Sequence[str] | None,
        include_expired: bool,
        max_nodes: int,
    ) -> Subgraph:
        """The subgraph around a node (found by id, exact name/alias, or best lexical match)."""
        store = self.ctx.store
        scope = asked.partition
        if not isinstance(hops, int) or isinstance(hops, bool) or not 0 <= hops <= 6:
            raise ValidationError(f"hops={hops!r}: use an integer from 0 to 6")
        # Naming a run inside a user/agent partition shows only what that run's memories
        # support (Scope's contract), not the graph other sessions built.
        run_memories: set[str] | None = None
        if asked.run_id is not None and scope.run_id is None:
            run_memories = {m.id for m in store.list_memories(asked, include_archived=True)}

        def visible(item: Node | Edge) -> bool:
            return run_memories is None or not run_memories.isdisjoint(item.memory_ids)

        start = self.lookup.find_node(name_or_id, asked)
        if not visible(start):
            raise NotFoundError(f"no node named or with id {name_or_id!r} in this run")
        rels = self._relations(relations)
        nodes: dict[str, Node] = {start.id: start}
        edges: dict[str, Edge] = {}
        frontier = [start.id]
        for _ in range(hops):
            if not frontier or len(nodes) >= max_nodes:
                break
            found = store.edges_of(scope, frontier, relations=rels)
            nxt: list[str] = []
            for e in found:
                if (not include_expired and not e.is_current()) or not visible(e):
                    continue
                edges[e.id] = e
                for nid in (e.source_id, e.target_id):
                    if nid not in nodes and nid not in nxt and len(nodes) + len(nxt) < max_nodes:
                        nxt.append(nid)
            for n in store.get_nodes(scope, nxt):
                if visible(n):
                    nodes[n.id] = n
            frontier = [n for n in nxt if n in nodes]
        kept = {e.id: e for e in edges.values() if e.source_id in nodes and e.target_id in nodes}
        return Subgraph(scope, (start.id,), tuple(nodes.values()), tuple(kept.values()))

    def _relations(self, relations: Sequence[str] | None) -> list[str] | None:
        """Relation names as the schema spells them (None: every relation)."""
        if not relations:
            return None
        return [self.ctx.schema.map_relation(r)[0] for r in relations]

    # -- structure queries (logic in sage_memory.retrieve.structure) -----------------------
    def walk(
        self,
        name_or_id: str,
        scope: Scope,
        steps: Callable[[GraphReader, Node], Sequence[st.Step]],
    ) -> list[NodeHit]:
        """Find the start node in ``scope``, walk the graph from it, and rank what was found."""
        node = self.lookup.find_node(name_or_id, scope)
        reader = st.reader(self.ctx.store, scope)
        return st.node_hits(reader, node.scope, steps(reader, node))

    def predecessors(
        self, task: str, scope: Scope, *, transitive: bool, as_of: datetime | None
    ) -> list[NodeHit]:
        """What comes before ``task``, nearest first."""
        return self.walk(
            task,
            scope,
            lambda g, n: st.predecessors(g, n.scope, n.id, transitive=transitive, at=as_of),
        )

    def successors(
        self, task: str, scope: Scope, *, transitive: bool, as_of: datetime | None
    ) -> list[NodeHit]:
        """What comes after ``task``, nearest first."""
        return self.walk(
            task,
            scope,
            lambda g, n: st.successors(g, n.scope, n.id, transitive=transitive, at=as_of),
        )

    def requirements(
        self, task: str, scope: Scope, *, transitive: bool = False, as_of: datetime | None
    ) -> list[NodeHit]:
        """What ``task`` needs: its REQUIRES, DEPENDS_ON, BLOCKED_BY and USES targets;
        ``transitive=True`` also what those need, level by level (up to 10), nearest first."""
        if not transitive:
            return self.walk(task, scope, lambda g, n: st.requirements(g, n.scope, n.id, at=as_of))
        return self.chain(task, scope, st.NEEDS, transitive=True, as_of=as_of)

    def chain(
        self,
        name: str,
        scope: Scope,
        links: Sequence[st.Link],
        *,
        transitive: bool,
        as_of: datetime | None,
    ) -> list[NodeHit]:
        """Follow ``links`` from ``name`` (one level, or up to 10 when ``transitive``, each
        level also through the other phrasings of its nodes: see ``st.other_phrasings``)."""
        return self.walk(
            name,
            scope,
            lambda g, n: st.chain(
                g, n.scope, n.id, links, transitive=transitive, at=as_of, bridge=transitive
            ),
        )

    def blockers(
        self, task: str, scope: Scope, *, transitive: bool, as_of: datetime | None
    ) -> list[NodeHit]:
        """What holds ``task`` up (BLOCKED_BY / DEPENDS_ON), the furthest blocker last."""
        return self.chain(task, scope, st.BLOCKERS, transitive=transitive, as_of=as_of)

    def ancestors(
        self, kind: str, scope: Scope, *, transitive: bool = True, as_of: datetime | None
    ) -> list[NodeHit]:
        """Every broader kind of ``kind`` along IS_A, nearest first, the most general last
        (``transitive=False``: the kinds it is directly)."""
        return self.chain(kind, scope, st.KINDS, transitive=transitive, as_of=as_of)

    def causes(
        self, effect: str, scope: Scope, *, transitive: bool, as_of: datetime | None
    ) -> list[NodeHit]:
        """What caused ``effect``; ``transitive=True`` follows causes back to the root."""
        return self.chain(effect, scope, st.CAUSES, transitive=transitive, as_of=as_of)

    def next_steps(
        self, project_or_task: str, scope: Scope, *, as_of: datetime | None
    ) -> list[NodeHit]:
        """The unfinished plan, what to do first at the front."""
        return self.walk(
            project_or_task, scope, lambda g, n: st.next_steps(g, n.scope, n.id, at=as_of)
        )

    def path_between(
        self,
        source: str,
        target: str,
        scope: Scope,
        *,
        max_hops: int,
        relations: Sequence[str] | None,
        as_of: datetime | None,
    ) -> list[EdgeHit]:
        """A shortest chain of current facts between two nodes; [] if none within max_hops."""
        a = self.lookup.find_node(source, scope)
        b = self.lookup.find_node(target, scope)
        rels = self._relations(relations)
        store = st.reader(self.ctx.store, scope)
        edges = st.path(store, a.scope, a.id, b.id, max_hops=max_hops, relations=rels, at=as_of)
        return st.edge_hits(store, a.scope, edges)

    def neighbors(
        self,
        node: str,
        scope: Scope | None,
        *,
        relations: Sequence[str] | None,
        direction: Literal["out", "in", "both"],
        as_of: datetime | None,
    ) -> list[NodeHit]:
        """Nodes one current fact away, through ``relations`` (all when None)."""
        if direction not in ("out", "in", "both"):
            raise ValidationError(f"direction={direction!r}: use 'out', 'in' or 'both'")
        asked = required(scope)
        start = self.lookup.find_node(node, asked)
        rels = self._relations(relations)
        store = st.reader(self.ctx.store, asked)
        steps = st.neighbors(
            store, start.scope, start.id, relations=rels, direction=direction, at=as_of
        )
        return st.node_hits(store, start.scope, steps)

    def stats(self, scope: Scope | None) -> dict[str, Any]:
        """Counts for a scope, or for the whole store when no scope is given."""
        ctx = self.ctx
        store = ctx.store
        scopes = store.partitions() if scope is None else [scope]
        memories = nodes = edges = 0
        for s in scopes:
            memories += store.count_memories(s)
            n, e = store.count_graph(s.partition)
            nodes, edges = nodes + n, edges + e
        return {
            "scopes": len(scopes),
            "memories": memories,
            "nodes": nodes,
            "edges": edges,
            # memories stored with their extraction deferred, not yet extracted
            "pending": pending_count(ctx, scope),
            "embedder": f"{ctx.embedder.name}:{ctx.embedder.dim}",
            "extractor": getattr(ctx.extractor, "name", type(ctx.extractor).__name__),
            "path": None if ctx.path is None else str(ctx.path),
            # graph quality as the last evolution run measured it (None before any run)
            "quality": self.evolution.quality([s.partition for s in scopes]),
        }

    def scopes(self) -> list[Scope]:
        """Every scope partition that holds memories or graph items."""
        return self.ctx.store.partitions()
