"""PostgresGraphStore: the source of truth in PostgreSQL, shared by many processes and machines.

The same layout as the SQLite store (a row per memory / node / edge with the record as JSON
text plus the queried columns, provenance, the append-only journal), in one schema per memory.
The lexical channel is BM25 over postings kept per scope partition (``postgres_postings``),
scored exactly as the SQLite store scores, so a scope ranks alike on both backends and its
scores never depend on other tenants' rows. Each ``apply`` is one transaction. Writers that must
decide something from what is already stored (entity resolution, the current value of a
single-valued relation) hold :meth:`scope_lock` for their scope across plan and apply.

The class is assembled from one part per responsibility: writes (``postgres_writes``), reads
(``postgres_reads``), the lexical channel and vectors (``postgres_lexical``), the reads a
search makes together (``postgres_batched``), the journal and metadata (``postgres_journal``)
and the evolver's state (``postgres_evolver``); the pool, the transactions and
:meth:`scope_lock` are in ``postgres_connection``.
"""

from __future__ import annotations

import threading
from typing import Any

from sage_memory.postgres import check_schema, open_pool
from sage_memory.store.postgres_batched import PostgresBatchedReads
from sage_memory.store.postgres_evolver import PostgresEvolverState
from sage_memory.store.postgres_journal import PostgresJournal
from sage_memory.store.postgres_lexical import PostgresLexical
from sage_memory.store.postgres_reads import PostgresReads
from sage_memory.store.postgres_schema import migrate
from sage_memory.store.postgres_writes import PostgresWrites

__all__ = ["PostgresGraphStore"]


class PostgresGraphStore(
    PostgresWrites,
    PostgresReads,
    PostgresLexical,
    PostgresBatchedReads,
    PostgresJournal,
    PostgresEvolverState,
):
    """A GraphStore in a PostgreSQL schema (created and migrated on first connect).

    Args:
        url: ``postgresql://USER:PASSWORD@HOST:PORT/DB``.
        schema: The schema that holds this memory's tables; several memories can share one
            database under different schemas.
        pool_size: Most connections this store keeps open.

    Raises:
        DependencyError: psycopg is not installed (``pip install 'sage-graph-memory[postgres]'``).
        StorageError: The server is unreachable, refuses the login, or holds a newer schema.
    """

    persistent = True

    def __init__(self, url: str, *, schema: str = "sage_memory", pool_size: int = 8) -> None:
        self.url = url
        self.schema = check_schema(schema)
        self._pool = open_pool(url, max_size=pool_size, search_path=self.schema)
        self._closed = False
        self._lock = threading.Lock()
        self._lock_state = threading.local()
        with self._pool.connection() as conn:
            migrate(conn, self.schema)

    @property
    def pool(self) -> Any:
        """The connection pool (shared with the vector index in server mode)."""
        return self._pool

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._pool.close()
