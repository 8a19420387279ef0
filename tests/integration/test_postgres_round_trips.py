"""A search on PostgreSQL makes few round trips, and the batched reads answer as the calls they
stand for.

On a server each read waits for a reply, and on a busy machine each wait costs scheduling
time that the read's own work hardly counts beside: the search's latency follows its number
of round trips (bench/postgres_search.py). The count is taken with a hook on psycopg's own
cursor and pipeline, not with a timer.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from sage_memory import SageMemory
from sage_memory.retrieve import reader
from sage_memory.store.base import BatchedReads
from sage_memory.store.postgres import PostgresGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import Memory, Scope

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

#: Round trips one search may make on the world below (a graph: names linked, the BFS and the
#: walk, the turns around the best, the one-name hop, the concept links' three reads: the best
#: hits' texts, the lexical index, the memories it finds; the candidates' own provenance, read
#: so that their entity feature and rival subjects no longer walk each linked node's whole
#: memory list, which grows with the store): 18 now; 17 before that provenance read, 14 before
#: the concept links, 18 before the reads a search makes at one step were batched (and one
#: more inside the adjacency read).
MAX_ROUND_TRIPS = 18

FACTS = (
    "Alice lives in Berlin",
    "Alice moved to Paris in 2024",
    "Bob lives in Oslo and works at Acme",
    "Carol is Alice's sister and lives in Rome",
    "Bob said Carol lives in Rome too",
    "The team uses pandas for the reports",
)


@contextmanager
def round_trips() -> Iterator[list[str]]:
    """The statements run in the block, one entry per round trip: a statement outside a
    pipeline, or a whole pipeline (its statements go with one sync)."""
    seen: list[str] = []
    execute, pipeline = psycopg.Cursor.execute, psycopg.Connection.pipeline

    def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if self.connection._pipeline is None:
            seen.append(str(query)[:60])
        return execute(self, query, *args, **kwargs)

    @contextmanager
    def counted_pipeline(self: Any) -> Iterator[Any]:
        with pipeline(self) as p:
            yield p
        seen.append("pipeline")

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Connection.pipeline = counted_pipeline  # type: ignore[method-assign,assignment]
    try:
        yield seen
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        psycopg.Connection.pipeline = pipeline  # type: ignore[method-assign]


def _schema_url(postgres_url: str) -> str:
    sep = "&" if "?" in postgres_url else "?"
    return f"{postgres_url}{sep}schema=r_{uuid.uuid4().hex[:12]}"


def test_a_search_on_postgres_makes_few_round_trips(postgres_url: str) -> None:
    from tests.conftest import WhereExtractor

    with SageMemory(
        url=_schema_url(postgres_url), embedder="hashing", extractor=WhereExtractor()
    ) as mem:
        for i, text in enumerate(FACTS):
            mem.add(text, user_id="u", timestamp=datetime(2025, 1, 1 + i, tzinfo=UTC))
        for query in ("where does alice live", "who lives in Rome", "pandas reports"):
            mem.search(query, user_id="u")  # plans and caches warm
            with round_trips() as seen:
                result = mem.search(query, user_id="u")
            assert result.memories, query
            assert len(seen) <= MAX_ROUND_TRIPS, (query, seen)


@pytest.fixture
def stores(tmp_path: Path, postgres_url: str) -> Iterator[tuple[Any, PostgresGraphStore]]:
    from sage_memory.postgres import split_schema

    base, schema = split_schema(_schema_url(postgres_url))
    sqlite, pg = SQLiteGraphStore(tmp_path / "sage.db"), PostgresGraphStore(base, schema=schema)
    alice, bob = Scope(user_id="alice"), Scope(user_id="bob")
    rows: list[Memory] = []
    for scope in (alice, bob):
        for i, text in enumerate((*FACTS, "Alice and Bob met in Berlin", "Berlin again")):
            at = datetime(2026, 1, 1 + i, tzinfo=UTC)
            run = "r1" if i % 2 else None
            rows.append(
                Memory(
                    f"m{i}-{scope.user_id}",
                    text,
                    Scope(user_id=scope.user_id, run_id=run),
                    timestamp=at,
                    created_at=at,
                    updated_at=at,
                )
            )
    from sage_memory.engine.journal import Batch
    from sage_memory.types import Node

    batch = Batch("user", "fill", datetime(2026, 2, 1, tzinfo=UTC))
    for m in rows:
        batch.record(None, m)
    at = datetime(2026, 2, 1, tzinfo=UTC)
    batch.record(
        None, Node("n-b", alice, "Berlin", "place", ("Berlin city",), created_at=at, updated_at=at)
    )
    rng = np.random.default_rng(3)
    vectors = {m.id: rng.random(8, dtype=np.float32) for k, m in enumerate(rows) if k % 3}
    for store in (sqlite, pg):
        store.apply(batch.changes, vectors)
    yield sqlite, pg
    sqlite.close()
    pg.close()


def test_batched_reads_answer_as_the_separate_calls(stores: tuple[Any, Any]) -> None:
    sqlite, pg = stores
    assert isinstance(pg, BatchedReads) and not isinstance(sqlite, BatchedReads)
    for scope in (Scope(user_id="alice"), Scope(user_id="alice", run_id="r1")):
        for query, names in (("where does alice live", ["Alice"]), ("berlin city", ["Berlin"]),
                             ("the and of", []), ("", ["nobody"])):  # fmt: skip
            got = pg.word_reads(scope, query, names, limit=5, node_limit=3)
            # The separate calls on both backends (reader's fallback is exactly those calls).
            for store in (pg, sqlite):
                part = scope.partition
                assert got == (
                    store.search_text(scope, query, entity="memory", limit=5),
                    store.find_nodes(part, names),
                    store.search_text(part, query, entity="node", limit=3),
                ), (scope, query)
        ids = [f"m{i}-alice" for i in (5, 0, 3)] + ["m2-bob", "missing"]
        for around in (ids[:2], [], ["m7-alice", "m2-bob"]):
            adjacent, memories, vectors = pg.candidate_reads(scope, ids, around)
            assert (adjacent, memories) == reader.candidate_reads(sqlite, scope, ids, around)[:2]
            near = [n for pair in adjacent.values() for n in pair if n is not None]
            assert adjacent == (pg.adjacent_memories(scope, around) if around else {})
            assert memories == pg.get_memories(scope, list(dict.fromkeys([*ids, *near])))
            expected = pg.get_vectors([m.id for m in memories])
            assert vectors.keys() == expected.keys() and expected
            assert all(np.array_equal(vectors[i], expected[i]) for i in expected)
