"""Reading memories and the graph from the PostgreSQL store, always inside one partition."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sage_memory.codec import from_dict
from sage_memory.store.base import NODE_LINKS, PROVENANCE_EDGE, Direction, name_key
from sage_memory.store.postgres_connection import PostgresConnection, _clean
from sage_memory.types import Edge, Memory, Node, Scope

#: The previous ('<', DESC) or next ('>', '') memory of `c` in its scope and run.
_ADJACENT = (
    "(SELECT {a}.id FROM memories {a} WHERE {a}.scope_key = c.scope_key"
    " AND ({a}.ts, {a}.created_at, {a}.rid) {cmp} (c.ts, c.created_at, c.rid)"
    " AND {a}.run_id IS NOT DISTINCT FROM c.run_id AND NOT {a}.archived"
    " ORDER BY {a}.ts {order}, {a}.created_at {order}, {a}.rid {order} LIMIT 1)"
)


class PostgresReads(PostgresConnection):
    """Memories, nodes and edges of a partition; provenance; turn adjacency; graph metrics."""

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        run_sql, run_params = self._run_filter(scope)
        rows = self._rows(
            f"SELECT id, data FROM memories WHERE scope_key = %s AND id = ANY(%s){run_sql}",
            (scope.key, list(ids), *run_params),
        )
        out = {r[0]: from_dict(Memory, json.loads(r[1])) for r in rows}
        return [out[i] for i in ids if i in out]

    def find_memory(self, memory_id: str) -> Memory | None:
        rows = self._rows("SELECT data FROM memories WHERE id = %s", (memory_id,))
        return from_dict(Memory, json.loads(rows[0][0])) if rows else None

    def list_memories(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        offset: int = 0,
        include_archived: bool = False,
        before: datetime | None = None,
    ) -> list[Memory]:
        run_sql, params = self._run_filter(scope)
        sql = f"SELECT data FROM memories WHERE scope_key = %s{run_sql}"
        if not include_archived:
            sql += " AND NOT archived"
        if before is not None:
            sql += " AND ts < %s"
            params = (*params, before.isoformat())
        # Insertion order breaks ties: the messages of one add share a timestamp.
        sql += " ORDER BY ts, created_at, rid LIMIT %s OFFSET %s"
        rows = self._rows(sql, (scope.key, *params, limit, offset))
        return [from_dict(Memory, json.loads(r[0])) for r in rows]

    def count_memories(self, scope: Scope) -> int:
        run_sql, params = self._run_filter(scope)
        rows = self._rows(
            f"SELECT count(*) FROM memories WHERE scope_key = %s{run_sql}", (scope.key, *params)
        )
        return int(rows[0][0])

    # -- graph -----------------------------------------------------------------------------
    def get_nodes(self, scope: Scope, ids: Sequence[str]) -> list[Node]:
        return self._get(Node, "nodes", scope, ids)

    def get_edges(self, scope: Scope, ids: Sequence[str]) -> list[Edge]:
        return self._get(Edge, "edges", scope, ids)

    def _get(self, cls: Any, table: str, scope: Scope, ids: Sequence[str]) -> list[Any]:
        if not ids:
            return []
        rows = self._rows(
            f"SELECT id, data FROM {table} WHERE scope_key = %s AND id = ANY(%s)",
            (scope.key, list(ids)),
        )
        out = {r[0]: from_dict(cls, json.loads(r[1])) for r in rows}
        return [out[i] for i in dict.fromkeys(ids) if i in out]

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]:
        read = _find_nodes_read(scope, names)
        return [] if read is None else _found_nodes(self._rows(*read))

    def list_nodes(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Node]:
        rows = self._rows(
            "SELECT data FROM nodes WHERE scope_key = %s ORDER BY id LIMIT %s OFFSET %s",
            (scope.key, limit, offset),
        )
        return [from_dict(Node, json.loads(r[0])) for r in rows]

    def list_edges(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Edge]:
        rows = self._rows(
            "SELECT data FROM edges WHERE scope_key = %s ORDER BY id LIMIT %s OFFSET %s",
            (scope.key, limit, offset),
        )
        return [from_dict(Edge, json.loads(r[0])) for r in rows]

    def count_graph(self, scope: Scope) -> tuple[int, int]:
        rows = self._rows(
            "SELECT (SELECT count(*) FROM nodes WHERE scope_key = %s),"
            " (SELECT count(*) FROM edges WHERE scope_key = %s)",
            (scope.key, scope.key),
        )
        return int(rows[0][0]), int(rows[0][1])

    def edges_of(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        *,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        per_node: int | None = None,
    ) -> list[Edge]:
        if not node_ids:
            return []
        if per_node is not None:
            return self._latest_edges(scope, node_ids, direction, relations, per_node)
        ends = {
            "out": "source_id = ANY(%(ids)s)",
            "in": "target_id = ANY(%(ids)s)",
            "both": "(source_id = ANY(%(ids)s) OR target_id = ANY(%(ids)s))",
        }[direction]
        sql = (
            f"SELECT id, source_id, target_id, data FROM edges WHERE {ends} AND scope_key = %(sk)s"
        )
        params: dict[str, Any] = {"ids": list(node_ids), "sk": scope.key}
        if relations:
            sql += " AND relation = ANY(%(rel)s)"
            params["rel"] = list(relations)
        rows = self._rows(sql + " ORDER BY rid", params)  # type: ignore[arg-type]
        return [
            from_dict(Edge, json.loads(r[3])) for r in _endpoint_order(rows, node_ids, direction)
        ]

    def _latest_edges(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        direction: Direction,
        relations: Sequence[str] | None,
        per_node: int,
    ) -> list[Edge]:
        """At most ``per_node`` edges leaving and arriving at each node, the latest added
        first, in :func:`_endpoint_order`: one seek per node and end on the (end, rid)
        indexes, so a node's degree does not count."""
        rel = " AND relation = ANY(%(rel)s)" if relations else ""
        columns = {"out": ("source_id",), "in": ("target_id",), "both": ("source_id", "target_id")}
        parts = [
            f"SELECT e.id, e.source_id, e.target_id, e.data, e.rid FROM unnest(%(ids)s::text[])"
            f" AS n(id) CROSS JOIN LATERAL (SELECT id, source_id, target_id, data, rid FROM edges"
            f" WHERE {column} = n.id AND scope_key = %(sk)s{rel} ORDER BY rid DESC"
            f" LIMIT %(k)s) e"
            for column in columns[direction]
        ]
        params: dict[str, Any] = {
            "ids": list(dict.fromkeys(node_ids)),
            "sk": scope.key,
            "rel": list(relations or ()),
            "k": per_node,
        }
        rows = self._rows(" UNION ALL ".join(parts), params)  # type: ignore[arg-type]
        unique = sorted({r[0]: r for r in rows}.values(), key=lambda r: r[4])
        return [
            from_dict(Edge, json.loads(r[3])) for r in _endpoint_order(unique, node_ids, direction)
        ]

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        rows = self._rows(
            "SELECT entity, entity_id FROM provenance WHERE memory_id = %s ORDER BY seq",
            (memory_id,),
        )
        node_ids = list(dict.fromkeys(r[1] for r in rows if r[0] in NODE_LINKS))
        edge_ids = [r[1] for r in rows if r[0] == PROVENANCE_EDGE]
        return self.get_nodes(scope, node_ids), self.get_edges(scope, edge_ids)

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        if not memory_ids:
            return {}
        rows = self._rows(
            "SELECT p.memory_id, p.entity_id FROM provenance p JOIN nodes n ON n.id = p.entity_id"
            " WHERE p.memory_id = ANY(%s) AND p.entity = 'node' AND n.scope_key = %s"
            " ORDER BY p.seq",
            (list(memory_ids), scope.partition.key),
        )
        out: dict[str, list[str]] = {}
        for mid, nid in sorted(rows, key=lambda r: r[0]):  # by memory, then as written
            out.setdefault(mid, []).append(nid)
        return out

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        if not memory_ids:
            return {}
        sql, params = _adjacent_read(scope, memory_ids)
        rows = self._statements(f"{NO_BITMAP}; {sql}", params)
        return {r[0]: (r[1], r[2]) for r in rows}

    def graph_metrics(self, scope: Scope) -> dict[str, Any]:
        key = scope.partition.key
        nodes, edges = self.count_graph(scope.partition)
        isolated = self._rows(
            "SELECT count(*) FROM nodes n WHERE n.scope_key = %s"
            " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.source_id = n.id)"
            " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.target_id = n.id)",
            (key,),
        )[0][0]
        rows = self._rows(
            "SELECT relation, count(*), sum((data::jsonb ->> 'confidence')::float8) FROM edges"
            " WHERE scope_key = %s AND (data::jsonb ->> 'expired_at') IS NULL"
            " AND (data::jsonb ->> 'valid_to') IS NULL GROUP BY relation",
            (key,),
        )
        return {
            "nodes": nodes,
            "edges": edges,
            "current_edges": sum(int(r[1]) for r in rows),
            "isolated_nodes": int(isolated),
            "confidence_sum": sum(float(r[2] or 0.0) for r in rows),
            "relations": {r[0]: int(r[1]) for r in rows},
        }


#: The planner guesses a dozen rows behind each neighbour's row comparison of
#: :func:`_adjacent_read` (it is half the partition) and picks a bitmap scan that reads them all
#: and sorts, per memory; the ordered index scan stops at the first row, with the same answers.
#: LOCAL: for the statement it is sent with only (:meth:`PostgresConnection._statements`).
NO_BITMAP = "SET LOCAL enable_bitmapscan = off"


def _adjacent_read(scope: Scope, memory_ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """(id, previous id, next id) of each of ``memory_ids`` in ``scope`` (named parameters
    ``around`` and ``sk``)."""
    run_sql, run_params = PostgresConnection._run_filter(scope, "c.run_id")
    params: dict[str, Any] = {"around": list(memory_ids), "sk": scope.key}
    if run_params:
        run_sql = " AND c.run_id = %(run)s"
        params["run"] = run_params[0]
    sql = (
        f"SELECT c.id AS id, {_ADJACENT.format(a='p', cmp='<', order='DESC')} AS prev,"
        f" {_ADJACENT.format(a='n', cmp='>', order='')} AS next"
        f" FROM memories c WHERE c.id = ANY(%(around)s::text[]) AND c.scope_key = %(sk)s{run_sql}"
    )
    return sql, params


def _find_nodes_read(scope: Scope, names: Sequence[str]) -> tuple[str, tuple[Any, ...]] | None:
    """The statement of ``find_nodes`` (rows for :func:`_found_nodes`); None: no name."""
    keys = list({_clean(name_key(n)) for n in names if n.strip()})
    if not keys:
        return None
    return (
        "SELECT nn.key, n.id, n.data FROM node_names nn JOIN nodes n ON n.id = nn.node_id"
        " WHERE nn.scope_key = %s AND nn.key = ANY(%s) AND n.scope_key = %s ORDER BY nn.seq",
        (scope.key, keys, scope.key),
    )


def _found_nodes(rows: Sequence[tuple[Any, ...]]) -> list[Node]:
    """The SQLite store's order (by key, then as the names were written): the first of
    equally good candidates wins entity resolution, so both backends pick the same."""
    found: dict[str, Node] = {}
    for _, nid, data in sorted(rows, key=lambda r: r[0]):  # stable: write order per key
        if nid not in found:
            found[nid] = from_dict(Node, json.loads(data))
    return list(found.values())


#: Ids per ``IN`` list in the SQLite store's reads (its order restarts with each slice).
_SLICE = 500


def _endpoint_order(
    rows: Sequence[tuple[Any, ...]], node_ids: Sequence[str], direction: Direction
) -> list[tuple[Any, ...]]:
    """Edges (id, source_id, target_id, data; by rid) in the SQLite store's order: the edges
    leaving the nodes first, by source id, then those arriving, by target id; each edge once.

    Callers pick the first of equal edges (which value of a relation is current when two
    share a date), so both backends must list them alike.
    """
    columns = {"out": (1,), "in": (2,), "both": (1, 2)}[direction]
    found: dict[str, tuple[Any, ...]] = {}
    for column in columns:
        for start in range(0, len(node_ids), _SLICE):
            wanted = set(node_ids[start : start + _SLICE])
            hits = [r for r in rows if r[column] in wanted]
            for row in sorted(hits, key=lambda r: r[column]):  # stable: rid order per node
                found.setdefault(row[0], row)
    return list(found.values())
