"""SQLiteGraphStore: the embedded, durable source of truth (one file, WAL mode).

Layout: one row per memory / node / edge holding the record as JSON plus the columns that are
queried (scope, ids, names), the embedding as a float16 BLOB, per-partition BM25 postings for
the lexical channel (``sqlite_postings``), a provenance table (memory -> nodes/edges it
supports) and the append-only journal (tables in :mod:`~sage_memory.store.sqlite_schema`).

Durability: every ``apply`` is one transaction; with ``synchronous=FULL`` (the default) a
returned write survives a process kill and an OS crash. One connection is shared under a lock;
SQLite serialises writers anyway and our reads are short.

The class is assembled from one part per responsibility: writes (``sqlite_writes``), reads of
memories and the graph (``sqlite_reads``), the lexical channel and vectors (``sqlite_lexical``),
the journal (``sqlite_journal``) and the evolver's state (``sqlite_evolver``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from sage_memory.errors import StorageError
from sage_memory.store import sqlite_postings as postings
from sage_memory.store.sqlite_connection import DecodedRows, LinkRows
from sage_memory.store.sqlite_evolver import SQLiteEvolverState
from sage_memory.store.sqlite_journal import SQLiteJournal
from sage_memory.store.sqlite_lexical import SQLiteLexical, fts_query
from sage_memory.store.sqlite_reads import SQLiteReads
from sage_memory.store.sqlite_schema import (
    HALF_VECTORS_META,
    PAGE_SIZE,
    SCHEMA_VERSION,
    VECTORS_META,
)
from sage_memory.store.sqlite_schema import SCHEMA as _SCHEMA
from sage_memory.store.sqlite_writes import SQLiteWrites


class SQLiteGraphStore(SQLiteWrites, SQLiteReads, SQLiteLexical, SQLiteJournal, SQLiteEvolverState):
    """The default persistent GraphStore: one SQLite database file.

    Args:
        path: the database file (created with its folder if missing), or ":memory:".
        synchronous: "FULL" (survives OS crashes) or "NORMAL" (survives process crashes).
        read_only: open an existing store for reading only, beside the process that owns it
            (SQLite's WAL lets readers see each committed write while another process
            writes); every write raises StorageError.
    """

    persistent = True

    def __init__(
        self, path: str | Path, *, synchronous: str = "FULL", read_only: bool = False
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        if synchronous not in ("FULL", "NORMAL"):
            raise StorageError(f"synchronous={synchronous!r}: use 'FULL' or 'NORMAL'")
        if read_only:
            self._open_read_only()
            return
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file only
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA foreign_keys=OFF")
            self._db.execute("PRAGMA busy_timeout=5000")
            # Deleted rows are overwritten with zeros instead of lingering in free pages: a
            # forgotten memory must not be recoverable from the file.
            self._db.execute("PRAGMA secure_delete=ON")
            self._set_aside_old_journal()
            self._db.executescript(_SCHEMA)
            self._db.executescript(postings.POSTINGS_SCHEMA)
            self._convert_old_journal()
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"cannot open the SQLite store at {self.path}: {exc}. If the file is not a "
                "sage_memory store, choose another path; if it is damaged, restore a backup."
            ) from exc
        self._lock = threading.RLock()
        self._closed = False
        self._decoded = DecodedRows()
        # A search reads the vectors of a hundred or so candidates, mostly the same ones as
        # the searches before it: reading and decoding them again was a few ms of each. 20,000
        # float32 vectors of 384 dimensions are 31 MB at most.
        self._vectors = DecodedRows(limit=20_000)
        self._links = LinkRows()
        self._postings = postings.PostingsMemo()
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StorageError(
                f"{self.path} has store schema {version}; this version of sage_memory reads "
                f"{SCHEMA_VERSION}. Export it with the version that wrote it and load it here."
            )
        self._upgrade_lexical()
        self._upgrade_vectors()
        self._upgrade_vector_precision()
        self.erase_if_pending()  # a deferred erase that a crash interrupted

    def _set_aside_old_journal(self) -> None:
        """A journal of the older layout (batch id, time and actor in every row) is renamed
        ``journal_v1``, its indexes dropped, so that the schema creates the current one;
        :meth:`_convert_old_journal` then moves its rows (a crash in between leaves
        ``journal_v1`` for the next open to convert)."""
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(journal)")}
        if "batch_id" not in columns:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute("ALTER TABLE journal RENAME TO journal_v1")
            for index in ("journal_by_batch", "journal_by_entity", "journal_by_scope"):
                self._db.execute(f"DROP INDEX IF EXISTS {index}")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _convert_old_journal(self) -> None:
        db = self._db
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'journal_v1'").fetchone() is None:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            # Sequence numbers are never reused (the vector index's mark counts on it), even
            # those of changes purged since: the new table goes on from the old counter.
            row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'journal_v1'")
            last = (row.fetchone() or (0,))[0]
            db.execute(
                "INSERT OR IGNORE INTO journal_batches (id, at, actor)"
                " SELECT batch_id, at, actor FROM journal_v1 ORDER BY seq"
            )
            db.execute(
                "INSERT INTO journal (seq, id, batch, scope_key, entity, entity_id, op, before,"
                " after, reason) SELECT j.seq, j.id, b.rid, j.scope_key, j.entity, j.entity_id,"
                " j.op, j.before, j.after, j.reason FROM journal_v1 j JOIN journal_batches b"
                " ON b.id = j.batch_id AND b.at = j.at AND b.actor = j.actor ORDER BY j.seq"
            )
            db.execute("DROP TABLE journal_v1")
            db.execute(
                "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'journal'", (last,)
            )
            if (
                db.execute("SELECT 1 FROM sqlite_sequence WHERE name = 'journal'").fetchone()
                is None
            ):
                db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('journal', ?)", (last,))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _upgrade_lexical(self) -> None:
        """Stores of older versions searched with FTS5 (whole-table statistics), or kept each
        posting's partition as text: index them again once, in the current tables."""
        key, value = postings.POSTINGS_META
        if self.get_meta(key) == value:
            return
        with self._tx() as db:
            for table in ("memories_fts", "nodes_fts", *postings.POSTINGS_TABLES):
                db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in postings.POSTINGS_SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            postings.rebuild(db)
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = excluded.value",
                (key, value),
            )

    def _upgrade_vectors(self) -> None:
        """Stores of older versions kept each vector in its row: move them to their tables."""
        key, value = VECTORS_META
        if self.get_meta(key) == value:
            return
        with self._tx() as db:
            for table, vectors in (("memories", "memory_vectors"), ("nodes", "node_vectors")):
                columns = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
                if "vec" in columns:
                    db.execute(
                        f"INSERT OR REPLACE INTO {vectors} (rid, vec)"
                        f" SELECT rid, vec FROM {table} WHERE vec IS NOT NULL"
                    )
                    db.execute(f"UPDATE {table} SET vec = NULL WHERE vec IS NOT NULL")
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = excluded.value",
                (key, value),
            )

    def _upgrade_vector_precision(self) -> None:
        """Stores of older versions kept float32 vectors: halve them once (their pages are
        reused by later writes; a VACUUM, as after a delete, returns them to the disk)."""
        key, value = HALF_VECTORS_META
        if self.get_meta(key) == value:
            return
        with self._tx() as db:
            for table in ("memory_vectors", "node_vectors"):
                rows = db.execute(f"SELECT rid, vec FROM {table}").fetchall()
                db.executemany(
                    f"UPDATE {table} SET vec = ? WHERE rid = ?",
                    [
                        (np.frombuffer(vec, dtype=np.float32).astype(np.float16).tobytes(), rid)
                        for rid, vec in rows
                    ],
                )
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = excluded.value",
                (key, value),
            )

    def _open_read_only(self) -> None:
        # This handle writes nothing, so nothing of its own persists: engine code that records
        # state on close (a clean shutdown flag) skips it.
        self.persistent = False
        self._lock = threading.RLock()
        self._closed = False
        self._fts_secure = False
        if not Path(self.path).is_file():
            raise StorageError(f"no memory store at {self.path} to open read-only")
        try:
            uri = Path(self.path).resolve().as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._db.isolation_level = None
            self._db.execute("PRAGMA busy_timeout=5000")
            version = self.get_meta("schema_version")
            key, value = HALF_VECTORS_META
            self._vector_dtype = np.float16 if self.get_meta(key) == value else np.float32
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"cannot open the SQLite store at {self.path} read-only: {exc}"
            ) from exc
        if version != SCHEMA_VERSION:
            raise StorageError(
                f"{self.path} has store schema {version}; this version of sage_memory reads "
                f"{SCHEMA_VERSION}"
            )

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

    def meta_items(self, prefix: str) -> dict[str, str]:
        """:class:`~sage_memory.store.base.MetaItems`: a range of the meta table's key index."""
        return dict(
            self._rows(
                "SELECT key, value FROM meta WHERE key >= ? AND key < ? ORDER BY key",
                (prefix, _prefix_end(prefix)),
            )
        )

    def set_meta_many(self, items: Mapping[str, str | None]) -> None:
        with self._tx() as db:
            db.executemany(
                "DELETE FROM meta WHERE key = ?", [(k,) for k, v in items.items() if v is None]
            )
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = excluded.value",
                [(k, v) for k, v in items.items() if v is not None],
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
            with contextlib.suppress(sqlite3.Error):  # retried on the next open
                self.erase_if_pending()
            self._closed = True
            with contextlib.suppress(sqlite3.Error):  # a busy checkpoint is retried on next open
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()


def _prefix_end(prefix: str) -> str:
    """The least string above every string that starts with ``prefix`` (a key range's end)."""
    return prefix + "\U0010ffff"


__all__ = ["SQLiteGraphStore", "fts_query"]
