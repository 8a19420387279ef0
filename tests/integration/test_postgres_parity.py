"""PostgreSQL ranks as the embedded folder does, and every write path takes the partition lock.

- The lexical channel: the same records in a SQLite store and a PostgreSQL store give the same
  BM25 hits with the same scores (both score from per-partition postings), and another tenant's
  rows never move a scope's scores.
- The engine: the same adds in a folder and on PostgreSQL give the same ranked search results.
- ``load`` and ``reject`` wait for another process holding the partition's advisory lock, as
  ``add`` does (a two-process test: a child process holds the lock).
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from sage_memory import SageMemory
from sage_memory.engine.journal import Batch
from sage_memory.store.postgres import PostgresGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import Edge, Memory, Node, Scope, Suggestion

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

TEXTS = (
    "Alice moved to Berlin last spring and lives near the river",
    "Bob lives in Paris; he moved there for work",
    "The living room in Berlin is small but bright",
    "Alice works at Acme on the search team",
    "Café Müller in Berlin serves the best coffee",
    "Moving to a new city is hard, said Alice",
    "pandas.read_csv loads the file; alice@example.com sent it",
    "Berlin Berlin Berlin: the capital, again and again",
)
QUERIES = (
    "where does alice live",
    "berlin",
    "moving",
    "cafe muller coffee",
    "pandas read_csv",
    "the and of",
    "unknownword",
)


def _schema_url(postgres_url: str) -> str:
    sep = "&" if "?" in postgres_url else "?"
    return f"{postgres_url}{sep}schema=p_{uuid.uuid4().hex[:12]}"


def _memory(i: int, text: str, scope: Scope) -> Memory:
    at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=i)
    mid = f"m{i:03d}-{scope.user_id}"
    return Memory(mid, text, scope, timestamp=at, created_at=at, updated_at=at)


def _fill(store: object) -> None:
    """The same records, a changed one and a deleted one, in two scopes."""
    alice, other = Scope(user_id="alice"), Scope(user_id="other")
    batch = Batch("user", "fill", datetime(2026, 2, 1, tzinfo=UTC))
    for i, text in enumerate(TEXTS):
        batch.record(None, _memory(i, text, alice))
    for i in range(30):  # another tenant: many Berlin memories that must not move alice's scores
        batch.record(None, _memory(i, f"Berlin note {i} about moving", other))
    at = {"created_at": datetime(2026, 2, 1, tzinfo=UTC)}
    node = Node(
        "n-berlin", alice, "Berlin", "place", ("Berlin city",), **at, updated_at=at["created_at"]
    )
    batch.record(None, node)
    # Equal candidates that only their order tells apart: same names, edges in both directions.
    for nid in ("n-z", "n-a", "n-m"):
        held = ("m000-alice", "m003-alice")
        batch.record(
            None, Node(nid, alice, "Alice", memory_ids=held, **at, updated_at=at["created_at"])
        )
    for i, (src, dst) in enumerate((("n-z", "n-berlin"), ("n-a", "n-berlin"), ("n-berlin", "n-m"))):
        batch.record(
            None, Edge(f"e-{9 - i}", alice, src, dst, "LIVES_IN", memory_ids=("m000-alice",), **at)
        )
    store.apply(batch.changes)  # type: ignore[attr-defined]
    second = Batch("user", "edit", datetime(2026, 2, 2, tzinfo=UTC))
    second.record(_memory(1, TEXTS[1], alice), _memory(1, "Bob lives in Rome now", alice))
    second.record(_memory(2, TEXTS[2], alice), None)
    store.apply(second.changes)  # type: ignore[attr-defined]


@pytest.fixture
def stores(tmp_path: Path, postgres_url: str) -> object:
    sqlite = SQLiteGraphStore(tmp_path / "sage.db")
    pg = _pg(_schema_url(postgres_url))
    _fill(sqlite)
    _fill(pg)
    yield sqlite, pg
    sqlite.close()
    pg.close()


def _pg(url: str) -> PostgresGraphStore:
    from sage_memory.postgres import split_schema

    base, schema = split_schema(url)
    return PostgresGraphStore(base, schema=schema)


def test_bm25_hits_and_scores_are_the_same_on_sqlite_and_postgres(stores: object) -> None:
    sqlite, pg = stores  # type: ignore[misc]
    alice = Scope(user_id="alice")
    compared = 0
    for query in QUERIES:
        for entity in ("memory", "node"):
            a = sqlite.search_text(alice, query, entity=entity, limit=20)
            b = pg.search_text(alice, query, entity=entity, limit=20)
            assert [i for i, _ in a] == [i for i, _ in b], (query, entity)
            assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-12)
            compared += len(a)
    assert compared > 10  # the queries found something to compare


def test_equal_candidates_come_in_the_same_order_from_sqlite_and_postgres(stores: object) -> None:
    sqlite, pg = stores  # type: ignore[misc]
    alice = Scope(user_id="alice")
    ids = ["n-m", "n-berlin", "n-z", "n-a"]
    assert [n.id for n in sqlite.find_nodes(alice, ["alice", "Berlin"])] == [
        n.id for n in pg.find_nodes(alice, ["alice", "Berlin"])
    ]
    for direction in ("out", "in", "both"):
        assert [e.id for e in sqlite.edges_of(alice, ids, direction=direction)] == [
            e.id for e in pg.edges_of(alice, ids, direction=direction)
        ], direction
    assert sqlite.memory_nodes(alice, ["m003-alice", "m000-alice"]) == pg.memory_nodes(
        alice, ["m003-alice", "m000-alice"]
    )
    assert sqlite.derived_from(alice, "m000-alice") == pg.derived_from(alice, "m000-alice")


def test_another_tenant_never_moves_a_scope_s_postgres_scores(
    stores: object, postgres_url: str
) -> None:
    _, pg = stores  # type: ignore[misc]
    alone = _pg(_schema_url(postgres_url))
    try:
        alice = Scope(user_id="alice")
        batch = Batch("user", "fill", datetime(2026, 2, 1, tzinfo=UTC))
        for i, text in enumerate(TEXTS):
            batch.record(None, _memory(i, text, alice))
        alone.apply(batch.changes)
        edit = Batch("user", "edit", datetime(2026, 2, 2, tzinfo=UTC))
        edit.record(_memory(1, TEXTS[1], alice), _memory(1, "Bob lives in Rome now", alice))
        edit.record(_memory(2, TEXTS[2], alice), None)
        alone.apply(edit.changes)
        for query in QUERIES:
            assert pg.search_text(alice, query) == alone.search_text(alice, query), query
    finally:
        alone.close()


def test_the_engine_ranks_the_same_on_a_folder_and_on_postgres(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sage_memory.types as types_module

    facts = [
        "Alice lives in Berlin",
        "Alice moved to Paris in 2024",
        "Bob works at Acme",
        "Bob likes hiking in the Alps",
        "Carol is Alice's sister and lives in Rome",
        "The team uses pandas for the reports",
        "Alice works at Globex since March",
        "Bob moved to Oslo for a new job",
    ]
    ranked: dict[str, list[list[str]]] = {}
    for name, where in (
        ("folder", {"path": tmp_path / "m"}),
        ("pg", {"url": _schema_url(postgres_url)}),
    ):
        path = where.pop("path", None)
        # The same record ids on both: entity resolution breaks its last ties by node id.
        rng = random.Random(7)
        monkeypatch.setattr(
            types_module,
            "uuid",
            SimpleNamespace(uuid4=lambda r=rng: uuid.UUID(int=r.getrandbits(128), version=4)),
        )
        with SageMemory(path, embedder="hashing", **where) as mem:  # type: ignore[arg-type]
            for i, text in enumerate(facts):
                mem.add(text, user_id="u", timestamp=datetime(2025, 1, 1 + i, tzinfo=UTC))
            ranked[name] = [
                [h.text for h in mem.search(q, user_id="u", limit=5).memories]
                for q in ("where does alice live", "bob's job", "who is carol", "pandas")
            ]
    assert ranked["folder"] == ranked["pg"]
    assert all(ranked["pg"])


# -- the partition lock across processes --------------------------------------------------------

HOLDER = textwrap.dedent(
    """
    import sys
    from sage_memory.postgres import split_schema
    from sage_memory.store.postgres import PostgresGraphStore

    base, schema = split_schema(sys.argv[1])
    store = PostgresGraphStore(base, schema=schema)
    with store.scope_lock(sys.argv[2]):
        print("LOCKED", flush=True)
        sys.stdin.readline()  # hold until the test says so
    store.close()
    """
)


def _hold_lock(url: str, scope: Scope) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, scope.partition.key],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "LOCKED", proc
    return proc


def _waits_for_the_holder(url: str, scope: Scope, write: object) -> None:
    """``write`` (run in a thread) must not finish while another process holds the lock."""
    holder = _hold_lock(url, scope)
    done = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            write()  # type: ignore[operator]
        except BaseException as exc:  # reported below
            errors.append(exc)
        done.set()

    thread = threading.Thread(target=run)
    try:
        thread.start()
        assert not done.wait(2.0), "the write did not wait for the other process's lock"
    finally:
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        holder.communicate(timeout=30)
    assert done.wait(60)
    thread.join()
    assert not errors, errors


def test_load_waits_for_another_process_holding_the_partition(
    tmp_path: Path, postgres_url: str
) -> None:
    from sage_memory.engine.transfer import load_file

    source = SageMemory(None, embedder="hashing")
    source.add("Alice lives in Berlin", user_id="alice")
    source.export(tmp_path / "all.jsonl", user_id="alice")
    source.close()
    url = _schema_url(postgres_url)
    with SageMemory(url=url, embedder="hashing") as mem:
        _waits_for_the_holder(
            url, Scope(user_id="alice"), lambda: load_file(mem._ctx, tmp_path / "all.jsonl")
        )
        assert mem.store.count_memories(Scope(user_id="alice")) == 1


def test_reject_waits_for_another_process_holding_the_partition(postgres_url: str) -> None:
    url = _schema_url(postgres_url)
    scope = Scope(user_id="alice")
    with SageMemory(url=url, embedder="hashing") as mem:
        now = datetime.now(UTC)
        (queued,) = mem.store.put_suggestions(
            [Suggestion("s-1", scope, "merge", "k-1", "merge two names", 0.9, now)]
        )
        _waits_for_the_holder(url, scope, lambda: mem.reject(queued.id))
        assert mem.review(user_id="alice", status="rejected")[0].id == queued.id
        started = time.monotonic()
        assert mem.reject(queued.id).status == "rejected"  # no lock held now: at once
        assert time.monotonic() - started < 30


def test_a_schema_of_version_1_is_migrated_and_its_rows_indexed(postgres_url: str) -> None:
    import psycopg

    from sage_memory.codec import dumps, to_dict
    from sage_memory.postgres import split_schema
    from sage_memory.store.postgres_schema import LATEST, MIGRATIONS

    base, schema = split_schema(_schema_url(postgres_url))
    alice = Scope(user_id="alice")
    memory = _memory(0, TEXTS[0], alice)
    with psycopg.connect(base) as conn:  # the tables as the first server-mode release made them
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'SET search_path TO "{schema}"')
        conn.execute(
            "CREATE TABLE schema_version (version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute(MIGRATIONS[0][1])
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
        conn.execute(
            "INSERT INTO memories (id, scope_key, ts, created_at, data, body)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (memory.id, alice.key, "2026-01-01", "2026-01-01", dumps(to_dict(memory)), memory.text),
        )
    store = PostgresGraphStore(base, schema=schema)
    try:
        assert [i for i, _ in store.search_text(alice, "berlin river")] == [memory.id]
    finally:
        store.close()
    with psycopg.connect(base) as conn:
        row = conn.execute(f'SELECT max(version) FROM "{schema}".schema_version').fetchone()
    assert row is not None and row[0] == LATEST


def test_bounded_reads_of_common_terms_rank_the_same_on_sqlite_and_postgres(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sage_memory.store import lexical

    # "kettle" in every memory, "harbour" in every tenth, "lantern" in three; with a bound of
    # 40 postings a term, "kettle" (and "harbour", past 40) are read to the bound, estimated.
    monkeypatch.setattr(lexical, "TERM_POSTINGS", 40)
    alice = Scope(user_id="alice")
    batch = Batch("user", "fill", datetime(2026, 2, 1, tzinfo=UTC))
    for i in range(600):
        words = ["kettle"] + ["harbour"] * (i % 10 == 0) + ["lantern"] * (i in (3, 150, 590))
        text = " ".join(words + ["pebble"] * (i % 7))
        run = Scope(user_id="alice", run_id=f"r{i % 2}")
        batch.record(None, _memory(i, text, run if i % 3 == 0 else alice))
    sqlite = SQLiteGraphStore(tmp_path / "sage.db")
    pg = _pg(_schema_url(postgres_url))
    try:
        for store in (sqlite, pg):
            store.apply(batch.changes)
        compared = 0
        for scope in (alice, Scope(user_id="alice", run_id="r1")):
            for query in ("kettle lantern", "kettle", "harbour pebble lantern", "pebble"):
                for limit in (5, 60):
                    a = sqlite.search_text(scope, query, limit=limit)
                    b = pg.search_text(scope, query, limit=limit)
                    assert [i for i, _ in a] == [i for i, _ in b], (scope, query, limit)
                    assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-12)
                    compared += len(a)
        assert compared > 300
    finally:
        sqlite.close()
        pg.close()
