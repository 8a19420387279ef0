"""The evolver's state in the PostgreSQL store: the access log and the review queue.

A mixin of :class:`~sage_memory.store.postgres.PostgresGraphStore`; its tables are created by
the store's migrations (sage_memory/store/postgres_schema.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store.postgres_connection import PostgresConnection
from sage_memory.store.rows import suggestion_from_dict, suggestion_to_dict
from sage_memory.types import AccessEvent, Scope, Suggestion, SuggestionStatus

_NO_END = 2**62


class PostgresEvolverState(PostgresConnection):
    """Access log, suggestions and metrics over the store's pool."""

    def log_access(self, events: Sequence[AccessEvent]) -> None:
        rows = []
        for ev in events:
            head = (ev.id, ev.scope.partition.key, ev.at.isoformat(), ev.kind, ev.weight)
            rows += [(*head, "node", i, False) for i in dict.fromkeys(ev.node_ids)]
            rows += [(*head, "memory", i, False) for i in dict.fromkeys(ev.memory_ids)]
            rows += [(*head, "node", i, True) for i in dict.fromkeys(ev.context_ids)]
        if not rows:
            return
        with self._tx() as db, db.cursor() as cur:
            cur.executemany(
                "INSERT INTO access_log (event_id, scope_key, at, kind, weight, entity, entity_id,"
                " context) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                rows,
            )

    def access_seq(self) -> int:
        return int(self._rows("SELECT COALESCE(max(seq), 0) FROM access_log")[0][0])

    def co_access(
        self,
        scope: Scope,
        *,
        after_seq: int = 0,
        until_seq: int | None = None,
        node_ids: Sequence[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, str, float, int]]:
        # As in SQLite: each unordered pair once (b > a), context-context pairs dropped.
        sql = (
            "SELECT a.entity_id, b.entity_id, SUM(a.weight), COUNT(DISTINCT a.event_id)"
            " FROM access_log a JOIN access_log b ON b.event_id = a.event_id"
            " AND b.entity = 'node' AND b.entity_id > a.entity_id"
            " WHERE a.scope_key = %s AND a.entity = 'node' AND a.seq > %s AND a.seq <= %s"
            " AND NOT (a.context AND b.context)"
        )
        params: list[Any] = [scope.partition.key, after_seq, until_seq or _NO_END]
        if node_ids is not None:
            ids = list(dict.fromkeys(node_ids))
            sql += " AND a.entity_id = ANY(%s) AND b.entity_id = ANY(%s)"
            params += [ids, ids]
        if since is not None:
            sql += " AND a.at >= %s"
            params.append(since.isoformat())
        sql += " GROUP BY a.entity_id, b.entity_id ORDER BY 3 DESC, 1, 2 LIMIT %s"
        params.append(limit)
        return [(r[0], r[1], float(r[2]), int(r[3])) for r in self._rows(sql, params)]

    def accessed(
        self, scope: Scope, *, after_seq: int = 0, until_seq: int | None = None
    ) -> dict[str, tuple[int, datetime]]:
        rows = self._rows(
            "SELECT entity_id, COUNT(*), max(at) FROM access_log WHERE scope_key = %s"
            " AND seq > %s AND seq <= %s AND NOT context AND weight > 0 GROUP BY entity_id",
            (scope.partition.key, after_seq, until_seq or _NO_END),
        )
        return {r[0]: (int(r[1]), datetime.fromisoformat(r[2])) for r in rows}

    def prune_access(self, before: datetime) -> int:
        # ISO strings of UTC times sort as times, so a text comparison is a time comparison.
        with self._tx() as db:
            return int(
                db.execute("DELETE FROM access_log WHERE at < %s", (before.isoformat(),)).rowcount
            )

    def purge_evolver_state(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> int:
        key = scope.partition.key
        with self._tx() as db:
            if entity_ids is None:
                n = db.execute("DELETE FROM access_log WHERE scope_key = %s", (key,)).rowcount
                n += db.execute("DELETE FROM suggestions WHERE scope_key = %s", (key,)).rowcount
                # Per-partition meta keys end with the partition key (see the SQLite store).
                n += db.execute(
                    "DELETE FROM meta WHERE length(key) > length(%(k)s)"
                    " AND right(key, length(%(k)s)) = %(k)s",
                    {"k": key},
                ).rowcount
                return int(n)
            ids = list(dict.fromkeys(entity_ids))
            n = db.execute(
                "DELETE FROM access_log WHERE scope_key = %s AND entity_id = ANY(%s)", (key, ids)
            ).rowcount
            gone = set(ids)
            rows = db.execute("SELECT id, data FROM suggestions WHERE scope_key = %s", (key,))
            doomed = [sid for sid, data in rows.fetchall() if any(i in data for i in gone)]
            if doomed:
                db.execute("DELETE FROM suggestions WHERE id = ANY(%s)", (doomed,))
            return int(n) + len(doomed)

    def put_suggestions(self, items: Sequence[Suggestion]) -> list[Suggestion]:
        queued = []
        with self._tx() as db:
            for item in items:
                cur = db.execute(
                    "INSERT INTO suggestions (id, scope_key, key, status, data)"
                    " VALUES (%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                    (
                        item.id,
                        item.scope.partition.key,
                        item.key.replace("\x00", "\ufffd"),
                        item.status,
                        dumps(suggestion_to_dict(item)),
                    ),
                )
                if cur.rowcount:
                    queued.append(item)
        return queued

    def list_suggestions(
        self,
        scope: Scope | None = None,
        *,
        status: str | None = "open",
        ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Suggestion]:
        sql = "SELECT data FROM suggestions WHERE true"
        params: list[Any] = []
        if scope is not None:
            sql += " AND scope_key = %s"
            params.append(scope.partition.key)
        if status is not None:
            sql += " AND status = %s"
            params.append(status)
        if ids is not None:
            sql += " AND id = ANY(%s)"
            params.append(list(ids))
        sql += " ORDER BY rid LIMIT %s"
        params.append(limit)
        return [suggestion_from_dict(json.loads(r[0])) for r in self._rows(sql, params)]

    def set_suggestion_status(
        self,
        ids: Sequence[str],
        status: SuggestionStatus,
        at: datetime,
        batch_id: str | None = None,
    ) -> None:
        with self._tx() as db:
            for sid in ids:
                row = db.execute(
                    "SELECT data FROM suggestions WHERE id = %s FOR UPDATE", (sid,)
                ).fetchone()
                if row is None:
                    continue
                data = json.loads(row[0])
                data.update(status=status, updated_at=at.isoformat(), batch_id=batch_id)
                db.execute(
                    "UPDATE suggestions SET status = %s, data = %s WHERE id = %s",
                    (status, dumps(data), sid),
                )
