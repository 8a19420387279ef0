"""Scoped vector search on PostgreSQL: does a tenant's query pay for the other tenants?

    .venv/bin/python bench/postgres_scoping.py                 # 100 tenants x 1,000 vectors
    .venv/bin/python bench/postgres_scoping.py --tenants 20    # quicker

Starts pgserver's PostgreSQL 16 + pgvector (or uses SAGE_TEST_POSTGRES_URL) and times a top-10
query in one tenant's collection of 1,000 384-d unit vectors three ways:

* alone: the tenant's 1,000 vectors are the whole table (PostgresVectorIndex);
* scoped: the same 1,000 among 100 tenants, 100,000 rows (PostgresVectorIndex: the
  primary-key btree reads only the tenant's rows, scored exactly);
* the trap: one HNSW index over the whole table with a ``WHERE collection = ...`` filter,
  the metadata-filter design this module avoids (also: how many of the 10 it returns).

Results go to bench/results/postgres_scoping.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from sage_memory.index.postgres import PostgresVectorIndex, _literal_vector

DIM = 384
QUERIES = 200


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    raw = rng.standard_normal((n, DIM)).astype(np.float32)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def timed(fn, queries: np.ndarray) -> list[float]:  # type: ignore[no-untyped-def]
    for query in queries[:10]:
        fn(query)  # warm the cache and the plan
    out = []
    for query in queries:
        start = time.perf_counter()
        fn(query)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--per-tenant", type=int, default=1000)
    args = parser.parse_args()
    url = os.environ.get("SAGE_TEST_POSTGRES_URL")
    server = None
    if not url:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="sagebench"), cleanup_mode="delete")
        url = server.get_uri()
    rng = np.random.default_rng(11)
    data = [unit(rng, args.per_tenant) for _ in range(args.tenants)]
    queries = unit(rng, QUERIES)
    ids = [f"m{i}" for i in range(args.per_tenant)]
    results: dict[str, object] = {"tenants": args.tenants, "per_tenant": args.per_tenant}
    try:
        alone = PostgresVectorIndex(url, schema="bench_alone")
        alone.upsert("tenant0", ids, data[0])
        ms_alone = timed(lambda q: alone.query("tenant0", q, 10), queries)
        alone.close()

        shared = PostgresVectorIndex(url, schema="bench_shared")
        start = time.perf_counter()
        for t, matrix in enumerate(data):
            shared.upsert(f"tenant{t}", ids, matrix)
        load_s = time.perf_counter() - start
        ms_scoped = timed(lambda q: shared.query("tenant0", q, 10), queries)
        exact = [shared.query("tenant0", q, 10) for q in queries[:20]]

        # The trap: one global HNSW index, filtered after the walk.
        pool = shared._pool
        with pool.connection() as conn:
            conn.execute(
                "CREATE INDEX IF NOT EXISTS trap ON bench_shared.vec_rows "
                f"USING hnsw ((embedding::vector({DIM})) vector_cosine_ops)"
            )
            conn.commit()

        returned: list[int] = []
        overlap: list[int] = []

        def trap(q: np.ndarray) -> list[str]:
            with pool.connection() as conn:
                rows = conn.execute(
                    f"SELECT id FROM bench_shared.vec_rows WHERE collection = 'tenant0' "
                    f"ORDER BY (embedding::vector({DIM})) <=> %s::vector({DIM}) LIMIT 10",
                    (_literal_vector(q),),
                ).fetchall()
                conn.rollback()
            return [r[0] for r in rows]

        ms_trap = timed(trap, queries)
        for q, truth in zip(queries[:20], exact, strict=True):
            got = trap(q)
            returned.append(len(got))
            overlap.append(len(set(got) & {i for i, _ in truth}))
        shared.close()
    finally:
        if server is not None:
            server.cleanup()

    def row(name: str, ms: list[float]) -> dict[str, float]:
        return {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(p(ms, 95), 2)}

    results.update(
        alone=row("alone", ms_alone),
        scoped=row("scoped", ms_scoped),
        global_hnsw_filtered=row("trap", ms_trap),
        trap_results_returned_mean=statistics.mean(returned),
        trap_recall_at_10=statistics.mean(overlap) / 10,
        load_seconds=round(load_s, 1),
        scoped_over_alone_p95=round(p(ms_scoped, 95) / p(ms_alone, 95), 2),
    )
    print(json.dumps(results, indent=2))
    out = Path(__file__).parent / "results" / "postgres_scoping.json"
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
