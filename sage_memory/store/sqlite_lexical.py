"""The SQLite store's lexical channel (BM25 per partition) and its stored vectors."""

from __future__ import annotations

from collections.abc import Sequence

from sage_memory.store import sqlite_postings as postings
from sage_memory.store.base import TextEntity
from sage_memory.store.rows import utf8_only
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import Scope, Vector
from sage_memory.words import query_terms


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query of the distinct meaningful words of ``text`` (None if there are none);
    the benchmarks' FTS5 baseline uses it (the store itself scores per partition).

    Words are quoted, so any input is safe: FTS operators in user text are matched literally.
    """
    words = query_terms(text)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:64])


#: The table of each kind of row's vectors (by the row's rid).
_VECTORS = {"memories": "memory_vectors", "nodes": "node_vectors"}


class SQLiteLexical(SQLiteConnection):
    """``search_text`` over the per-partition postings; ``get_vectors`` and ``vector_ids``."""

    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        run_id = None
        if entity == "memory" and scope.run_id is not None and scope.partition.run_id is None:
            run_id = scope.run_id
        kind: postings.Kind = "m" if entity == "memory" else "n"
        with self._lock, utf8_only():
            self._check_open()
            return postings.search(self._db, kind, scope.key, query, limit, run_id, self._postings)

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        out: dict[str, Vector] = {}
        with self._lock:
            cache = self._vectors
            wanted = list(dict.fromkeys(ids))
            if cache is not None:
                for i in wanted:
                    vec = cache.get(("", i))
                    if vec is not None:
                        out[i] = vec
            for table, vectors in _VECTORS.items():
                # Memories first; the node table is asked only for the ids it may hold.
                for chunk in chunks([i for i in wanted if i not in out]):
                    marks = ",".join("?" * len(chunk))
                    rows = self._rows(
                        f"SELECT t.id, v.vec FROM {table} t JOIN {vectors} v ON v.rid = t.rid"
                        f" WHERE t.id IN ({marks})",
                        chunk,
                    )
                    for key, blob in rows:
                        vec = self._vector_from(blob)
                        if cache is not None:
                            # Shared with later callers: nobody may change it in place.
                            vec.flags.writeable = False
                            cache.put(("", key), vec)
                        out[key] = vec
        # In the order asked, as the reads without the cache return them.
        return {i: out[i] for i in wanted if i in out}

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        table = "memories" if entity == "memory" else "nodes"
        rows = self._rows(
            f"SELECT t.id FROM {table} t JOIN {_VECTORS[table]} v ON v.rid = t.rid"
            " WHERE t.scope_key = ?",
            (scope.key,),
        )
        return {r[0] for r in rows}
