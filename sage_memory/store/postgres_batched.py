"""The reads a search makes at one step, in one round trip each (:class:`BatchedReads`).

On a server every read waits for the server's reply, and on a busy machine each wait is the
time it takes the server process and ours to be scheduled again, which the reads' own work
hardly counts beside: a search costs about as many of those as it makes round trips. Each
method returns exactly what the separate :class:`~sage_memory.store.base.GraphStore` calls it
stands for return (tests/integration/test_postgres_parity.py compares them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from sage_memory.codec import from_dict
from sage_memory.store import postgres_postings as postings
from sage_memory.store.postgres_connection import PostgresConnection
from sage_memory.store.postgres_reads import (
    NO_BITMAP,
    _adjacent_read,
    _find_nodes_read,
    _found_nodes,
)
from sage_memory.types import Memory, Node, Scope, Vector


class PostgresBatchedReads(PostgresConnection):
    """``word_reads`` and ``candidate_reads`` of :class:`~sage_memory.store.base.BatchedReads`."""

    def word_reads(
        self, scope: Scope, query: str, names: Sequence[str], *, limit: int, node_limit: int
    ) -> tuple[list[tuple[str, float]], list[Node], list[tuple[str, float]]]:
        part = scope.partition
        # As search_text: a run inside a partition keeps its own memories.
        run_id = scope.run_id if scope.run_id is not None and part.run_id is None else None
        memory_read = postings.search_read("m", scope.key, query, limit, run_id)
        node_read = postings.search_read("n", part.key, query, node_limit)
        names_read = _find_nodes_read(part, names)
        statements = [(r.sql, r.params) for r in (memory_read, node_read) if r is not None] + (
            [names_read] if names_read is not None else []
        )
        results = iter(self._pipelined(statements) if statements else [])
        memories = [] if memory_read is None else memory_read.score(next(results))
        nodes_lexical = [] if node_read is None else node_read.score(next(results))
        named = [] if names_read is None else _found_nodes(next(results))
        return memories, named, nodes_lexical

    def candidate_reads(
        self, scope: Scope, ids: Sequence[str], around: Sequence[str]
    ) -> tuple[dict[str, tuple[str | None, str | None]], list[Memory], dict[str, Vector]]:
        adjacent_sql, params = _adjacent_read(scope, around)
        run_sql = " AND m.run_id = %(run)s" if "run" in params else ""
        # The neighbours found join the wanted rows inside the statement: one round trip.
        sql = (
            f"{NO_BITMAP}; WITH adj AS MATERIALIZED ({adjacent_sql})"
            " SELECT 'a', id, prev, next, NULL::text, NULL::bytea FROM adj"
            " UNION ALL SELECT 'm', m.id, NULL, NULL, m.data, m.vec FROM memories m"
            " WHERE m.scope_key = %(sk)s AND m.id = ANY(%(ids)s::text[]"
            " || ARRAY(SELECT prev FROM adj WHERE prev IS NOT NULL)"
            f" || ARRAY(SELECT next FROM adj WHERE next IS NOT NULL)){run_sql}"
        )
        rows = self._statements(sql, {**params, "ids": list(ids)})
        found: dict[str, tuple[str | None, str | None]] = {}
        memories: dict[str, Memory] = {}
        vectors: dict[str, Vector] = {}
        for kind, mid, prev, nxt, data, vec in rows:
            if kind == "a":
                found[mid] = (prev, nxt)
                continue
            memories[mid] = from_dict(Memory, json.loads(data))
            if vec is not None:
                vectors[mid] = np.frombuffer(bytes(vec), dtype=np.float32)
        # By id: the order the SQLite store's id index gives (and PostgreSQL's id index).
        adjacent = {i: found[i] for i in sorted(found)}
        near = [n for pair in adjacent.values() for n in pair if n is not None]
        order = dict.fromkeys([*ids, *near])
        return adjacent, [memories[i] for i in order if i in memories], vectors
