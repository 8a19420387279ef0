"""Reliability soak: the CI reliability checks (tests/reliability/), run many more times.

    .venv/bin/python bench/soak.py --trials 20            # about two minutes on 2 cores
    .venv/bin/python bench/soak.py --trials 50 --seed 7   # longer, other kill points

Four parts, each reported with its figures:

1. crash: ``--trials`` writer processes SIGKILLed at random points (after a random number of
   acknowledged writes plus a random delay; every 5th trial while the folder is being opened;
   every other one with Chroma flushing its HNSW files every few dozen writes). Folders are
   reused for 5 trials, so each kill also hits a folder that was recovered before. After every
   kill the folder is reopened: acknowledged writes vs writes found (get + search), and any
   broken invariant (edge to a missing node, index out of step with SQLite, integrity check).
2. fuzz: mutated LLM answers through the parser, hostile texts and queries through add /
   search / explore (in memory, SQLite and a real folder): inputs tried, unexpected failures.
3. isolation: random multi-scope worlds with shared entity names; every scope searches and
   explores every other scope's words: probes, leaks.
4. deletion: delete and delete_all, close, then a raw-byte scan of every file of the folder
   for the deleted texts and user id: markers checked, leaks.

Writes bench/results/soak.json; exits 1 if anything was lost, broken or leaked.
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
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "reliability"))
sys.path.insert(0, str(ROOT / "bench"))

import reliability_kit as kit  # noqa: E402
from sections import BENCH_README, write_section  # noqa: E402

from sage_memory.index.numpy import NumpyVectorIndex  # noqa: E402
from sage_memory.store.sqlite import SQLiteGraphStore  # noqa: E402

TRIALS_PER_FOLDER = 5


def _sqlite_in_memory() -> Any:
    """The SQLite store (SQL scope filters) without a folder, with the numpy index."""
    return kit.open_memory(None, store=SQLiteGraphStore(":memory:"), index=NumpyVectorIndex())


def crash(trials: int, rng: random.Random, work: Path) -> dict[str, Any]:
    deleted = 0
    problems: list[str] = []
    # Per folder, the last check's (found, acknowledged): a lost write stays lost, so the last
    # check of a folder covers every write acknowledged in it.
    tallies: dict[Path, tuple[int, int]] = {}
    kinds = {"after_writes": 0, "during_open": 0, "small_hnsw": 0}
    folder = work / "crash-0"
    acked: dict[str, tuple[str, str]] = {}
    gone: dict[str, str] = {}
    attempted: set[str] = set()
    for t in range(trials):
        if t % TRIALS_PER_FOLDER == 0:
            folder = work / f"crash-{t // TRIALS_PER_FOLDER}"
            acked, gone, attempted = {}, {}, set()
        during_open = t % 5 == 4
        small = t % 2 == 1
        kinds["during_open" if during_open else "after_writes"] += 1
        kinds["small_hnsw"] += small
        kill_after = 0 if during_open else rng.randint(1, 150)
        jitter = rng.uniform(0.2, 1.5) if during_open else rng.uniform(0.0, 0.05)
        started = time.perf_counter()
        trial = kit.kill_writer(
            folder,
            seed=rng.randrange(10**6),
            kill_after_acks=kill_after,
            jitter_s=jitter,
            small_hnsw=small,
        )
        acked.update(trial.acked)
        gone.update(trial.deleted)
        attempted |= trial.attempted
        got, broken = kit.verify_folder(folder, acked, gone, attempted)
        expected = len(set(acked) - set(gone) - attempted)
        tallies[folder] = (got, expected)
        deleted += len(trial.deleted)
        broken = trial.problems + broken
        problems += [f"trial {t}: {p}" for p in broken]
        print(
            f"  crash trial {t + 1:>3}/{trials}: kill after {kill_after:>3} acks"
            f" +{jitter * 1000:4.0f} ms{' (open)' if during_open else ''}"
            f"{' (small hnsw)' if small else ''}: {len(trial.acked):>3} acked,"
            f" folder holds {got}/{expected}, {len(broken)} problems"
            f" [{time.perf_counter() - started:.1f}s]",
            flush=True,
        )
    return {
        "trials": trials,
        "kinds": kinds,
        "writes_acknowledged": sum(e for _, e in tallies.values()),
        "writes_found": sum(g for g, _ in tallies.values()),
        "deletes_acknowledged": deleted,
        "problems": problems,
    }


def fuzz(parser_inputs: int, engine_inputs: int, seed: int, work: Path) -> dict[str, Any]:
    tried_parser, failures = kit.fuzz_parser(parser_inputs, seed)
    tried_engine = 0
    for i, kind in enumerate(("memory", "sqlite", "folder")):
        n = engine_inputs if kind != "folder" else max(1, engine_inputs // 5)
        if kind == "memory":
            mem = kit.open_memory(None)
        elif kind == "sqlite":
            mem = _sqlite_in_memory()
        else:
            mem = kit.open_memory(work / "fuzz")
        with mem:
            tried, found = kit.fuzz_engine(mem, n, seed + i)
            tried_engine += tried
            failures += [f"{kind}: {f}" for f in found]
            failures += [f"{kind}: {p}" for p in kit.graph_problems(mem)]
    if (work / "fuzz").exists():
        failures += kit.sqlite_problems(work / "fuzz" / "sage.db")
    print(
        f"  fuzz: {tried_parser} parser inputs, {tried_engine} engine inputs, "
        f"{len(failures)} failures",
        flush=True,
    )
    return {
        "parser_inputs": tried_parser,
        "engine_inputs": tried_engine,
        "inputs_tried": tried_parser + tried_engine,
        "failures": failures,
    }


def isolation(worlds: int, seed: int, work: Path) -> dict[str, Any]:
    probes = 0
    leaks: list[str] = []
    for w in range(worlds):
        if w % 5 == 4:
            mem = kit.open_memory(work / f"iso-{w}")
        elif w % 2:
            mem = _sqlite_in_memory()
        else:
            mem = kit.open_memory(None)
        with mem:
            n, found = kit.isolation_leaks(mem, seed * 1000 + w, scopes=3 + w % 2, texts=4)
        probes += n
        leaks += found
    print(f"  isolation: {worlds} worlds, {probes} probes, {len(leaks)} leaks", flush=True)
    return {"worlds": worlds, "probes": probes, "leaks": leaks}


def deletion(rounds: int, seed: int, work: Path) -> dict[str, Any]:
    markers = 0
    leaks: list[str] = []
    for r in range(rounds):
        n, found = kit.deletion_leaks(work / f"del-{r}", seed * 1000 + r)
        markers += n
        leaks += found
    print(f"  deletion: {rounds} rounds, {markers} markers scanned for, {len(leaks)} leaks")
    return {"rounds": rounds, "markers": markers, "leaks": leaks}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20, help="crash trials (SIGKILLed writers)")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--fuzz", type=int, default=20_000, help="mutated LLM answers to parse")
    ap.add_argument("--engine-fuzz", type=int, default=400, help="hostile add/search/explore")
    ap.add_argument("--worlds", type=int, default=20, help="isolation worlds")
    ap.add_argument("--deletion-rounds", type=int, default=4)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "soak.json")
    ap.add_argument("--keep", action="store_true", help="keep the work folders for inspection")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite bench/README.md")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="sage-soak-"))
    started = time.perf_counter()
    command = "bench/soak.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"soak: {command.strip()} (work folder {work})", flush=True)
    try:
        report: dict[str, Any] = {
            "command": f".venv/bin/python {command.strip()}",
            "seed": args.seed,
            "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
            "python": platform.python_version(),
            "crash": crash(args.trials, rng, work),
            "fuzz": fuzz(args.fuzz, args.engine_fuzz, args.seed, work),
            "isolation": isolation(args.worlds, args.seed, work),
            "deletion": deletion(args.deletion_rounds, args.seed, work),
        }
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    c, f, i, d = report["crash"], report["fuzz"], report["isolation"], report["deletion"]
    report["passed"] = not (
        c["problems"]
        or c["writes_found"] != c["writes_acknowledged"]
        or f["failures"]
        or i["leaks"]
        or d["leaks"]
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")

    print()
    table = render(report)
    print(table)
    if not args.no_readme:
        write_section(BENCH_README, "soak-table", report["command"], table)
    print(f"\n{'PASSED' if report['passed'] else 'FAILED'}; wrote {args.out}")
    return 0 if report["passed"] else 1


def render(report: dict[str, Any]) -> str:
    """The bench/README.md table of a soak report (also printed by the run)."""
    c, f, i, d = report["crash"], report["fuzz"], report["isolation"], report["deletion"]
    kinds = c.get("kinds", {})
    trials = f"{c['trials']}"
    if kinds:
        trials += (
            f" ({kinds.get('after_writes', 0)} after writes, {kinds.get('during_open', 0)} during"
            f" open; {kinds.get('small_hnsw', 0)} with frequent HNSW flushes)"
        )
    rows = [
        ("crash trials run (SIGKILL)", trials),
        (
            "writes acknowledged / found after recovery",
            f"{c['writes_acknowledged']} / {c['writes_found']}",
        ),
        ("acknowledged deletes (verified gone)", f"{c['deletes_acknowledged']}"),
        ("broken invariants after recovery", f"{len(c['problems'])}"),
        (
            "hostile inputs tried (parser + engine)",
            f"{f['inputs_tried']:,} ({f['parser_inputs']:,} + {f['engine_inputs']:,})",
        ),
        ("unexpected failures", f"{len(f['failures'])}"),
        ("isolation probes / leaks", f"{i['probes']:,} / {len(i['leaks'])}"),
        ("deletion markers / leaks", f"{d['markers']:,} / {len(d['leaks'])}"),
        ("time", f"{report['seconds']:.0f} s"),
    ]
    head = (
        f"Figures of `{report['command']}` (seed {report['seed']}, {report['machine']}, "
        f"Python {report['python']}; the machine may have been shared with other work):\n\n"
    )
    return head + "| figure | value |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


if __name__ == "__main__":
    raise SystemExit(main())
