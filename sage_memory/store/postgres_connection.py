"""The PostgreSQL store's plumbing: its pool, transactions, the partition lock, text cleaning.

The base of every part of :class:`~sage_memory.store.postgres.PostgresGraphStore` (writes,
reads, lexical, journal, evolver state), which opens the pool and sets these attributes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sage_memory.errors import StorageError
from sage_memory.store.rows import utf8_only
from sage_memory.types import Scope


def _clean(text: str) -> str:
    """PostgreSQL text cannot hold NUL; indexed copies of user text replace it (JSON escapes
    it in the stored records, so the record itself stays exact)."""
    return text.replace("\x00", "\ufffd")


class PostgresConnection:
    """Pooled connections; one transaction per ``_tx`` block."""

    _pool: Any
    _closed: bool
    _lock: threading.Lock
    _lock_state: threading.local  # the thread's lock connection and nesting depth

    # -- plumbing --------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this PostgreSQL store is closed; open the memory again")

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One transaction on a pooled connection, committed on success."""
        self._check_open()
        with utf8_only(), self._pool.connection() as conn:
            # The pool commits on a clean exit and rolls back on an exception.
            yield conn

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One read statement. In autocommit: no BEGIN and COMMIT round trips around it (a
        search makes a few dozen reads)."""
        self._check_open()
        with utf8_only(), self._pool.connection() as conn:
            conn.autocommit = True
            try:
                rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            finally:
                conn.autocommit = False  # back to the pool as it came
            return rows

    def _pipelined(
        self, statements: Sequence[tuple[str, Sequence[Any] | Mapping[str, Any]]]
    ) -> list[list[tuple[Any, ...]]]:
        """Independent reads in one round trip: one pipeline, one sync, in autocommit."""
        self._check_open()
        with utf8_only(), self._pool.connection() as conn:
            conn.autocommit = True
            try:
                with conn.pipeline():
                    cursors = [conn.execute(sql, params) for sql, params in statements]
                return [cursor.fetchall() for cursor in cursors]
            finally:
                conn.autocommit = False

    def _statements(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Statements separated by ``;`` in one round trip (the simple protocol: the values
        are bound here, by psycopg's own quoting), one implicit transaction, so a
        ``SET LOCAL`` among them holds for the rest only; the last one's rows."""
        import psycopg

        self._check_open()
        with utf8_only(), self._pool.connection() as conn:
            conn.autocommit = True
            try:
                with psycopg.ClientCursor(conn) as cursor:
                    cursor.execute(sql, params)
                    while cursor.nextset():
                        pass
                    return cursor.fetchall()
            finally:
                conn.autocommit = False

    @contextmanager
    def scope_lock(self, scope_key: str) -> Iterator[None]:
        """Hold a cross-process lock on one partition for the duration of the block.

        A session-level advisory lock, so the caller's reads and the final ``apply`` (on other
        pooled connections) all happen while no other process can write the same partition.
        Every lock a thread holds lives on one connection of its own, taken from the pool for
        the outermost block: nested blocks (a delete inside delete_all, several partitions of
        one evolve pass) never wait on themselves, and the pool is never drained by locks. A
        killed process's session ends, and its locks with it.
        """
        self._check_open()
        state = self._lock_state
        if getattr(state, "depth", 0) == 0:
            state.conn = self._pool.getconn()
        state.depth = getattr(state, "depth", 0) + 1
        conn = state.conn
        # Autocommit: a session lock needs no transaction, and one round trip each way.
        conn.autocommit = True
        try:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (scope_key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (scope_key,))
        finally:
            state.depth -= 1
            if state.depth == 0:
                state.conn = None
                try:
                    conn.autocommit = False  # back to the pool as it came
                except Exception:  # a broken session: the pool discards a closed one
                    conn.close()
                self._pool.putconn(conn)

    @staticmethod
    def _run_filter(scope: Scope, column: str = "run_id") -> tuple[str, tuple[Any, ...]]:
        if scope.run_id is not None and scope.partition.run_id is None:
            return f" AND {column} = %s", (scope.run_id,)
        return "", ()
