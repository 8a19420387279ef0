"""Add and search throughput and latency at N memories: SageMemory vs plain Chroma.

Both sides use the same local MiniLM embedder (the default: onnxruntime when installed, else
numpy), on a folder on this machine's disk:

- SageMemory: the full write path (embed, rule extraction, entity resolution, one SQLite
  transaction with journal, Chroma mirror) and the hybrid search (dense + lexical + graph +
  context packing).
- Plain Chroma: PersistentClient, one collection, our embeddings passed in, top-k query.

The corpus is the 2,760 turns of the LoCoMo dev split (real conversational text) followed by
deterministic synthetic sentences (people, places, tools, tasks) up to N.

    .venv/bin/python bench/throughput.py              # N = 10,000 (several minutes)
    .venv/bin/python bench/throughput.py --n 2000     # quicker

Writes bench/results/throughput.json and the table between the ``throughput-table`` markers
in bench/README.md (ratios side by side in one run; the load average is recorded, since the
machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sage_memory import SageMemory  # noqa: E402
from sage_memory.embed import make_embedder  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo_dev.json"

PEOPLE = ["Alice", "Bob", "Carol", "Dan", "Erin", "Farid", "Grace", "Hiro", "Ines", "Jon"]
PLACES = ["Paris", "Berlin", "Lisbon", "Oslo", "Kyoto", "Austin", "Nairobi", "Lima", "Cork"]
TOOLS = ["FastAPI", "pandas", "PostgreSQL", "Redis", "React", "Docker", "numpy", "Django"]
TASKS = ["design the schema", "write the tests", "deploy the service", "fix the login bug"]
TEMPLATES = [
    "{p} lives in {c}.",
    "{p} moved to {c} last month.",
    "{p} prefers {t} for side projects.",
    "First {p} will {k}, then {q}.",
    "The {t} upgrade is blocked by the {u} migration.",
    "{p} works at a startup in {c} that uses {t}.",
    "To {k} we need {t} and {u}.",
    "{p} said the outage was caused by a {t} timeout.",
]


def corpus(n: int, locomo: Path = LOCOMO) -> list[str]:
    texts: list[str] = []
    if locomo.exists():
        for sample in json.loads(locomo.read_text()):
            conv = sample["conversation"]
            sessions = sorted(
                (k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
                key=lambda k: int(k.split("_")[1]),
            )
            for key in sessions:
                texts += [f"{t['speaker']}: {t['text']}" for t in conv[key]]
    rng = random.Random(7)
    while len(texts) < n:
        texts.append(
            rng.choice(TEMPLATES).format(
                p=rng.choice(PEOPLE),
                c=rng.choice(PLACES),
                t=rng.choice(TOOLS),
                u=rng.choice(TOOLS),
                k=rng.choice(TASKS),
                q=rng.choice(TASKS),
            )
            + f" (note {len(texts)})"
        )
    return texts[:n]


def search_queries(count: int) -> list[str]:
    """The timed searches (deterministic): the synthetic facts' and LoCoMo's questions."""
    rng = random.Random(3)
    return [
        rng.choice(
            [
                f"where does {rng.choice(PEOPLE)} live?",
                f"what does {rng.choice(PEOPLE)} use {rng.choice(TOOLS)} for?",
                "what caused the outage?",
                f"what should happen before we {rng.choice(TASKS)}?",
                "what did Caroline say about the adoption agency?",
                "when did Melanie go camping with her kids?",
            ]
        )
        for _ in range(count)
    ]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] * 1000


def summary(
    name: str, bulk_s: float, n: int, adds: list[float], searches: list[float]
) -> dict[str, Any]:
    return {
        "system": name,
        "bulk_add_per_s": n / bulk_s,
        "bulk_add_s": bulk_s,
        "add_p50_ms": pct(adds, 0.5),
        "add_p95_ms": pct(adds, 0.95),
        "search_p50_ms": pct(searches, 0.5),
        "search_p95_ms": pct(searches, 0.95),
        "search_mean_ms": statistics.fmean(searches) * 1000,
    }


def bench_sage(
    texts: list[str], singles: list[str], queries: list[str], folder: Path, *, parser: bool = True
) -> dict[str, Any]:
    from sage_memory.extract import syntax

    syntax.use_parser(parser)
    try:
        out = _bench_sage(texts, singles, queries, folder)
    finally:
        syntax.use_parser(True)
    if not parser:
        out["system"] += ", extractor without the parser"
    return out


def _bench_sage(
    texts: list[str], singles: list[str], queries: list[str], folder: Path
) -> dict[str, Any]:
    with SageMemory(folder) as mem:
        mem.search("warm up", user_id="bench")
        t = time.perf_counter()
        mem.add_many(texts, user_id="bench", batch_size=64)
        bulk = time.perf_counter() - t
        adds = []
        for text in singles:
            t = time.perf_counter()
            mem.add(text, user_id="bench")
            adds.append(time.perf_counter() - t)
        searches = []
        for q in queries:
            t = time.perf_counter()
            mem.search(q, user_id="bench", limit=10)
            searches.append(time.perf_counter() - t)
        stats = mem.stats()
    out = summary("SageMemory (rules + MiniLM, SQLite + Chroma)", bulk, len(texts), adds, searches)
    out["graph"] = {"nodes": stats["nodes"], "edges": stats["edges"]}
    return out


def bench_chroma(
    texts: list[str], singles: list[str], queries: list[str], folder: Path
) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings

    emb = make_embedder("minilm")
    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False)
    )
    coll = client.get_or_create_collection(
        "bench", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    t = time.perf_counter()
    for i in range(0, len(texts), 64):
        chunk = texts[i : i + 64]
        coll.add(
            ids=[str(i + j) for j in range(len(chunk))],
            embeddings=emb.embed(chunk),
            documents=chunk,
        )
    bulk = time.perf_counter() - t
    adds = []
    for k, text in enumerate(singles):
        t = time.perf_counter()
        coll.add(ids=[f"s{k}"], embeddings=emb.embed([text]), documents=[text])
        adds.append(time.perf_counter() - t)
    searches = []
    for q in queries:
        t = time.perf_counter()
        coll.query(query_embeddings=[emb.embed_query(q)], n_results=10)
        searches.append(time.perf_counter() - t)
    return summary("plain Chroma (MiniLM, same embeddings)", bulk, len(texts), adds, searches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="memories to add in bulk")
    ap.add_argument("--singles", type=int, default=100, help="single adds timed after the bulk")
    ap.add_argument("--queries", type=int, default=200, help="searches timed")
    ap.add_argument(
        "--parser",
        choices=("on", "off", "both"),
        default="on",
        help="the structure extractor's spaCy parser: on (the default), off (its dictionary "
        "tagger), or both side by side in one run",
    )
    ap.add_argument(
        "--no-write", action="store_true", help="print only: no results file, no README table"
    )
    ap.add_argument(
        "--locomo", type=Path, default=LOCOMO, help="LoCoMo dev split (from a worktree elsewhere)"
    )
    args = ap.parse_args()
    texts = corpus(args.n + args.singles, args.locomo)
    bulk, singles = texts[: args.n], texts[args.n :]
    queries = search_queries(args.queries)
    tmp = Path(tempfile.mkdtemp(prefix="sage-bench-"))
    try:
        modes = {"on": [True], "off": [False], "both": [False, True]}[args.parser]
        rows = [bench_sage(bulk, singles, queries, tmp / f"sage-{on}", parser=on) for on in modes]
        rows.append(bench_chroma(bulk, singles, queries, tmp / "chroma"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=10", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
    ).stdout.strip()
    result = {
        "n": args.n,
        "singles": args.singles,
        "queries": args.queries,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "when": time.strftime("%Y-%m-%d"),
        "commit": commit,
        "load_average": round(os.getloadavg()[0], 1),
        "embedder": repr(make_embedder("minilm")),
        "rows": rows,
    }
    table = render(result)
    print(table)
    print(f"load average {result['load_average']} on {result['machine']['cpus']} cpus")
    if args.no_write:
        return
    out = ROOT / "bench" / "results" / "throughput.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    write_readme(table)


def render(result: dict[str, Any]) -> str:
    rows = result["rows"]
    lines = [
        "| system | bulk add / s | single add p50 / p95 ms | search p50 / p95 ms |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['system']} | {r['bulk_add_per_s']:.0f} | {r['add_p50_ms']:.1f} / "
            f"{r['add_p95_ms']:.1f} | {r['search_p50_ms']:.1f} / {r['search_p95_ms']:.1f} |"
        )
    sage, chroma = rows[-2], rows[-1]
    bulk = sage["bulk_add_per_s"] / chroma["bulk_add_per_s"]
    if len(rows) == 3:  # --parser both: without, then with the parser, side by side
        off = rows[0]
        lines += [
            "",
            "With the extractor's parser against without it: bulk add "
            f"{sage['bulk_add_per_s'] / off['bulk_add_per_s']:.2f}x, single add p50 "
            f"{sage['add_p50_ms'] / off['add_p50_ms']:.2f}x, p95 "
            f"{sage['add_p95_ms'] / off['add_p95_ms']:.2f}x, search p95 "
            f"{sage['search_p95_ms'] / off['search_p95_ms']:.2f}x.",
        ]
    lines += [
        "",
        f"SageMemory against plain Chroma: bulk add {bulk:.2f}x "
        f"(target >= 0.5x), single add p50 {sage['add_p50_ms'] / chroma['add_p50_ms']:.2f}x "
        f"(target <= 1.5x), search p95 {sage['search_p95_ms'] / chroma['search_p95_ms']:.2f}x "
        f"(target <= 1.5x). {result['n']:,} memories, {result['singles']} single adds, "
        f"{result['queries']} searches; {result['when']}, commit {result.get('commit', '?')}, "
        f"load average {result.get('load_average', '?')} on {result['machine']['cpus']} CPUs "
        "shared with other work.",
    ]
    return "\n".join(lines)


def write_readme(table: str) -> None:
    readme = ROOT / "bench" / "README.md"
    text = readme.read_text(encoding="utf-8")
    start = "<!-- throughput-table:start (generated by bench/throughput.py) -->"
    end = "<!-- throughput-table:end -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        readme.write_text(head + start + "\n" + table + "\n" + end + rest.split(end, 1)[1])


if __name__ == "__main__":
    main()
