"""The Retriever: seeds, graph expansion, fusion, structure answers, context packing (hybrid).

One search, in order:

1. read the query (names, time window, tense, structure question) and embed it;
2. seeds: the nearest memories (dense), the best BM25 memories (lexical), and the nodes the
   query names (entity linking);
3. graph: a bounded BFS and a local-push personalized PageRank from the linked nodes (the
   facts and nodes of the answer); then the associative walk (``retrieve/walk.py``): a
   PageRank pushed lazily through memories and the entities they mention, seeded from the
   linked nodes and the best dense and lexical memories; its mass on memories is the graph
   channel, and the memories only it reached join the candidates; and the one-name hop
   (``retrieve/mentions.py``): memories naming a specific proper name the best hits name;
4. conversation: the previous and next turn of the best candidates (same scope and run);
5. fusion: weighted features (or RRF) per the preset, plus the best adjacent turn's score,
   the query's time window, and a penalty for memories whose facts were superseded; the
   one-name hop's best come right after the first hits (``fusion.promote``); MMR;
6. structure: for "what's next / what comes after / what do I need" questions, and for a
   problem with known causes, the plan or diagnosis from the graph;
7. stage-2 adjustments: a focus lifts the memories near it, a kind filters or an
   experience question prefers experience (``focus.py``, ``kinds.py``);
8. optional LLM rerank of the best candidates, one call at most (``rerank.py``);
9. the context: sections within the token budget, every line citing its memories.

Cost is bounded by what a query touches (top-k per channel, a capped neighbourhood, the turns
around the best candidates), never by the size of the scope.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

from sage_memory.config import RetrieveConfig
from sage_memory.embed.base import Embedder
from sage_memory.embed.tokens import TokenCounter
from sage_memory.index.base import VectorIndex
from sage_memory.llm.base import ChatModel
from sage_memory.retrieve import context as ctx
from sage_memory.retrieve import focus as fc
from sage_memory.retrieve import kinds
from sage_memory.retrieve import structure as st
from sage_memory.retrieve.answer import StructureView, lead_memories, structure_view
from sage_memory.retrieve.fusion import Weights, check_weights, preset
from sage_memory.retrieve.graph import Ask, GraphEvidence, gather, hop_seeds, path_text, recall
from sage_memory.retrieve.intent import IntentReader
from sage_memory.retrieve.mentions import mention_links
from sage_memory.retrieve.query import analyze
from sage_memory.retrieve.ranking import SINGLE_VALUED, rank_memories
from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.rerank import RerankStage
from sage_memory.retrieve.runview import RunView, needs_view
from sage_memory.retrieve.seeds import dense_seeds, word_seeds
from sage_memory.retrieve.subjects import names_rival
from sage_memory.retrieve.walk_links import WalkLinks
from sage_memory.types import (
    EdgeHit,
    MemoryHit,
    MemoryKind,
    NodeHit,
    RerankOutcome,
    RetrievalResult,
    Scope,
    as_utc,
    replace,
)

#: The start of time, for a fact without a start (it sorts first in the history).
_EPOCH = datetime.min.replace(tzinfo=UTC)
#: What a job on the helper thread returns.
T = TypeVar("T")


class Retriever:
    """Hybrid, structure-aware recall over one store and vector index.

    Args:
        store: the graph store (memories, nodes, edges, lexical search).
        index: the vector index (collections per partition).
        embedder: embeds the query.
        config: limits and the fusion preset (``RetrieveConfig.preset``).
        counter: counts tokens for the context budget; the engine chooses it
            (:func:`sage_memory.embed.tokens.default_counter` unless told otherwise).
        single_valued: the relations with one value at a time (``ExtractConfig``): their
            values order the statements of one slot by world time.
    """

    def __init__(
        self,
        store: GraphReader,
        index: VectorIndex,
        embedder: Embedder,
        config: RetrieveConfig,
        counter: TokenCounter,
        single_valued: Sequence[str] = SINGLE_VALUED,
    ) -> None:
        self.store = store
        self.single_valued = tuple(single_valued)
        self.index = index
        self.embedder = embedder
        self.config = config
        self.weights = preset(config.preset)
        check_weights(self.weights)
        self.count_tokens = counter
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._rerank = RerankStage()
        self._intent = IntentReader(embedder)
        # The walk's links, kept from one search to the next until the store is written.
        self._links = WalkLinks()

    def _submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn`` on the helper thread, started on first search (nothing happens at
        construction). Submitted under the lock ``close`` takes: a search racing a close
        either lands before the shutdown (which waits for it) or starts a new thread, never
        submits to a pool already shut down."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="sage-retrieve")
            return self._pool.submit(fn, *args, **kwargs)

    def close(self) -> None:
        """Stop the helper thread (idempotent; a later search starts a new one)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        self._rerank.close()

    # -- the search ------------------------------------------------------------------------
    def search(
        self,
        query: str,
        scope: Scope,
        *,
        limit: int,
        as_of: datetime | None,
        context_tokens: int,
        now: datetime,
        weights: Weights | None = None,
        focus: fc.Focus | None = None,
        kind: MemoryKind | None = None,
        rerank: ChatModel | None = None,
    ) -> RetrievalResult:
        """Rank memories, nodes and facts for ``query`` in ``scope`` and pack a context.

        ``focus`` seeds the graph walk and lifts the memories near it; ``kind`` keeps only
        memories of that kind; ``rerank`` is the chat model of the optional LLM stage.
        """
        started = time.perf_counter()
        w = weights or self.weights
        as_of = None if as_of is None else as_utc(as_of)  # a naive datetime is taken as UTC
        now = as_utc(now)
        plan = analyze(query, now)
        k = max(self.config.seeds_per_channel, limit)
        # A run sees only the graph items its own memories support.
        store: GraphReader = RunView(self.store, scope) if needs_view(scope) else self.store
        # The word channels need no vector: they run while the query is embedded (SQLite and
        # numpy release the GIL), which hides most of their cost.
        pending = self._submit(word_seeds, store, scope, query, phrases=plan.phrases, k=k)
        try:
            qvec = self.embedder.embed_query(query)
            dense = dense_seeds(self.index, scope, qvec, k=k)
        finally:
            words = pending.result()
        focus = focus if focus else None
        if focus is not None:
            words = fc.with_seeds(words, focus)
        ask = Ask(store, scope, plan, qvec, w, self._width(limit, focus, kind, rerank), as_of, now)
        walk = w.walk and w.graph > 0
        mentions = None
        if walk and w.assoc_take > 0:
            # The one-name hop reads on the helper thread while names are linked and walked.
            seeds = hop_seeds(dense, words.memories)
            mentions = self._submit(mention_links, store, scope, plan.text, seeds)
        graph = gather(ask, words, self.index, self.config)
        if walk:
            recall(ask, graph, dense, words.memories, self.config, mentions, self._links)
        hits = rank_memories(
            ask, dense, words.memories, graph, self.config, self.single_valued, words.scored
        )
        near = None
        if focus is not None:
            near = fc.proximity(store, scope.partition, focus, hops=self.config.focus_hops)
        hits, outcome = self._refine(query, hits, near, kind, rerank, limit)
        # A structure question its words did not tell may be told by its meaning (intent.py).
        asked = self._intent.read(plan, qvec)
        view = structure_view(store, scope.partition, asked, graph.linked, as_of)
        edge_hits = self._edge_hits(graph, view, limit)
        if near is not None:
            edge_hits = fc.boost_edges(edge_hits, near, hits, self.config.focus_weight)
        edge_hits = kinds.keep_edges(edge_hits, kind, store, scope)
        node_hits = self._node_hits(graph, view, limit)
        # A fact told of another team or person than the query names takes no context room.
        told = names_rival(query, [h.edge.fact for h in edge_hits])
        packed = [h for h, other in zip(edge_hits, told, strict=True) if not other]
        core = [h for h in packed if graph.relevant.get(h.edge.id, True)]
        past = [h for h in packed if not graph.relevant.get(h.edge.id, True)]
        # History reads as a timeline: the facts that no longer hold by world time, oldest
        # first (the current value leads the core facts above it).
        past.sort(key=lambda h: h.edge.valid_from or _EPOCH)
        # The memories a structure answer cites lead the background: the whole chain fits.
        background = lead_memories(
            store, scope.partition, view, sorted(hits, key=lambda h: -h.score)
        )
        sections = [
            (ctx.CORE, [ctx.fact_line(h) for h in core]),
            (ctx.NEXT, list(view.lines)),
            (ctx.BACKGROUND, [kinds.label(ctx.memory_line(h), h) for h in background]),
            (ctx.HISTORY, [ctx.fact_line(h) for h in past]),
        ]
        if view.lines:
            # A structure answer and the memories that state its steps are what the question
            # asks for: they take the room first, the ranked facts what is left.
            sections = [sections[1], sections[2], sections[0], sections[3]]
        context = ctx.pack(sections, context_tokens, self.count_tokens)
        return RetrievalResult(
            query=query,
            scope=scope,
            memories=tuple(hits),
            nodes=tuple(node_hits),
            edges=tuple(edge_hits),
            context=context,
            took_ms=(time.perf_counter() - started) * 1000,
            focus=focus.names if focus is not None else (),
            focus_inferred=focus is not None and focus.inferred,
            rerank=outcome,
        )

    # -- stage 2 adjustments and the optional stage 3 --------------------------------------
    def _width(
        self,
        limit: int,
        focus: fc.Focus | None,
        kind: MemoryKind | None,
        rerank: ChatModel | None,
    ) -> int:
        """How many memories stage 2 keeps: ``limit``, or a wider pool for the later stages
        to reorder, filter or rerank."""
        width = limit
        if focus is not None or kind is not None:
            width = max(width, limit * 3)
        if rerank is not None:
            width = max(width, self.config.rerank_candidates)
        return width

    def _refine(
        self,
        query: str,
        hits: list[MemoryHit],
        near: fc.Proximity | None,
        kind: MemoryKind | None,
        rerank: ChatModel | None,
        limit: int,
    ) -> tuple[list[MemoryHit], RerankOutcome | None]:
        """Focus boost, kind filter or preference, then the LLM rerank; cut to ``limit``."""
        if near is not None:
            hits = fc.boost(hits, near, self.config.focus_weight)
        hits = kinds.prefer(hits, kind, query)
        outcome = None
        if rerank is not None:
            cfg = self.config
            hits, outcome = self._rerank.run(
                rerank,
                query,
                hits,
                candidates=cfg.rerank_candidates,
                budget=cfg.rerank_tokens,
                timeout_s=cfg.rerank_timeout_s,
                count=self.count_tokens,
            )
        return hits[:limit], outcome

    # -- hits ------------------------------------------------------------------------------
    def _edge_hits(self, g: GraphEvidence, view: StructureView, limit: int) -> list[EdgeHit]:
        names = {n.id: n.name for n in g.nodes.values()}
        names.update(view.names)
        # Equal scores by what the edges say, not by the order their nodes' random ids read
        # them in: a folder rebuilt from the same inputs lists the same facts.
        ranked = sorted(
            g.edges.values(),
            key=lambda e: (
                -g.edge_scores.get(e.id, 0.0),
                names.get(e.source_id, ""),
                e.relation,
                names.get(e.target_id, ""),
                *st.stored_order(e),
            ),
        )
        out: list[EdgeHit] = []
        for e in ranked[: limit * 2]:
            out.append(
                EdgeHit(
                    e,
                    round(g.edge_scores.get(e.id, 0.0), 6),
                    names.get(e.source_id, "?"),
                    names.get(e.target_id, "?"),
                    ("graph",),
                    path_text(g, e.source_id, e.target_id, names=names)
                    or f"{names.get(e.source_id, '?')} -{e.relation}-> "
                    f"{names.get(e.target_id, '?')}",
                )
            )
        seen = {h.edge.id for h in out}
        out += [h for h in view.edges if h.edge.id not in seen]
        return out

    def _node_hits(self, g: GraphEvidence, view: StructureView, limit: int) -> list[NodeHit]:
        linked = {ln.node.id: ln for ln in g.linked}
        out: list[NodeHit] = []
        for nid in sorted(g.nodes, key=lambda n: -g.mass.get(n, 0.0))[:limit]:
            node = g.nodes[nid]
            if nid in linked:
                out.append(NodeHit(node, linked[nid].score, ("entity",), linked[nid].how))
            else:
                why = path_text(g, nid) or "near the linked nodes"
                out.append(NodeHit(node, round(g.mass.get(nid, 0.0), 6), ("graph",), why))
        # A node the structure answer names keeps its rank and says so too.
        planned = {h.node.id: h for h in view.nodes}
        out = [
            replace(h, channels=(*h.channels, "structure"), why=f"{h.why}; {planned[h.id].why}")
            if h.id in planned
            else h
            for h in out
        ]
        seen = {h.node.id for h in out}
        out += [h for h in view.nodes if h.node.id not in seen]
        return out
