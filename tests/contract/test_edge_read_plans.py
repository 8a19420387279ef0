"""The read ingest makes before it adds a fact (a source's edges of one relation) seeks the
(source_id, relation) index in both SQL stores, so its cost follows the edges of that relation,
not the node's degree. Checked on the statement each store actually runs, through the
database's own plan (no timing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sage_memory.postgres import schema_for
from sage_memory.store.postgres import PostgresGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.testing.store_contract import ALICE, edge, node, write

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
INDEX = "edges_by_source_relation"


def _busy_node(store: Any) -> str:
    hub, other = node("hub"), node("other")
    spokes = [node(f"spoke {i}") for i in range(30)]
    write(store, (None, hub), (None, other), *((None, n) for n in spokes))
    write(store, *((None, edge(hub, n, "USES")) for n in spokes), (None, edge(hub, other)))
    return hub.id


def _statements(store: Any, hub: str) -> list[tuple[str, Any]]:
    """The edge reads ``edges_of`` runs for a source's edges of one relation."""
    seen: list[tuple[str, Any]] = []
    rows = store._rows

    def recorded(sql: str, params: Any = ()) -> Any:
        seen.append((sql, params))
        return rows(sql, params)

    store._rows = recorded
    try:
        found = store.edges_of(ALICE, [hub], direction="out", relations=["RELATED_TO"])
    finally:
        del store._rows
    assert [e.relation for e in found] == ["RELATED_TO"]
    return [(sql, p) for sql, p in seen if "FROM edges WHERE" in sql and "source_id" in sql]


def test_sqlite_reads_a_sources_relation_by_index(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "sage.db")
    try:
        reads = _statements(store, _busy_node(store))
        assert reads
        for sql, params in reads:
            plan = " ".join(str(r) for r in store._rows(f"EXPLAIN QUERY PLAN {sql}", params))
            assert f"USING INDEX {INDEX} (source_id=? AND relation=?)" in plan, plan
    finally:
        store.close()


def test_postgres_reads_a_sources_relation_by_index(postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    store = PostgresGraphStore(postgres_url, schema=schema_for(str(tmp_path)))
    try:
        reads = _statements(store, _busy_node(store))
        assert reads
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{store.schema}", public')
            conn.execute("ANALYZE edges")
            conn.execute("SET enable_seqscan = off")  # a table this small would be scanned
            for sql, params in reads:
                plan = " ".join(r[0] for r in conn.execute(f"EXPLAIN {sql}", params).fetchall())
                assert INDEX in plan and "relation" in plan, plan
    finally:
        store.close()
