"""Writing to the PostgreSQL store: one transaction per ``apply``, journaled row by row.

An ``apply`` sends its statements in psycopg's pipeline mode: the rows, their names and
provenance and the journal go out without waiting for each reply, then the lexical postings of
every document it touched (:func:`~sage_memory.store.postgres_postings.update`). A unit of work
of any size costs a handful of round trips instead of several per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store import postgres_postings as postings
from sage_memory.store.base import PROVENANCE_EDGE, PROVENANCE_MENTION, PROVENANCE_NODE, name_key
from sage_memory.store.postgres_connection import PostgresConnection, _clean
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.rows import text_searchable
from sage_memory.store.rows import vector_blob as _blob
from sage_memory.types import Change, Vector

#: A written row whose rid comes back from the pipeline: (kind, scope key, text, cursor).
_Pending = tuple[postings.Kind, str, str | None, Any]


class PostgresWrites(PostgresConnection):
    """``apply``: rows, names, provenance, journal, then the rows' lexical postings."""

    def apply(self, changes: Sequence[Change], vectors: Mapping[str, Vector] | None = None) -> None:
        vectors = vectors or {}
        with self._tx() as db:
            pending: list[_Pending] = []
            with db.pipeline():
                for ch in changes:
                    vec = vectors.get(ch.entity_id)
                    if ch.entity == "memory":
                        pending += self._write_memory(db, ch.entity_id, ch.after, vec)
                    elif ch.entity == "node":
                        pending += self._write_node(db, ch.entity_id, ch.after, vec)
                    else:
                        self._write_edge(db, ch.entity_id, ch.after)
                with db.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO journal (id, batch_id, scope_key, entity, entity_id, op,"
                        " before, after, at, actor, reason)"
                        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                        [_journal_row(ch) for ch in changes],
                    )
            docs: list[postings.Doc] = []
            for kind, scope_key, text, cur in pending:
                row = cur.fetchone()
                if row is not None:
                    docs.append((kind, int(row[0]), scope_key, text))
            with db.pipeline():
                postings.update(db, docs)

    def _write_memory(
        self, db: Any, mid: str, after: Mapping[str, Any] | None, vec: Vector | None
    ) -> list[_Pending]:
        if after is None:
            return [
                (
                    "m",
                    "",
                    None,
                    db.execute("DELETE FROM memories WHERE id = %s RETURNING rid", (mid,)),
                )
            ]
        scope = _scope_of(after)
        cur = db.execute(
            "INSERT INTO memories (id, scope_key, run_id, ts, created_at, archived, data, vec)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (id) DO UPDATE SET"
            " scope_key = EXCLUDED.scope_key, run_id = EXCLUDED.run_id, ts = EXCLUDED.ts,"
            " created_at = EXCLUDED.created_at, archived = EXCLUDED.archived,"
            " data = EXCLUDED.data, vec = COALESCE(EXCLUDED.vec, memories.vec) RETURNING rid",
            (
                mid,
                scope.key,
                scope.run_id,
                after["timestamp"],
                after["created_at"],
                bool(after.get("archived")),
                dumps(after),
                None if vec is None else _blob(vec),
            ),
        )
        return [("m", scope.key, after["text"], cur)]

    def _write_node(
        self, db: Any, nid: str, after: Mapping[str, Any] | None, vec: Vector | None
    ) -> list[_Pending]:
        db.execute("DELETE FROM node_names WHERE node_id = %s", (nid,))
        db.execute("DELETE FROM provenance WHERE entity_id = %s", (nid,))
        if after is None:
            return [
                ("n", "", None, db.execute("DELETE FROM nodes WHERE id = %s RETURNING rid", (nid,)))
            ]
        scope_key = _scope_of(after).key
        cur = db.execute(
            "INSERT INTO nodes (id, scope_key, data, vec) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT (id) DO UPDATE SET scope_key = EXCLUDED.scope_key,"
            " data = EXCLUDED.data, vec = COALESCE(EXCLUDED.vec, nodes.vec) RETURNING rid",
            (nid, scope_key, dumps(after), None if vec is None else _blob(vec)),
        )
        names = sorted({name_key(after["name"]), *(name_key(a) for a in after.get("aliases", ()))})
        db.execute(
            "INSERT INTO node_names (scope_key, key, node_id)"
            " SELECT %s, k, %s FROM unnest(%s::text[]) AS k",
            (scope_key, nid, [_clean(k) for k in names if k]),
        )
        _provenance(db, PROVENANCE_NODE, nid, after.get("memory_ids", ()))
        _provenance(db, PROVENANCE_MENTION, nid, after.get("mention_ids", ()))
        text = postings.node_text(dict(after)) if text_searchable(after) else None
        return [("n", scope_key, text, cur)]

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
        _provenance(db, PROVENANCE_EDGE, eid, after.get("memory_ids", ()))


def _provenance(db: Any, entity: str, entity_id: str, ids: Sequence[str]) -> None:
    """One statement for the memories a node or edge came from (or that mention a node:
    ``entity`` is the link kind)."""
    memory_ids = list(ids)
    if memory_ids:
        db.execute(
            "INSERT INTO provenance (memory_id, entity, entity_id)"
            " SELECT m, %s, %s FROM unnest(%s::text[]) AS m",
            (entity, entity_id, memory_ids),
        )


def _journal_row(ch: Change) -> tuple[Any, ...]:
    return (
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
    )
