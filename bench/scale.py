"""Scale: N chat-like memories through the real write path, then open, recover and search.

    .venv/bin/python bench/scale.py --n 10000              # about 10 minutes on 2 shared cores
    .venv/bin/python bench/scale.py --n 10000 --n 100000   # several sizes, one table
    .venv/bin/python bench/scale.py --n 1000000            # the 1M run (hours at today's rate)

For each N, in fresh processes (so resident memory and open times are each phase's own):

1. **ingest**: ``add_many`` of N synthetic chat turns (speakers, people, places, employers,
   tools; about a fifth of the turns change a fact: a move, a new job, a task's status), in
   chunks of 1,000 with ``batch_size=128``: memories/s, peak RSS, folder size against the raw
   text's bytes.
2. **clean open**: ``SageMemory(folder)`` after a clean close (import time excluded).
3. **recovery**: a writer adds more turns in batches of 100 and is killed with SIGKILL after
   its third acknowledged batch; the time of the next open (which reconciles the vector index
   with SQLite) is the recovery time, and every acknowledged memory must be there.
4. **search**: the same queries through ``search(limit=10)`` and through a plain Chroma
   collection holding the same memory vectors (read from the folder's SQLite) with a top-10
   query, interleaved query by query, the query embedding included on both sides.

Writes bench/results/scale.json and the table between the ``scale-table`` markers in
bench/README.md. Latencies are ratios measured side by side in one run; the machine may be
shared with other work (the JSON records the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "scale.json"
README = ROOT / "bench" / "README.md"
USER = "bench"

_SYL = ["ka", "lo", "mi", "ra", "ten", "vo", "su", "da", "ne", "ri", "po", "lin", "mar", "zo"]


def _names(rng: random.Random, n: int, suffix: str = "") -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        word = "".join(rng.choice(_SYL) for _ in range(rng.randint(2, 3)))
        out.add(word.capitalize() + suffix)
    return sorted(out)


def turns(n: int, seed: int = 14) -> list[dict[str, Any]]:
    """N deterministic chat turns with a realistic share of entities and changing facts."""
    rng = random.Random(seed)
    people = _names(rng, 300)
    cities = _names(rng, 120, "ville")
    orgs = _names(rng, 80, " Labs")
    tools = ["FastAPI", "pandas", "PostgreSQL", "Redis", "React", "Docker", "numpy", "Django"]
    tools += _names(rng, 40, "DB")
    tasks = ["the schema", "the tests", "the release", "the login bug", "the migration"]
    chatter = [
        "haha that sounds like a lot of fun",
        "I went for a long run this morning and it felt great",
        "did you see the game last night?",
        "thanks, I really appreciate you asking",
        "I am so tired today, the week has been long",
        "we cooked pasta with the kids yesterday",
        "that book you recommended was wonderful",
        "not much, just relaxing at home this weekend",
    ]
    facts = [
        "I moved to {c} last month.",
        "{p} lives in {c} now.",
        "{p} started working at {o}.",
        "I just joined {o} as an engineer.",
        "{p} prefers {t} for side projects.",
        "We use {t} and {u} at {o}.",
        "{p} said the outage was caused by a {t} timeout.",
        "First we finish {k}, then {q}.",
        "{k} is blocked by {q}.",
        "{p} finished {k} yesterday.",
        "My sister {p} visited me in {c}.",
        "{p} and {p2} are planning a trip to {c}.",
    ]
    start = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
    out = []
    for i in range(n):
        speaker = people[i % 40]  # forty speakers, many people mentioned
        if rng.random() < 0.45:
            body = rng.choice(chatter)
        else:
            body = rng.choice(facts).format(
                p=rng.choice(people),
                p2=rng.choice(people),
                c=rng.choice(cities),
                o=rng.choice(orgs),
                t=rng.choice(tools),
                u=rng.choice(tools),
                k=rng.choice(tasks),
                q=rng.choice(tasks),
            )
        out.append(
            {
                "text": f"{speaker}: {body}",
                "timestamp": (start + timedelta(minutes=7 * i)).isoformat(),
            }
        )
    return out


QUERIES = [
    "where does {p} live now?",
    "where does {p} work?",
    "what does {p} use for side projects?",
    "what caused the outage?",
    "what is blocking the release?",
    "who visited {c}?",
    "what did {p} finish?",
    "who is planning a trip?",
]


def queries(count: int) -> list[str]:
    rng = random.Random(5)
    people = _names(random.Random(14), 300)
    cities = _names(random.Random(14), 120, "ville")
    return [
        rng.choice(QUERIES).format(p=rng.choice(people), c=rng.choice(cities)) for _ in range(count)
    ]


# -- phases, each run in its own process ------------------------------------------------------
def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_ingest(folder: Path, n: int) -> dict[str, Any]:
    from sage_memory import SageMemory

    items = turns(n)
    raw = sum(len(item["text"].encode("utf-8")) for item in items)
    t = time.perf_counter()
    with SageMemory(folder) as mem:
        opened = time.perf_counter() - t
        t = time.perf_counter()
        for i in range(0, n, 1000):
            mem.add_many(items[i : i + 1000], user_id=USER, batch_size=128)
        ingest = time.perf_counter() - t
        stats = mem.stats()
    return {
        "ingest_s": ingest,
        "ingest_per_s": n / ingest,
        "open_empty_s": opened,
        "rss_mb": _rss_mb(),
        "raw_text_bytes": raw,
        "nodes": stats.get("nodes"),
        "edges": stats.get("edges"),
    }


def phase_open(folder: Path) -> dict[str, Any]:
    t = time.perf_counter()
    from sage_memory.engine import core

    imported = time.perf_counter() - t
    t = time.perf_counter()
    mem = core.SageMemory(folder)
    opened = time.perf_counter() - t
    t = time.perf_counter()
    mem.search("where does Kalo live now?", user_id=USER, limit=10)
    first = time.perf_counter() - t
    count = mem.stats().get("memories")
    mem.close()
    return {"import_s": imported, "open_s": opened, "first_search_s": first, "memories": count}


def phase_writer(folder: Path, start: int) -> None:
    """Add turns in batches of 100 and say so after each; the parent kills this process."""
    from sage_memory import SageMemory

    items = turns(start + 2000)[start:]
    mem = SageMemory(folder)
    for i in range(0, len(items), 100):
        mem.add_many(items[i : i + 100], user_id=USER, batch_size=100)
        print(f"ack {i + 100}", flush=True)
    mem.close()


def phase_search(folder: Path, count: int) -> dict[str, Any]:
    from sage_memory import SageMemory
    from sage_memory.embed import make_embedder

    embedder = make_embedder("minilm")
    plain_dir = Path(tempfile.mkdtemp(prefix="scale-chroma-"))
    try:
        t = time.perf_counter()
        coll = plain_collection(folder, embedder.dim, plain_dir)
        chroma_add = time.perf_counter() - t
        qs = queries(count)
        sage: list[float] = []
        plain: list[float] = []
        with SageMemory(folder) as mem:
            for q in qs[:5]:  # warm both sides
                mem.search(q, user_id=USER, limit=10)
                coll.query(query_embeddings=[embedder.embed_query(q)], n_results=10)
            for q in qs:
                t = time.perf_counter()
                mem.search(q, user_id=USER, limit=10)
                sage.append(time.perf_counter() - t)
                t = time.perf_counter()
                coll.query(query_embeddings=[embedder.embed_query(q)], n_results=10)
                plain.append(time.perf_counter() - t)
            exact = not getattr(mem.index, "opened", True)
    finally:
        shutil.rmtree(plain_dir, ignore_errors=True)
    return {
        "search_p50_ms": _pct(sage, 0.5),
        "search_p95_ms": _pct(sage, 0.95),
        "chroma_p50_ms": _pct(plain, 0.5),
        "chroma_p95_ms": _pct(plain, 0.95),
        "chroma_add_vectors_s": chroma_add,
        "dense_exact_from_sqlite": exact,
        "queries": count,
    }


def plain_collection(folder: Path, dim: int, path: Path, *, documents: bool = False) -> Any:
    """The yardstick of the side-by-side benches: a plain Chroma collection in ``path`` (cosine
    HNSW, no embedding function) holding the memory vectors of ``folder``'s SQLite, and their
    texts with ``documents``."""
    import chromadb
    import numpy as np
    from chromadb.config import Settings

    db = sqlite3.connect(folder / "sage.db")
    text = ", m.data" if documents else ""
    rows = db.execute(
        f"SELECT m.id, v.vec{text} FROM memories m JOIN memory_vectors v ON v.rid = m.rid"
    ).fetchall()
    db.close()
    client = chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )
    coll = client.get_or_create_collection(
        "plain", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    step = client.get_max_batch_size()
    for i in range(0, len(rows), step):
        chunk = rows[i : i + step]
        coll.add(
            ids=[r[0] for r in chunk],
            embeddings=np.stack([_vector(r[1], dim) for r in chunk]),
            documents=[json.loads(r[2])["text"] for r in chunk] if documents else None,
        )
    return coll


def wait_ready(procs: dict[str, Any], sides: dict[str, Path]) -> None:
    """Wait until every side-by-side worker says "ready"; a checkout's worker first says which
    sage_memory it imported, which must be its own checkout's."""
    for name, p in procs.items():
        assert p.stdout is not None
        if name in sides:
            imported = Path(p.stdout.readline().strip())
            assert imported.is_relative_to(sides[name]), (name, imported)
        assert p.stdout.readline().strip() == "ready"


def _vector(blob: bytes, dim: int) -> Any:
    """A stored vector: float16 (this version's SQLite) or float32 (older folders)."""
    import numpy as np

    dtype = np.float16 if len(blob) == 2 * dim else np.float32
    return np.frombuffer(blob, dtype=dtype).astype(np.float32)


def space(folder: Path) -> dict[str, Any]:
    """Where a folder's bytes go: SQLite tables and indexes (dbstat), Chroma, per memory."""
    db = sqlite3.connect(f"file:{folder / 'sage.db'}?mode=ro", uri=True)
    try:
        tables = db.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
        memories = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        journal = db.execute(
            "SELECT entity, count(*), avg(length(before)), avg(length(after)) FROM journal "
            "GROUP BY entity"
        ).fetchall()
        text = db.execute("SELECT sum(length(CAST(data AS BLOB))) FROM memories").fetchone()[0]
    finally:
        db.close()
    return {
        "memories": memories,
        "sqlite_tables_mb": {name: round(size / 1e6, 2) for name, size in tables[:12]},
        "journal_rows": {e: {"rows": n, "avg_before": b, "avg_after": a} for e, n, b, a in journal},
        "memory_row_json_bytes": text,
        "chroma_mb": _folder_bytes(folder / "chroma") / 1e6,
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


# -- the driver -------------------------------------------------------------------------------
def _run_phase(*args: str, timeout: float | None = None) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--phase", *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _recover(folder: Path, n: int) -> dict[str, Any]:
    writer = subprocess.Popen(
        [sys.executable, __file__, "--phase", "writer", str(folder), str(n)],
        stdout=subprocess.PIPE,
        text=True,
    )
    acked = 0
    assert writer.stdout is not None
    for line in writer.stdout:
        if line.startswith("ack "):
            acked = int(line.split()[1])
            if acked >= 300:
                break
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    reopened = _run_phase("open", str(folder))
    return {
        "acked_before_kill": acked,
        "recovery_open_s": reopened["open_s"],
        "memories_after": reopened["memories"],
        "lost": max(0, n + acked - int(reopened["memories"] or 0)),
    }


def run_size(n: int, count: int, base: Path) -> dict[str, Any]:
    folder = base / f"n{n}"
    row: dict[str, Any] = {"n": n}
    print(f"[{n:,}] ingest ...", flush=True)
    row.update(_run_phase("ingest", str(folder), str(n)))
    size = _folder_bytes(folder)
    row["folder_mb"] = size / 1e6
    row["size_over_text"] = size / row["raw_text_bytes"]
    sqlite_bytes = sum(f.stat().st_size for f in folder.glob("sage.db*"))
    row["sqlite_mb"] = sqlite_bytes / 1e6
    row["chroma_mb"] = _folder_bytes(folder / "chroma") / 1e6
    row["space"] = space(folder)
    print(f"[{n:,}] clean open (twice: the first also records the index counts) ...", flush=True)
    _run_phase("open", str(folder))
    opened = _run_phase("open", str(folder))
    row.update({"clean_open_s": opened["open_s"], "import_s": opened["import_s"]})
    print(f"[{n:,}] search ...", flush=True)
    row.update(_run_phase("search", str(folder), str(count)))
    print(f"[{n:,}] kill -9 and recovery ...", flush=True)
    row.update(_recover(folder, n))
    row["search_p95_ratio"] = row["search_p95_ms"] / row["chroma_p95_ms"]
    print(json.dumps(row, indent=1), flush=True)
    return row


def write_readme(result: dict[str, Any]) -> None:
    lines = [
        "| N | ingest / s | peak RSS MB | folder MB (x raw text) | SQLite / Chroma MB "
        "| clean open s | recovery open s (kill -9) | search p50 / p95 ms "
        "| plain Chroma p50 / p95 ms | p95 ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['n']:,} | {r['ingest_per_s']:.0f} | {r['rss_mb']:.0f} "
            f"| {r['folder_mb']:.1f} ({r['size_over_text']:.0f}x) "
            f"| {r['sqlite_mb']:.1f} / {r['chroma_mb']:.1f} | {r['clean_open_s']:.2f} "
            f"| {r['recovery_open_s']:.2f} | {r['search_p50_ms']:.1f} / {r['search_p95_ms']:.1f} "
            f"| {r['chroma_p50_ms']:.1f} / {r['chroma_p95_ms']:.1f} "
            f"| {r['search_p95_ratio']:.2f}x |"
        )
    lines.append("")
    last = result["rows"][-1]
    if "space" in last:
        tables = ", ".join(
            f"{k} {v:.1f}" for k, v in list(last["space"]["sqlite_tables_mb"].items())[:8]
        )
        lines.append(
            f"Where SQLite's bytes go at {last['n']:,} (MB, dbstat, largest first): {tables}."
        )
        lines.append("")
    lines.append(
        f"Measured {result['when']} at commit {result['commit']}, load average "
        f"{result['load_before']} before the run (2 CPUs shared with other work)."
    )
    table = "\n".join(lines)
    text = README.read_text(encoding="utf-8")
    start = "<!-- scale-table:start (generated by bench/scale.py) -->"
    end = "<!-- scale-table:end -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + start + "\n" + table + "\n" + end + rest.split(end, 1)[1]
        README.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, action="append", help="memories (repeatable)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--keep", type=Path, help="build the folders here and keep them")
    ap.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--space", type=Path, help="only print where FOLDER's bytes go, as JSON")
    args = ap.parse_args()
    if args.space:
        print(json.dumps(space(args.space), indent=1))
        return
    if args.phase:
        name, *rest = args.phase
        if name == "writer":
            phase_writer(Path(rest[0]), int(rest[1]))
            return
        folder = Path(rest[0])
        if name == "ingest":
            out = phase_ingest(folder, int(rest[1]))
        elif name == "open":
            out = phase_open(folder)
        else:
            out = phase_search(folder, int(rest[1]))
        print(json.dumps(out))
        return
    sizes = args.n or [10_000]
    base = args.keep or Path(tempfile.mkdtemp(prefix="sage-scale-"))
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=10", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
    ).stdout.strip()
    result: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d"),
        "commit": commit,
        "load_before": round(os.getloadavg()[0], 1),
        "cpus": os.cpu_count(),
        "rows": [],
    }
    try:
        for n in sizes:
            result["rows"].append(run_size(n, args.queries, base))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    result["load_after"] = round(os.getloadavg()[0], 1)
    previous = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    by_n = {r["n"]: r for r in previous.get("rows", [])}
    by_n.update({r["n"]: r for r in result["rows"]})
    result["rows"] = [by_n[k] for k in sorted(by_n)]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    write_readme(result)
    print(statistics.fmean(r["search_p95_ratio"] for r in result["rows"]))


if __name__ == "__main__":
    main()
