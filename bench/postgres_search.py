"""Server mode at the engine level: one tenant's search among many, beside the embedded store.

    .venv/bin/python bench/postgres_search.py                            # 100 tenants x 1,000
    .venv/bin/python bench/postgres_search.py --tenants 100 --per-tenant 200   # quicker

Builds one export of ``tenants x per_tenant`` memories (generated sentences over a shared
vocabulary, so every tenant has the same words and names) and loads it three times with the
engine's own ``load``:

* PostgreSQL, tenant 0 alone (only its memories in the schema);
* PostgreSQL, every tenant (the same tenant 0 among all the others);
* the embedded folder (SQLite + Chroma), every tenant: the same size.

Then times ``SageMemory.search`` (the whole read path: dense, lexical, entities, graph,
context) for tenant 0 on each, interleaved (each query on the three in turn), and ``add``
(one memory at a time, rule extractor) on the shared PostgreSQL memory and on the folder.
Hashing embedder: the figures are about the stores. Results:
bench/results/postgres_search.json and bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

PEOPLE = ("Alice", "Bogdan", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiro")
PLACES = ("Paris", "Rome", "Oslo", "Lima", "Kyoto", "Quito", "Accra", "Perth")
TOPICS = (
    "budget", "roadmap", "invoice", "migration", "deadline", "release", "contract", "survey",
    "hiring", "outage", "backup", "audit", "launch", "workshop", "review", "pricing",
)  # fmt: skip
VERBS = ("discussed", "approved", "postponed", "reviewed", "planned", "cancelled", "shared")
RESULTS = Path(__file__).resolve().parent / "results" / "postgres_search.json"
AT = "2026-05-01T09:00:00+00:00"


def sentence(rng: random.Random, i: int) -> str:
    return (
        f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} "
        f"{rng.choice(TOPICS)} in {rng.choice(PLACES)} (item {i})"
    )


def write_export(path: Path, tenants: range, per_tenant: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        header = {"embedder": "hashing-256", "type": "sage_memory.export", "version": 1}
        fh.write(json.dumps(header) + "\n")
        for t in tenants:
            scope = {"agent_id": None, "run_id": None, "user_id": f"t{t}"}
            for i in range(per_tenant):
                memory = {
                    "access_count": 0, "archived": False, "created_at": AT, "event_time": None,
                    "extraction": "skipped", "extraction_error": None,
                    "id": uuid.UUID(int=rng.getrandbits(128)).hex, "kind": "knowledge",
                    "last_accessed": None, "metadata": {}, "role": None, "salience": 0.5,
                    "scope": scope, "source": None, "text": sentence(rng, i), "timestamp": AT,
                    "updated_at": AT,
                }  # fmt: skip
                fh.write(json.dumps({"data": memory, "type": "memory"}) + "\n")


def queries(n: int, seed: int = 9) -> list[str]:
    rng = random.Random(seed)
    return [
        f"what did {rng.choice(PEOPLE)} decide about the {rng.choice(TOPICS)}" for _ in range(n)
    ]


def timed_interleaved(mems: dict[str, Any], qs: list[str]) -> dict[str, list[float]]:
    for mem in mems.values():
        for q in qs[:10]:
            mem.search(q, user_id="t0", limit=10)  # warm caches and plans
    out: dict[str, list[float]] = {key: [] for key in mems}
    for q in qs:
        for key, mem in mems.items():
            start = time.perf_counter()
            mem.search(q, user_id="t0", limit=10)
            out[key].append((time.perf_counter() - start) * 1000)
    return out


def add_rate(mem: Any, n: int) -> float:
    rng = random.Random(3)
    start = time.perf_counter()
    for i in range(n):
        mem.add(sentence(rng, 10**6 + i), user_id="t0")
    return n / (time.perf_counter() - start)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 1)


def readme(r: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {label} | {r[key]['memories']:,} | {r[key]['p50_ms']} | {r[key]['p95_ms']} |"
        for key, label in (
            ("pg_alone", "PostgreSQL, tenant 0 alone"),
            ("pg_shared", f"PostgreSQL, tenant 0 among {r['tenants']}"),
            ("folder", f"embedded folder (SQLite + Chroma), tenant 0 among {r['tenants']}"),
        )
    )
    return f"""## Server mode: search and add at the engine level

    .venv/bin/python bench/postgres_search.py                                  # 100 x 1,000
    .venv/bin/python bench/postgres_search.py --tenants {r["tenants"]} \\
        --per-tenant {r["per_tenant"]}

`SageMemory.search` (the whole read path) for tenant 0, {r["queries"]} queries, after loading
{r["tenants"]} tenants x {r["per_tenant"]:,} generated memories with the engine's `load`; hashing
embedder (the figures are about the stores); pgserver's PostgreSQL 16 + pgvector on this
machine. Measured interleaved in one run, each query on the three memories in turn (commit
{r["commit"]}, {r["when"]}), on a machine whose 2 CPUs were shared with other work: compare the
rows, not the absolute times.

| memory | memories stored | search p50 ms | search p95 ms |
|---|---|---|---|
{rows}

- tenant 0 among {r["tenants"]} / alone, p95: **{r["shared_over_alone_p95"]}x** (target:
  within 1.5x)
- PostgreSQL / embedded folder at the same size, p95: **{r["pg_over_folder_p95"]}x** (target:
  within 2x)
- `add`, one memory at a time (rule extractor): PostgreSQL {r["pg_adds_per_s"]} adds/s, folder
  {r["folder_adds_per_s"]} adds/s ({r["adds"]} adds each).
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tenants", type=int, default=100)
    ap.add_argument("--per-tenant", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--adds", type=int, default=100)
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    from common import stamp, write_section

    from sage_memory import SageMemory

    base = os.environ.get("SAGE_TEST_POSTGRES_URL")
    server = None
    if not base:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="sagebench"), cleanup_mode="delete")
        base = server.get_uri()
    sep = "&" if "?" in base else "?"
    work = Path(tempfile.mkdtemp(prefix="sagesearch"))
    everyone, alone = work / "all.jsonl", work / "alone.jsonl"
    write_export(everyone, range(args.tenants), args.per_tenant)
    write_export(alone, range(1), args.per_tenant)
    qs = queries(args.queries)
    res: dict[str, Any] = {
        "tenants": args.tenants,
        "per_tenant": args.per_tenant,
        "queries": args.queries,
        "adds": args.adds,
    }
    mems: dict[str, Any] = {}
    try:
        for key, export, where in (
            ("pg_alone", alone, {"url": f"{base}{sep}schema=s_{uuid.uuid4().hex[:8]}"}),
            ("pg_shared", everyone, {"url": f"{base}{sep}schema=s_{uuid.uuid4().hex[:8]}"}),
            ("folder", everyone, {"path": work / "folder"}),
        ):
            start = time.perf_counter()
            path = where.pop("path", None)
            mems[key] = SageMemory.load(export, path, embedder="hashing", **where)
            res[key] = {
                "memories": mems[key].stats()["memories"],
                "load_s": round(time.perf_counter() - start, 1),
            }
            print(key, res[key], flush=True)
        # Interleaved: each query runs on the three memories in turn, so the machine's load
        # falls on all of them alike.
        times = timed_interleaved(mems, qs)
        for key, ms in times.items():
            res[key].update(p50_ms=round(statistics.median(ms), 1), p95_ms=pct(ms, 95))
        for key in ("pg_shared", "folder"):
            res[key]["adds_per_s"] = round(add_rate(mems[key], args.adds), 1)
        print(json.dumps({k: res[k] for k in mems}), flush=True)
    finally:
        for mem in mems.values():
            mem.close()
        if server is not None:
            server.cleanup()
    res.update(
        shared_over_alone_p95=round(res["pg_shared"]["p95_ms"] / res["pg_alone"]["p95_ms"], 2),
        pg_over_folder_p95=round(res["pg_shared"]["p95_ms"] / res["folder"]["p95_ms"], 2),
        pg_adds_per_s=res["pg_shared"]["adds_per_s"],
        folder_adds_per_s=res["folder"]["adds_per_s"],
        **stamp(),
    )
    print(json.dumps(res, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")
    if not args.no_readme:
        write_section(
            "## Server mode: search and add at the engine level", _with_markers(readme(res))
        )


def _with_markers(text: str) -> str:
    """The section under its heading between generated-section markers (bench/sections.py)."""
    from sections import marked

    heading, _, body = text.partition("\n")
    return marked(heading, "postgres-search", "bench/postgres_search.py", body)


if __name__ == "__main__":
    main()
