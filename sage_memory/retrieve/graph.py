"""Graph evidence for one search: linked nodes, the bounded neighbourhood, and provenance.

From the nodes a query names (entity linking), a bounded BFS and a local-push personalized
PageRank weigh the nodes and facts around them; hubs (a speaker, "the user") count less; the
memories behind the weighted nodes and facts get graph evidence; memories whose facts no
longer hold at the time the query asks about are marked superseded.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime

from sage_memory.config import RetrieveConfig
from sage_memory.index.base import VectorIndex
from sage_memory.retrieve.concepts import concept_scores
from sage_memory.retrieve.expand import (
    EXPIRED_FACTOR,
    EdgeFilter,
    Expansion,
    Neighbourhood,
    bfs,
    local_ppr,
)
from sage_memory.retrieve.fusion import Weights
from sage_memory.retrieve.mentions import Mentions, hop_scores, mention_links
from sage_memory.retrieve.query import QueryPlan
from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.seeds import LinkedNode, WordSeeds, link_entities
from sage_memory.retrieve.walk import MEMORY, StoreGraph, associate, specificity, walk_seeds
from sage_memory.retrieve.walk_links import WalkLinks
from sage_memory.types import Edge, Node, Scope, Vector

#: A fact that no longer holds demotes its memories only when it is this relevant to the query
#: (a specific node the query names, not a hub): noisy expirations elsewhere must not.
SUPERSEDED_MIN = 0.25
#: Nodes read (for names and provenance) besides the linked ones.
GRAPH_NODES = 40


@dataclass(frozen=True, slots=True)
class Ask:
    """One search's inputs, passed along its steps."""

    store: GraphReader
    scope: Scope
    plan: QueryPlan
    qvec: Vector
    weights: Weights
    limit: int
    as_of: datetime | None
    now: datetime


@dataclass(slots=True)
class GraphEvidence:
    """What the graph contributed to one search."""

    linked: list[LinkedNode] = field(default_factory=list)
    expansion: Expansion = field(default_factory=Expansion)
    mass: dict[str, float] = field(default_factory=dict)  # node id -> relevance in [0, 1]
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: dict[str, Edge] = field(default_factory=dict)
    edge_scores: dict[str, float] = field(default_factory=dict)
    relevant: dict[str, bool] = field(default_factory=dict)  # edge id -> holds at query time
    # memory id -> the best relevance of a node or fact it supports: every memory of the
    # nodes reached without the walk (``Weights.walk`` off: it is then the graph feature),
    # else only those :func:`explain` was asked about (the hits returned)
    memory_score: dict[str, float] = field(default_factory=dict)
    # memory id -> the node or fact that found it (rendered only for the hits returned)
    memory_why: dict[str, Node | Edge] = field(default_factory=dict)
    # linked node id -> the entity feature of the memories it supports (:func:`entity_scores`)
    shares: dict[str, float] = field(default_factory=dict)
    superseded: set[str] = field(default_factory=set)
    # memory id -> associative-walk PageRank mass, scaled to the best (in [0, 1])
    walk: dict[str, float] = field(default_factory=dict)
    # nodes whose links the walk read: its footprint
    walk_read: int = 0
    # every node the walk read (with the memories that support it), by id
    walk_nodes: dict[str, Node] = field(default_factory=dict)
    # memories one shared name away from the best hits (mentions.hop_scores), best first
    assoc: list[tuple[str, float]] = field(default_factory=list)


def gather(ask: Ask, words: WordSeeds, index: VectorIndex, config: RetrieveConfig) -> GraphEvidence:
    """Link the query's names to nodes, expand around them, and weigh nodes, facts and the
    memories behind them (provenance)."""
    store, scope, plan, as_of, now = ask.store, ask.scope, ask.plan, ask.as_of, ask.now
    part = scope.partition
    g = GraphEvidence()
    g.linked = link_entities(
        store, index, scope, plan.text, phrases=plan.phrases, qvec=ask.qvec, words=words
    )
    if not g.linked:
        return g
    hood = Neighbourhood(
        store,
        part,
        EdgeFilter(min_confidence=config.min_confidence, at=as_of),
        max_fanout=config.max_fanout,
    )
    # A hub (a speaker, "the user") is named by many queries and supports many memories;
    # it starts less of the walk and lends its memories less weight.
    seeds = {ln.node.id: ln.score * specificity(ln.node) for ln in g.linked}
    hood.add_nodes(ln.node for ln in g.linked)
    g.expansion = bfs(hood, list(seeds), max_hops=config.hops)
    # PageRank within the ball BFS read: no further reads.
    mass = local_ppr(hood, seeds, max_nodes=hood.touched)
    top = max(mass.values(), default=0.0) or 1.0
    g.edges = dict(hood.edges)
    for e in g.edges.values():
        g.relevant[e.id] = _holds(e, plan, as_of, now)
    wanted = set(sorted(mass, key=lambda n: (-mass[n], n))[:GRAPH_NODES]) | set(seeds)
    for e in g.edges.values():
        if len(wanted) >= 2 * GRAPH_NODES:
            break
        if e.source_id in wanted or e.target_id in wanted:
            wanted.update((e.source_id, e.target_id))
    missing = [n for n in wanted if n not in hood.nodes]
    if missing:
        hood.add_nodes(store.get_nodes(part, missing))
    # In content order, not set order: nodes of equal score must rank alike in every process
    # and every folder holding the same text (set order follows the hash seed; ids are random).
    kept = [hood.nodes[n] for n in wanted if n in hood.nodes]
    kept.sort(key=lambda node: (node.name.casefold(), node.label, node.name, node.id))
    g.nodes = {node.id: node for node in kept}
    best_link = max(ln.score for ln in g.linked)
    # Relevance of a node: its share of the walk, scaled to the best link and discounted
    # for hubs; a linked node is at least as relevant as its (discounted) link.
    for nid, node in g.nodes.items():
        r = mass.get(nid, 0.0) / top * best_link * specificity(node)
        g.mass[nid] = max(r, seeds.get(nid, 0.0))
    g.edge_scores = {e.id: _edge_score(e, g.mass, g.relevant[e.id]) for e in g.edges.values()}
    for ln in g.linked:
        g.shares[ln.node.id] = max(g.shares.get(ln.node.id, 0.0), ln.score * specificity(ln.node))
    _superseded(g)
    if not ask.weights.walk:
        _provenance(g, [n.memory_ids for n in g.nodes.values()])
    return g


def recall(
    ask: Ask,
    g: GraphEvidence,
    dense: Sequence[tuple[str, float]],
    lexical: Sequence[tuple[str, float]],
    config: RetrieveConfig,
    mentions: Future[Mentions] | None = None,
    links: WalkLinks | None = None,
) -> None:
    """Associative recall: PageRank pushed from the linked entities and the best dense and
    lexical memories through memories and entities (:mod:`sage_memory.retrieve.walk`); the
    mass on memories goes to ``g.walk``.

    ``mentions``: the one-name hop's reads, started early (:func:`hop_seeds`); without it
    they are made here. ``links``: the walk's links kept by earlier searches
    (:mod:`sage_memory.retrieve.walk_links`)."""
    seeds = walk_seeds(g.linked, dense, lexical)
    if not seeds:
        return
    _walk(ask, g, seeds, config, links)
    if ask.weights.assoc_take > 0:
        # One name away from the best hits (mentions.py): the bridge of a two-hop question.
        memory_seeds = {k[2:]: v for k, v in seeds.items() if k.startswith(MEMORY)}
        if mentions is None:
            found = mention_links(ask.store, ask.scope, ask.plan.text, memory_seeds)
        else:
            found = mentions.result()
        g.assoc = [(m, v) for m, v in hop_scores(found, memory_seeds) if v >= ask.weights.assoc_min]


def hop_seeds(
    dense: Sequence[tuple[str, float]], lexical: Sequence[tuple[str, float]]
) -> dict[str, float]:
    """The walk's memory seeds before any name is linked, for the one-name hop to read
    around while the names are linked and the walk reads (on a server store each read is a
    round trip). They are the walk's own memory seeds times 1 or 2 (linked names take half of
    the weight): a power of two, which changes no sum's or order's bits, so the hop finds what
    it would find from the walk's seeds."""
    return {k[2:]: v for k, v in walk_seeds((), dense, lexical).items()}


def _walk(
    ask: Ask,
    g: GraphEvidence,
    seeds: Mapping[str, float],
    config: RetrieveConfig,
    links: WalkLinks | None,
) -> None:
    graph = StoreGraph(
        ask.store,
        ask.scope,
        EdgeFilter(min_confidence=config.min_confidence, at=ask.as_of),
        max_fanout=config.max_fanout,
        cache=links,
    )
    graph.add_nodes([ln.node for ln in g.linked])
    g.walk, result = associate(graph, seeds)
    g.walk_read = len(result.read)
    g.walk_nodes = graph.nodes
    if ask.weights.concept > 0:
        memory_seeds = {k[2:]: v for k, v in seeds.items() if k.startswith(MEMORY)}
        for mid, v in concept_scores(ask.store, ask.scope, ask.plan, memory_seeds).items():
            g.walk[mid] = max(g.walk.get(mid, 0.0), ask.weights.concept * v)
    # A memory whose facts no longer hold lends the walk less, as an expired fact does.
    for mid in g.superseded & g.walk.keys():
        g.walk[mid] *= EXPIRED_FACTOR


def _superseded(g: GraphEvidence) -> None:
    """Memories whose every fact no longer holds (or did not hold at the asked time), among
    those behind the facts read."""
    holds: set[str] = set()
    held: set[str] = set()
    for e in g.edges.values():
        if g.relevant[e.id]:
            holds.update(e.memory_ids)
        elif g.edge_scores.get(e.id, 0.0) >= SUPERSEDED_MIN:
            held.update(e.memory_ids)
    g.superseded = held - holds


def _provenance(
    g: GraphEvidence, supported: Sequence[Collection[str]], only: Collection[str] | None = None
) -> None:
    """Provenance: the memories behind the nodes and facts the graph reached, with the best
    relevance of what they support. ``supported``: per node of ``g.nodes`` (in order), its
    memories to score; ``only``: the memories scored (None: all)."""
    for node, mids in zip(g.nodes.values(), supported, strict=True):
        r = g.mass.get(node.id, 0.0)
        if r <= 0:
            continue
        for mid in mids:
            if r > g.memory_score.get(mid, 0.0):
                g.memory_score[mid] = r
                g.memory_why[mid] = node
    for e in g.edges.values():
        s = g.edge_scores.get(e.id, 0.0)
        for mid in e.memory_ids:
            if s > g.memory_score.get(mid, 0.0) and (only is None or mid in only):
                g.memory_score[mid] = s
                g.memory_why[mid] = e


def explain(g: GraphEvidence, supports: Mapping[str, Sequence[str]], ids: Sequence[str]) -> None:
    """Provenance of memories ``ids`` alone (the hits returned, when the walk is the graph
    feature), from ``supports`` (memory id -> the nodes it supports: the store's
    ``memory_nodes`` of them), never from a node's list of memories (a speaker's grows with
    the memory). Each gets what the full pass would give it."""
    wanted = [i for i in dict.fromkeys(ids) if i not in g.memory_score]
    if not wanted:
        return
    of_node: dict[str, list[str]] = {}
    for mid in wanted:
        for n in supports.get(mid, ()):
            of_node.setdefault(n, []).append(mid)
    _provenance(g, [of_node.get(n, []) for n in g.nodes], only=set(wanted))


def entity_scores(g: GraphEvidence, supports: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """The entity feature of the memories of ``supports`` (memory id -> the nodes it
    supports): the best share of a linked node each supports. Read from the provenance of the
    memories ranked (what the ranking touches), never from a linked node's list of memories
    (a speaker's grows with the memory)."""
    out: dict[str, float] = {}
    if not g.shares:
        return out
    for mid, nids in supports.items():
        best = max((g.shares[n] for n in nids if n in g.shares), default=0.0)
        if best > 0:
            out[mid] = best
    return out


def _holds(e: Edge, plan: QueryPlan, as_of: datetime | None, now: datetime) -> bool:
    """Whether a fact belongs to the time the query asks about: ``as_of``, the window the query
    names, any time for a past-tense question without one, else now."""
    if as_of is not None:
        return e.is_current(as_of)
    if plan.window is not None and plan.window.start <= now:
        return plan.window.overlaps(e.valid_from, e.valid_to)
    if plan.past:
        return True
    return e.is_current()


def _edge_score(e: Edge, mass: Mapping[str, float], relevant: bool) -> float:
    a, b = mass.get(e.source_id, 0.0), mass.get(e.target_id, 0.0)
    base = 0.6 * max(a, b) + 0.4 * min(a, b)
    score = base * max(e.confidence, 0.0) * min(1.0, 0.5 + 0.5 * e.weight)
    return score if relevant else score * 0.5


def graph_reason(g: GraphEvidence, found_by: Node | Edge) -> str:
    """How the graph reached a memory: the path to its node, or the fact it supports."""
    if isinstance(found_by, Node):
        return path_text(g, found_by.id) or f"mentions {found_by.name}"
    e = found_by
    src, dst = g.nodes.get(e.source_id), g.nodes.get(e.target_id)
    text = f"{src.name if src else '?'} -{e.relation}-> {dst.name if dst else '?'}"
    return text if e.is_current() else f"{text} (expired)"


def path_text(g: GraphEvidence, *node_ids: str, names: Mapping[str, str] | None = None) -> str:
    """'a -REL-> b <-REL- c' for the BFS path to the farthest of ``node_ids`` (arrows show
    each fact's own direction)."""
    names = names or {n.id: n.name for n in g.nodes.values()}
    best: list[tuple[str, Edge]] = []
    for nid in node_ids:
        steps = g.expansion.steps(nid)
        if len(steps) > len(best):
            best = steps
    if not best:
        return ""
    parts = [names.get(best[0][0], "?")]
    for came_from, e in best:
        if e.source_id == came_from:
            parts.append(f"-{e.relation}-> {names.get(e.target_id, '?')}")
        else:
            parts.append(f"<-{e.relation}- {names.get(e.source_id, '?')}")
    return " ".join(parts)
