"""Add and search throughput and latency at N memories: SageMemory vs plain Chroma.

Both sides use the same local MiniLM embedder (the default: onnxruntime when installed, else
numpy), on a folder on this machine's disk:

- SageMemory: the full write path (embed, rule extraction, entity resolution, one SQLite
  transaction with journal, Chroma mirror) and the hybrid search (dense + lexical + graph +
  context packing).
- Plain Chroma: PersistentClient, one collection, our embeddings passed in, top-k query.

The corpus is the 2,760 turns of the LoCoMo dev split (real conversational text) followed by
deterministic synthetic sentences (people, places, tools, tasks) up to N; the run prints which,
and stops when the LoCoMo file is missing (``--allow-synthetic`` to run on synthetic text only).

Both systems are measured side by side in rounds (``--rounds``, the order turning each round):
each round both add the same slice of the bulk texts, then the single adds and the searches go
call by call to each in turn. Figures are medians over the rounds and each ratio is the median
of the rounds' ratios, so load from other work on a shared machine falls on both alike.

    .venv/bin/python bench/throughput.py              # N = 10,000 (several minutes)
    .venv/bin/python bench/throughput.py --n 2000     # quicker

Writes bench/results/throughput.json and the table between the ``throughput-table`` markers
in bench/README.md (ratios side by side in one run; the load average is recorded, since the
machine may be shared).
"""

from __future__ import annotations

import argparse
import gc
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


class CorpusMissing(SystemExit):
    """The LoCoMo dev split is not where the bench looks: no silent synthetic-only run."""


def corpus(n: int, locomo: Path = LOCOMO, *, allow_synthetic: bool = False) -> list[str]:
    """LoCoMo dev turns, then synthetic sentences up to ``n``.

    A missing LoCoMo file used to fall back to synthetic text silently, which changes what is
    measured (short template sentences extract and embed faster): it is an error unless
    ``allow_synthetic``.
    """
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
    elif not allow_synthetic:
        raise CorpusMissing(
            f"LoCoMo dev split not found at {locomo}: pass --locomo PATH, or "
            "--allow-synthetic to measure on synthetic sentences only (not comparable)"
        )
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


def describe_corpus(texts: list[str], locomo: Path) -> str:
    """Which texts were measured: how many LoCoMo turns (and from where), how many synthetic."""
    synthetic = sum(1 for t in texts if t.endswith(")") and " (note " in t)
    real = len(texts) - synthetic
    source = f"{real:,} LoCoMo dev turns from {locomo}" if real else "no LoCoMo turns"
    return f"{source} + {synthetic:,} synthetic sentences"


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


class Sage:
    """SageMemory's write and read path, one folder, kept open for the whole run."""

    def __init__(self, folder: Path, *, parser: bool = True) -> None:
        self.parser = parser
        # Up to EXACT_LIMIT vectors a partition is searched exactly in memory, with no Chroma
        # copy: at 10k the folder is SQLite alone.
        self.name = "SageMemory (rules + MiniLM, SQLite folder)" + (
            "" if parser else ", extractor without the parser"
        )
        self.mem = SageMemory(folder)

    def _switch(self) -> None:
        from sage_memory.extract import syntax

        syntax.use_parser(self.parser)  # process-wide: set before each call, outside the timing

    def warm(self) -> None:
        self.mem.search("warm up", user_id="bench")  # loads the embedder and the extractor

    def bulk(self, texts: list[str]) -> float:
        self._switch()
        t = time.perf_counter()
        self.mem.add_many(texts, user_id="bench", batch_size=64)
        return time.perf_counter() - t

    def add(self, text: str) -> float:
        self._switch()
        t = time.perf_counter()
        self.mem.add(text, user_id="bench")
        return time.perf_counter() - t

    def search(self, query: str) -> float:
        t = time.perf_counter()
        self.mem.search(query, user_id="bench", limit=10)
        return time.perf_counter() - t

    def close(self) -> dict[str, Any]:
        from sage_memory.extract import syntax

        stats = self.mem.stats()
        self.mem.close()
        syntax.use_parser(True)
        return {"graph": {"nodes": stats["nodes"], "edges": stats["edges"]}}


class PlainChroma:
    """One Chroma collection fed our embeddings, answering a top-10 query."""

    name = "plain Chroma (MiniLM, same embeddings)"

    def __init__(self, folder: Path) -> None:
        import chromadb
        from chromadb.config import Settings

        self.emb = make_embedder("minilm")
        client = chromadb.PersistentClient(
            path=str(folder), settings=Settings(anonymized_telemetry=False)
        )
        self.coll = client.get_or_create_collection(
            "bench", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )
        self.next_id = 0

    def _ids(self, k: int) -> list[str]:
        self.next_id += k
        return [str(i) for i in range(self.next_id - k, self.next_id)]

    def warm(self) -> None:
        self.emb.embed(["warm up"])  # loads the embedder

    def bulk(self, texts: list[str]) -> float:
        t = time.perf_counter()
        for i in range(0, len(texts), 64):
            chunk = texts[i : i + 64]
            self.coll.add(
                ids=self._ids(len(chunk)), embeddings=self.emb.embed(chunk), documents=chunk
            )
        return time.perf_counter() - t

    def add(self, text: str) -> float:
        t = time.perf_counter()
        self.coll.add(ids=self._ids(1), embeddings=self.emb.embed([text]), documents=[text])
        return time.perf_counter() - t

    def search(self, query: str) -> float:
        t = time.perf_counter()
        self.coll.query(query_embeddings=[self.emb.embed_query(query)], n_results=10)
        return time.perf_counter() - t

    def close(self) -> dict[str, Any]:
        return {}


def split(items: list[Any], parts: int) -> list[list[Any]]:
    """``items`` in ``parts`` consecutive slices of near-equal size (none empty)."""
    parts = max(1, min(parts, len(items)))
    cut = [round(k * len(items) / parts) for k in range(parts + 1)]
    return [items[cut[k] : cut[k + 1]] for k in range(parts)]


def order(k: int, turn: int) -> list[int]:
    """The ``k`` systems' order at this turn: each goes first in turn."""
    turn %= k
    return list(range(turn, k)) + list(range(turn))


def one_by_one(
    systems: list[Any], op: str, items: list[str], rounds: int, per: list[dict[str, list[float]]]
) -> list[list[float]]:
    """``op`` ("add" or "search") over ``items`` call by call, every system in turn; each
    round's p50 and p95 go to ``per``. Returns every call's seconds, per system."""
    k = len(systems)
    every: list[list[float]] = [[] for _ in systems]
    for r, chunk in enumerate(split(items, rounds)):
        times: list[list[float]] = [[] for _ in systems]
        for j, item in enumerate(chunk):
            for i in order(k, r + j):
                times[i].append(getattr(systems[i], op)(item))
        for i in range(k):
            per[i][f"{op}_p50"].append(pct(times[i], 0.5))
            per[i][f"{op}_p95"].append(pct(times[i], 0.95))
            every[i] += times[i]
        gc.collect()
    return every


def interleaved(
    systems: list[Any],
    bulk: list[str],
    singles: list[str],
    queries: list[str],
    rounds: int,
    *,
    warmup: int = 5,
) -> list[dict[str, Any]]:
    """Every system measured side by side, in rounds, the order turning each round (ABAB).

    Bulk: the texts in ``rounds`` slices; each round every system adds the same slice, so the
    stores grow in step. Then the single adds and the searches at full size, call by call in
    turn. A round's figures (throughput, p50, p95) are per system; the reported figure is the
    median over rounds, and each ratio to the last system (plain Chroma) is the median of the
    per-round ratios, so a burst of load on the shared machine moves one round, not the result.
    """
    k = len(systems)
    per: list[dict[str, list[float]]] = [
        {m: [] for m in ("bulk_per_s", "add_p50", "add_p95", "search_p50", "search_p95")}
        for _ in systems
    ]
    spent = [0.0] * k
    for system in systems:
        system.warm()
    for r, chunk in enumerate(split(bulk, rounds)):
        for i in order(k, r):
            s = systems[i].bulk(chunk)
            spent[i] += s
            per[i]["bulk_per_s"].append(len(chunk) / s)
        gc.collect()
    for q in search_queries(warmup):  # untimed: first-query costs (caches, lazy loads) on all
        for system in systems:
            system.search("warm up: " + q)
    one_by_one(systems, "add", singles, rounds, per)
    search_times = one_by_one(systems, "search", queries, rounds, per)
    med = statistics.median
    rows = []
    base = per[-1]
    for i, system in enumerate(systems):
        p = per[i]
        row: dict[str, Any] = {
            "system": system.name,
            "bulk_add_per_s": med(p["bulk_per_s"]),
            "bulk_add_s": spent[i],
            "add_p50_ms": med(p["add_p50"]),
            "add_p95_ms": med(p["add_p95"]),
            "search_p50_ms": med(p["search_p50"]),
            "search_p95_ms": med(p["search_p95"]),
            "search_mean_ms": statistics.fmean(search_times[i]) * 1000,
            "rounds": {m: [round(v, 2) for v in vs] for m, vs in p.items()},
        }
        if i < k - 1:
            row["ratio_to_chroma"] = {
                m: med(a / b for a, b in zip(p[m], base[m], strict=True)) for m in p
            }
        rows.append(row)
    for row, system in zip(rows, systems, strict=True):
        row.update(system.close())
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="memories to add in bulk")
    ap.add_argument("--singles", type=int, default=100, help="single adds timed after the bulk")
    ap.add_argument("--queries", type=int, default=200, help="searches timed")
    ap.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="rounds of side-by-side measurement (the figures are medians over rounds)",
    )
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
    ap.add_argument(
        "--allow-synthetic",
        action="store_true",
        help="run on synthetic sentences only when the LoCoMo file is missing (not comparable "
        "with runs on the real corpus)",
    )
    args = ap.parse_args()
    texts = corpus(args.n + args.singles, args.locomo, allow_synthetic=args.allow_synthetic)
    corpus_used = describe_corpus(texts, args.locomo)
    print(f"corpus: {corpus_used}", flush=True)
    bulk, singles = texts[: args.n], texts[args.n :]
    queries = search_queries(args.queries)
    tmp = Path(tempfile.mkdtemp(prefix="sage-bench-"))
    try:
        modes = {"on": [True], "off": [False], "both": [False, True]}[args.parser]
        systems: list[Any] = [Sage(tmp / f"sage-{on}", parser=on) for on in modes]
        systems.append(PlainChroma(tmp / "chroma"))
        rows = interleaved(systems, bulk, singles, queries, args.rounds)
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
        "rounds": args.rounds,
        "corpus": corpus_used,
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
    # Ratios measured side by side (median of the rounds' ratios) when the run had rounds;
    # results of older runs hold only the two systems' figures.
    side = sage.get("ratio_to_chroma")
    if side:
        bulk, add50, search95 = side["bulk_per_s"], side["add_p50"], side["search_p95"]
    else:
        bulk = sage["bulk_add_per_s"] / chroma["bulk_add_per_s"]
        add50 = sage["add_p50_ms"] / chroma["add_p50_ms"]
        search95 = sage["search_p95_ms"] / chroma["search_p95_ms"]
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
        f"(target >= 0.5x), single add p50 {add50:.2f}x "
        f"(target <= 1.5x), search p95 {search95:.2f}x "
        f"(target <= 1.5x). {result['n']:,} memories, {result['singles']} single adds, "
        f"{result['queries']} searches; "
        + (
            f"measured side by side in {result['rounds']} rounds, order turning each round, "
            "figures and ratios the medians over rounds; corpus "
            f"{result['corpus']}; "
            if "rounds" in result
            else ""
        )
        + f"{result['when']}, commit {result.get('commit', '?')}, "
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
