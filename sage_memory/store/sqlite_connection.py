"""The SQLite store's plumbing: its one connection, transactions

The base of every part of :class:`~sage_memory.store.sqlite.SQLiteGraphStore` (writes, reads,
lexical, journal, evolver state), which opens the connection and sets these attributes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from sage_memory.errors import StorageError
from sage_memory.store.rows import utf8_only
from sage_memory.store.sqlite_postings import PostingsMemo
from sage_memory.types import Scope, Vector


class SQLiteConnection:
    """One shared connection under a lock; SQLite serialises writers anyway."""

    path: str
    read_only: bool = False
    #: Deletes rewrite a file up to this size at once, a larger one at close (see
    #: ``SQLiteJournal.erase_deleted``).
    erase_now_bytes: int = 64 * 2**20
    _db: sqlite3.Connection
    _lock: threading.RLock
    _closed: bool
    #: Records decoded from rows, kept until a write changes them; None on a read-only
    #: handle (another process writes the rows it would keep).
    _decoded: DecodedRows | None = None
    #: Which edges end at a node and which nodes a memory supports, as the reads found them,
    #: kept until a write changes them; None on a read-only handle, as ``_decoded``.
    _links: LinkRows | None = None
    #: What lexical searches read of the postings, dropped at the start of every write
    #: transaction; None on a read-only handle, as ``_decoded``.
    _postings: PostingsMemo | None = None
    #: Stored vectors decoded to float32 (read-only arrays) by row id, kept until a write
    #: changes them; None on a read-only handle, as ``_decoded``.
    _vectors: DecodedRows | None = None
    #: Counts ``apply`` calls: what a reader derived from the rows holds while it is unchanged.
    _epoch: int = 0
    #: How the vector tables hold a vector: float16 (float32 in files not yet converted, which
    #: only a read-only handle sees).
    _vector_dtype: type[np.floating[Any]] = np.float16

    def _vector_bytes(self, vector: Vector) -> bytes:
        return np.asarray(vector, dtype=np.float32).astype(self._vector_dtype).tobytes()

    def _vector_from(self, blob: bytes) -> Vector:
        return np.frombuffer(blob, dtype=self._vector_dtype).astype(np.float32)

    def write_epoch(self) -> int | None:
        """:class:`~sage_memory.store.base.WriteEpoch`: None on a read-only handle, as the
        caches above (another process writes the rows)."""
        return None if self._links is None else self._epoch

    def _check_open(self) -> None:
        # Called under the lock: a thread still reading when another closes the store gets a
        # clear StorageError, not sqlite3's "Cannot operate on a closed database".
        if self._closed:
            raise StorageError("this SQLite store is closed; open the memory again")

    @contextmanager
    def _tx(self, *, lexical: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction. ``lexical=False`` promises it changes no memory, node or
        lexical row (the access log): what lexical searches read stays kept."""
        with self._lock:
            self._check_open()
            if self.read_only:
                raise StorageError(
                    f"{self.path} is open read-only (another process owns the folder); "
                    "write through the owner, wait for it (the CLI's --wait SECONDS), or use "
                    "server mode (PostgreSQL) for many writers"
                )
            self._db.execute("BEGIN IMMEDIATE")
            if lexical and self._postings is not None:
                # Before any row changes, under the lock the lexical reads fill it under.
                self._postings.clear()
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Reads that must see one state of the file: a read transaction, so another process's
        commit between two of them (a read-only handle beside the owner) is not seen half. A
        journal page and the rows its last changes refer to (``R`` images) are read so."""
        with self._lock:
            self._check_open()
            if self._db.in_transaction:  # inside a write: already one state
                yield
                return
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, utf8_only():
            self._check_open()
            return self._db.execute(sql, params).fetchall()

    @staticmethod
    def _run_filter(scope: Scope) -> tuple[str, tuple[Any, ...]]:
        if scope.run_id is not None and scope.partition.run_id is None:
            return " AND run_id = ?", (scope.run_id,)
        return "", ()


class DecodedRows:
    """Decoded records by (table, id), bounded: the oldest half goes when it is full.

    Only the store's own writes change its rows (one writer owns a folder), and ``apply``
    drops what it changes under the same lock the readers fill it under. Records are frozen;
    their ``attributes`` / ``metadata`` dicts are shared between the callers that read them.
    """

    def __init__(self, limit: int = 200_000) -> None:
        self._items: dict[tuple[str, str], Any] = {}
        self._limit = limit
        # The dict's own lookup (the same dict for the cache's life): a search makes
        # hundreds of them.
        self.get: Callable[[tuple[str, str]], Any] = self._items.get

    def put(self, key: tuple[str, str], record: Any) -> None:
        if len(self._items) >= self._limit:
            for old in list(self._items)[: self._limit // 2]:
                del self._items[old]
        self._items[key] = record

    def drop(self, key: tuple[str, str]) -> None:
        self._items.pop(key, None)


class LinkRows:
    """The rows of the graph's link reads by node or memory id, bounded as :class:`DecodedRows`.

    ``ends``: the (node id, rid, edge id) rows of one edge read of one node (its column,
    partition, relations and bound in the key); ``supports``: the node ids a memory supports
    in one partition, in the order the provenance read lists them. A search walks the same
    people and places as the last one did: reading their links again was most of its
    statements. ``apply`` drops a node's entries when an edge ending at it is written, and a
    memory's when a node gains or loses it, under the lock the readers fill them under.

    A node written again moves last in the list of every memory it supports (the lists follow
    the order nodes were last written): rather than dropping the lists of all of a hub's
    memories at each of its writes (thousands of them, each add that names the user), each
    list keeps the clock of when it was read and each written node the clock of its write, and
    :meth:`get_supports` takes a list only while none of its nodes was written since.
    """

    def __init__(self, limit: int = 100_000) -> None:
        self.ends: dict[str, dict[tuple[Any, ...], list[tuple[str, int, str]]]] = {}
        self.supports: dict[str, dict[str, tuple[int, list[str]]]] = {}
        self._written: dict[str, int] = {}
        self._clock = 0
        self._limit = limit

    def put_ends(
        self, node_id: str, key: tuple[Any, ...], rows: list[tuple[str, int, str]]
    ) -> None:
        self._room(self.ends)
        self.ends.setdefault(node_id, {})[key] = rows

    def put_supports(self, memory_id: str, part_key: str, node_ids: list[str]) -> None:
        self._room(self.supports)
        self.supports.setdefault(memory_id, {})[part_key] = (self._clock, node_ids)

    def get_supports(self, memory_id: str, part_key: str) -> list[str] | None:
        """The node ids read for ``memory_id``, unless one of them was written since."""
        entry = self.supports.get(memory_id, {}).get(part_key)
        if entry is None:
            return None
        read_at, node_ids = entry
        written = self._written.get
        if any(written(n, 0) > read_at for n in node_ids):
            return None
        return node_ids

    def node_written(self, node_id: str) -> None:
        """``node_id`` was written: the lists it is in are stale (its place in them moved)."""
        if len(self._written) >= self._limit:
            # Forgetting the clocks would make stale lists look current: forget the lists too.
            self._written.clear()
            self.supports.clear()
        self._clock += 1
        self._written[node_id] = self._clock

    def _room(self, table: dict[str, Any]) -> None:
        if len(table) >= self._limit:
            for old in list(table)[: self._limit // 2]:
                del table[old]

    def drop(self, node_ids: Iterable[str], memory_ids: Iterable[str]) -> None:
        for n in node_ids:
            self.ends.pop(n, None)
        for m in memory_ids:
            self.supports.pop(m, None)


def chunks(items: Sequence[str], size: int = 500) -> Iterator[Sequence[str]]:
    """Slices of ``items`` small enough for one SQL ``IN (...)`` list."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
