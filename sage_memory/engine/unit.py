"""A unit of work: the rows one call touches, collected before one atomic write.

Planning an add (or a chunk of add_many) reads the store, but must also see what earlier steps
of the same call already decided (a node created for memory 1 is the node memory 2 mentions).
The unit keeps each touched row's original and current state and turns them into one journal
batch at the end; rows changed back to their original state produce no change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sage_memory.codec import Record
from sage_memory.engine.journal import Batch
from sage_memory.store.base import Direction, GraphStore, name_key
from sage_memory.types import Change, Edge, Memory, Node, Scope, Vector

Snapshot = tuple[dict[str, "Record | None"], dict[str, "Record | None"], dict[str, Vector]]


class UnitOfWork:
    def __init__(self, store: GraphStore, batch: Batch) -> None:
        self.store = store
        self.batch = batch
        self._original: dict[str, Record | None] = {}
        self._current: dict[str, Record | None] = {}
        self.vectors: dict[str, Vector] = {}
        # Lookups of pending rows by name key and by edge end, so a chunk of add_many does not
        # scan every pending row for every proposed node and edge. Entries may be stale (a
        # renamed or removed row): readers check the current row. Positions keep answers in
        # the pending rows' order, as the scan gave them.
        self._by_name: dict[str, set[str]] = {}
        self._by_end: dict[str, set[str]] = {}
        self._pos: dict[str, int] = {}

    # -- reading through the pending state -------------------------------------------------
    def node(self, scope: Scope, node_id: str) -> Node | None:
        if node_id in self._current:
            rec = self._current[node_id]
            return rec if isinstance(rec, Node) else None
        found = self.store.get_nodes(scope, [node_id])
        return found[0] if found else None

    def edge(self, scope: Scope, edge_id: str) -> Edge | None:
        if edge_id in self._current:
            rec = self._current[edge_id]
            return rec if isinstance(rec, Edge) else None
        found = self.store.get_edges(scope, [edge_id])
        return found[0] if found else None

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]:
        keys = {name_key(n) for n in names}
        out: dict[str, Node] = {}
        for n in self.store.find_nodes(scope, list(names)):
            cur = self._pending(n)  # the stored row just read, unless this unit changed it
            if isinstance(cur, Node) and self._matches(cur, keys):
                out[n.id] = cur
        key = scope.key
        for rid in self._in_order(i for k in keys for i in self._by_name.get(k, ())):
            rec = self._current.get(rid)
            if isinstance(rec, Node) and rec.scope.key == key and self._matches(rec, keys):
                out[rec.id] = rec
        return list(out.values())

    def _in_order(self, ids: Iterable[str]) -> list[str]:
        return sorted({i for i in ids if i in self._current}, key=self._pos.__getitem__)

    def position(self, record_id: str) -> int:
        """When this unit first took the row in (0, 1, ...), or -1 for a row it never touched:
        the order its rows were learnt in, which a row's times cannot tell within one chunk."""
        return self._pos.get(record_id, -1)

    def _pending(self, stored: Record) -> Record | None:
        """``stored`` as this unit of work sees it: its pending state when it changed it."""
        return self._current.get(stored.id, stored)

    @staticmethod
    def _matches(node: Node, keys: set[str]) -> bool:
        return bool(keys & {name_key(node.name), *(name_key(a) for a in node.aliases)})

    def edges_of(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        relations: Sequence[str] | None = None,
        *,
        direction: Direction = "both",
    ) -> list[Edge]:
        """Stored and pending edges touching ``node_ids``; "out" keeps those leaving them
        (with ``relations`` too, one seek per node on the stores' (source, relation) index)."""
        wanted = set(node_ids)
        out: dict[str, Edge] = {}
        for e in self.store.edges_of(scope, node_ids, direction=direction, relations=relations):
            cur = self._pending(e)  # no second read per edge (a round trip on a server)
            if isinstance(cur, Edge):
                out[e.id] = cur
        key = scope.key
        for rid in self._in_order(i for n in wanted for i in self._by_end.get(n, ())):
            rec = self._current.get(rid)
            if (
                isinstance(rec, Edge)
                and rec.scope.key == key
                and _touches(rec, wanted, direction)
                and (relations is None or rec.relation in relations)
            ):
                out[rec.id] = rec
        return list(out.values())

    def snapshot(self) -> Snapshot:
        """The pending state, to :meth:`restore` if planning one memory fails halfway."""
        return dict(self._original), dict(self._current), dict(self.vectors)

    def restore(self, saved: Snapshot) -> None:
        self._original, self._current, self.vectors = dict(saved[0]), dict(saved[1]), dict(saved[2])
        # Rows put again later go after every kept row, as a dict appends a new key.
        self._pos = {rid: i for i, rid in enumerate(self._current)}

    def touched(self) -> Iterable[Record]:
        return (r for r in self._current.values() if r is not None)

    def removed(self) -> Iterable[Record]:
        """Stored rows this unit deletes, as they were."""
        for rid, rec in self._current.items():
            original = self._original.get(rid)
            if rec is None and original is not None:
                yield original

    # -- writing ---------------------------------------------------------------------------
    def put(self, record: Record, vector: Vector | None = None) -> None:
        """Insert or replace a row (its original state is read once, on first touch)."""
        if record.id not in self._original:
            self._original[record.id] = self._load(record)
        if record.id not in self._current:
            self._pos[record.id] = len(self._pos)
        self._current[record.id] = record
        if vector is not None:
            self.vectors[record.id] = vector
        if isinstance(record, Node):
            for k in {name_key(record.name), *(name_key(a) for a in record.aliases)}:
                self._by_name.setdefault(k, set()).add(record.id)
        elif isinstance(record, Edge):
            self._by_end.setdefault(record.source_id, set()).add(record.id)
            self._by_end.setdefault(record.target_id, set()).add(record.id)

    def remove(self, record: Record) -> None:
        if record.id not in self._original:
            self._original[record.id] = self._load(record)
        if record.id not in self._current:
            self._pos[record.id] = len(self._pos)
        self._current[record.id] = None
        self.vectors.pop(record.id, None)

    def _load(self, record: Record) -> Record | None:
        if isinstance(record, Memory):
            found: Sequence[Record] = self.store.get_memories(record.scope, [record.id])
        elif isinstance(record, Node):
            found = self.store.get_nodes(record.scope, [record.id])
        else:
            found = self.store.get_edges(record.scope, [record.id])
        return found[0] if found else None

    def changes(self) -> list[Change]:
        """The journal entries for everything touched, in a safe order: memories, then nodes,
        then edges for writes; edges before nodes for deletions."""

        def rank(rid: str) -> int:
            rec = self._current[rid] or self._original[rid]
            deleting = self._current[rid] is None
            order = {Memory: 0, Node: 1, Edge: 2}[type(rec)]
            return -order if deleting else order

        for rid in sorted(self._current, key=rank):
            before, after = self._original[rid], self._current[rid]
            if before is None and after is None:
                continue
            unchanged = before is not None and after is not None and _same(before, after)
            if unchanged and rid not in self.vectors:
                continue
            self.batch.record(before, after)
        return self.batch.changes

    def commit(self) -> list[Change]:
        changes = self.changes()
        if changes:
            self.store.apply(changes, self.vectors)
        return changes


def _touches(edge: Edge, ends: set[str], direction: Direction) -> bool:
    leaves, arrives = edge.source_id in ends, edge.target_id in ends
    return {"out": leaves, "in": arrives, "both": leaves or arrives}[direction]


def _same(a: Record, b: Record) -> bool:
    # Field-by-field equality of the frozen dataclasses: what astuple compared, without
    # deep-copying every nested dict and tuple first (a sixth of a chunk's planning time).
    return a == b
