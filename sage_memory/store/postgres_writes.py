"""Writing to the PostgreSQL store: one transaction per ``apply``, journaled row by row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store.base import name_key
from sage_memory.store.postgres_connection import PostgresConnection, _clean, _words
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.rows import vector_blob as _blob
from sage_memory.types import Change, Vector


class PostgresWrites(PostgresConnection):
    """``apply``: rows (their ``tsvector`` follows ``body``), names, provenance, journal."""

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
