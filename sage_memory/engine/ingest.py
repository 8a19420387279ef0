"""Applying an extractor's proposal to the graph: entity resolution, provenance, changing facts.

The extractor proposes (``GraphDelta``); this module decides what that means for the stored
graph and writes it into a :class:`UnitOfWork`:

- each proposed node is resolved to an existing node of the same scope (exact name or alias,
  fuzzy name, name embedding) or created; an ambiguous match creates a node and records a merge
  candidate on it for the evolver's review queue;
- each proposed edge becomes a new edge, or reinforces an identical current one;
- values of a single-valued relation (lives in, works at, status...) form a timeline ordered by
  world time (``valid_from``), whatever order they were learnt in: each value holds until the
  next one starts, the latest is current, nothing is deleted (see engine/timeline.py); a claim
  much less confident than the fact it contradicts is kept as a competing claim instead;
- a negated statement expires the matching current edge, or is kept as a negated fact;
- every touched node and edge lists the memory in its provenance.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from sage_memory.config import ExtractConfig
from sage_memory.embed.base import Embedder
from sage_memory.engine.gate import IngestOutcome
from sage_memory.engine.mentions import fact_specs, held_by_mention, link_mention
from sage_memory.engine.timeline import Claim, Timeline
from sage_memory.engine.unit import UnitOfWork
from sage_memory.entities.names import match_key, merge_aliases
from sage_memory.entities.referent import (
    CONTEXT_SAMPLE,
    THIN_SUPPORT,
    ReferentCheck,
    ambiguous_pair,
    qualifiers_in,
    referent_check,
)
from sage_memory.entities.resolution import DEFAULT_LABEL, resolve_entity
from sage_memory.index.base import VectorIndex, collection_name, query_many
from sage_memory.schema import Schema
from sage_memory.store.base import name_key
from sage_memory.types import Edge, EdgeSpec, GraphDelta, Memory, Node, NodeSpec, Vector, new_id

#: Entity-name vectors kept between calls (384 floats each: 4096 names is about 6 MB).
NAME_CACHE_SIZE = 4096
#: Node attribute: qualifiers seen after the node's name ("Springfield, Illinois").
QUALIFIERS = "qualifiers"
#: How much a repeated statement of a fact strengthens its edge.
REINFORCE_STEP = 0.1
MAX_WEIGHT = 5.0


class Ingestor:
    """Turns a GraphDelta for one memory into row changes. Holds no state between calls."""

    def __init__(
        self,
        index: VectorIndex,
        embedder: Embedder,
        schema: Schema,
        config: ExtractConfig,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.schema = schema
        self.config = config
        self.aliases = merge_aliases(config.aliases)
        self.single_valued = frozenset(config.single_valued)
        self._timeline = Timeline(config.contradiction_margin)
        # Entity names repeat across memories ("user", "Alice", "FastAPI"): embedding each once
        # and in one batch per add_many chunk was the largest cost of the write path.
        self._name_vectors: OrderedDict[str, Vector] = OrderedDict()
        self._cache_lock = threading.Lock()
        # (partition key, name) -> the index's nearest nodes, queried once per add_many chunk.
        self._name_hits: dict[tuple[str, str], list[tuple[str, float]]] = {}

    def prefetch_hits(self, items: Sequence[tuple[str, GraphDelta | None]]) -> None:
        """Query the node index once for every entity name of a chunk, per partition.

        Call under the engine's write lock and :meth:`clear_hits` after the chunk commits: the
        index only changes at that commit, so these are the answers the per-node queries of
        :meth:`apply` would get, for one round trip instead of one per name.

        Args:
            items: (partition key, delta) of each memory of the chunk.
        """
        names: dict[str, list[str]] = {}
        for key, delta in items:
            names.setdefault(key, []).extend(s.name for s in fact_specs(delta))
        for key, wanted in names.items():
            unique = list(dict.fromkeys(wanted))
            if not unique:
                continue
            vectors = np.stack(self._vectors_for(unique))
            hits = query_many(self.index, collection_name(key, "node"), vectors, 5)
            for name, found in zip(unique, hits, strict=True):
                self._name_hits[(key, name)] = found

    def clear_hits(self) -> None:
        """Forget the hits of :meth:`prefetch_hits` (the index changed)."""
        self._name_hits.clear()

    def prepare(self, deltas: Sequence[GraphDelta | None]) -> None:
        """Embed, in one batch, the entity names of ``deltas`` not embedded recently."""
        with self._cache_lock:
            todo = list(
                dict.fromkeys(
                    s.name
                    for d in deltas
                    for s in fact_specs(d)
                    if s.name not in self._name_vectors
                )
            )
        if not todo:
            return
        vectors = self.embedder.embed(todo)
        with self._cache_lock:
            for name, vec in zip(todo, vectors, strict=True):
                self._name_vectors[name] = np.asarray(vec, dtype=np.float32)
            while len(self._name_vectors) > NAME_CACHE_SIZE:
                self._name_vectors.popitem(last=False)

    def _vectors_for(self, names: Sequence[str]) -> list[Vector]:
        with self._cache_lock:
            missing = [n for n in names if n not in self._name_vectors]
        if missing:
            self.prepare([GraphDelta(nodes=tuple(NodeSpec(n, n) for n in missing))])
        with self._cache_lock:
            out = []
            for n in names:
                self._name_vectors.move_to_end(n)
                out.append(self._name_vectors[n])
            return out

    def apply(
        self, uow: UnitOfWork, memory: Memory, delta: GraphDelta, now: datetime
    ) -> IngestOutcome:
        out = IngestOutcome()
        if not delta.nodes:
            return out
        _check_storable(delta)
        facts = fact_specs(delta)
        vectors = self._vectors_for([s.name for s in facts])
        key_to_id: dict[str, str] = {}
        mentioned = {name_key(s.name) for s in facts}
        for spec, vec in zip(facts, vectors, strict=True):
            others = mentioned - {name_key(spec.name)}
            node = self._resolve_node(uow, memory, spec, vec, now, others)
            key_to_id[spec.key] = node.id
            if node.id not in out.node_ids:
                out.node_ids.append(node.id)
        for spec in delta.nodes:
            if spec.mention and spec.key not in key_to_id:
                # not in key_to_id: no fact may be hung on a name the memory only mentions
                node = link_mention(uow, memory, spec, self.schema, self.aliases, now)
                if node.id not in out.node_ids:
                    out.node_ids.append(node.id)
        stated = _stated_together(delta.edges)
        for i, espec in enumerate(delta.edges):
            src, dst = key_to_id.get(espec.source), key_to_id.get(espec.target)
            if src is None or dst is None or src == dst:
                continue
            together = frozenset(
                t for k in stated.get(i, ()) if (t := key_to_id.get(k)) and t != dst
            )
            self._apply_edge(uow, memory, espec, src, dst, now, out, together)
        return out

    # -- nodes -----------------------------------------------------------------------------
    def _resolve_node(
        self,
        uow: UnitOfWork,
        memory: Memory,
        spec: NodeSpec,
        vec: Vector,
        now: datetime,
        co_mentioned: set[str],
    ) -> Node:
        scope = memory.scope.partition
        norm = match_key(spec.name, self.aliases, builtin=False)
        lookup = [spec.name, norm, *spec.aliases]
        named = uow.find_nodes(scope, lookup)
        candidates = {n.id: n for n in named if not n.only_mentioned()}
        cand_vectors: dict[str, Vector] = {}
        hits = self._name_hits.get((scope.key, spec.name))
        if hits is None:
            hits = self.index.query(collection_name(scope.key, "node"), vec, 5)
        for nid, score in hits:
            if score >= self.config.ambiguous_threshold and nid not in candidates:
                node = uow.node(scope, nid)
                if node is not None and not node.only_mentioned():
                    candidates[nid] = node
        if candidates:
            cand_vectors = dict(uow.store.get_vectors(list(candidates)))
            cand_vectors.update({k: v for k, v in uow.vectors.items() if k in candidates})
        label = self.schema.map_label(spec.label)
        spec = dataclasses.replace(spec, label=label)
        kept_apart: dict[str, str] = {}
        while True:
            pool = [n for n in candidates.values() if n.id not in kept_apart]
            res = resolve_entity(
                spec, pool, spec_vector=vec, candidate_vectors=cand_vectors, config=self.config
            )
            if res.node_id is None or res.node_id not in candidates:
                break
            found = candidates[res.node_id]
            check = self._referent(uow, memory, spec, found, co_mentioned)
            if check.merge:
                return self._merge_into(uow, found, memory, spec, norm, now)
            kept_apart[found.id] = check.reason  # a second sense of the name, maybe
        aliases = tuple(dict.fromkeys(a for a in (*spec.aliases, norm) if a and a != spec.name))
        attributes: dict[str, Any] = dict(spec.attributes)
        if res.ambiguous:
            attributes["merge_candidates"] = [nid for nid, _ in res.ambiguous]
        if kept_apart:
            attributes["kept_apart_from"] = sorted(kept_apart)
        if qualifiers := qualifiers_in(memory.text, spec.name):
            attributes[QUALIFIERS] = sorted(qualifiers)
        if spec.label_default:
            attributes[DEFAULT_LABEL] = True
        node = Node(
            id=new_id(),
            scope=scope,
            name=spec.name,
            label=label,
            aliases=aliases,
            summary=spec.summary,
            attributes=attributes,
            confidence=spec.confidence,
            salience=spec.salience,
            memory_ids=(memory.id,),
            created_at=now,
            updated_at=now,
        )
        if (held := held_by_mention(named, spec, norm)) is not None:
            if spec.label_default and held.label not in ("Entity", "Concept"):
                label = held.label  # what the mention's place said of it beats a slot's guess
            node = dataclasses.replace(
                node,
                id=held.id,
                label=label,
                created_at=held.created_at,
                mention_ids=tuple(m for m in held.mention_ids if m != memory.id),
            )
        uow.put(node, np.asarray(vec, dtype=np.float32))
        return node

    def _referent(
        self, uow: UnitOfWork, memory: Memory, spec: NodeSpec, node: Node, co_mentioned: set[str]
    ) -> ReferentCheck:
        """Whether the mention is ``node`` (see entities/referent.py). Cost is bounded: a
        well-attested node needs no reads, a thin one has few edges and memories."""
        qualifiers = qualifiers_in(memory.text, spec.name)
        known = [q for q in node.attributes.get(QUALIFIERS, ()) if isinstance(q, str)]
        if len(node.memory_ids) > THIN_SUPPORT or not ambiguous_pair(spec.name, node.name):
            # Only the qualifiers can disagree: no reads needed.
            return referent_check(
                co_mentioned=(),
                neighbours=(),
                context=None,
                support=len(node.memory_ids),
                qualifiers=qualifiers,
                node_qualifiers=known,
                ambiguous=False,
            )
        scope = memory.scope.partition
        ends = {x for e in uow.edges_of(scope, [node.id]) for x in (e.source_id, e.target_id)}
        ends.discard(node.id)
        neighbours = {name_key(n.name) for i in sorted(ends) if (n := uow.node(scope, i))}
        context = None
        own = uow.vectors.get(memory.id)
        sample = [m for m in node.memory_ids[-CONTEXT_SAMPLE:] if m != memory.id]
        if own is not None and sample:
            theirs = dict(uow.store.get_vectors(sample))
            theirs.update({m: uow.vectors[m] for m in sample if m in uow.vectors})
            if theirs:
                mat = np.stack([np.asarray(v, dtype=np.float32) for v in theirs.values()])
                context = float(np.max(mat @ np.asarray(own, dtype=np.float32)))
        return referent_check(
            co_mentioned=co_mentioned,
            neighbours=neighbours,
            context=context,
            support=len(node.memory_ids),
            qualifiers=qualifiers,
            node_qualifiers=known,
        )

    def _merge_into(
        self,
        uow: UnitOfWork,
        node: Node,
        memory: Memory,
        spec: NodeSpec,
        norm: str,
        now: datetime,
    ) -> Node:
        aliases = tuple(
            dict.fromkeys(
                a for a in (*node.aliases, spec.name, norm, *spec.aliases) if a and a != node.name
            )
        )
        attributes = {**node.attributes, **spec.attributes}
        known = [q for q in node.attributes.get(QUALIFIERS, ()) if isinstance(q, str)]
        if seen := qualifiers_in(memory.text, spec.name) - set(known):
            attributes[QUALIFIERS] = sorted({*known, *seen})
        label = node.label
        specific = spec.label not in ("Entity", "Concept")
        if label in ("Entity", "Concept") and specific:
            label = spec.label  # a more specific label learnt later wins
            if spec.label_default:
                attributes[DEFAULT_LABEL] = True
        elif attributes.get(DEFAULT_LABEL) and specific and not spec.label_default:
            label = spec.label  # a kind shown outranks a kind a relation's slot supposed
            attributes.pop(DEFAULT_LABEL, None)
        updated = dataclasses.replace(
            node,
            aliases=aliases,
            attributes=attributes,
            label=label,
            summary=node.summary or spec.summary,
            confidence=max(node.confidence, spec.confidence),
            salience=max(node.salience, spec.salience),
            memory_ids=tuple(dict.fromkeys((*node.memory_ids, memory.id))),
            updated_at=now,
        )
        uow.put(updated)
        return updated

    # -- edges -----------------------------------------------------------------------------
    def _apply_edge(
        self,
        uow: UnitOfWork,
        memory: Memory,
        spec: EdgeSpec,
        src: str,
        dst: str,
        now: datetime,
        out: IngestOutcome,
        together: frozenset[str] = frozenset(),
    ) -> None:
        scope = memory.scope.partition
        relation, original = self.schema.map_relation(spec.relation)
        attributes: dict[str, Any] = dict(spec.attributes)
        if original is not None:
            attributes["original_relation"] = original
        valid_from = spec.valid_from or memory.event_time or memory.timestamp
        # The source's edges of this relation only: an index seek on (source, relation), so a
        # busy node's other edges (and those arriving at it) are not read for every fact.
        existing = uow.edges_of(scope, [src], relations=[relation], direction="out")
        current = [e for e in existing if e.expired_at is None and e.valid_to is None]
        same = [e for e in current if e.target_id == dst and not e.attributes.get("negated")]
        if spec.negated:
            if same:
                for e in same:
                    self._expire(uow, e, valid_from, now, memory, out, stated_end=True)
                return
            attributes["negated"] = True
        elif relation in self.single_valued:
            claim = Claim(spec, src, dst, relation, valid_from, attributes, together)
            self._timeline.add(uow, memory, claim, existing, now, out)
            return
        elif same:
            e = same[0]
            reinforced = dataclasses.replace(
                e,
                weight=min(MAX_WEIGHT, e.weight + REINFORCE_STEP),
                confidence=max(e.confidence, spec.confidence),
                memory_ids=tuple(dict.fromkeys((*e.memory_ids, memory.id))),
            )
            uow.put(reinforced)
            out.edge_ids.append(e.id)
            return
        edge = Edge(
            id=new_id(),
            scope=scope,
            source_id=src,
            target_id=dst,
            relation=relation,
            fact=spec.fact,
            weight=1.0,
            confidence=spec.confidence,
            valid_from=valid_from,
            valid_to=spec.valid_to,
            created_at=now,
            memory_ids=(memory.id,),
            attributes=attributes,
        )
        uow.put(edge)
        out.edge_ids.append(edge.id)

    @staticmethod
    def _expire(
        uow: UnitOfWork,
        edge: Edge,
        valid_to: datetime,
        now: datetime,
        memory: Memory,
        out: IngestOutcome,
        *,
        stated_end: bool = False,
    ) -> None:
        attributes = {**edge.attributes, "superseded_by_memory": memory.id}
        if stated_end:  # "no longer lives in ...": the end is a fact, not a later value
            attributes["ended"] = True
        if edge.valid_from is not None and valid_to < edge.valid_from:
            valid_to = edge.valid_from  # an end before the start would be a malformed interval
        uow.put(dataclasses.replace(edge, valid_to=valid_to, expired_at=now, attributes=attributes))
        out.expired_edge_ids.append(edge.id)


def _stated_together(edges: Sequence[EdgeSpec]) -> dict[int, tuple[str, ...]]:
    """For each edge (by position), the target keys of the other values its sentence states
    for the same source and relation at the same time ("a producer and an engineer"): a
    conjunction states values that hold together, so none replaces another on a timeline."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, e in enumerate(edges):
        # a status is one state at a time: two read from one sentence disagree, and the
        # timeline decides between them as before
        if not e.negated and e.fact and e.relation != "HAS_STATUS":
            key = (e.source, e.relation, e.fact, e.valid_from, e.valid_to)
            groups.setdefault(key, []).append(i)
    return {
        i: tuple(edges[j].target for j in group if edges[j].target != edges[i].target)
        for group in groups.values()
        if len(group) > 1
        for i in group
    }


def _check_storable(delta: GraphDelta) -> None:
    """What an extractor proposes must be storable as UTF-8 JSON. A lone surrogate or an odd
    object in a name or attribute would otherwise fail the whole add at commit (or, in memory,
    break every later search of the scope); raised here, it costs only this memory's graph."""
    from sage_memory.codec import dumps
    from sage_memory.errors import ExtractionError

    items: tuple[NodeSpec | EdgeSpec, ...] = (*delta.nodes, *delta.edges)
    try:
        dumps([dataclasses.asdict(item) for item in items]).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise ExtractionError(
            f"the extractor proposed a value that cannot be stored: {exc}"
        ) from exc


def support_removal(
    uow: UnitOfWork,
    memory: Memory,
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    now: datetime,
) -> tuple[list[str], list[str]]:
    """Drop ``memory`` from the provenance (and the mentions) of ``nodes``/``edges``; delete
    what only it supported or mentioned.

    Edges touching a deleted node go too. Returns (deleted node ids, deleted edge ids).
    """
    dead_nodes: list[str] = []
    dead_edges: list[str] = []
    scope = memory.scope.partition
    for node in nodes:
        rest = tuple(m for m in node.memory_ids if m != memory.id)
        mentions = tuple(m for m in node.mention_ids if m != memory.id)
        if rest or mentions:
            changed = dataclasses.replace(node, memory_ids=rest, mention_ids=mentions)
            uow.put(dataclasses.replace(changed, updated_at=now))
        else:
            dead_nodes.append(node.id)
    for edge in [*edges, *uow.edges_of(scope, dead_nodes)]:
        current = uow.edge(scope, edge.id)
        if current is None:
            continue
        rest = tuple(m for m in current.memory_ids if m != memory.id)
        touches_dead = current.source_id in dead_nodes or current.target_id in dead_nodes
        if rest and not touches_dead:
            uow.put(dataclasses.replace(current, memory_ids=rest))
        elif current.id not in dead_edges:
            uow.remove(current)
            dead_edges.append(current.id)
    for nid in dead_nodes:
        dead = uow.node(scope, nid)
        if dead is not None:
            uow.remove(dead)
    return dead_nodes, dead_edges
