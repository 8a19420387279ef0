"""What ingest's per-fact edge read costs as the source node's degree grows.

    .venv/bin/python bench/ingest_degree.py                 # SQLite
    .venv/bin/python bench/ingest_degree.py --postgres      # and PostgreSQL (pgserver, dev extra)

Before it adds a fact, ingest reads the edges its source already has of that relation
(``engine/ingest.py``, ``_apply_edge``). For each degree D, a hub gets D edges of seven other
relations (and D/4 arriving at it) and two of the asked relation; then the read is timed as
ingest makes it (``edges_of(..., relations=[R], direction="out")``, the link cache off: a hub's
entries are dropped at every write anyway) and in its earlier form (both ends, filtered after,
without the (source_id, relation) index). SQLite also counts the virtual machine's steps (the
database's work, whatever the machine's load). Writes nothing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from sage_memory.testing.store_contract import ALICE, edge, node, write

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

OTHER = ["USES", "PREFERS", "WORKS_AT", "HAS_STATUS", "CAUSES", "BLOCKED_BY", "PRECEDES"]
INDEX = "edges_by_source_relation"
READS = 20


class _Steps:
    """SQLite's progress handler: called every 100 virtual-machine steps."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        return 0  # go on


def _fill(store: Any, degree: int) -> str:
    hub, others = node("hub"), [node(f"o{i}") for i in range(200)]
    write(store, (None, hub), *((None, o) for o in others))
    for i in range(0, degree, 2000):
        span = range(i, min(degree, i + 2000))
        write(store, *((None, edge(hub, others[j % 200], OTHER[j % 7])) for j in span))
        write(store, *((None, edge(others[j % 200], hub, OTHER[j % 7])) for j in span[::4]))
    write(store, (None, edge(hub, others[0], "LIVES_IN")), (None, edge(hub, others[1], "LIVES_IN")))
    return hub.id


def _read(store: Any, hub: str, form: str) -> int:
    kw: dict[str, Any] = {"direction": "out"} if form == "now" else {}
    found = store.edges_of(ALICE, [hub], relations=["LIVES_IN"], **kw)
    return len([e for e in found if e.source_id == hub])


def sqlite_row(degree: int) -> dict[str, Any]:
    from sage_memory.store.sqlite import SQLiteGraphStore

    path = Path(tempfile.mkdtemp(prefix="ingest-degree-")) / "sage.db"
    store = SQLiteGraphStore(path)
    hub = _fill(store, degree)
    store.close()
    row: dict[str, Any] = {"degree": degree}
    for form in ("now", "before"):
        store = SQLiteGraphStore(path)
        if form == "before":
            store._db.execute(f"DROP INDEX {INDEX}")
        store._links = None
        steps = _Steps()
        store._db.set_progress_handler(steps, 100)
        started = time.thread_time()
        for _ in range(READS):
            assert _read(store, hub, form) == 2
        row[f"{form}_ms"] = round((time.thread_time() - started) / READS * 1000, 3)
        row[f"{form}_vm_steps"] = steps.calls * 100 // READS
        store._db.set_progress_handler(None, 0)
        store.close()
    return row


def postgres_rows(degrees: list[int]) -> list[dict[str, Any]]:
    import pgserver
    import psycopg

    from sage_memory.store.postgres import PostgresGraphStore

    server = pgserver.get_server(tempfile.mkdtemp(prefix="ingest-degree-pg"), cleanup_mode="delete")
    url, rows = server.get_uri(), []
    try:
        for degree in degrees:
            schema = f"degree_{degree}"
            store = PostgresGraphStore(url, schema=schema)
            hub = _fill(store, degree)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'ANALYZE "{schema}".edges')
            row: dict[str, Any] = {"degree": degree}
            for form in ("now", "before"):
                if form == "before":
                    with psycopg.connect(url, autocommit=True) as conn:
                        conn.execute(f'DROP INDEX "{schema}".{INDEX}')
                _read(store, hub, form)  # the pool's connection and the plan, warm
                started = time.perf_counter()
                for _ in range(READS):
                    assert _read(store, hub, form) == 2
                row[f"{form}_ms"] = round((time.perf_counter() - started) / READS * 1000, 3)
            store.close()
            rows.append(row)
    finally:
        server.cleanup()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--degree", type=int, action="append", help="edges of the hub (repeatable)")
    ap.add_argument("--postgres", action="store_true", help="PostgreSQL too (wall time)")
    args = ap.parse_args()
    degrees = args.degree or [100, 1000, 10_000, 30_000]
    print("SQLite (thread CPU per read, VM steps):")
    for d in degrees:
        print(" ", sqlite_row(d))
    if args.postgres:
        print("PostgreSQL (wall per read, round trip included):")
        for r in postgres_rows(degrees):
            print(" ", r)


if __name__ == "__main__":
    main()
