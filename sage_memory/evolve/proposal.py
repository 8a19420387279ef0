"""What every evolution step returns: proposed changes as plain data.

A :class:`Proposal` is the set of rows one logical change writes (``puts``) or deletes
(``removes``), already computed, with the confidence and evidence behind it. The engine decides
whether it applies now or goes to the review queue, and applies it through a unit of work, so
it is journaled with its inverse like any other write.

Steps read the graph through a :class:`Workspace`: the pending state of the run (the engine's
unit of work), so a later step sees what an earlier step of the same run changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sage_memory.codec import Record
from sage_memory.store.base import GraphStore
from sage_memory.types import Edge, Node, Scope, Vector


@dataclass(frozen=True, slots=True)
class Proposal:
    """One logical change an evolution step proposes.

    Attributes:
        op: The operation (``OPERATIONS`` in :mod:`sage_memory.evolve.run`); the config's
            ``auto_apply`` is matched against it.
        summary: One line for people ("merge 'pd.read_csv' into 'pandas.read_csv'").
        puts: Rows written (inserted or replaced), in order.
        removes: Rows deleted.
        confidence: How sure the step is (0-1).
        evidence: Why, as JSON-able data.
        key: What the change is about, stable across runs (dedupes the review queue).
        payload: How to plan the change again later, when it is accepted from the queue.
        needs_review: The step itself says a person should decide (close evidence).
        schema_change: It adds a label or relation type; never applied automatically.
    """

    op: str
    summary: str
    puts: tuple[Record, ...] = ()
    removes: tuple[Record, ...] = ()
    confidence: float = 1.0
    evidence: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)
    needs_review: bool = False
    schema_change: bool = False


class Workspace(Protocol):
    """The pending state of one run: reads see earlier writes of the same run.

    The engine's ``UnitOfWork`` is one; nothing here imports it.
    """

    store: GraphStore

    def node(self, scope: Scope, node_id: str) -> Node | None: ...

    def edge(self, scope: Scope, edge_id: str) -> Edge | None: ...

    def edges_of(
        self, scope: Scope, node_ids: Sequence[str], relations: Sequence[str] | None = None
    ) -> list[Edge]: ...

    def put(self, record: Record, vector: Vector | None = None) -> None: ...

    def remove(self, record: Record) -> None: ...


def apply_to(ws: Workspace, proposal: Proposal) -> None:
    """Write a proposal into the workspace (removals first: a re-pointed edge may replace one)."""
    for record in proposal.removes:
        ws.remove(record)
    for record in proposal.puts:
        ws.put(record)


def is_current(edge: Edge) -> bool:
    """A fact the memory believes now: not expired, no end of validity."""
    return edge.expired_at is None and edge.valid_to is None


def weight_clock(edge: Edge) -> datetime:
    """When the edge's weight was last set (reinforced or decayed); its creation otherwise."""
    stamp = edge.attributes.get("weight_at")
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp)
        except ValueError:
            pass
    return edge.created_at


def pair_key(*ids: str) -> str:
    """An order-free key for a set of ids."""
    return "|".join(sorted(ids))


class Overlay:
    """A fast read-through view over a workspace for a run that touches thousands of rows.

    Writes go to the wrapped workspace (the engine's unit of work, which journals them); reads
    consult this overlay's own index of pending rows first, so a read costs what the store read
    costs, not a scan of everything the run already changed.
    """

    def __init__(self, inner: Workspace) -> None:
        self.inner = inner
        self.store = inner.store
        self._pending: dict[str, Record | None] = {}
        self._by_end: dict[str, set[str]] = {}

    def node(self, scope: Scope, node_id: str) -> Node | None:
        if node_id in self._pending:
            rec = self._pending[node_id]
            return rec if isinstance(rec, Node) else None
        found = self.store.get_nodes(scope, [node_id])
        return found[0] if found else None

    def edge(self, scope: Scope, edge_id: str) -> Edge | None:
        if edge_id in self._pending:
            rec = self._pending[edge_id]
            return rec if isinstance(rec, Edge) else None
        found = self.store.get_edges(scope, [edge_id])
        return found[0] if found else None

    def edges_of(
        self, scope: Scope, node_ids: Sequence[str], relations: Sequence[str] | None = None
    ) -> list[Edge]:
        out: dict[str, Edge] = {}
        for e in self.store.edges_of(scope, node_ids, relations=relations):
            if e.id in self._pending:
                continue
            out[e.id] = e
        for nid in node_ids:
            for eid in self._by_end.get(nid, ()):
                rec = self._pending.get(eid)
                if (
                    isinstance(rec, Edge)
                    and (relations is None or rec.relation in relations)
                    and nid in (rec.source_id, rec.target_id)  # it may have been re-pointed
                ):
                    out[eid] = rec
        return list(out.values())

    def put(self, record: Record, vector: Vector | None = None) -> None:
        self.inner.put(record, vector)
        self._pending[record.id] = record
        if isinstance(record, Edge):
            for end in (record.source_id, record.target_id):
                self._by_end.setdefault(end, set()).add(record.id)

    def remove(self, record: Record) -> None:
        self.inner.remove(record)
        self._pending[record.id] = None
