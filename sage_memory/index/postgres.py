"""A VectorIndex on PostgreSQL + pgvector, scoped so a query never pays for other tenants.

One table holds every collection's vectors, keyed by (collection, id). A query reads only its
own collection's rows:

* a small collection (below ``hnsw_threshold`` rows) is searched exactly: the primary-key
  btree finds its rows and pgvector scores them, so the cost follows the collection's size,
  never the table's;
* a collection that grows past the threshold gets its own *partial* HNSW index
  (``WHERE collection = '...'``), so the approximate search walks a graph of that
  collection's vectors only.

A single HNSW index over the whole table with a ``WHERE collection = ...`` filter is the
metadata-filter trap: the graph walk visits other tenants' vectors and throws them away, and
with ``ef_search`` candidates it can return fewer than k. bench/postgres_scoping.py measures
the chosen design at 100 tenants against one tenant alone.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sage_memory.errors import StorageError, ValidationError
from sage_memory.index.numpy import prepare_batch, prepare_query
from sage_memory.postgres import check_schema, ensure_pgvector, open_pool
from sage_memory.types import Vector as Vectors

__all__ = ["PostgresVectorIndex"]

#: Rows above which a collection gets its own partial HNSW index. Below it an exact scan of
#: the collection is fast (about a millisecond per thousand 384-d rows) and exact.
DEFAULT_HNSW_THRESHOLD = 20_000


#: Seconds a process trusts what it read of a collection (width, whether it has its own HNSW
#: index) before reading it again; a collection with its own index stays so for good.
META_TTL = 30.0
#: Rows a process upserts into a collection between two counts of it (the count decides when
#: the collection gets its own HNSW index; counting on every upsert cost a scan per add).
RECOUNT_EVERY = 1_000


def _literal_vector(vector: Vectors) -> str:
    """pgvector's text form; repr of a float32 round-trips exactly."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def _index_name(collection: str) -> str:
    digest = hashlib.blake2b(collection.encode("utf-8"), digest_size=12).hexdigest()
    return f"vec_hnsw_{digest}"


class PostgresVectorIndex:
    """Cosine search over pgvector, one logical collection per engine partition.

    Args:
        url: ``postgresql://USER:PASSWORD@HOST:PORT/DB``.
        schema: The schema holding the tables (created when missing), so several memories can
            share one database.
        hnsw_threshold: Rows at which a collection gets a partial HNSW index.
        ef_search: ``hnsw.ef_search`` for approximate queries (pgvector's default is 40).
        pool: An open ``psycopg_pool.ConnectionPool`` to share instead of opening one; the
            caller keeps ownership.

    Raises:
        DependencyError: psycopg is not installed.
        StorageError: The server is unreachable, refuses the login or lacks pgvector.
    """

    persistent: bool = True

    def __init__(
        self,
        url: str,
        *,
        schema: str = "sage_memory",
        hnsw_threshold: int = DEFAULT_HNSW_THRESHOLD,
        ef_search: int = 100,
        pool: Any = None,
    ) -> None:
        self._schema = check_schema(schema)
        self._threshold = hnsw_threshold
        self._ef_search = int(ef_search)
        self._owns_pool = pool is None
        self._pool = open_pool(url) if pool is None else pool
        self._closed = False
        self._lock = threading.Lock()
        # collection -> (width, own HNSW index, when read); collection -> (count, added since)
        self._meta: dict[str, tuple[int, bool, float]] = {}
        self._counts: dict[str, tuple[int, int]] = {}
        ensure_pgvector(self._pool, url)
        self._create_tables()

    # -- set-up ---------------------------------------------------------------------------
    def _create_tables(self) -> None:
        s = self._schema
        with self._pool.connection() as conn:
            # Concurrent CREATE ... IF NOT EXISTS can still collide; serialise them.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"schema:{s}",))
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{s}"')
            conn.execute(
                f'CREATE TABLE IF NOT EXISTS "{s}".vec_collections ('
                " name text PRIMARY KEY, dim integer NOT NULL, hnsw boolean NOT NULL DEFAULT false)"
            )
            conn.execute(
                f'CREATE TABLE IF NOT EXISTS "{s}".vec_rows ('
                " collection text NOT NULL, id text NOT NULL, embedding vector NOT NULL,"
                " PRIMARY KEY (collection, id))"
            )
            conn.commit()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this PostgresVectorIndex is closed; create a new one")

    def _dim(self, conn: Any, collection: str) -> tuple[int, bool] | None:
        row = conn.execute(
            f'SELECT dim, hnsw FROM "{self._schema}".vec_collections WHERE name = %s',
            (collection,),
        ).fetchone()
        known = None if row is None else (int(row[0]), bool(row[1]))
        with self._lock:
            if known is None:
                self._meta.pop(collection, None)
            else:
                self._meta[collection] = (*known, time.monotonic())
        return known

    def _cached(self, collection: str) -> tuple[int, bool] | None:
        """What this process read of a collection, while it is fresh (saves a round trip)."""
        with self._lock:
            entry = self._meta.get(collection)
        if entry is None or (not entry[1] and time.monotonic() - entry[2] > META_TTL):
            return None
        return entry[0], entry[1]

    def _forget(self, collection: str) -> None:
        with self._lock:
            self._meta.pop(collection, None)
            self._counts.pop(collection, None)

    # -- the port -------------------------------------------------------------------------
    def upsert(self, collection: str, ids: Sequence[str], vectors: Vectors) -> None:
        """Insert or replace vectors; a collection keeps the width of its first vectors."""
        if len(ids) == 0:
            return
        ids, batch = prepare_batch(ids, vectors)
        self._check_open()
        s = self._schema
        dim = int(batch.shape[1])
        known = self._cached(collection)
        with self._pool.connection() as conn:
            # One pipeline: the collection's row (again, in case another process dropped
            # it), its width when not known, the vectors; then one commit.
            with conn.pipeline():
                conn.execute(
                    f'INSERT INTO "{s}".vec_collections (name, dim) VALUES (%s, %s) '
                    "ON CONFLICT (name) DO NOTHING",
                    (collection, dim),
                )
                if known is None:
                    known = self._dim(conn, collection)
                    assert known is not None
                if known[0] != dim:
                    conn.rollback()
                    raise ValidationError(
                        f"collection {collection!r} holds {known[0]}-d vectors, got {dim}-d; "
                        "use one embedder per collection or drop it first"
                    )
                with conn.cursor() as cur:
                    cur.executemany(
                        f'INSERT INTO "{s}".vec_rows (collection, id, embedding) '
                        "VALUES (%s, %s, %s::vector) ON CONFLICT (collection, id) "
                        "DO UPDATE SET embedding = EXCLUDED.embedding",
                        [
                            (collection, item, _literal_vector(row))
                            for item, row in zip(ids, batch, strict=True)
                        ],
                    )
            conn.commit()
            if not known[1] and self._may_need_hnsw(conn, collection, len(ids)):
                self._build_hnsw(conn, collection, dim)

    def _may_need_hnsw(self, conn: Any, collection: str, added: int) -> bool:
        """Whether the collection has reached the HNSW threshold, counting it only when this
        process's own upserts since the last count could have taken it there, or after
        :data:`RECOUNT_EVERY` rows (other processes add rows too)."""
        with self._lock:
            counted, since = self._counts.get(collection, (-1, 0))
            since += added
            self._counts[collection] = (counted, since)
        if counted >= 0 and counted + since < self._threshold and since < RECOUNT_EVERY:
            return False
        n = self._count(conn, collection)
        conn.rollback()
        with self._lock:
            self._counts[collection] = (n, 0)
        return n >= self._threshold

    def _build_hnsw(self, conn: Any, collection: str, dim: int) -> None:
        """Give one collection its own partial HNSW index (once, under a lock)."""
        s = self._schema
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"hnsw:{s}:{collection}",))
        known = self._dim(conn, collection)
        if known is None or known[1]:
            conn.commit()
            return
        literal = "'" + collection.replace("'", "''") + "'"
        conn.execute(
            f'CREATE INDEX IF NOT EXISTS "{_index_name(collection)}" ON "{s}".vec_rows '
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) "
            f"WHERE collection = {literal}"
        )
        conn.execute(f'UPDATE "{s}".vec_collections SET hnsw = true WHERE name = %s', (collection,))
        conn.commit()
        with self._lock:
            self._meta[collection] = (dim, True, time.monotonic())

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove vectors; unknown ids and collections are ignored."""
        self._check_open()
        if len(ids) == 0:
            return
        with self._pool.connection() as conn:
            conn.execute(
                f'DELETE FROM "{self._schema}".vec_rows WHERE collection = %s AND id = ANY(%s)',
                (collection, list(ids)),
            )
            conn.commit()

    def query(self, collection: str, vector: Vectors, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest ids with cosine similarity, best first."""
        query = prepare_query(vector)
        self._check_open()
        with self._pool.connection() as conn:
            # Autocommit: no BEGIN / ROLLBACK round trips around the two reads of a query.
            conn.autocommit = True
            try:
                rows = self._nearest(conn, collection, query, k)
            finally:
                conn.autocommit = False  # back to the pool as it came
        # Cosine distance of a zero vector is NaN in pgvector; it scores 0 as in the others.
        return [
            (str(item), float(np.clip(1.0 - (1.0 if d is None or math.isnan(d) else d), -1.0, 1.0)))
            for item, d in rows
        ]

    def _nearest(
        self, conn: Any, collection: str, query: np.ndarray, k: int
    ) -> list[tuple[Any, Any]]:
        known = self._cached(collection) or self._dim(conn, collection)
        if known is None or k <= 0:
            return []
        dim, hnsw = known
        if dim != query.shape[0]:
            raise ValidationError(
                f"collection {collection!r} holds {dim}-d vectors, the query is "
                f"{query.shape[0]}-d; embed the query with the collection's embedder"
            )
        text = _literal_vector(query)
        s = self._schema
        if hnsw:
            # The literal collection lets the planner match the partial index's predicate;
            # SET LOCAL needs a transaction of its own.
            literal = "'" + collection.replace("'", "''") + "'"
            with conn.transaction():
                conn.execute(f"SET LOCAL hnsw.ef_search = {max(self._ef_search, k)}")
                rows: list[tuple[Any, Any]] = conn.execute(
                    f"SELECT id, (embedding::vector({dim})) <=> %s::vector({dim}) AS d "
                    f'FROM "{s}".vec_rows WHERE collection = {literal} ORDER BY d LIMIT %s',
                    (text, k),
                ).fetchall()
            return rows
        exact: list[tuple[Any, Any]] = conn.execute(
            f'SELECT id, embedding <=> %s::vector AS d FROM "{s}".vec_rows '
            "WHERE collection = %s ORDER BY d, id LIMIT %s",
            (text, collection, k),
        ).fetchall()
        return exact

    def ids(self, collection: str) -> set[str]:
        """Every id in ``collection``."""
        self._check_open()
        with self._pool.connection() as conn:
            rows = conn.execute(
                f'SELECT id FROM "{self._schema}".vec_rows WHERE collection = %s', (collection,)
            ).fetchall()
            conn.rollback()
        return {str(row[0]) for row in rows}

    def _count(self, conn: Any, collection: str) -> int:
        row = conn.execute(
            f'SELECT count(*) FROM "{self._schema}".vec_rows WHERE collection = %s',
            (collection,),
        ).fetchone()
        return int(row[0])

    def _dim_of(self, collection: str) -> tuple[int, bool] | None:
        """(width, has its own HNSW index) of a collection; None when unknown."""
        with self._pool.connection() as conn:
            known = self._dim(conn, collection)
            conn.rollback()
        return known

    def count(self, collection: str) -> int:
        """How many vectors ``collection`` holds."""
        self._check_open()
        with self._pool.connection() as conn:
            n = self._count(conn, collection)
            conn.rollback()
        return n

    def drop(self, collection: str) -> None:
        """Delete a collection, its rows and its partial index."""
        self._check_open()
        s = self._schema
        with self._pool.connection() as conn:
            conn.execute(f'DROP INDEX IF EXISTS "{s}"."{_index_name(collection)}"')
            conn.execute(f'DELETE FROM "{s}".vec_rows WHERE collection = %s', (collection,))
            conn.execute(f'DELETE FROM "{s}".vec_collections WHERE name = %s', (collection,))
            conn.commit()
        self._forget(collection)

    def close(self) -> None:
        """Close the pool this index opened. Closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._owns_pool:
                self._pool.close()
