"""SQLiteGraphStore: the embedded, durable source of truth (one file, WAL mode).

Layout: one row per memory / node / edge holding the record as JSON plus the columns that are
queried (scope, ids, names), the embedding as a float32 BLOB, FTS5 tables for the lexical
channel, a provenance table (memory -> nodes/edges it supports) and the append-only journal.

Durability: every ``apply`` is one transaction; with ``synchronous=FULL`` (the default) a
returned write survives a process kill and an OS crash. One connection is shared under a lock;
SQLite serialises writers anyway and our reads are short.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from sage_memory.codec import dumps, from_dict
from sage_memory.errors import StorageError, ValidationError
from sage_memory.store.base import (
    Direction,
    TextEntity,
    name_key,
)
from sage_memory.store.sqlite_evolver import SQLiteEvolverState, chunks
from sage_memory.types import (
    Change,
    Edge,
    Memory,
    Node,
    Scope,
    Vector,
)
from sage_memory.words import query_terms

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    run_id TEXT,
    ts TEXT NOT NULL,
    created_at TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    data TEXT NOT NULL,
    vec BLOB
);
CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope_key, ts, created_at);
CREATE TABLE IF NOT EXISTS nodes (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    data TEXT NOT NULL,
    vec BLOB
);
CREATE INDEX IF NOT EXISTS nodes_by_scope ON nodes (scope_key, id);
CREATE TABLE IF NOT EXISTS node_names (
    scope_key TEXT NOT NULL, key TEXT NOT NULL, node_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS node_names_by_key ON node_names (scope_key, key);
CREATE INDEX IF NOT EXISTS node_names_by_node ON node_names (node_id);
CREATE TABLE IF NOT EXISTS edges (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    relation TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_by_scope ON edges (scope_key, id);
CREATE INDEX IF NOT EXISTS edges_by_source ON edges (source_id);
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (target_id);
CREATE TABLE IF NOT EXISTS provenance (
    memory_id TEXT NOT NULL, entity TEXT NOT NULL, entity_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provenance_by_memory ON provenance (memory_id);
CREATE INDEX IF NOT EXISTS provenance_by_entity ON provenance (entity_id);
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    batch_id TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    entity TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    op TEXT NOT NULL,
    before TEXT,
    after TEXT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_by_batch ON journal (batch_id);
CREATE INDEX IF NOT EXISTS journal_by_entity ON journal (entity_id);
CREATE INDEX IF NOT EXISTS journal_by_scope ON journal (scope_key, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    body, sk UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
    body, sk UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS access_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    weight REAL NOT NULL,
    entity TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    context INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS access_by_scope ON access_log (scope_key, seq);
CREATE INDEX IF NOT EXISTS access_by_event ON access_log (event_id, entity);
CREATE TABLE IF NOT EXISTS suggestions (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (scope_key, key)
);
CREATE INDEX IF NOT EXISTS suggestions_by_status ON suggestions (scope_key, status);
"""


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


def _scope_of(data: Mapping[str, Any]) -> Scope:
    return Scope(**data["scope"])


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query of the distinct meaningful words of ``text`` (None if there are none).

    Words are quoted, so any input is safe: FTS operators in user text are matched literally.
    """
    words = query_terms(text)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:64])


def _blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class SQLiteGraphStore(SQLiteEvolverState):
    """The default persistent GraphStore: one SQLite database file.

    Args:
        path: the database file (created with its folder if missing), or ":memory:".
        synchronous: "FULL" (survives OS crashes) or "NORMAL" (survives process crashes).
    """

    persistent = True

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self.path = str(path)
        if synchronous not in ("FULL", "NORMAL"):
            raise StorageError(f"synchronous={synchronous!r}: use 'FULL' or 'NORMAL'")
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA foreign_keys=OFF")
            self._db.execute("PRAGMA busy_timeout=5000")
            # Deleted rows are overwritten with zeros instead of lingering in free pages: a
            # forgotten memory must not be recoverable from the file.
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.executescript(_SCHEMA)
            self._fts_secure = self._fts_secure_delete()
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"cannot open the SQLite store at {self.path}: {exc}. If the file is not a "
                "sage_memory store, choose another path; if it is damaged, restore a backup."
            ) from exc
        self._lock = threading.RLock()
        self._closed = False
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StorageError(
                f"{self.path} has store schema {version}; this version of sage_memory reads "
                f"{SCHEMA_VERSION}. Export it with the version that wrote it and load it here."
            )

    # -- plumbing --------------------------------------------------------------------------
    def _fts_secure_delete(self) -> bool:
        """Ask FTS5 to erase deleted rows' words from its index at once (SQLite >= 3.42)."""
        if sqlite3.sqlite_version_info < (3, 42, 0):
            return False
        try:
            for table in ("memories_fts", "nodes_fts"):
                self._db.execute(f"INSERT INTO {table}({table}, rank) VALUES('secure-delete', 1)")
        except sqlite3.DatabaseError:
            return False
        return True

    def _check_open(self) -> None:
        # Called under the lock: a thread still reading when another closes the store gets a
        # clear StorageError, not sqlite3's "Cannot operate on a closed database".
        if self._closed:
            raise StorageError("this SQLite store is closed; open the memory again")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, _utf8_only():
            self._check_open()
            return self._db.execute(sql, params).fetchall()

    @staticmethod
    def _sk(scope_key: str) -> str:
        return "s" + hashlib.blake2b(scope_key.encode(), digest_size=10).hexdigest()

    # -- writes ----------------------------------------------------------------------------
    def apply(self, changes: Sequence[Change], vectors: Mapping[str, Vector] | None = None) -> None:
        vectors = vectors or {}
        with _utf8_only(), self._tx() as db:
            for ch in changes:
                if ch.entity == "memory":
                    self._write_memory(db, ch.entity_id, ch.after, vectors.get(ch.entity_id))
                elif ch.entity == "node":
                    self._write_node(db, ch.entity_id, ch.after, vectors.get(ch.entity_id))
                else:
                    self._write_edge(db, ch.entity_id, ch.after)
                db.execute(
                    "INSERT INTO journal (id, batch_id, scope_key, entity, entity_id, op, before,"
                    " after, at, actor, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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
                        ch.actor,
                        ch.reason,
                    ),
                )

    def _write_memory(
        self,
        db: sqlite3.Connection,
        mid: str,
        after: Mapping[str, Any] | None,
        vec: Vector | None,
    ) -> None:
        row = db.execute("SELECT rid FROM memories WHERE id = ?", (mid,)).fetchone()
        if after is None:
            if row:
                db.execute("DELETE FROM memories WHERE rid = ?", (row[0],))
                db.execute("DELETE FROM memories_fts WHERE rowid = ?", (row[0],))
            return
        scope = _scope_of(after)
        params = (
            scope.key,
            scope.run_id,
            after["timestamp"],
            after["created_at"],
            int(bool(after.get("archived"))),
            dumps(after),
        )
        if row:
            rid = row[0]
            db.execute(
                "UPDATE memories SET scope_key=?, run_id=?, ts=?, created_at=?, archived=?, data=?"
                " WHERE rid=?",
                (*params, rid),
            )
            db.execute("DELETE FROM memories_fts WHERE rowid = ?", (rid,))
        else:
            cur = db.execute(
                "INSERT INTO memories (id, scope_key, run_id, ts, created_at, archived, data)"
                " VALUES (?,?,?,?,?,?,?)",
                (mid, *params),
            )
            rid = cur.lastrowid
        if vec is not None:
            db.execute("UPDATE memories SET vec = ? WHERE rid = ?", (_blob(vec), rid))
        db.execute(
            "INSERT INTO memories_fts (rowid, body, sk) VALUES (?,?,?)",
            (rid, after["text"], self._sk(scope.key)),
        )

    def _write_node(
        self,
        db: sqlite3.Connection,
        nid: str,
        after: Mapping[str, Any] | None,
        vec: Vector | None,
    ) -> None:
        row = db.execute("SELECT rid FROM nodes WHERE id = ?", (nid,)).fetchone()
        db.execute("DELETE FROM node_names WHERE node_id = ?", (nid,))
        db.execute("DELETE FROM provenance WHERE entity_id = ?", (nid,))
        if row:
            db.execute("DELETE FROM nodes_fts WHERE rowid = ?", (row[0],))
        if after is None:
            if row:
                db.execute("DELETE FROM nodes WHERE rid = ?", (row[0],))
            return
        scope_key = _scope_of(after).key
        if row:
            rid = row[0]
            db.execute(
                "UPDATE nodes SET scope_key=?, data=? WHERE rid=?", (scope_key, dumps(after), rid)
            )
        else:
            cur = db.execute(
                "INSERT INTO nodes (id, scope_key, data) VALUES (?,?,?)",
                (nid, scope_key, dumps(after)),
            )
            rid = cur.lastrowid
        if vec is not None:
            db.execute("UPDATE nodes SET vec = ? WHERE rid = ?", (_blob(vec), rid))
        names = {name_key(after["name"]), *(name_key(a) for a in after.get("aliases", ()))}
        db.executemany(
            "INSERT INTO node_names (scope_key, key, node_id) VALUES (?,?,?)",
            [(scope_key, k, nid) for k in names if k],
        )
        body = " ".join([after["name"], *after.get("aliases", ()), after.get("summary", "")])
        db.execute(
            "INSERT INTO nodes_fts (rowid, body, sk) VALUES (?,?,?)",
            (rid, body, self._sk(scope_key)),
        )
        db.executemany(
            "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (?,?,?)",
            [(m, "node", nid) for m in after.get("memory_ids", ())],
        )

    def _write_edge(
        self, db: sqlite3.Connection, eid: str, after: Mapping[str, Any] | None
    ) -> None:
        db.execute("DELETE FROM provenance WHERE entity_id = ?", (eid,))
        if after is None:
            db.execute("DELETE FROM edges WHERE id = ?", (eid,))
            return
        db.execute(
            "INSERT INTO edges (id, scope_key, source_id, target_id, relation, data)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET scope_key=excluded.scope_key,"
            " source_id=excluded.source_id, target_id=excluded.target_id,"
            " relation=excluded.relation, data=excluded.data",
            (
                eid,
                _scope_of(after).key,
                after["source_id"],
                after["target_id"],
                after["relation"],
                dumps(after),
            ),
        )
        db.executemany(
            "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (?,?,?)",
            [(m, "edge", eid) for m in after.get("memory_ids", ())],
        )

    # -- memories --------------------------------------------------------------------------
    @staticmethod
    def _run_filter(scope: Scope) -> tuple[str, tuple[Any, ...]]:
        if scope.run_id is not None and scope.partition.run_id is None:
            return " AND run_id = ?", (scope.run_id,)
        return "", ()

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        run_sql, run_params = self._run_filter(scope)
        out: dict[str, Memory] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                # "+scope_key" keeps SQLite on the id index (see edges_of)
                f"SELECT id, data FROM memories WHERE +scope_key = ? AND id IN ({marks}){run_sql}",
                (scope.key, *chunk, *run_params),
            )
            out.update((r[0], from_dict(Memory, json.loads(r[1]))) for r in rows)
        return [out[i] for i in ids if i in out]

    def find_memory(self, memory_id: str) -> Memory | None:
        rows = self._rows("SELECT data FROM memories WHERE id = ?", (memory_id,))
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
        sql = f"SELECT data FROM memories WHERE scope_key = ?{run_sql}"
        if not include_archived:
            sql += " AND archived = 0"
        if before is not None:
            sql += " AND ts < ?"
            params = (*params, before.isoformat())
        # Insertion order breaks ties: the messages of one add share a timestamp.
        sql += " ORDER BY ts, created_at, rid LIMIT ? OFFSET ?"
        rows = self._rows(sql, (scope.key, *params, -1 if limit is None else limit, offset))
        return [from_dict(Memory, json.loads(r[0])) for r in rows]

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
        out: dict[str, Any] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                # "+scope_key": from five ids on, SQLite would scan the partition by scope
                f"SELECT id, data FROM {table} WHERE +scope_key = ? AND id IN ({marks})",
                (scope.key, *chunk),
            )
            out.update((r[0], from_dict(cls, json.loads(r[1]))) for r in rows)
        return [out[i] for i in dict.fromkeys(ids) if i in out]

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
    ) -> list[Edge]:
        if not node_ids:
            return []
        rel_sql, rel_params = "", tuple[str, ...]()
        if relations:
            rel_sql = f" AND relation IN ({','.join('?' * len(relations))})"
            rel_params = tuple(relations)
        found: dict[str, Edge] = {}
        columns = {"out": ["source_id"], "in": ["target_id"], "both": ["source_id", "target_id"]}
        for column in columns[direction]:
            for chunk in chunks(node_ids):
                marks = ",".join("?" * len(chunk))
                # "+scope_key": without it SQLite picks the scope index and scans the whole
                # partition's edges for every call; the endpoint index is the selective one.
                rows = self._rows(
                    f"SELECT id, data FROM edges WHERE {column} IN ({marks}) AND +scope_key = ?"
                    f"{rel_sql}",
                    (*chunk, scope.key, *rel_params),
                )
                for eid, data in rows:
                    if eid not in found:
                        found[eid] = from_dict(Edge, json.loads(data))
        return list(found.values())

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        rows = self._rows(
            "SELECT entity, entity_id FROM provenance WHERE memory_id = ?", (memory_id,)
        )
        node_ids = [r[1] for r in rows if r[0] == "node"]
        edge_ids = [r[1] for r in rows if r[0] == "edge"]
        return self.get_nodes(scope, node_ids), self.get_edges(scope, edge_ids)

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for chunk in chunks(memory_ids):
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                "SELECT p.memory_id, p.entity_id FROM provenance p JOIN nodes n"
                f" ON n.id = p.entity_id WHERE p.memory_id IN ({marks}) AND p.entity = 'node'"
                " AND +n.scope_key = ?",
                (*chunk, scope.partition.key),
            )
            for mid, nid in rows:
                out.setdefault(mid, []).append(nid)
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

    # -- lexical and vectors ---------------------------------------------------------------
    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        match = fts_query(query)
        if match is None:
            return []
        table = "memories" if entity == "memory" else "nodes"
        run_sql, run_params = ("", ())
        if entity == "memory":
            run_sql, run_params = self._run_filter(scope)
            run_sql = run_sql.replace("run_id", "t.run_id")
        # bm25() is lower-is-better and negative; flip it so scores are positive.
        sql = (
            f"SELECT t.id, -bm25({table}_fts) AS score FROM {table}_fts"
            f" JOIN {table} t ON t.rid = {table}_fts.rowid"
            f" WHERE {table}_fts MATCH ? AND {table}_fts.sk = ? AND t.scope_key = ?{run_sql}"
            " ORDER BY score DESC LIMIT ?"
        )
        try:
            rows = self._rows(
                sql, (f"body : ({match})", self._sk(scope.key), scope.key, *run_params, limit)
            )
        except sqlite3.OperationalError:
            return []  # a query FTS5 cannot parse matches nothing rather than failing a search
        return [(r[0], float(r[1])) for r in rows]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        out: dict[str, Vector] = {}
        for table in ("memories", "nodes"):
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                rows = self._rows(
                    f"SELECT id, vec FROM {table} WHERE id IN ({marks}) AND vec IS NOT NULL", chunk
                )
                out.update((r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows)
        return out

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        table = "memories" if entity == "memory" else "nodes"
        rows = self._rows(
            f"SELECT id FROM {table} WHERE scope_key = ? AND vec IS NOT NULL", (scope.key,)
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
        )
        sql += " reason FROM journal WHERE seq > ?"
        params: list[Any] = [after_seq]
        if scope is not None:
            sql += " AND scope_key = ?"
            params.append(scope.key)
        if entity_id is not None:
            sql += " AND entity_id = ?"
            params.append(entity_id)
        if batch_id is not None:
            sql += " AND batch_id = ?"
            params.append(batch_id)
        sql += " ORDER BY seq LIMIT ?"
        params.append(-1 if limit is None else limit)
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
        total = 0
        with self._tx() as db:
            for chunk in chunks(entity_ids):
                marks = ",".join("?" * len(chunk))
                total += db.execute(
                    f"DELETE FROM journal WHERE entity_id IN ({marks})", chunk
                ).rowcount
            if not self._fts_secure:
                # Without FTS5's secure-delete, a deleted row's words stay in the full-text
                # index segments until they are merged; merging now (cost: one rewrite of the
                # index, ~0.15 s at 100k memories) lets secure_delete zero the old segments.
                for table in ("memories_fts", "nodes_fts"):
                    db.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
        return total

    def partitions(self) -> list[Scope]:
        rows = self._rows(
            "SELECT data FROM (SELECT scope_key, min(data) AS data FROM memories GROUP BY scope_key"
            " UNION ALL SELECT scope_key, min(data) FROM nodes GROUP BY scope_key)"
        )
        seen: dict[str, Scope] = {}
        for (data,) in rows:
            scope = _scope_of(json.loads(data)).partition
            seen.setdefault(scope.key, scope)
        return list(seen.values())

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = excluded.value",
                (key, value),
            )

    def backup(self, target: str | Path) -> None:
        """A consistent online copy of the database (SQLite's backup API), safe during writes."""
        dest = sqlite3.connect(str(target))
        try:
            with self._lock:
                self._check_open()
                self._db.backup(dest)
        finally:
            dest.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(sqlite3.Error):  # a busy checkpoint is retried on next open
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()


@contextmanager
def _utf8_only() -> Iterator[None]:
    """SQLite stores UTF-8: a lone surrogate (valid in a Python str) is a caller's error."""
    try:
        yield
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else "?"
        raise ValidationError(
            f"text with an unpaired UTF-16 surrogate {bad!r} cannot be stored or looked up; "
            "decode it properly first"
        ) from exc


__all__ = ["SQLiteGraphStore", "fts_query"]
