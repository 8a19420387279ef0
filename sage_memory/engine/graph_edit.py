"""Direct, journaled graph edits: for callers that already know the structure.

The extractor is the usual way into the graph. Some callers state the structure themselves: an
MCP client that says "create entity Alice of type person", a user fixing a wrong node. These
functions write exactly what they are given, with the same guarantees as ``add``: one journal
batch per call, provenance on every node and edge, the vector index kept in sync.

Resolution here is exact on purpose: a stated node is the existing node with the same name or
alias (case-folded), never a fuzzy or embedding match, because the caller named it precisely.
Nor does a stated edge expire other edges: the caller decides what holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from sage_memory.engine.gate import IngestOutcome
from sage_memory.engine.inputs import check_kind, check_metadata, check_text
from sage_memory.engine.journal import Batch
from sage_memory.engine.unit import UnitOfWork
from sage_memory.errors import ValidationError
from sage_memory.types import (
    AddResult,
    Change,
    Edge,
    EdgeSpec,
    Memory,
    MemoryKind,
    Node,
    NodeSpec,
    Scope,
    Subgraph,
    Vector,
    as_utc,
    new_id,
)

if TYPE_CHECKING:
    from sage_memory.engine.context import EngineContext


def add_graph(
    ctx: EngineContext,
    text: str,
    nodes: Sequence[NodeSpec],
    edges: Sequence[EdgeSpec],
    scope: Scope,
    *,
    timestamp: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: str | None = None,
    kind: MemoryKind | None = None,
) -> AddResult:
    """Store ``text`` as a memory that states ``nodes`` and ``edges``, in one batch."""
    text = check_text(text, ctx.config.max_text_chars)
    meta = check_metadata(metadata)
    kind = check_kind(kind)
    _check_specs(nodes, edges)
    now = ctx.now()
    memory = Memory(
        id=new_id(),
        text=text,
        scope=scope,
        timestamp=now if timestamp is None else as_utc(timestamp),
        created_at=now,
        updated_at=now,
        kind=kind or "knowledge",
        source=source,
        metadata=dict(meta or {}),
        extraction="skipped",
    )
    vectors = ctx.embedder.embed([text, *(s.name for s in nodes)])
    with ctx.writing(memory.scope.partition.key):
        uow = UnitOfWork(ctx.store, Batch("user", "add_graph", now))
        uow.put(memory, vectors[0])
        out = _Edit(ctx, uow, memory, now).plan(nodes, edges, vectors[1:])
        changes = uow.commit()
        ctx.sync_index(changes, uow.vectors)
    return AddResult(
        memory_id=memory.id,
        memory=memory,
        memory_ids=(memory.id,),
        node_ids=tuple(out.node_ids),
        edge_ids=tuple(out.edge_ids),
        change_ids=tuple(c.id for c in changes),
    )


def _check_specs(nodes: Sequence[NodeSpec], edges: Sequence[EdgeSpec]) -> None:
    keys = set()
    for spec in nodes:
        if not isinstance(spec, NodeSpec):
            raise ValidationError(f"nodes must be NodeSpec objects, got {type(spec).__name__}")
        if not spec.name.strip():
            raise ValidationError(f"node {spec.key!r} has an empty name; give every node a name")
        keys.add(spec.key)
    for espec in edges:
        if not isinstance(espec, EdgeSpec):
            raise ValidationError(f"edges must be EdgeSpec objects, got {type(espec).__name__}")
        missing = [k for k in (espec.source, espec.target) if k not in keys]
        if missing:
            raise ValidationError(
                f"edge {espec.source!r} -{espec.relation}-> {espec.target!r} refers to node "
                f"key(s) {missing} that are not among the nodes; list both ends in nodes"
            )
        if espec.source == espec.target:
            raise ValidationError(f"edge {espec.relation!r} links node {espec.source!r} to itself")
        if not espec.relation.strip():
            raise ValidationError("an edge has an empty relation; name the relation")


@dataclasses.dataclass(frozen=True, slots=True)
class _Edit:
    """What planning one ``add_graph`` call needs at hand."""

    ctx: EngineContext
    uow: UnitOfWork
    memory: Memory
    now: datetime

    @property
    def scope(self) -> Scope:
        return self.memory.scope.partition

    def plan(
        self, nodes: Sequence[NodeSpec], edges: Sequence[EdgeSpec], vectors: Vector
    ) -> IngestOutcome:
        out = IngestOutcome()
        key_to_id: dict[str, str] = {}
        for spec, vec in zip(nodes, vectors, strict=True):
            node = self.node_for(spec, vec)
            key_to_id[spec.key] = node.id
            if node.id not in out.node_ids:
                out.node_ids.append(node.id)
        for espec in edges:
            edge = self.edge_for(espec, key_to_id[espec.source], key_to_id[espec.target])
            if edge.id not in out.edge_ids:
                out.edge_ids.append(edge.id)
        return out

    def node_for(self, spec: NodeSpec, vec: Vector) -> Node:
        found = self.uow.find_nodes(self.scope, [spec.name, *spec.aliases])
        if found:
            # Several exact matches can exist (two nodes sharing an alias); the best-supported
            # wins, as in SageMemory.find_node.
            node = max(found, key=lambda n: (len(n.memory_ids), n.salience))
            updated = dataclasses.replace(
                node,
                aliases=tuple(
                    dict.fromkeys(a for a in (*node.aliases, *spec.aliases) if a != node.name)
                ),
                attributes={**spec.attributes, **node.attributes},
                memory_ids=tuple(dict.fromkeys((*node.memory_ids, self.memory.id))),
                updated_at=self.now,
            )
            self.uow.put(updated)
            return updated
        node = Node(
            id=new_id(),
            scope=self.scope,
            name=spec.name,
            label=self.ctx.schema.map_label(spec.label),
            aliases=tuple(dict.fromkeys(a for a in spec.aliases if a and a != spec.name)),
            summary=spec.summary,
            attributes=dict(spec.attributes),
            confidence=spec.confidence,
            salience=spec.salience,
            memory_ids=(self.memory.id,),
            created_at=self.now,
            updated_at=self.now,
        )
        self.uow.put(node, np.asarray(vec, dtype=np.float32))
        return node

    def edge_for(self, spec: EdgeSpec, src: str, dst: str) -> Edge:
        relation, original = self.ctx.schema.map_relation(spec.relation)
        attributes: dict[str, Any] = dict(spec.attributes)
        if original is not None:
            attributes["original_relation"] = original
        if spec.negated:
            attributes["negated"] = True
        for e in self.uow.edges_of(self.scope, [src], relations=[relation], direction="out"):
            same = (
                e.source_id == src
                and e.target_id == dst
                and e.is_current()
                and bool(e.attributes.get("negated")) == spec.negated
                and e.attributes.get("original_relation") == attributes.get("original_relation")
            )
            if same:
                # Stating a current fact again adds evidence, not a second edge.
                again = dataclasses.replace(
                    e, memory_ids=tuple(dict.fromkeys((*e.memory_ids, self.memory.id)))
                )
                self.uow.put(again)
                return again
        edge = Edge(
            id=new_id(),
            scope=self.scope,
            source_id=src,
            target_id=dst,
            relation=relation,
            fact=spec.fact,
            confidence=spec.confidence,
            valid_from=spec.valid_from or self.memory.event_time or self.memory.timestamp,
            valid_to=spec.valid_to,
            created_at=self.now,
            memory_ids=(self.memory.id,),
            attributes=attributes,
        )
        self.uow.put(edge)
        return edge


def delete_node(ctx: EngineContext, node: Node) -> list[Change]:
    """Remove a node and every edge that touches it, as one undoable batch.

    The memories that mention the node stay: this edits the graph, it does not forget text
    (``SageMemory.delete`` does that).
    """
    with ctx.writing(node.scope.partition.key):
        uow = UnitOfWork(ctx.store, Batch("user", f"delete node {node.id}", ctx.now()))
        for edge in uow.edges_of(node.scope, [node.id]):
            uow.remove(edge)
        uow.remove(node)
        changes = uow.commit()
        ctx.sync_index(changes, {})
    return changes


def delete_edge(ctx: EngineContext, edge: Edge) -> list[Change]:
    """Remove one edge, as one undoable batch (its nodes and memories stay)."""
    with ctx.writing(edge.scope.partition.key):
        uow = UnitOfWork(ctx.store, Batch("user", f"delete edge {edge.id}", ctx.now()))
        uow.remove(edge)
        changes = uow.commit()
    return changes


def whole_graph(ctx: EngineContext, scope: Scope, *, include_expired: bool = False) -> Subgraph:
    """Every node and edge of a partition (expired edges only when asked)."""
    part = scope.partition
    nodes = ctx.store.list_nodes(part)
    edges = [e for e in ctx.store.list_edges(part) if include_expired or e.is_current()]
    return Subgraph(part, (), tuple(nodes), tuple(edges))
