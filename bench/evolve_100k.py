"""Time of one evolution run on a graph of 100k nodes (folder-backed: SQLite + numpy index).

The graph is synthetic and written straight through the store's journaled write path
(``SQLiteGraphStore.apply`` with journal batches, the same rows ``add`` writes), so building it
takes a minute instead of hours of extraction:

- N nodes (default 100,000) in clusters of 50, named with one to three pseudo-words drawn
  with Zipf-like frequencies from a 5,000-word vocabulary (so a few words are in thousands of
  names, as in real graphs); one in 200 gets an alias twin (``pd.x`` / ``pandas.x``);
- about 3 edges per node (80% inside the cluster), a share of them single-valued relations
  with two current values (conflicts);
- one memory per 5 nodes as provenance;
- an access log of 2,000 searches and 500 feedback events over the last month.

Vectors come from the hashing embedder (256-d) and the vector index is the exact numpy one
(``vector_index="numpy"``): the run's cost is the evolver's, not the embedding model's.

    .venv/bin/python bench/evolve_100k.py                  # 100k nodes
    .venv/bin/python bench/evolve_100k.py --nodes 20000    # quicker

Times, with ``EvolveConfig.max_items_per_run`` at its default (5,000): three dry runs (the
median is reported), the first run (a cold start: 100k nodes never evolved, 2,500 access events
waiting), and an incremental run after 200 more adds and 100 searches, then the undo of that
run. Writes bench/results/evolve.json and the ``evolve-table`` section of bench/README.md
(``--render`` rewrites that section from the saved results without measuring).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sections import BENCH_README, write_section  # noqa: E402

from sage_memory import SageConfig, SageMemory  # noqa: E402
from sage_memory.embed import make_embedder  # noqa: E402
from sage_memory.engine.journal import Batch  # noqa: E402
from sage_memory.store.sqlite import SQLiteGraphStore  # noqa: E402
from sage_memory.testing.fakes import NoGraphExtractor  # noqa: E402
from sage_memory.types import (  # noqa: E402
    AccessEvent,
    Edge,
    EdgeSpec,
    Memory,
    Node,
    NodeSpec,
    Scope,
    new_id,
)

SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
RELATIONS = ["USES", "REQUIRES", "PART_OF", "DEPENDS_ON", "RELATED_TO", "CAUSES", "IS_A"]
SINGLE = ["HAS_STATUS", "WORKS_AT"]
LABELS = ["Concept", "Tool", "Task", "Resource", "Entity"]
SCOPE = Scope(user_id="bench")
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def vocabulary(rng: random.Random, size: int = 5000) -> tuple[list[str], list[float]]:
    """Pseudo-words with Zipf-like frequencies, as words in real names are distributed."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered, [1.0 / (rank + 1) ** 1.1 for rank in range(size)]


def build(folder: Path, n: int, seed: int) -> dict[str, Any]:
    """Write the synthetic graph and access log; returns what was written and how long."""
    rng = random.Random(seed)
    words, freq = vocabulary(rng)
    embedder = make_embedder("hashing")
    store = SQLiteGraphStore(folder / "sage.db", synchronous="NORMAL")
    store.set_meta("embedder", f"{embedder.name}:{embedder.dim}")
    started = time.perf_counter()
    created = NOW - timedelta(days=60)
    memories = [
        Memory(
            id=new_id(),
            text=f"note {i}: " + " ".join(rng.choices(words, freq, k=8)),
            scope=SCOPE,
            timestamp=created,
            created_at=created,
            updated_at=created,
            extraction="skipped",
        )
        for i in range(max(1, n // 5))
    ]
    nodes: list[Node] = []
    names: set[frozenset[str]] = set()  # word sets: "a b" and "b a" would be duplicates
    for i in range(n):
        while True:
            name = " ".join(rng.choices(words, freq, k=rng.randint(1, 3)))
            if frozenset(name.split()) not in names:
                break
        names.add(frozenset(name.split()))
        nodes.append(
            Node(
                id=new_id(),
                scope=SCOPE,
                name=name,
                label=rng.choice(LABELS),
                memory_ids=(memories[i // 5].id,),
                created_at=created,
                updated_at=created,
            )
        )
    # Alias duplicates: 0.5% of nodes get a twin spelled with a known short form.
    twins = 0
    for i in range(0, n, 200):
        base = nodes[i]
        twin = Node(
            id=new_id(),
            scope=SCOPE,
            name="pd." + base.name.replace(" ", "_"),
            label=base.label,
            memory_ids=base.memory_ids,
            created_at=created,
            updated_at=created,
        )
        nodes[i] = Node(
            id=base.id,
            scope=SCOPE,
            name="pandas." + base.name.replace(" ", "_"),
            label=base.label,
            memory_ids=base.memory_ids,
            created_at=created,
            updated_at=created,
        )
        nodes.append(twin)
        twins += 1
    edges: list[Edge] = []
    for i in range(n):
        cluster = i // 50
        for _ in range(3):
            if rng.random() < 0.8:
                j = cluster * 50 + rng.randrange(50)
            else:
                j = rng.randrange(n)
            if j == i or j >= n:
                continue
            edges.append(
                Edge(
                    id=new_id(),
                    scope=SCOPE,
                    source_id=nodes[i].id,
                    target_id=nodes[j].id,
                    relation=rng.choice(RELATIONS),
                    confidence=round(rng.uniform(0.5, 1.0), 2),
                    valid_from=created,
                    created_at=created,
                    memory_ids=nodes[i].memory_ids,
                )
            )
    conflicts = 0
    for i in range(0, n, 100):  # two current values of a single-valued relation
        rel = rng.choice(SINGLE)
        for k, day in ((1, 10), (2, 40)):
            edges.append(
                Edge(
                    id=new_id(),
                    scope=SCOPE,
                    source_id=nodes[i].id,
                    target_id=nodes[(i + k) % n].id,
                    relation=rel,
                    confidence=0.9,
                    valid_from=created + timedelta(days=day),
                    created_at=created,
                    memory_ids=nodes[i].memory_ids,
                )
            )
        conflicts += 1
    vectors_m = embedder.embed([m.text for m in memories])
    vectors_n = embedder.embed([x.name for x in nodes])
    vectors = {m.id: v for m, v in zip(memories, vectors_m, strict=True)}
    vectors.update({x.id: v for x, v in zip(nodes, vectors_n, strict=True)})
    records: list[Any] = [*memories, *nodes, *edges]
    for start in range(0, len(records), 10_000):
        batch = Batch("bench", "load", created)
        for r in records[start : start + 10_000]:
            batch.record(None, r)
        store.apply(
            batch.changes,
            {r.id: vectors[r.id] for r in records[start : start + 10_000] if r.id in vectors},
        )
    events = []
    for k in range(2_000):
        at = NOW - timedelta(days=30) + timedelta(minutes=20 * k)
        c = rng.randrange(n // 50)
        picked = [nodes[c * 50 + rng.randrange(50)].id for _ in range(5)]
        events.append(
            AccessEvent(
                id=new_id(), scope=SCOPE, at=at, weight=0.25, node_ids=tuple(dict.fromkeys(picked))
            )
        )
        if k % 4 == 0:
            used = nodes[c * 50 + rng.randrange(50)].id
            events.append(
                AccessEvent(
                    id=new_id(),
                    scope=SCOPE,
                    at=at,
                    kind="used",
                    weight=3.0,
                    node_ids=(used,),
                    context_ids=tuple(picked),
                )
            )
    store.log_access(events)
    store.set_meta("clean_shutdown", "0")  # the index is rebuilt from SQLite on open
    store.close()
    return {
        "nodes": len(nodes),
        "edges": len(edges),
        "memories": len(memories),
        "alias_duplicates": twins,
        "single_valued_conflicts": conflicts,
        "access_events": len(events),
        "build_s": round(time.perf_counter() - started, 1),
    }


def summarise(report: Any) -> dict[str, Any]:
    return {
        "took_ms": report.took_ms,
        "changes": report.changes,
        "applied": report.counts()["applied"],
        "suggested": report.counts()["suggested"],
        "metrics": dict(report.metrics),
        "deltas": dict(report.deltas),
    }


NAME = "evolve-table"
COMMAND = ".venv/bin/python bench/evolve_100k.py"


def _what(run: dict[str, Any]) -> str:
    """What one run did, from its counts: "applied 572 reinforce, ...; queued 6 merge"."""
    parts = []
    if run["applied"]:
        parts.append(
            "applied " + ", ".join(f"{n:,} {op}" for op, n in sorted(run["applied"].items()))
        )
    if run["suggested"]:
        parts.append(
            "queued " + ", ".join(f"{n:,} {op}" for op, n in sorted(run["suggested"].items()))
        )
    return "; ".join(parts) or "nothing to do"


def render(result: dict[str, Any]) -> str:
    """The README section, from a run's results (bench/results/evolve.json)."""
    setup, dry, first, second = (
        result["setup"],
        result["dry_run"],
        result["first_run"],
        result["incremental_run"],
    )
    spread = " / ".join(f"{ms / 1000:.1f}" for ms in dry["took_ms_all"])
    lines = [
        f"Time of one evolution pass (`mem.evolve()`) on a folder-backed memory of "
        f"**{setup['nodes']:,} nodes, {setup['edges']:,} edges and {setup['memories']:,} "
        f"memories**, with the default `EvolveConfig` (`max_items_per_run` = "
        f"{setup['max_items_per_run']:,}). The graph is synthetic and written straight through "
        "the store's journaled write path (`SQLiteGraphStore.apply` with journal batches, the "
        f"rows `add` would write, {setup['build_s']:.0f} s) instead of hours of extraction: "
        "names of one to three pseudo-words drawn with Zipf-like frequencies from 5,000 "
        f"words, clusters of 50 nodes with 80% of edges inside them, "
        f"{setup['alias_duplicates']:,} alias twins (`pd.x` / `pandas.x`), "
        f"{setup['single_valued_conflicts']:,} nodes with two current values of a "
        f"single-valued relation, and an access log of {setup['access_events']:,} searches "
        "and feedback events over the last month. Store: "
        f"{setup['store']}; embedder: {setup['embedder']}, so the figures are the evolver's "
        f"cost, not an embedding model's. Python {result['machine']['python']} on "
        f"{result['machine']['cpus']} CPUs shared with other work.",
        "",
        "| pass | time | what it did |",
        "|---|---|---|",
        f"| dry run (median of {len(dry['took_ms_all'])}: {spread} s) | "
        f"**{dry['took_ms'] / 1000:.1f} s** | planned {dry['changes'] or _planned(dry):,} "
        f"changes, wrote nothing ({_what(dry)}) |",
        f"| first run (cold start) | **{first['took_ms'] / 1000:.1f} s** | "
        f"{first['changes']:,} journal entries in one batch: {_what(first)} |",
        f"| incremental run (after 200 adds, 100 searches) | "
        f"**{second['took_ms'] / 1000:.1f} s** | {second['changes']:,} journal entries: "
        f"{_what(second)} |",
        f"| undo of the incremental run | {result['undo_incremental_run_ms'] / 1000:.1f} s | "
        f"restored the {second['changes']:,} rows it changed |",
    ]
    return "\n".join(lines)


def _planned(run: dict[str, Any]) -> int:
    """Changes a dry run planned (it writes none, so its ``changes`` is 0)."""
    return sum(run["applied"].values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--folder", help="where to build the memory (default: a temp folder)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "evolve.json"))
    ap.add_argument("--render", action="store_true", help="only rewrite the README section")
    args = ap.parse_args()
    if args.render:
        write_section(BENCH_README, NAME, COMMAND, render(json.loads(Path(args.out).read_text())))
        return
    folder = Path(args.folder or tempfile.mkdtemp(prefix="sage-evolve-bench-"))
    try:
        built = build(folder, args.nodes, args.seed)
        print(f"built {built}", flush=True)
        clock = [NOW]
        cfg = SageConfig(embedder="hashing", vector_index="numpy")
        t = time.perf_counter()
        mem = SageMemory(folder, config=cfg, extractor=NoGraphExtractor(), clock=lambda: clock[0])
        open_s = round(time.perf_counter() - t, 1)
        with mem:
            # Three dry runs (nothing written, so each sees the same graph): the machine is
            # shared, and the spread says how much of a figure is the machine.
            dries = [mem.evolve(user_id="bench", dry_run=True) for _ in range(3)]
            dry = sorted(dries, key=lambda r: r.took_ms)[1]
            print(f"dry runs: {[round(r.took_ms) for r in dries]} ms", flush=True)
            first = mem.evolve(user_id="bench")
            print(f"first run: {first.took_ms:.0f} ms {first.counts()}", flush=True)
            clock[0] += timedelta(days=1)
            rng = random.Random(args.seed + 1)
            words, freq = vocabulary(rng)
            for i in range(200):
                a, b = rng.choices(words, freq, k=2)
                mem.add_graph(
                    f"{a} uses {b} ({i})",
                    nodes=[NodeSpec("a", f"{a} {i}"), NodeSpec("b", f"{b} {i}")],
                    edges=[EdgeSpec("a", "b", "USES")],
                    user_id="bench",
                )
            for _ in range(100):
                mem.search(" ".join(rng.choices(words, freq, k=2)), user_id="bench")
            clock[0] += timedelta(hours=1)
            second = mem.evolve(user_id="bench")
            print(f"incremental run: {second.took_ms:.0f} ms {second.counts()}", flush=True)
            t = time.perf_counter()
            mem.undo(second.batch_id)
            undo_ms = round((time.perf_counter() - t) * 1000, 1)
        result = {
            "setup": {
                **built,
                "store": "SQLite (folder) + numpy vector index",
                "embedder": "hashing (256-d)",
                "max_items_per_run": cfg.evolve.max_items_per_run,
                "open_s": open_s,
            },
            "dry_run": {**summarise(dry), "took_ms_all": [r.took_ms for r in dries]},
            "first_run": summarise(first),
            "incremental_run": summarise(second),
            "undo_incremental_run_ms": undo_ms,
            "machine": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
            },
        }
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(json.dumps(result, indent=2, sort_keys=True))
        write_section(BENCH_README, NAME, COMMAND, render(result))
    finally:
        if not args.folder:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
