"""The SQLite store's lexical channel (FTS5, BM25) and its stored vectors."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from sage_memory.store.base import TextEntity
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import Scope, Vector
from sage_memory.words import query_terms


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query of the distinct meaningful words of ``text`` (None if there are none).

    Words are quoted, so any input is safe: FTS operators in user text are matched literally.
    """
    words = query_terms(text)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:64])


class SQLiteLexical(SQLiteConnection):
    """``search_text`` over the FTS5 tables; ``get_vectors`` and ``vector_ids``."""

    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        match = fts_query(query)
        if match is None:
            return []
        table = "memories" if entity == "memory" else "nodes"
        run_sql, run_params = ("", ())
        if entity == "memory":
            run_sql, run_params = self._run_filter(scope)
            run_sql = run_sql.replace("run_id", "t.run_id")
        # bm25() is lower-is-better and negative; flip it so scores are positive.
        sql = (
            f"SELECT t.id, -bm25({table}_fts) AS score FROM {table}_fts"
            f" JOIN {table} t ON t.rid = {table}_fts.rowid"
            f" WHERE {table}_fts MATCH ? AND {table}_fts.sk = ? AND t.scope_key = ?{run_sql}"
            " ORDER BY score DESC LIMIT ?"
        )
        try:
            rows = self._rows(
                sql, (f"body : ({match})", self._sk(scope.key), scope.key, *run_params, limit)
            )
        except sqlite3.OperationalError:
            return []  # a query FTS5 cannot parse matches nothing rather than failing a search
        return [(r[0], float(r[1])) for r in rows]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        out: dict[str, Vector] = {}
        for table in ("memories", "nodes"):
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                rows = self._rows(
                    f"SELECT id, vec FROM {table} WHERE id IN ({marks}) AND vec IS NOT NULL", chunk
                )
                out.update((r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows)
        return out

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        table = "memories" if entity == "memory" else "nodes"
        rows = self._rows(
            f"SELECT id FROM {table} WHERE scope_key = ? AND vec IS NOT NULL", (scope.key,)
        )
        return {r[0] for r in rows}
