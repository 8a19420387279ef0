"""Associative recall: a personalized PageRank over memories and entities, read lazily.

The walk's graph (HippoRAG 2's shape) has two kinds of node:

- a memory ``m:<id>``, linked to the entities it mentions (the nodes whose provenance lists it:
  :meth:`~sage_memory.store.base.GraphStore.memory_nodes`);
- an entity ``n:<id>``, linked to the memories behind it (its provenance), to other entities by
  the facts between them (weight x confidence, facts that no longer hold damped), and to the
  entities entity resolution found too similar to tell apart (``merge_candidates``: synonymy by
  name embedding, computed at write time and bounded to a few per node).

Seeds are the entities the query names and the best dense and lexical memories, half the mass
each (all of it on the memories when the query names nothing). :func:`push_ppr` reads a node's
links only when it pushes it, so a search touches a bounded neighbourhood, whatever the scope's
size, and reaches memories that share no word with the query through the entities between
them. Everything is read through one partition of one store: the walk cannot leave it, and its
statistics (degrees) count that partition's data only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sage_memory.retrieve.expand import EdgeFilter, Neighbourhood
from sage_memory.retrieve.ppr import PushResult, push_ppr, settled
from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.seeds import LinkedNode
from sage_memory.retrieve.walk_links import Links, WalkLinks
from sage_memory.types import Node, Scope

MEMORY, ENTITY = "m:", "n:"
#: An entity behind more memories than this (a speaker, "the user") absorbs what reaches it
#: instead of spreading it: reading and pushing a thousand links would say nothing specific.
HUB_MEMORIES = 100
#: A node supported by more memories than this is a hub: its weight is shared among them.
SPECIFIC_MEMORIES = 25
#: Dense and lexical memories that seed the walk (each channel's best).
MEMORY_SEEDS = 10
#: Memory seeds weigh (score / best score of their channel) to this power, so the walk starts
#: mostly from the best hits of each channel rather than evenly from ten of them.
SEED_SHARPNESS = 4
#: Teleport probability of the walk (HippoRAG 2's damping of 0.5).
ALPHA = 0.5
#: Weight of a synonymy link (an entity resolution could not tell apart from this one).
SYNONYM_WEIGHT = 1.0


class StoreGraph:
    """The walk's neighbour callback over one partition of a store (records cached per search).

    Args:
        store: what retrieval reads (a run view hides other runs' graph items).
        scope: the search's scope; entities come from its partition.
        edge_filter: which facts may be walked (confidence, time).
        max_fanout: facts kept per entity (strongest current first).
    """

    def __init__(
        self,
        store: GraphReader,
        scope: Scope,
        edge_filter: EdgeFilter,
        *,
        max_fanout: int = 50,
        cache: WalkLinks | None = None,
    ) -> None:
        self.store = store
        self.scope = scope
        self.part = scope.partition
        # The fact-reading and weighting rules of the BFS, so both walks agree on what counts.
        self._facts = Neighbourhood(
            store, self.part, edge_filter, max_fanout=max_fanout, max_memories=HUB_MEMORIES
        )
        self.nodes = self._facts.nodes
        # Links computed by earlier searches, while the store was not written (a run's view
        # reads its own links: none are kept for it).
        self._kept = None
        if cache is not None:
            setting = (scope.key, edge_filter, max_fanout)
            self._kept = cache.session(store, setting)

    def add_nodes(self, nodes: Sequence[Node]) -> None:
        self._facts.add_nodes(nodes)

    def __call__(self, keys: Sequence[str]) -> dict[str, Links]:
        kept = self._kept
        out: dict[str, Links] = {}
        fresh: dict[str, Links] = {}
        mids: list[str] = []
        for k in keys:
            if k.startswith(MEMORY):
                known = kept.get(k) if kept is not None else None
                if known is None:
                    mids.append(k[2:])
                else:
                    out[k] = known
        if mids:
            found = self.store.memory_nodes(self.scope, mids)
            for mid in mids:
                nids = found.get(mid, ())
                fresh[MEMORY + mid] = [(ENTITY + n, 1.0) for n in nids]
        nids = [k[2:] for k in keys if k.startswith(ENTITY)]
        if nids:
            self._entities(nids, out, fresh)
        if kept is not None:
            kept.keep(fresh)
        out.update(fresh)
        return out

    def _entities(self, nids: list[str], out: dict[str, Links], fresh: dict[str, Links]) -> None:
        """The links of entities ``nids`` (a hub's none) into ``out`` (kept ones) and
        ``fresh`` (computed now, those worth keeping)."""
        unknown = [n for n in nids if n not in self.nodes]
        if unknown:
            # Every record the walk reaches is read, kept links or not: its footprint
            # (GraphEvidence.walk_nodes) is the same either way.
            self.add_nodes(self.store.get_nodes(self.part, unknown))
        walk = [n for n in nids if n in self.nodes and not self.is_hub(self.nodes[n])]
        kept = self._kept
        todo: list[str] = []
        for nid in walk:
            known = kept.get(ENTITY + nid) if kept is not None else None
            if known is None:
                todo.append(nid)
            else:
                out[ENTITY + nid] = known
        self._facts.fetch(todo)
        for nid in todo:
            node = self.nodes[nid]
            links = [(MEMORY + m, 1.0) for m in node.memory_ids]
            for other, weight, _ in self._facts.links(nid):
                links.append((ENTITY + other, weight))
            for twin in _synonyms(node):
                links.append((ENTITY + twin, SYNONYM_WEIGHT))
            if self._facts.whole(nid):
                fresh[ENTITY + nid] = links
            else:
                out[ENTITY + nid] = links

    @staticmethod
    def is_hub(node: Node) -> bool:
        return len(node.memory_ids) > HUB_MEMORIES


def _synonyms(node: Node) -> list[str]:
    twins = node.attributes.get("merge_candidates")
    if not isinstance(twins, list):
        return []
    return [t for t in twins[:5] if isinstance(t, str) and t != node.id]


def walk_seeds(
    linked: Sequence[LinkedNode],
    dense: Sequence[tuple[str, float]],
    lexical: Sequence[tuple[str, float]],
    *,
    memory_seeds: int = MEMORY_SEEDS,
) -> dict[str, float]:
    """Seed weights: half on the named entities (by link score, hubs discounted by their
    specificity), half on the best dense and lexical memories (by their score relative to the
    best of their channel, sharpened; a memory both channels found adds both)."""
    first: dict[str, float] = {}
    for channel in (dense, lexical):
        top = channel[:memory_seeds]
        best = max((score for _, score in top), default=0.0)
        if best <= 0:
            continue
        for mid, score in top:
            if score > 0:
                first[mid] = first.get(mid, 0.0) + (score / best) ** SEED_SHARPNESS
    mem_total = sum(first.values())
    ent = {ln.node.id: ln.score * specificity(ln.node) for ln in linked}
    ent_total = sum(v for v in ent.values() if v > 0)
    share = 0.5 if ent_total > 0 and mem_total > 0 else 1.0
    seeds: dict[str, float] = {}
    if mem_total > 0:
        seeds.update({MEMORY + m: share * s / mem_total for m, s in first.items()})
    if ent_total > 0:
        seeds.update({ENTITY + n: share * s / ent_total for n, s in ent.items() if s > 0})
    return seeds


def specificity(node: Node) -> float:
    """1 for a node a few memories support; less for a hub, in proportion (IDF-like: what the
    rest of the partition says about the node, counted in this partition only)."""
    return min(1.0, SPECIFIC_MEMORIES / max(1, len(node.memory_ids)))


def associate(graph: StoreGraph, seeds: Mapping[str, float]) -> tuple[dict[str, float], PushResult]:
    """Run the walk; returns each reached memory's PageRank estimate scaled to the best (in
    [0, 1]) and the raw result (for its footprint)."""
    result = push_ppr(seeds, graph, alpha=ALPHA)
    est = settled(result)
    memories = {k[2:]: v for k, v in est.items() if k.startswith(MEMORY) and v > 1e-12}
    top = max(memories.values(), default=0.0) or 1.0
    return {m: v / top for m, v in memories.items()}, result
