"""Reading memories and the graph from the SQLite store, always inside one partition."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sage_memory.codec import from_dict
from sage_memory.store.base import NODE_LINKS, PROVENANCE_EDGE, Direction, name_key
from sage_memory.store.journal_delta import memory_record
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import Edge, Memory, Node, Scope

#: The columns of a memory row that :func:`memory_record` reads its record from.
_MEMORY_ROW = "id, ts, created_at, data"

#: Nodes per compound query of a bounded edge read (SQLite allows 500 terms in one).
_PER_QUERY = 200

#: The previous ('<', DESC) or next ('>', '') memory of `c` in its scope and run.
_ADJACENT = (
    "COALESCE((SELECT {a}.id FROM memories {a} WHERE {a}.scope_key = c.scope_key"
    " AND {a}.ts = c.ts AND {a}.created_at = c.created_at AND {a}.rid {cmp} c.rid"
    " AND {a}.run_id IS c.run_id AND {a}.archived = 0 ORDER BY {a}.rid {order} LIMIT 1),"
    " (SELECT {a}.id FROM memories {a} WHERE {a}.scope_key = c.scope_key"
    " AND ({a}.ts, {a}.created_at) {cmp} (c.ts, c.created_at) AND {a}.run_id IS c.run_id"
    " AND {a}.archived = 0 ORDER BY {a}.ts {order}, {a}.created_at {order}, {a}.rid {order}"
    " LIMIT 1))"
)


#: A memory's provenance rows in the order their nodes and edges were last written (the last
#: journal entry of each): a write changes only the rows that differ (``sqlite_writes``), and
#: this is the order a rewrite of all of them left, which the walk's sums follow.
_WRITE_ORDER = (
    "ORDER BY p.memory_id, (SELECT max(j.seq) FROM journal j WHERE j.entity_id = p.entity_id),"
    " p.rowid"
)


class SQLiteReads(SQLiteConnection):
    """Memories, nodes and edges of a partition; provenance; turn adjacency; graph metrics."""

    # -- memories --------------------------------------------------------------------------
    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        run_id = scope.run_id if self._run_filter(scope)[0] else None
        found = self._records_of(Memory, "memories", scope, ids)
        if run_id is not None:
            found = {k: m for k, m in found.items() if m.scope.run_id == run_id}
        return [found[i] for i in ids if i in found]

    def find_memory(self, memory_id: str) -> Memory | None:
        rows = self._rows(f"SELECT {_MEMORY_ROW} FROM memories WHERE id = ?", (memory_id,))
        return from_dict(Memory, memory_record(*rows[0])) if rows else None

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
        sql = f"SELECT {_MEMORY_ROW} FROM memories WHERE scope_key = ?{run_sql}"
        if not include_archived:
            sql += " AND archived = 0"
        if before is not None:
            sql += " AND ts < ?"
            params = (*params, before.isoformat())
        # Insertion order breaks ties: the messages of one add share a timestamp.
        sql += " ORDER BY ts, created_at, rid LIMIT ? OFFSET ?"
        rows = self._rows(sql, (scope.key, *params, -1 if limit is None else limit, offset))
        return [from_dict(Memory, memory_record(*r)) for r in rows]

    def count_memories(self, scope: Scope) -> int:
        run_sql, params = self._run_filter(scope)
        rows = self._rows(
            f"SELECT count(*) FROM memories WHERE scope_key = ?{run_sql}", (scope.key, *params)
        )
        return int(rows[0][0])

    # -- graph -----------------------------------------------------------------------------
    def get_nodes(self, scope: Scope, ids: Sequence[str]) -> list[Node]:
        return self._get(Node, "nodes", scope, ids)

    def get_edges(self, scope: Scope, ids: Sequence[str]) -> list[Edge]:
        return self._get(Edge, "edges", scope, ids)

    def _get(self, cls: Any, table: str, scope: Scope, ids: Sequence[str]) -> list[Any]:
        found = self._records_of(cls, table, scope, ids)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def _records_of(self, cls: Any, table: str, scope: Scope, ids: Sequence[str]) -> dict[str, Any]:
        """The decoded records of ``ids`` in ``scope``'s partition key, from the cache of
        decoded rows where it has them (a search reads the same hub edges and memories again
        and again; decoding JSON into records was a third of its store time)."""
        with self._lock:
            cache = self._decoded
            out: dict[str, Any] = {}
            missing: list[str] = []
            key = scope.key
            none: dict[tuple[str, str], Any] = {}
            known = cache.get if cache is not None else none.get
            for i in dict.fromkeys(ids):
                rec = known((table, i))
                if rec is None:
                    missing.append(i)
                elif rec.scope.key == key:
                    out[i] = rec
            for chunk in chunks(missing):
                marks = ",".join("?" * len(chunk))
                columns = _MEMORY_ROW if table == "memories" else "id, data"
                rows = self._rows(
                    # "+scope_key": from five ids on, SQLite would scan the partition by scope
                    f"SELECT {columns} FROM {table} WHERE +scope_key = ? AND id IN ({marks})",
                    (scope.key, *chunk),
                )
                for row in rows:
                    rid = row[0]
                    image = memory_record(*row) if len(row) == 4 else json.loads(row[1])
                    out[rid] = rec = from_dict(cls, image)
                    if cache is not None:
                        cache.put((table, rid), rec)
            return out

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]:
        keys = list({name_key(n) for n in names if n.strip()})
        if not keys:
            return []
        ids: list[str] = []
        for chunk in chunks(keys):
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                f"SELECT DISTINCT node_id FROM node_names WHERE scope_key = ? AND key IN ({marks})",
                (scope.key, *chunk),
            )
            ids.extend(r[0] for r in rows)
        return self.get_nodes(scope, ids)

    def list_nodes(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Node]:
        rows = self._rows(
            "SELECT data FROM nodes WHERE scope_key = ? ORDER BY id LIMIT ? OFFSET ?",
            (scope.key, -1 if limit is None else limit, offset),
        )
        return [from_dict(Node, json.loads(r[0])) for r in rows]

    def list_edges(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Edge]:
        rows = self._rows(
            "SELECT data FROM edges WHERE scope_key = ? ORDER BY id LIMIT ? OFFSET ?",
            (scope.key, -1 if limit is None else limit, offset),
        )
        return [from_dict(Edge, json.loads(r[0])) for r in rows]

    def count_graph(self, scope: Scope) -> tuple[int, int]:
        n = self._rows("SELECT count(*) FROM nodes WHERE scope_key = ?", (scope.key,))[0][0]
        e = self._rows("SELECT count(*) FROM edges WHERE scope_key = ?", (scope.key,))[0][0]
        return int(n), int(e)

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
        rel_sql, rel_params = "", tuple[str, ...]()
        if relations:
            rel_sql = f" AND relation IN ({','.join('?' * len(relations))})"
            rel_params = tuple(relations)
        ids: dict[str, None] = {}
        columns = {"out": ["source_id"], "in": ["target_id"], "both": ["source_id", "target_id"]}
        with self._lock:
            for column in columns[direction]:
                ends = self._end_rows(column, node_ids, scope.key, rel_sql, rel_params, per_node)
                # Listed as one SQL read of up to 500 ids lists them: by node id, then rid.
                for chunk in chunks(node_ids):
                    rows = [r for n in dict.fromkeys(chunk) for r in ends.get(n, ())]
                    ids.update((r[2], None) for r in sorted(rows))
            found = self._records_of(Edge, "edges", scope, list(ids))
        return [found[i] for i in ids if i in found]

    def _end_rows(
        self,
        column: str,
        node_ids: Sequence[str],
        scope_key: str,
        rel_sql: str,
        rel_params: tuple[str, ...],
        per_node: int | None,
    ) -> dict[str, list[tuple[str, int, str]]]:
        """(node id, rid, edge id) rows of the edges of each node on ``column`` (at most
        ``per_node`` of each, the latest added), from the link cache where it has them."""
        key = (column, scope_key, rel_params, per_node)
        cache = self._links
        out: dict[str, list[tuple[str, int, str]]] = {}
        missing: list[str] = []
        for nid in dict.fromkeys(node_ids):
            known = cache.ends.get(nid, {}).get(key) if cache is not None else None
            if known is None:
                missing.append(nid)
            else:
                out[nid] = known
        if not missing:
            return out
        got: dict[str, list[tuple[str, int, str]]] = {n: [] for n in missing}
        if per_node is None:
            for chunk in chunks(missing):
                marks = ",".join("?" * len(chunk))
                # "+scope_key": without it SQLite picks the scope index and scans the whole
                # partition's edges for every call; the endpoint index is the selective one.
                for row in self._rows(
                    f"SELECT {column}, rid, id FROM edges WHERE {column} IN ({marks})"
                    f" AND +scope_key = ?{rel_sql}",
                    (*chunk, scope_key, *rel_params),
                ):
                    got[row[0]].append(row)
        else:
            # One index seek per node: the endpoint index holds (node id, rowid), so "ORDER BY
            # rid DESC LIMIT k" reads k entries and stops, however many edges the node has.
            one = (
                f"SELECT * FROM (SELECT {column}, rid, id FROM edges WHERE {column} = ?"
                f" AND +scope_key = ?{rel_sql} ORDER BY rid DESC LIMIT ?)"
            )
            for chunk in chunks(missing, _PER_QUERY):
                params: list[object] = []
                for nid in chunk:
                    params += [nid, scope_key, *rel_params, per_node]
                for row in self._rows(" UNION ALL ".join([one] * len(chunk)), tuple(params)):
                    got[row[0]].append(row)
        for nid, rows in got.items():
            if cache is not None:
                cache.put_ends(nid, key, rows)
            out[nid] = rows
        return out

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        rows = self._rows(
            f"SELECT entity, entity_id FROM provenance p WHERE memory_id = ? {_WRITE_ORDER}",
            (memory_id,),
        )
        node_ids = list(dict.fromkeys(r[1] for r in rows if r[0] in NODE_LINKS))
        edge_ids = [r[1] for r in rows if r[0] == PROVENANCE_EDGE]
        return self.get_nodes(scope, node_ids), self.get_edges(scope, edge_ids)

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        part = scope.partition.key
        with self._lock:
            cache = self._links
            known: dict[str, list[str]] = {}
            missing: list[str] = []
            for mid in dict.fromkeys(memory_ids):
                nids = cache.get_supports(mid, part) if cache is not None else None
                if nids is None:
                    missing.append(mid)
                else:
                    known[mid] = nids
            for chunk in chunks(missing):
                marks = ",".join("?" * len(chunk))
                got: dict[str, list[str]] = {m: [] for m in chunk}
                rows = self._rows(
                    "SELECT p.memory_id, p.entity_id FROM provenance p JOIN nodes n"
                    f" ON n.id = p.entity_id WHERE p.memory_id IN ({marks}) AND p.entity = 'node'"
                    f" AND +n.scope_key = ? {_WRITE_ORDER}",
                    (*chunk, part),
                )
                for mid, nid in rows:
                    got[mid].append(nid)
                for mid, nids in got.items():
                    if cache is not None:
                        cache.put_supports(mid, part, nids)
                    known[mid] = nids
        # Listed as one SQL read of up to 500 ids lists them: by memory id.
        out: dict[str, list[str]] = {}
        for chunk in chunks(memory_ids):
            for mid in sorted(set(chunk)):
                if known[mid]:
                    out.setdefault(mid, []).extend(known[mid])
        return out

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        run_sql, run_params = self._run_filter(scope)
        out: dict[str, tuple[str | None, str | None]] = {}
        for chunk in chunks(memory_ids):
            marks = ",".join("?" * len(chunk))
            # `+c.scope_key` keeps the planner on the id index. Each neighbour is two index
            # seeks: the same (ts, created_at) with the nearest rid, else the nearest earlier
            # (or later) (ts, created_at); a row-value range over the rowid is not seekable.
            rows = self._rows(
                f"SELECT c.id, {_ADJACENT.format(a='p', cmp='<', order='DESC')},"
                f" {_ADJACENT.format(a='n', cmp='>', order='')}"
                f" FROM memories c WHERE c.id IN ({marks}) AND +c.scope_key = ?"
                f"{run_sql.replace('run_id', 'c.run_id')}",
                (*chunk, scope.key, *run_params),
            )
            out.update((r[0], (r[1], r[2])) for r in rows)
        return out

    def graph_metrics(self, scope: Scope) -> dict[str, Any]:
        key = scope.partition.key
        nodes, edges = self.count_graph(scope.partition)
        isolated = self._rows(
            "SELECT count(*) FROM nodes n WHERE n.scope_key = ?"
            " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.source_id = n.id)"
            " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.target_id = n.id)",
            (key,),
        )[0][0]
        rows = self._rows(
            "SELECT relation, count(*), sum(json_extract(data, '$.confidence')) FROM edges"
            " WHERE scope_key = ? AND json_extract(data, '$.expired_at') IS NULL"
            " AND json_extract(data, '$.valid_to') IS NULL GROUP BY relation",
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
