"""The read path: get, search, explore, structure queries, stats."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from sage_memory.engine.inputs import check_unicode
from sage_memory.errors import (
    NotFoundError,
    ValidationError,
)
from sage_memory.types import (
    Change,
    Edge,
    Memory,
    Node,
    RetrievalResult,
    Scope,
    Subgraph,
)

if TYPE_CHECKING:
    from sage_memory.types import EdgeHit, NodeHit

from sage_memory.engine.base import EngineBase
from sage_memory.retrieve import structure as st
from sage_memory.retrieve.reader import GraphReader


class ReadPath(EngineBase):
    """The read path: get, search, explore, structure queries, stats."""

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
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError(f"memory_id must be a non-empty string, got {memory_id!r}")
        if user_id is None and agent_id is None and run_id is None:
            found = self.store.find_memory(memory_id)
        else:
            hits = self.store.get_memories(Scope(user_id, agent_id, run_id), [memory_id])
            found = hits[0] if hits else None
        if found is None:
            raise NotFoundError(f"no memory with id {memory_id!r} in this scope")
        return found

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
        scope = Scope(user_id, agent_id, run_id)
        return self.store.list_memories(
            scope, limit=limit, offset=offset, include_archived=include_archived
        )

    def history(self, memory_id: str) -> list[Change]:
        """The journal of one memory, node or edge id: every change, oldest first."""
        return [c for _, c in self.store.journal(entity_id=memory_id)]

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
    ) -> RetrievalResult:
        """Hybrid search: ranked memories, graph nodes and edges, and a packed context."""
        self._check_open()
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty; ask something, e.g. 'where does alice live?'")
        if len(query) > self.config.max_text_chars:
            raise ValidationError(
                f"query has {len(query):,} characters; the limit is {self.config.max_text_chars:,}"
            )
        check_unicode(query, "query")
        for name, value in (("limit", limit), ("context_tokens", context_tokens)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValidationError(f"{name}={value!r} must be an integer or None")
            if value is not None and value < 1:
                raise ValidationError(f"{name}={value} must be at least 1 (None: the default)")
        if as_of is not None and not isinstance(as_of, datetime):
            raise ValidationError(f"as_of={as_of!r} must be a datetime or None")
        scope = Scope(user_id, agent_id, run_id)
        result = self.retriever.search(
            query,
            scope,
            limit=limit or self.config.retrieve.limit,
            as_of=as_of,
            context_tokens=context_tokens or self.config.retrieve.context_tokens,
            now=self.now(),
        )
        self._access.record_search(result, self.now())  # buffered; the evolver learns from it
        return result

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
        asked = Scope(user_id, agent_id, run_id)
        scope = asked.partition
        if not isinstance(hops, int) or isinstance(hops, bool) or not 0 <= hops <= 6:
            raise ValidationError(f"hops={hops!r}: use an integer from 0 to 6")
        # Naming a run inside a user/agent partition shows only what that run's memories
        # support (Scope's contract), not the graph other sessions built.
        run_memories: set[str] | None = None
        if asked.run_id is not None and scope.run_id is None:
            run_memories = {m.id for m in self.store.list_memories(asked, include_archived=True)}

        def visible(item: Node | Edge) -> bool:
            return run_memories is None or not run_memories.isdisjoint(item.memory_ids)

        start = self.find_node(name_or_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        if not visible(start):
            raise NotFoundError(f"no node named or with id {name_or_id!r} in this run")
        rels = [self.schema.map_relation(r)[0] for r in relations] if relations else None
        nodes: dict[str, Node] = {start.id: start}
        edges: dict[str, Edge] = {}
        frontier = [start.id]
        for _ in range(hops):
            if not frontier or len(nodes) >= max_nodes:
                break
            found = self.store.edges_of(scope, frontier, relations=rels)
            nxt: list[str] = []
            for e in found:
                if (not include_expired and not e.is_current()) or not visible(e):
                    continue
                edges[e.id] = e
                for nid in (e.source_id, e.target_id):
                    if nid not in nodes and nid not in nxt and len(nodes) + len(nxt) < max_nodes:
                        nxt.append(nid)
            for n in self.store.get_nodes(scope, nxt):
                if visible(n):
                    nodes[n.id] = n
            frontier = [n for n in nxt if n in nodes]
        kept = {e.id: e for e in edges.values() if e.source_id in nodes and e.target_id in nodes}
        return Subgraph(scope, (start.id,), tuple(nodes.values()), tuple(kept.values()))

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
        scope = Scope(user_id, agent_id, run_id).partition
        if not isinstance(name_or_id, str) or not name_or_id.strip():
            raise ValidationError("give a node name or id to explore from")
        by_id = self.store.get_nodes(scope, [name_or_id])
        if by_id:
            return by_id[0]
        from sage_memory.entities.names import match_key, merge_aliases

        norm = match_key(name_or_id, merge_aliases(self.config.extract.aliases), builtin=False)
        named = self.store.find_nodes(scope, [name_or_id, norm])
        if named:
            return max(named, key=lambda n: (len(n.memory_ids), n.salience))
        lexical = [] if exact else self.store.search_text(scope, name_or_id, entity="node", limit=1)
        if lexical:
            return self.store.get_nodes(scope, [lexical[0][0]])[0]
        raise NotFoundError(f"no node named or with id {name_or_id!r} in this scope")

    # -- structure queries (logic in sage_memory.retrieve.structure) -----------------------
    def _walk(
        self,
        name_or_id: str,
        scope: Scope,
        steps: Callable[[GraphReader, Node], Sequence[st.Step]],
    ) -> list[NodeHit]:
        """Find the start node in ``scope``, walk the graph from it, and rank what was found."""
        node = self.find_node(
            name_or_id, user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id
        )
        reader = st.reader(self.store, scope)
        return st.node_hits(reader, node.scope, steps(reader, node))

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
        scope = Scope(user_id, agent_id, run_id)
        return self._walk(
            task,
            scope,
            lambda g, n: st.predecessors(g, n.scope, n.id, transitive=transitive, at=as_of),
        )

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
        scope = Scope(user_id, agent_id, run_id)
        return self._walk(
            task,
            scope,
            lambda g, n: st.successors(g, n.scope, n.id, transitive=transitive, at=as_of),
        )

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
        scope = Scope(user_id, agent_id, run_id)
        if not transitive:
            return self._walk(task, scope, lambda g, n: st.requirements(g, n.scope, n.id, at=as_of))
        return self._chain(task, scope, st.NEEDS, transitive=True, as_of=as_of)

    def _chain(
        self,
        name: str,
        scope: Scope,
        links: Sequence[st.Link],
        *,
        transitive: bool,
        as_of: datetime | None,
    ) -> list[NodeHit]:
        return self._walk(
            name,
            scope,
            lambda g, n: st.chain(g, n.scope, n.id, links, transitive=transitive, at=as_of),
        )

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
        scope = Scope(user_id, agent_id, run_id)
        return self._chain(task, scope, st.BLOCKERS, transitive=transitive, as_of=as_of)

    def ancestors(
        self,
        kind: str,
        *,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Every broader kind of ``kind`` along IS_A, nearest first, the most general last."""
        scope = Scope(user_id, agent_id, run_id)
        return self._chain(kind, scope, st.KINDS, transitive=True, as_of=as_of)

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
        scope = Scope(user_id, agent_id, run_id)
        return self._chain(effect, scope, st.CAUSES, transitive=transitive, as_of=as_of)

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
        scope = Scope(user_id, agent_id, run_id)
        return self._walk(
            project_or_task, scope, lambda g, n: st.next_steps(g, n.scope, n.id, at=as_of)
        )

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
        a = self.find_node(source, user_id=user_id, agent_id=agent_id, run_id=run_id)
        b = self.find_node(target, user_id=user_id, agent_id=agent_id, run_id=run_id)
        rels = [self.schema.map_relation(r)[0] for r in relations] if relations else None
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        edges = st.path(store, a.scope, a.id, b.id, max_hops=max_hops, relations=rels, at=as_of)
        return st.edge_hits(store, a.scope, edges)

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
        if direction not in ("out", "in", "both"):
            raise ValidationError(f"direction={direction!r}: use 'out', 'in' or 'both'")
        start = self.find_node(node, user_id=user_id, agent_id=agent_id, run_id=run_id)
        rels = [self.schema.map_relation(r)[0] for r in relations] if relations else None
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        steps = st.neighbors(
            store, start.scope, start.id, relations=rels, direction=direction, at=as_of
        )
        return st.node_hits(store, start.scope, steps)

    def stats(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Counts for a scope, or for the whole store when no scope is given."""
        if user_id is None and agent_id is None and run_id is None:
            scopes = self.store.partitions()
        else:
            scopes = [Scope(user_id, agent_id, run_id)]
        memories = nodes = edges = 0
        for s in scopes:
            memories += self.store.count_memories(s)
            n, e = self.store.count_graph(s.partition)
            nodes, edges = nodes + n, edges + e
        return {
            "scopes": len(scopes),
            "memories": memories,
            "nodes": nodes,
            "edges": edges,
            "embedder": f"{self.embedder.name}:{self.embedder.dim}",
            "extractor": getattr(self.extractor, "name", type(self.extractor).__name__),
            "path": None if self.path is None else str(self.path),
            # graph quality as the last evolution run measured it (None before any run)
            "quality": self._evolver.quality([s.partition for s in scopes]),
        }
