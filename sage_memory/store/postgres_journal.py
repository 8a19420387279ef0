"""The PostgreSQL store's journal (every change, in order), partitions and metadata."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store.postgres_connection import PostgresConnection, _clean
from sage_memory.store.rows import JOURNAL_COLUMNS, journal_entry
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.types import Change, Scope


class PostgresJournal(PostgresConnection):
    """``journal``, ``purge_journal``, ``partitions``, ``get_meta`` and ``set_meta``."""

    def journal(
        self,
        *,
        scope: Scope | None = None,
        entity_id: str | None = None,
        batch_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, Change]]:
        sql = f"SELECT {JOURNAL_COLUMNS} FROM journal WHERE seq > %s"
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
        return [journal_entry(r) for r in self._rows(sql, params)]

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        with self._tx() as db:
            cur = db.execute("DELETE FROM journal WHERE entity_id = ANY(%s)", (list(entity_ids),))
            return int(cur.rowcount)

    def rewrite_journal(self, entries: Sequence[tuple[int, Change]]) -> None:
        rows = [
            (
                None if ch.before is None else dumps(ch.before),
                None if ch.after is None else dumps(ch.after),
                seq,
            )
            for seq, ch in entries
        ]
        if not rows:
            return
        with self._tx() as db, db.cursor() as cur:
            cur.executemany("UPDATE journal SET before = %s, after = %s WHERE seq = %s", rows)

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

    def meta_items(self, prefix: str) -> dict[str, str]:
        """:class:`~sage_memory.store.base.MetaItems` (``starts_with`` ignores collations)."""
        rows = self._rows(
            "SELECT key, value FROM meta WHERE starts_with(key, %s)", (_clean(prefix),)
        )
        return dict(rows)

    def set_meta_many(self, items: Mapping[str, str | None]) -> None:
        gone = [_clean(k) for k, v in items.items() if v is None]
        put = [(_clean(k), _clean(v)) for k, v in items.items() if v is not None]
        with self._tx() as db:
            if gone:
                db.execute("DELETE FROM meta WHERE key = ANY(%s)", (gone,))
            if put:
                db.cursor().executemany(
                    "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                    " SET value = EXCLUDED.value",
                    put,
                )

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                " SET value = EXCLUDED.value",
                (_clean(key), _clean(value)),
            )
