"""The evolver's state in the SQLite store: the access log and the review queue.

A mixin of :class:`~sage_memory.store.sqlite.SQLiteGraphStore` (its tables are created with the
rest of the schema there), kept apart so the graph store itself stays readable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store.rows import suggestion_from_dict, suggestion_to_dict
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import (
    AccessEvent,
    Scope,
    Suggestion,
    SuggestionStatus,
)


class SQLiteEvolverState(SQLiteConnection):
    """Access log, suggestions and metrics over the store's connection."""

    # -- the evolver's state: access log and review queue ---------------------------------
    def log_access(self, events: Sequence[AccessEvent]) -> None:
        rows = []
        for ev in events:
            head = (ev.id, ev.scope.partition.key, ev.at.isoformat(), ev.kind, ev.weight)
            rows += [(*head, "node", i, 0) for i in dict.fromkeys(ev.node_ids)]
            rows += [(*head, "memory", i, 0) for i in dict.fromkeys(ev.memory_ids)]
            rows += [(*head, "node", i, 1) for i in dict.fromkeys(ev.context_ids)]
        if not rows:
            return
        # The access log is flushed every few dozen searches: dropping the lexical reads
        # searches keep (nothing it writes changes them) made the next searches read their
        # postings again.
        with self._tx(lexical=False) as db:
            db.executemany(
                "INSERT INTO access_log (event_id, scope_key, at, kind, weight, entity, entity_id,"
                " context) VALUES (?,?,?,?,?,?,?,?)",
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
        # A context row pairs with the event's items only: a.entity_id < b.entity_id picks each
        # unordered pair once, and the NOT clause drops context-context pairs.
        sql = (
            "SELECT a.entity_id, b.entity_id, SUM(a.weight), COUNT(DISTINCT a.event_id)"
            " FROM access_log a JOIN access_log b ON b.event_id = a.event_id"
            " AND b.entity = 'node' AND b.entity_id > a.entity_id"
            " WHERE a.scope_key = ? AND a.entity = 'node' AND a.seq > ? AND a.seq <= ?"
            " AND NOT (a.context = 1 AND b.context = 1)"
        )
        params: list[Any] = [scope.partition.key, after_seq, until_seq or 2**62]
        if node_ids is not None:
            ids = list(dict.fromkeys(node_ids))[:400]  # two IN lists share SQLite's 999 limit
            marks = ",".join("?" * len(ids))
            sql += f" AND a.entity_id IN ({marks}) AND b.entity_id IN ({marks})"
            params += ids + ids
        if since is not None:
            sql += " AND a.at >= ?"
            params.append(since.isoformat())
        sql += " GROUP BY a.entity_id, b.entity_id ORDER BY 3 DESC, 1, 2 LIMIT ?"
        params.append(-1 if limit is None else limit)
        return [(r[0], r[1], float(r[2]), int(r[3])) for r in self._rows(sql, params)]

    def accessed(
        self, scope: Scope, *, after_seq: int = 0, until_seq: int | None = None
    ) -> dict[str, tuple[int, datetime]]:
        rows = self._rows(
            "SELECT entity_id, COUNT(*), max(at) FROM access_log WHERE scope_key = ? AND seq > ?"
            " AND seq <= ? AND context = 0 AND weight > 0 GROUP BY entity_id",
            (scope.partition.key, after_seq, until_seq or 2**62),
        )
        return {r[0]: (int(r[1]), datetime.fromisoformat(r[2])) for r in rows}

    def prune_access(self, before: datetime) -> int:
        # ISO strings of UTC times sort as times, so a text comparison is a time comparison.
        with self._tx() as db:
            return db.execute("DELETE FROM access_log WHERE at < ?", (before.isoformat(),)).rowcount

    def purge_evolver_state(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> int:
        key = scope.partition.key
        with self._tx() as db:
            if entity_ids is None:
                n = db.execute("DELETE FROM access_log WHERE scope_key = ?", (key,)).rowcount
                n += db.execute("DELETE FROM suggestions WHERE scope_key = ?", (key,)).rowcount
                # Per-partition state (e.g. the evolver's) is kept under keys ending with the
                # partition key; its \x1f separators mean no global key can end that way.
                n += db.execute(
                    "DELETE FROM meta WHERE length(key) > length(?1)"
                    " AND substr(key, length(key) - length(?1) + 1) = ?1",
                    (key,),
                ).rowcount
                return n
            n = 0
            for chunk in chunks(list(dict.fromkeys(entity_ids))):
                marks = ",".join("?" * len(chunk))
                n += db.execute(
                    f"DELETE FROM access_log WHERE scope_key = ? AND entity_id IN ({marks})",
                    (key, *chunk),
                ).rowcount
            gone = set(entity_ids)
            rows = db.execute("SELECT id, data FROM suggestions WHERE scope_key = ?", (key,))
            doomed = [(sid,) for sid, data in rows.fetchall() if any(i in data for i in gone)]
            db.executemany("DELETE FROM suggestions WHERE id = ?", doomed)
            return n + len(doomed)

    def put_suggestions(self, items: Sequence[Suggestion]) -> list[Suggestion]:
        queued = []
        with self._tx() as db:
            for item in items:
                cur = db.execute(
                    "INSERT OR IGNORE INTO suggestions (id, scope_key, key, status, data)"
                    " VALUES (?,?,?,?,?)",
                    (
                        item.id,
                        item.scope.partition.key,
                        item.key,
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
        sql = "SELECT data FROM suggestions WHERE 1 = 1"
        params: list[Any] = []
        if scope is not None:
            sql += " AND scope_key = ?"
            params.append(scope.partition.key)
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        if ids is not None:
            chunk = list(ids)[:900]
            sql += f" AND id IN ({','.join('?' * len(chunk))})"
            params += chunk
        sql += " ORDER BY rid LIMIT ?"
        params.append(-1 if limit is None else limit)
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
                row = db.execute("SELECT data FROM suggestions WHERE id = ?", (sid,)).fetchone()
                if row is None:
                    continue
                data = json.loads(row[0])
                data.update(status=status, updated_at=at.isoformat(), batch_id=batch_id)
                db.execute(
                    "UPDATE suggestions SET status = ?, data = ? WHERE id = ?",
                    (status, dumps(data), sid),
                )
