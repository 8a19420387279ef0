"""The SQLite store's journal (every change, in order) and its list of partitions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sage_memory.errors import StorageError
from sage_memory.store import journal_delta as delta
from sage_memory.store.journal_delta import Image
from sage_memory.store.rows import journal_entry, utf8_only
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.store.sqlite_schema import JOURNAL_SELECT
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
        sql = f"SELECT {JOURNAL_SELECT} WHERE j.seq > ?"
        params: list[Any] = [after_seq]
        if scope is not None:
            sql += " AND j.scope_key = ?"
            params.append(scope.key)
        if entity_id is not None:
            sql += " AND j.entity_id = ?"
            params.append(entity_id)
        if batch_id is not None:
            sql += " AND j.batch IN (SELECT rid FROM journal_batches WHERE id = ?)"
            params.append(batch_id)
        sql += " ORDER BY j.seq LIMIT ?"
        params.append(-1 if limit is None else limit)
        with self._snapshot():
            rows = self._rows(sql, params)
            # Rows of one batch (or scope) need not be all of their rows' changes in that range
            # (the others are read to decode them); the other filters keep them contiguous.
            images = self._decode(rows, contiguous=batch_id is None and scope is None)
        return [journal_entry(r, images[r[0]]) for r in rows]

    def _decode(
        self, rows: Sequence[Sequence[Any]], *, contiguous: bool
    ) -> dict[int, tuple[Image | None, Image | None]]:
        """(before, after) of each journal row (``JOURNAL_COLUMNS``), by sequence number: the
        deltas of :mod:`~sage_memory.store.journal_delta` applied along each row's history."""
        by_entity: dict[str, list[Sequence[Any]]] = {}
        for r in rows:
            by_entity.setdefault(r[5], []).append(r)
        out: dict[int, tuple[Image | None, Image | None]] = {}
        for entity_id, mine in by_entity.items():
            first, last = mine[0], mine[-1]
            entity = first[4]
            chain: list[Sequence[Any]] = []
            if first[7] is not None and first[7].startswith("="):
                back = self._db.execute(
                    "SELECT seq, before, after FROM journal WHERE entity_id = ? AND seq < ?"
                    " ORDER BY seq DESC LIMIT ?",
                    (entity_id, first[0], int(first[7][1:])),
                ).fetchall()
                chain += reversed(back)
            given = [(r[0], r[7], r[8]) for r in mine]
            # A filter may leave out some of a row's changes in between (a batch's, or a row
            # whose scope changed): then read them too.
            if len(given) == 1 or (contiguous and delta.linked(given)):
                chain += given
            else:
                chain += self._db.execute(
                    "SELECT seq, before, after FROM journal WHERE entity_id = ?"
                    " AND seq BETWEEN ? AND ? ORDER BY seq",
                    (entity_id, first[0], last[0]),
                ).fetchall()
            wanted = {r[0] for r in mine}
            state: Image | None = None
            seq = last[0]
            try:
                for seq, before_col, after_col in self._resolved(entity, entity_id, chain):
                    before, state = delta.step(entity, state, before_col, after_col)
                    if seq in wanted:
                        out[seq] = (delta.fresh(before), delta.fresh(state))
            except ValueError as exc:
                raise StorageError(
                    f"the journal of {entity_id} is damaged at change {seq} ({exc}); restore a "
                    "backup, or export what the store still reads"
                ) from exc
        return out

    def _resolved(
        self, entity: str, entity_id: str, chain: Sequence[Sequence[Any]]
    ) -> list[Sequence[Any]]:
        """``chain`` (seq, before, after) with an ``after`` stored by reference to the row
        (``R``, the row's last change) given the image the row holds."""
        out = list(chain)
        for i, (seq, before_col, after_col) in enumerate(out):
            if delta.by_reference(after_col):
                row = delta.stored_record(self._db, entity, entity_id)
                whole = delta.resolve(entity, after_col, row)
                out[i] = (seq, before_col, whole)
        return out

    def journal_seq(self) -> int:
        return int(self._rows("SELECT COALESCE(max(seq), 0) FROM journal")[0][0])

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        total = 0
        with self._tx() as db:
            for chunk in chunks(entity_ids):
                marks = ",".join("?" * len(chunk))
                total += db.execute(
                    f"DELETE FROM journal WHERE entity_id IN ({marks})", chunk
                ).rowcount
            if total:  # batches none of whose changes is left
                db.execute(
                    "DELETE FROM journal_batches WHERE NOT EXISTS"
                    " (SELECT 1 FROM journal WHERE batch = journal_batches.rid)"
                )
        return total

    def rewrite_journal(self, entries: Sequence[tuple[int, Change]]) -> None:
        fixes: dict[str, dict[int, Change]] = {}
        for seq, ch in entries:
            fixes.setdefault(ch.entity_id, {})[seq] = ch
        with utf8_only(), self._tx() as db:
            for entity_id, mine in fixes.items():
                # Each image is stored against its neighbours: decode the row's whole history,
                # put the new images in, and encode it again.
                entity = next(iter(mine.values())).entity
                chain = self._resolved(
                    entity,
                    entity_id,
                    db.execute(
                        "SELECT seq, before, after FROM journal WHERE entity_id = ? ORDER BY seq",
                        (entity_id,),
                    ).fetchall(),
                )
                state: Image | None = None
                link: delta.Link | None = None
                rows = []
                for seq, before_col, after_col in chain:
                    before, state = delta.step(entity, state, before_col, after_col)
                    fix = mine.get(seq)
                    images = (before, state) if fix is None else (fix.before, fix.after)
                    new_before, new_after, link = delta.encode(entity, *images, link)
                    rows.append((new_before, new_after, seq))
                db.executemany("UPDATE journal SET before = ?, after = ? WHERE seq = ?", rows)

    def erase_deleted(self) -> None:
        """Rewrite the database file (VACUUM) so that no byte of deleted rows remains.

        ``secure_delete`` zeroes a deleted cell, but not every copy SQLite made of it: interior
        pages of an index keep some keys as dividers (a user id, a node name), and rebalancing
        a table's pages leaves old cell bytes in the free space of live pages (seen in the
        journal's pages after ``delete_all``). Only rebuilding the file removes them all.

        The rewrite costs time in proportion to the file's size, so it runs at once only while
        the file is at most ``erase_now_bytes``; a larger file is marked (``erase_pending`` in
        the meta table, so a crash does not lose the promise) and rewritten once at
        :meth:`close`, or at the next open after a crash, however many deletes came between.
        """
        with self._lock:
            self._check_open()
            if self._file_bytes() <= self.erase_now_bytes:
                self._vacuum()
            else:
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES ('erase_pending', '1')"
                    " ON CONFLICT(key) DO NOTHING"
                )

    def _file_bytes(self) -> int:
        (pages,) = self._db.execute("PRAGMA page_count").fetchone()
        (size,) = self._db.execute("PRAGMA page_size").fetchone()
        return int(pages) * int(size)

    def _vacuum(self) -> None:
        self._db.execute("VACUUM")
        # VACUUM goes through the WAL in WAL mode: copy it back now, so the old frames (and
        # the deleted bytes in them) leave the WAL file too.
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def erase_if_pending(self) -> None:
        """Run the rewrite that :meth:`erase_deleted` deferred (at close, or at open after a
        crash)."""
        with self._lock:
            pending = self._db.execute("SELECT 1 FROM meta WHERE key = 'erase_pending'")
            if pending.fetchone() is not None:
                self._db.execute("DELETE FROM meta WHERE key = 'erase_pending'")
                self._vacuum()

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
