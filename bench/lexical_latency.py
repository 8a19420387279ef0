"""Lexical query latency: the per-partition BM25 postings against the FTS5 search they replaced.

The SQLite store used FTS5's ``bm25()``, whose statistics span the whole table (another scope's
memories changed this scope's ranking). It now keeps postings and statistics per partition
(``sage_memory/store/sqlite_postings.py``). This script loads the same synthetic memories into
both in one database file, several scopes of them, and times the same queries side by side in
one run (a ratio, so that a shared machine's load affects both alike).

Data: generated here (a seeded Zipf-like vocabulary), written by this script's author.

Run: ``.venv/bin/python bench/lexical_latency.py [--memories 10000] [--scopes 4]``; writes
bench/results/lexical_latency.json and its section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sections import BENCH_README, write_section

from sage_memory.store import sqlite_postings as postings
from sage_memory.store.sqlite_lexical import fts_query

HERE = Path(__file__).resolve().parent
COMMAND = ".venv/bin/python bench/lexical_latency.py"


def _texts(n: int, rng: random.Random) -> list[str]:
    vocab = [f"w{i}" for i in range(5000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    return [" ".join(rng.choices(vocab, weights, k=rng.randint(6, 30))) for _ in range(n)]


def _time(fn: object, queries: list[str], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        for q in queries:
            t0 = time.perf_counter()
            fn(q)  # type: ignore[operator]
            out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10000, help="memories per scope")
    ap.add_argument("--scopes", type=int, default=4)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite bench/README.md")
    args = ap.parse_args()
    command = " ".join([COMMAND, *sys.argv[1:]])
    rng = random.Random(7)
    folder = Path(tempfile.mkdtemp(prefix="lexbench"))
    db = sqlite3.connect(str(folder / "lex.db"), isolation_level=None)
    db.executescript(postings.POSTINGS_SCHEMA)
    db.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(body, sk UNINDEXED,"
        " tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE TABLE memories (rid INTEGER PRIMARY KEY, id TEXT, scope_key TEXT)")
    started = time.perf_counter()
    rid = 0
    db.execute("BEGIN")
    for s in range(args.scopes):
        key = f"user{s}\x1f\x1f"
        for text in _texts(args.memories, rng):
            rid += 1
            db.execute("INSERT INTO memories VALUES (?,?,?)", (rid, f"m{rid}", key))
            db.execute("INSERT INTO fts (rowid, body, sk) VALUES (?,?,?)", (rid, text, key))
            postings.index(db, "m", rid, key, text)
    db.execute("COMMIT")
    load_s = time.perf_counter() - started
    scope = "user0\x1f\x1f"
    queries = [
        " ".join(rng.sample([f"w{i}" for i in range(300)], rng.randint(1, 4)))
        for _ in range(args.queries)
    ]

    def fts5(q: str) -> None:
        db.execute(
            "SELECT m.id, -bm25(fts) AS score FROM fts JOIN memories m ON m.rid = fts.rowid"
            " WHERE fts MATCH ? AND fts.sk = ? AND m.scope_key = ? ORDER BY score DESC LIMIT 20",
            (f"body : ({fts_query(q)})", scope, scope),
        ).fetchall()

    def partition(q: str) -> None:
        postings.search(db, "m", scope, q, 20)

    _time(fts5, queries[:20], 1)  # warm the page cache for both
    _time(partition, queries[:20], 1)
    old = _time(fts5, queries, 3)
    new = _time(partition, queries, 3)
    result = {
        "memories_per_scope": args.memories,
        "scopes": args.scopes,
        "queries": len(queries) * 3,
        "fts5_ms": {"median": statistics.median(old), "p95": statistics.quantiles(old, n=20)[18]},
        "partition_bm25_ms": {
            "median": statistics.median(new),
            "p95": statistics.quantiles(new, n=20)[18],
        },
        "load_s": load_s,
        "machine": f"{platform.machine()}, {platform.python_version()}, shared by other jobs",
        "command": command,
    }
    result["ratio_median"] = result["partition_bm25_ms"]["median"] / result["fts5_ms"]["median"]
    (HERE / "results" / "lexical_latency.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if not args.no_readme:
        write_section(BENCH_README, "lexical-latency", command, render(result))


def render(r: dict[str, object]) -> str:
    """The bench/README.md section from a results file."""
    fts, new = r["fts5_ms"], r["partition_bm25_ms"]
    assert isinstance(fts, dict) and isinstance(new, dict)
    old_row = f"{fts['median']:.2f} | {fts['p95']:.2f}"
    new_row = f"{new['median']:.2f} | {new['p95']:.2f}"
    return (
        f"Lexical search of one scope among {r['scopes']} of {r['memories_per_scope']:,} "
        f"synthetic memories each ({r['queries']} queries of 1-4 words, top 20; "
        f"{r['machine']}):\n\n"
        "| lexical channel | median ms | p95 ms |\n|---|---|---|\n"
        f"| FTS5 bm25() (whole-table statistics, before) | {old_row} |\n"
        f"| per-partition BM25 postings (now) | {new_row} |\n\n"
        f"Median ratio now/before: {r['ratio_median']:.2f}."
    )


if __name__ == "__main__":
    main()
