"""Does a query's cost stay flat as unrelated data grows? The same queries at 10k and 100k.

One SageMemory in a folder (SQLite + Chroma, the persistent default) and one user. A small
"related" story (a project plan, a diagnosis chain, changing facts: about 40 memories) is added
with the default rule extractor, so the query exercises every channel, the graph and the
structure answers. Then unrelated memories are added to the same user's memory, without
extraction (``infer=False``), until it holds 10,000 and then 100,000 memories; the same queries
are timed at both sizes (wall time of ``search()``, query embedding included).

Embedder: the hashing embedder (``embedder="hashing"``, 256-d), for speed: 100k MiniLM
embeddings would take the shared 2-core machine most of an hour, and what is measured here is
the cost of search, which does not depend on which embedder filled the index.

Unrelated data: sentences of common English filler words plus random made-up words; they share
no content word with the queries (a word the query contains in 90k more memories would make
the lexical channel read 90k more postings: that is the nature of full-text search, and it is
bounded by the channel's top-k only after scoring).

Run: ``PYTHONPATH=. .venv/bin/python bench/latency_scaling.py`` (``--small`` for 1k/10k; about
three minutes). Writes bench/results/latency_scaling.json and the ``latency-scaling`` section
of bench/README.md; ``--render`` rewrites that section from the saved results.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sections import BENCH_README as README  # noqa: E402
from sections import write_section  # noqa: E402

RESULTS = HERE / "results" / "latency_scaling.json"
NAME = "latency-scaling"
COMMAND = "PYTHONPATH=. .venv/bin/python bench/latency_scaling.py"

STORY = [
    "I want to build a personal blog. First I'll design the database, then build the backend "
    "API, and finally the frontend. The backend will use Python's FastAPI.",
    "the database design is done",
    "DatabaseError: relation 'user_table' does not exist can be caused by migrations not run.",
    "DatabaseError: relation 'user_table' does not exist is solved by python manage.py migrate.",
    "Running migrations depends on the database server running.",
    "Alice lives in Paris",
    "Alice moved to Berlin",
    "open() opens a file in Python",
    "the with statement closes the file automatically",
] + [f"Sprint {i}: reviewed the FastAPI backend endpoints for the blog" for i in range(30)]

QUERIES = [
    "What should I do next on my blog's backend?",
    "DatabaseError: relation 'user_table' does not exist",
    "Where does Alice live?",
    "how do I make sure a file gets released?",
    "which FastAPI endpoints did we review?",
]

FILLER = re.findall(
    r"\w+",
    """the a and of to in is was it for on with as at by this that from we they you our today
    yesterday later meeting note call idea plan thing time day week people place""",
)


def made_up_words(n: int, rng: random.Random) -> list[str]:
    """Pronounceable non-words, minus any word of the story or the queries ("manage")."""
    taken = {w for t in [*STORY, *QUERIES] for w in re.findall(r"\w+", t.casefold())}
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: set[str] = set()
    while len(words) < n:
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(3))
        if word not in taken:
            words.add(word)
    return sorted(words)


def unrelated(count: int, rng: random.Random, vocab: Sequence[str]) -> list[str]:
    out = []
    for _ in range(count):
        words = rng.choices(FILLER, k=6) + rng.choices(vocab, k=5)
        rng.shuffle(words)
        out.append(" ".join(words).capitalize() + ".")
    return out


def grow(mem: Any, target: int, rng: random.Random, vocab: Sequence[str]) -> float:
    """Add unrelated memories until the user holds ``target``; returns seconds spent."""
    started = time.perf_counter()
    base = datetime(2025, 1, 1, tzinfo=UTC)
    have = mem.stats(user_id="u")["memories"]
    while have < target:
        n = min(5000, target - have)
        items = [
            {"text": t, "timestamp": base + timedelta(minutes=have + i)}
            for i, t in enumerate(unrelated(n, rng, vocab))
        ]
        mem.add_many(items, user_id="u", infer=False, batch_size=n)
        have += n
        print(f"  {have} memories", file=sys.stderr, flush=True)
    return time.perf_counter() - started


def measure(mem: Any, repeats: int) -> dict[str, Any]:
    """Search latency, and for reference the two scans no index can avoid: the Chroma top-k
    alone and the SQLite FTS5 top-k alone, for the same queries."""
    from sage_memory.index.base import collection_name
    from sage_memory.types import Scope

    scope = Scope("u")
    coll = collection_name(scope.key, "memory")
    vecs = {q: mem.embedder.embed_query(q) for q in QUERIES}
    for q in QUERIES:  # warm-up
        mem.search(q, user_id="u")
    per_query: dict[str, list[float]] = {q: [] for q in QUERIES}
    chroma: list[float] = []
    fts: list[float] = []
    for _ in range(repeats):
        for q in QUERIES:
            t0 = time.perf_counter()
            mem.search(q, user_id="u")
            t1 = time.perf_counter()
            mem.index.query(coll, vecs[q], 20)
            t2 = time.perf_counter()
            mem.store.search_text(scope, q, entity="memory", limit=20)
            t3 = time.perf_counter()
            per_query[q].append((t1 - t0) * 1000)
            chroma.append((t2 - t1) * 1000)
            fts.append((t3 - t2) * 1000)
    every = sorted(ms for v in per_query.values() for ms in v)
    return {
        "p50_ms": round(statistics.median(every), 2),
        "p95_ms": round(every[int(0.95 * (len(every) - 1))], 2),
        "chroma_topk_p50_ms": round(statistics.median(chroma), 2),
        "fts_topk_p50_ms": round(statistics.median(fts), 2),
        "per_query_p50_ms": {q: round(statistics.median(v), 2) for q, v in per_query.items()},
    }


def run(sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    from sage_memory import SageMemory

    rng = random.Random(7)
    vocab = made_up_words(5000, rng)
    out: dict[str, Any] = {"sizes": {}}
    with tempfile.TemporaryDirectory(prefix="sage-scaling-") as tmp:
        mem = SageMemory(Path(tmp) / "mem", embedder="hashing")
        try:
            t0 = datetime(2026, 3, 1, tzinfo=UTC)
            for i, text in enumerate(STORY):
                mem.add(text, user_id="u", timestamp=t0 + timedelta(days=i))
            for size in sizes:
                spent = grow(mem, size, rng, vocab)
                stats = mem.stats(user_id="u")
                out["sizes"][str(size)] = {
                    **measure(mem, repeats),
                    "memories": stats["memories"],
                    "nodes": stats["nodes"],
                    "edges": stats["edges"],
                    "ingest_s": round(spent, 1),
                }
                print(f"{size}: {out['sizes'][str(size)]}", file=sys.stderr, flush=True)
        finally:
            mem.close()
    small, big = (out["sizes"][str(s)] for s in (sizes[0], sizes[-1]))
    out["p50_ratio"] = round(big["p50_ms"] / small["p50_ms"], 2)
    out["p95_ratio"] = round(big["p95_ms"] / small["p95_ms"], 2)
    out["embedder"] = "hashing-256 (for speed; see the module docstring)"
    out["when"] = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def render(report: dict[str, Any]) -> str:
    """The README section, from a run's report (bench/results/latency_scaling.json)."""
    rows = [
        "| memories | nodes | edges | search p50 ms | search p95 ms | Chroma top-20 alone p50 ms "
        "| FTS5 top-20 alone p50 ms | search minus Chroma p50 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rest = {}
    for size, r in report["sizes"].items():
        rest[size] = r["p50_ms"] - r["chroma_topk_p50_ms"]
        rows.append(
            f"| {int(size):,} | {r['nodes']} | {r['edges']} | {r['p50_ms']} | {r['p95_ms']} "
            f"| {r['chroma_topk_p50_ms']} | {r['fts_topk_p50_ms']} | {rest[size]:.2f} |"
        )
    small, big = min(rest, key=int), max(rest, key=int)
    ann = {k: report["sizes"][k]["chroma_topk_p50_ms"] for k in (small, big)}
    return "\n".join(
        [
            "The same five queries (plan, diagnosis, changing fact, association, plain recall) "
            "over one user's memory in a folder (SQLite + Chroma), as unrelated memories are "
            "added to the same user. Hashing embedder (for speed: 100k MiniLM embeddings would "
            "take most of an hour here; search cost does not depend on the embedder that "
            "filled the index); unrelated memories share no content word with the queries. "
            "Wall time of `search()` on a machine shared with other work, "
            f"{report.get('repeats', 20)} rounds; {report['when']}.",
            "",
            *rows,
            "",
            f"For 10x the data, search p50 grew {report['p50_ratio']}x and p95 "
            f"{report['p95_ratio']}x. Of that, the Chroma ANN query alone (HNSW search grows "
            f"with log n) went from {ann[small]} to {ann[big]} ms; everything else from "
            f"{rest[small]:.2f} to {rest[big]:.2f} ms: B-tree depth and page-cache misses in a "
            "ten times larger SQLite file. No step reads the scope: seeds are top-k, the graph "
            "walk is bounded around the linked nodes (the graph here stays at the story's "
            "nodes), and neighbouring turns are two index seeks per candidate.",
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", action="store_true", help="1k and 10k instead of 10k and 100k")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--render", action="store_true", help="only rewrite the README section")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.render:
        write_section(README, NAME, COMMAND, render(json.loads(RESULTS.read_text())))
        return
    sizes = [1000, 10_000] if args.small else [10_000, 100_000]
    report = run(sizes, args.repeats)
    report["repeats"] = args.repeats
    print(render(report))
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=2) + "\n")
        write_section(README, NAME, COMMAND, render(report))


if __name__ == "__main__":
    main()
