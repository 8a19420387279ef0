"""The SQLite store's journal (every change, in order) and its list of partitions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store.rows import JOURNAL_COLUMNS, journal_entry, utf8_only
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import Change, Scope


class SQLiteJournal(SQLiteConnection):
    """``journal``, ``purge_journal``, ``rewrite_journal``, ``erase_deleted`` and
    ``partitions``."""

    def journal(
        self,
        *,
        scope: Scope | None = None,
        entity_id: str | None = None,
        batch_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, Change]]:
        sql = f"SELECT {JOURNAL_COLUMNS} FROM journal WHERE seq > ?"
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
        return [journal_entry(r) for r in self._rows(sql, params)]

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        total = 0
        with self._tx() as db:
            for chunk in chunks(entity_ids):
                marks = ",".join("?" * len(chunk))
                total += db.execute(
                    f"DELETE FROM journal WHERE entity_id IN ({marks})", chunk
                ).rowcount
        return total

    def rewrite_journal(self, entries: Sequence[tuple[int, Change]]) -> None:
        rows = [
            (
                None if ch.before is None else dumps(ch.before),
                None if ch.after is None else dumps(ch.after),
                seq,
            )
            for seq, ch in entries
        ]
        with utf8_only(), self._tx() as db:
            db.executemany("UPDATE journal SET before = ?, after = ? WHERE seq = ?", rows)

    def erase_deleted(self) -> None:
        """Rewrite the database file (VACUUM) so that no byte of deleted rows remains.

        ``secure_delete`` zeroes a deleted cell, but not every copy SQLite made of it: interior
        pages of an index keep some keys as dividers (a user id, a node name), and rebalancing
        a table's pages leaves old cell bytes in the free space of live pages (seen in the
        journal's pages after ``delete_all``). Only rebuilding the file removes them all.
        Cost: proportional to the file's size; the engine calls it once per delete.
        """
        with self._lock:
            self._check_open()
            self._db.execute("VACUUM")
            # VACUUM goes through the WAL in WAL mode: copy it back now, so the old frames (and
            # the deleted bytes in them) leave the WAL file too.
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

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
