"""The PostgreSQL store's lexical channel (BM25 per partition) and its stored vectors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sage_memory.store import postgres_postings as postings
from sage_memory.store.base import TextEntity
from sage_memory.store.postgres_connection import PostgresConnection
from sage_memory.store.rows import utf8_only
from sage_memory.types import Scope, Vector


class PostgresLexical(PostgresConnection):
    """``search_text`` over the per-partition BM25 postings; vectors."""

    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        run_id = None
        if entity == "memory" and scope.run_id is not None and scope.partition.run_id is None:
            run_id = scope.run_id
        kind: postings.Kind = "m" if entity == "memory" else "n"
        self._check_open()
        with utf8_only(), self._pool.connection() as conn:
            conn.autocommit = True  # one read: no BEGIN / COMMIT round trips
            try:
                return postings.search(conn, kind, scope.key, query, limit, run_id)
            finally:
                conn.autocommit = False

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
