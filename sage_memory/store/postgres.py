"""PostgresGraphStore: the source of truth in PostgreSQL, shared by many processes and machines.

The same layout as the SQLite store (a row per memory / node / edge with the record as JSON
text plus the queried columns, provenance, the append-only journal), in one schema per memory.
The lexical channel is PostgreSQL full-text search (``english`` configuration, a GIN index on
a generated ``tsvector``); ``ts_rank`` scores a row from its own words, so a scope's scores
never depend on other tenants' rows. Each ``apply`` is one transaction. Writers that must
decide something from what is already stored (entity resolution, the current value of a
single-valued relation) hold :meth:`scope_lock` for their scope across plan and apply.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from sage_memory.codec import dumps, from_dict
from sage_memory.errors import StorageError, ValidationError
from sage_memory.postgres import check_schema, open_pool
from sage_memory.store.base import Direction, TextEntity, name_key
from sage_memory.store.postgres_evolver import PostgresEvolverState
from sage_memory.store.postgres_schema import migrate
from sage_memory.types import Change, Edge, Memory, Node, Scope, Vector
from sage_memory.words import query_terms, word_tokens

__all__ = ["PostgresGraphStore"]

#: The previous ('<', DESC) or next ('>', '') memory of `c` in its scope and run.
_ADJACENT = (
    "(SELECT {a}.id FROM memories {a} WHERE {a}.scope_key = c.scope_key"
    " AND ({a}.ts, {a}.created_at, {a}.rid) {cmp} (c.ts, c.created_at, c.rid)"
    " AND {a}.run_id IS NOT DISTINCT FROM c.run_id AND NOT {a}.archived"
    " ORDER BY {a}.ts {order}, {a}.created_at {order}, {a}.rid {order} LIMIT 1)"
)


def _scope_of(data: Mapping[str, Any]) -> Scope:
    return Scope(**data["scope"])


def _clean(text: str) -> str:
    """PostgreSQL text cannot hold NUL; indexed copies of user text replace it (JSON escapes
    it in the stored records, so the record itself stays exact)."""
    return text.replace("\x00", "\ufffd")


def _words(text: str) -> str:
    """The text as our own word tokens, so PostgreSQL's parser (which keeps "pandas.read_csv"
    or an e-mail address as one token) splits words exactly as the query side does."""
    return _clean(" ".join(word_tokens(text)))


def _blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class PostgresGraphStore(PostgresEvolverState):
    """A GraphStore in a PostgreSQL schema (created and migrated on first connect).

    Args:
        url: ``postgresql://USER:PASSWORD@HOST:PORT/DB``.
        schema: The schema that holds this memory's tables; several memories can share one
            database under different schemas.
        pool_size: Most connections this store keeps open.

    Raises:
        DependencyError: psycopg is not installed (``pip install 'sage-graph-memory[postgres]'``).
        StorageError: The server is unreachable, refuses the login, or holds a newer schema.
    """

    persistent = True

    def __init__(self, url: str, *, schema: str = "sage_memory", pool_size: int = 8) -> None:
        self.url = url
        self.schema = check_schema(schema)
        self._pool = open_pool(url, max_size=pool_size, search_path=self.schema)
        self._closed = False
        self._lock = threading.Lock()
        with self._pool.connection() as conn:
            migrate(conn, self.schema)

    @property
    def pool(self) -> Any:
        """The connection pool (shared with the vector index in server mode)."""
        return self._pool

    # -- plumbing --------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this PostgreSQL store is closed; open the memory again")

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One transaction on a pooled connection, committed on success."""
        self._check_open()
        with _utf8_only(), self._pool.connection() as conn:
            # The pool commits on a clean exit and rolls back on an exception.
            yield conn

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._tx() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            return rows

    @contextmanager
    def scope_lock(self, scope_key: str) -> Iterator[None]:
        """Hold a cross-process lock on one partition for the duration of the block.

        A session-level advisory lock on its own connection, so the caller's reads and the
        final ``apply`` (on other pooled connections) all happen while no other process can
        plan a write for the same partition.
        """
        self._check_open()
        with self._pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (scope_key,))
            conn.commit()
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (scope_key,))
                conn.commit()

    # -- writes ----------------------------------------------------------------------------
    def apply(self, changes: Sequence[Change], vectors: Mapping[str, Vector] | None = None) -> None:
        vectors = vectors or {}
        with self._tx() as db:
            for ch in changes:
                if ch.entity == "memory":
                    self._write_memory(db, ch.entity_id, ch.after, vectors.get(ch.entity_id))
                elif ch.entity == "node":
                    self._write_node(db, ch.entity_id, ch.after, vectors.get(ch.entity_id))
                else:
                    self._write_edge(db, ch.entity_id, ch.after)
                db.execute(
                    "INSERT INTO journal (id, batch_id, scope_key, entity, entity_id, op, before,"
                    " after, at, actor, reason) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (
                        ch.id,
                        ch.batch_id,
                        ch.scope_key,
                        ch.entity,
                        ch.entity_id,
                        ch.op,
                        None if ch.before is None else dumps(ch.before),
                        None if ch.after is None else dumps(ch.after),
                        ch.at.isoformat(),
                        _clean(ch.actor),
                        _clean(ch.reason),
                    ),
                )

    def _write_memory(
        self, db: Any, mid: str, after: Mapping[str, Any] | None, vec: Vector | None
    ) -> None:
        if after is None:
            db.execute("DELETE FROM memories WHERE id = %s", (mid,))
            return
        scope = _scope_of(after)
        db.execute(
            "INSERT INTO memories (id, scope_key, run_id, ts, created_at, archived, data, body)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (id) DO UPDATE SET"
            " scope_key = EXCLUDED.scope_key, run_id = EXCLUDED.run_id, ts = EXCLUDED.ts,"
            " created_at = EXCLUDED.created_at, archived = EXCLUDED.archived,"
            " data = EXCLUDED.data, body = EXCLUDED.body",
            (
                mid,
                scope.key,
                scope.run_id,
                after["timestamp"],
                after["created_at"],
                bool(after.get("archived")),
                dumps(after),
                _words(after["text"]),
            ),
        )
        if vec is not None:
            db.execute("UPDATE memories SET vec = %s WHERE id = %s", (_blob(vec), mid))

    def _write_node(
        self, db: Any, nid: str, after: Mapping[str, Any] | None, vec: Vector | None
    ) -> None:
        db.execute("DELETE FROM node_names WHERE node_id = %s", (nid,))
        db.execute("DELETE FROM provenance WHERE entity_id = %s", (nid,))
        if after is None:
            db.execute("DELETE FROM nodes WHERE id = %s", (nid,))
            return
        scope_key = _scope_of(after).key
        body = " ".join([after["name"], *after.get("aliases", ()), after.get("summary", "")])
        db.execute(
            "INSERT INTO nodes (id, scope_key, data, body) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT (id) DO UPDATE SET scope_key = EXCLUDED.scope_key,"
            " data = EXCLUDED.data, body = EXCLUDED.body",
            (nid, scope_key, dumps(after), _words(body)),
        )
        if vec is not None:
            db.execute("UPDATE nodes SET vec = %s WHERE id = %s", (_blob(vec), nid))
        names = {name_key(after["name"]), *(name_key(a) for a in after.get("aliases", ()))}
        with db.cursor() as cur:
            cur.executemany(
                "INSERT INTO node_names (scope_key, key, node_id) VALUES (%s,%s,%s)",
                [(scope_key, _clean(k), nid) for k in names if k],
            )
            cur.executemany(
                "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (%s,%s,%s)",
                [(m, "node", nid) for m in after.get("memory_ids", ())],
            )

    def _write_edge(self, db: Any, eid: str, after: Mapping[str, Any] | None) -> None:
        db.execute("DELETE FROM provenance WHERE entity_id = %s", (eid,))
        if after is None:
            db.execute("DELETE FROM edges WHERE id = %s", (eid,))
            return
        db.execute(
            "INSERT INTO edges (id, scope_key, source_id, target_id, relation, data)"
            " VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT (id) DO UPDATE SET"
            " scope_key = EXCLUDED.scope_key, source_id = EXCLUDED.source_id,"
            " target_id = EXCLUDED.target_id, relation = EXCLUDED.relation, data = EXCLUDED.data",
            (
                eid,
                _scope_of(after).key,
                after["source_id"],
                after["target_id"],
                _clean(after["relation"]),
                dumps(after),
            ),
        )
        with db.cursor() as cur:
            cur.executemany(
                "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (%s,%s,%s)",
                [(m, "edge", eid) for m in after.get("memory_ids", ())],
            )

    # -- memories --------------------------------------------------------------------------
    @staticmethod
    def _run_filter(scope: Scope, column: str = "run_id") -> tuple[str, tuple[Any, ...]]:
        if scope.run_id is not None and scope.partition.run_id is None:
            return f" AND {column} = %s", (scope.run_id,)
        return "", ()

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
        keys = list({_clean(name_key(n)) for n in names if n.strip()})
        if not keys:
            return []
        rows = self._rows(
            "SELECT DISTINCT node_id FROM node_names WHERE scope_key = %s AND key = ANY(%s)",
            (scope.key, keys),
        )
        return self.get_nodes(scope, [r[0] for r in rows])

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
    ) -> list[Edge]:
        if not node_ids:
            return []
        ends = {
            "out": "source_id = ANY(%(ids)s)",
            "in": "target_id = ANY(%(ids)s)",
            "both": "(source_id = ANY(%(ids)s) OR target_id = ANY(%(ids)s))",
        }[direction]
        sql = f"SELECT data FROM edges WHERE {ends} AND scope_key = %(sk)s"
        params: dict[str, Any] = {"ids": list(node_ids), "sk": scope.key}
        if relations:
            sql += " AND relation = ANY(%(rel)s)"
            params["rel"] = list(relations)
        with self._tx() as conn:
            rows = conn.execute(sql + " ORDER BY rid", params).fetchall()
        return [from_dict(Edge, json.loads(r[0])) for r in rows]

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        rows = self._rows(
            "SELECT entity, entity_id FROM provenance WHERE memory_id = %s", (memory_id,)
        )
        node_ids = [r[1] for r in rows if r[0] == "node"]
        edge_ids = [r[1] for r in rows if r[0] == "edge"]
        return self.get_nodes(scope, node_ids), self.get_edges(scope, edge_ids)

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        if not memory_ids:
            return {}
        rows = self._rows(
            "SELECT p.memory_id, p.entity_id FROM provenance p JOIN nodes n ON n.id = p.entity_id"
            " WHERE p.memory_id = ANY(%s) AND p.entity = 'node' AND n.scope_key = %s",
            (list(memory_ids), scope.partition.key),
        )
        out: dict[str, list[str]] = {}
        for mid, nid in rows:
            out.setdefault(mid, []).append(nid)
        return out

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        if not memory_ids:
            return {}
        run_sql, run_params = self._run_filter(scope, "c.run_id")
        rows = self._rows(
            f"SELECT c.id, {_ADJACENT.format(a='p', cmp='<', order='DESC')},"
            f" {_ADJACENT.format(a='n', cmp='>', order='')}"
            f" FROM memories c WHERE c.id = ANY(%s) AND c.scope_key = %s{run_sql}",
            (list(memory_ids), scope.key, *run_params),
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    # -- lexical and vectors ---------------------------------------------------------------
    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        words = [_clean(w) for w in query_terms(query)]
        if not words:
            return []
        table = "memories" if entity == "memory" else "nodes"
        run_sql, run_params = ("", ())
        if entity == "memory":
            run_sql, run_params = self._run_filter(scope)
        # One plainto_tsquery per word, OR-ed: user text is never parsed as tsquery syntax.
        tsq = " || ".join(["plainto_tsquery('english', %s)"] * len(words))
        rows = self._rows(
            f"WITH q AS (SELECT {tsq} AS q) SELECT id, ts_rank(tsv, q.q) AS score"
            f" FROM {table}, q WHERE scope_key = %s AND tsv @@ q.q{run_sql}"
            " ORDER BY score DESC, rid LIMIT %s",
            (*words, scope.key, *run_params, limit),
        )
        # ts_rank can round a weak match to 0; the port promises positive scores.
        return [(r[0], max(float(r[1]), 1e-9)) for r in rows]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        rows = self._rows(
            "SELECT id, vec FROM memories WHERE id = ANY(%(ids)s) AND vec IS NOT NULL"
            " UNION ALL SELECT id, vec FROM nodes WHERE id = ANY(%(ids)s) AND vec IS NOT NULL",
            {"ids": list(ids)},  # type: ignore[arg-type]
        )
        return {r[0]: np.frombuffer(bytes(r[1]), dtype=np.float32) for r in rows}

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        table = "memories" if entity == "memory" else "nodes"
        rows = self._rows(
            f"SELECT id FROM {table} WHERE scope_key = %s AND vec IS NOT NULL", (scope.key,)
        )
        return {r[0] for r in rows}

    # -- journal, scopes, metadata ---------------------------------------------------------
    def journal(
        self,
        *,
        scope: Scope | None = None,
        entity_id: str | None = None,
        batch_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, Change]]:
        sql = (
            "SELECT seq, id, batch_id, scope_key, entity, entity_id, op, before, after, at, actor,"
            " reason FROM journal WHERE seq > %s"
        )
        params: list[Any] = [after_seq]
        if scope is not None:
            sql += " AND scope_key = %s"
            params.append(scope.key)
        if entity_id is not None:
            sql += " AND entity_id = %s"
            params.append(entity_id)
        if batch_id is not None:
            sql += " AND batch_id = %s"
            params.append(batch_id)
        sql += " ORDER BY seq LIMIT %s"
        params.append(limit)
        out = []
        for r in self._rows(sql, params):
            change = Change(
                id=r[1],
                batch_id=r[2],
                scope_key=r[3],
                entity=r[4],
                entity_id=r[5],
                op=r[6],
                before=None if r[7] is None else json.loads(r[7]),
                after=None if r[8] is None else json.loads(r[8]),
                at=datetime.fromisoformat(r[9]),
                actor=r[10],
                reason=r[11],
            )
            out.append((int(r[0]), change))
        return out

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        with self._tx() as db:
            cur = db.execute("DELETE FROM journal WHERE entity_id = ANY(%s)", (list(entity_ids),))
            return int(cur.rowcount)

    def partitions(self) -> list[Scope]:
        rows = self._rows(
            "SELECT data FROM (SELECT DISTINCT ON (scope_key) scope_key, data FROM memories"
            " ORDER BY scope_key, rid) m UNION ALL SELECT data FROM (SELECT DISTINCT ON"
            " (scope_key) scope_key, data FROM nodes ORDER BY scope_key, rid) n"
        )
        seen: dict[str, Scope] = {}
        for (data,) in rows:
            scope = _scope_of(json.loads(data)).partition
            seen.setdefault(scope.key, scope)
        return list(seen.values())

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = %s", (_clean(key),))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                " SET value = EXCLUDED.value",
                (_clean(key), _clean(value)),
            )

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._pool.close()


@contextmanager
def _utf8_only() -> Iterator[None]:
    """PostgreSQL stores UTF-8: a lone surrogate (valid in a Python str) is a caller's error."""
    try:
        yield
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else "?"
        raise ValidationError(
            f"text with an unpaired UTF-16 surrogate {bad!r} cannot be stored or looked up; "
            "decode it properly first"
        ) from exc
