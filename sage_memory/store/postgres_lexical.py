"""The PostgreSQL store's lexical channel (full-text search) and its stored vectors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sage_memory.store.base import TextEntity
from sage_memory.store.postgres_connection import PostgresConnection, _clean
from sage_memory.types import Scope, Vector
from sage_memory.words import query_terms


class PostgresLexical(PostgresConnection):
    """``search_text`` with ``ts_rank`` over each row's own words; vectors."""

    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        words = [_clean(w) for w in query_terms(query)]
        if not words:
            return []
        table = "memories" if entity == "memory" else "nodes"
        run_sql, run_params = ("", ())
        if entity == "memory":
            run_sql, run_params = self._run_filter(scope)
        # One plainto_tsquery per word, OR-ed: user text is never parsed as tsquery syntax.
        tsq = " || ".join(["plainto_tsquery('english', %s)"] * len(words))
        rows = self._rows(
            f"WITH q AS (SELECT {tsq} AS q) SELECT id, ts_rank(tsv, q.q) AS score"
            f" FROM {table}, q WHERE scope_key = %s AND tsv @@ q.q{run_sql}"
            " ORDER BY score DESC, rid LIMIT %s",
            (*words, scope.key, *run_params, limit),
        )
        # ts_rank can round a weak match to 0; the port promises positive scores.
        return [(r[0], max(float(r[1]), 1e-9)) for r in rows]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        rows = self._rows(
            "SELECT id, vec FROM memories WHERE id = ANY(%(ids)s) AND vec IS NOT NULL"
            " UNION ALL SELECT id, vec FROM nodes WHERE id = ANY(%(ids)s) AND vec IS NOT NULL",
            {"ids": list(ids)},  # type: ignore[arg-type]
        )
        return {r[0]: np.frombuffer(bytes(r[1]), dtype=np.float32) for r in rows}

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        table = "memories" if entity == "memory" else "nodes"
        rows = self._rows(
            f"SELECT id FROM {table} WHERE scope_key = %s AND vec IS NOT NULL", (scope.key,)
        )
        return {r[0] for r in rows}
