"""Search latency of two checkouts side by side, with a plain Chroma query as the yardstick.

    .venv/bin/python bench/ab_search.py --folder F --before ../main --after . [--queries 100]

Each checkout runs in its own process on its own copy of the folder (``F`` as written by
``bench/scale.py --keep``), and a third process holds a plain Chroma collection of the same
memory vectors. Query by query, the three are asked in turn (the order rotates), each timing
its own ``search(limit=10)`` or top-10 query with the query embedding included: the machine's
load falls on all three alike, so the ratios to plain Chroma of the two checkouts are measured
side by side in one run. Each also reports its CPU time per search (user + system of its
process), which a shared machine's load moves less than the wall time. Prints the result as
JSON and writes it to bench/results/ab_search.json (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "ab_search.json"

#: The worker: answers one query per line with the seconds its search took, wall and CPU (the
#: process's user + system time: on a loaded machine the steadier figure).
WORKER = r"""
import json, sys, tempfile, time
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from scale import USER, plain_collection
kind, folder = sys.argv[1], sys.argv[2]
if kind == "chroma":
    from sage_memory.embed import make_embedder
    embedder = make_embedder("minilm")
    coll = plain_collection(Path(folder), embedder.dim,
                            Path(tempfile.mkdtemp(prefix="ab-chroma-")))
    def ask(q):
        coll.query(query_embeddings=[embedder.embed_query(q)], n_results=10)
else:
    import sage_memory
    from sage_memory import SageMemory
    mem = SageMemory(folder)
    def ask(q):
        mem.search(q, user_id=USER, limit=10)
    print(sage_memory.__file__, flush=True)
print("ready", flush=True)
for line in sys.stdin:
    q = json.loads(line)
    t, c = time.perf_counter(), time.process_time()
    ask(q)
    print(time.perf_counter() - t, time.process_time() - c, flush=True)
"""


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(q * len(s)))] * 1000, 2)


def _memories(folder: Path) -> int:
    import sqlite3

    db = sqlite3.connect(f"file:{folder / 'sage.db'}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        db.close()


def _commit(path: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short=10", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, required=True, help="a folder from scale.py --keep")
    ap.add_argument("--before", type=Path, required=True, help="checkout measured first")
    ap.add_argument("--after", type=Path, required=True, help="checkout measured second")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from scale import queries, wait_ready

    work = Path(tempfile.mkdtemp(prefix="ab-search-"))
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        sides = {"before": args.before.resolve(), "after": args.after.resolve()}
        for name, root in sides.items():
            copy = work / name
            shutil.copytree(args.folder, copy)
            env = dict(os.environ, PYTHONPATH=str(root), LITELLM_LOCAL_MODEL_COST_MAP="True")
            # Run in the checkout: ``python -c`` puts the working directory first on the path,
            # so started elsewhere (in the other checkout) a side would import that one's code.
            procs[name] = subprocess.Popen(
                [sys.executable, "-c", WORKER, "sage", str(copy), str(HERE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=root,
            )
        procs["chroma"] = subprocess.Popen(
            [sys.executable, "-c", WORKER, "chroma", str(args.folder), str(HERE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        wait_ready(procs, sides)  # each side runs its own checkout's code
        names = list(procs)
        times: dict[str, list[float]] = {n: [] for n in names}
        cpu: dict[str, list[float]] = {n: [] for n in names}
        load_before = round(os.getloadavg()[0], 1)
        qs = queries(args.warm + args.queries)
        for i, q in enumerate(qs):
            order = names[i % 3 :] + names[: i % 3]  # rotate who goes first
            for name in order:
                p = procs[name]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(json.dumps(q) + "\n")
                p.stdin.flush()
                took, spent = map(float, p.stdout.readline().split())
                if i >= args.warm:
                    times[name].append(took)
                    cpu[name].append(spent)
    finally:
        for p in procs.values():
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    chroma_p50, chroma_p95 = _pct(times["chroma"], 0.5), _pct(times["chroma"], 0.95)
    result: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "memories": _memories(args.folder),
        "queries": args.queries,
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 1),
        "cpus": os.cpu_count(),
        "chroma_p50_ms": chroma_p50,
        "chroma_p95_ms": chroma_p95,
        "chroma_cpu_p50_ms": _pct(cpu["chroma"], 0.5),
    }
    for name in ("before", "after"):
        p50, p95 = _pct(times[name], 0.5), _pct(times[name], 0.95)
        result[name] = {
            "commit": _commit(sides[name]),
            "p50_ms": p50,
            "p95_ms": p95,
            "p50_ratio": round(p50 / chroma_p50, 2),
            "p95_ratio": round(p95 / chroma_p95, 2),
            "cpu_p50_ms": _pct(cpu[name], 0.5),
            "cpu_p95_ms": _pct(cpu[name], 0.95),
            "cpu_mean_ms": round(sum(cpu[name]) / len(cpu[name]) * 1000, 2),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
