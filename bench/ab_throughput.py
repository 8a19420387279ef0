"""Single add, search and bulk add of two checkouts side by side, beside plain Chroma.

    .venv/bin/python bench/ab_throughput.py --build /tmp/tp/n10000 --n 10000  # once
    .venv/bin/python bench/ab_throughput.py --folder /tmp/tp/n10000 --before ../main --after .

The corpus, single adds and searches are those of ``bench/throughput.py``. ``--build`` writes
the first N turns to a folder with ``add_many`` (batches of 64). The comparison runs each
checkout in its own process on its own copy of that folder, and a third process holding a
plain Chroma collection of the folder's memory vectors and texts; step by step (100 single adds,
then 200 searches, then ten ``add_many`` batches of 64), the three are asked in turn, the order
rotating, each timing its own call (wall, and CPU: user + system of its process, which a shared
machine's load moves less). So the load falls on all three alike, and each checkout's ratios to
plain Chroma are measured in one run. Prints JSON; writes nothing.
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
sys.path.insert(0, str(HERE))

from scale import wait_ready  # noqa: E402
from throughput import LOCOMO, corpus, search_queries  # noqa: E402

#: Single adds and bulk texts after the folder's N turns (as throughput.py's singles).
SINGLES, BULK = 100, 640

#: The worker: answers one (op, argument) per line with the seconds it took, wall and CPU.
WORKER = r"""
import json, sys, tempfile, time
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from scale import plain_collection
from sage_memory.embed import make_embedder
kind, folder = sys.argv[1], sys.argv[2]
if kind == "chroma":
    emb = make_embedder("minilm")
    coll = plain_collection(Path(folder), emb.dim, Path(tempfile.mkdtemp(prefix="ab-chroma-")),
                            documents=True)
    n = [0]
    def add(t):
        n[0] += 1
        coll.add(ids=[f"s{n[0]}"], embeddings=emb.embed([t]), documents=[t])
    def bulk(ts):
        n[0] += 1
        coll.add(ids=[f"b{n[0]}.{j}" for j in range(len(ts))], embeddings=emb.embed(ts),
                 documents=ts)
    def search(q):
        coll.query(query_embeddings=[emb.embed_query(q)], n_results=10)
else:
    import sage_memory
    from sage_memory import SageMemory
    mem = SageMemory(folder)
    mem.search("warm up", user_id="bench")
    mem.add_many(["Warm up: Alice moved to Oslo."], user_id="bench", batch_size=64)
    def add(t):
        mem.add(t, user_id="bench")
    def bulk(ts):
        mem.add_many(ts, user_id="bench", batch_size=64)
    def search(q):
        mem.search(q, user_id="bench", limit=10)
    print(sage_memory.__file__, flush=True)
print("ready", flush=True)
ops = {"add": add, "bulk": bulk, "search": search}
for line in sys.stdin:
    op, arg = json.loads(line)
    t, c = time.perf_counter(), time.process_time()
    ops[op](arg)
    print(time.perf_counter() - t, time.process_time() - c, flush=True)
"""


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return round(s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1000, 2)


def _commit(path: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short=10", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def build(folder: Path, n: int, locomo: Path) -> None:
    from sage_memory import SageMemory

    with SageMemory(folder) as mem:
        t, c = time.perf_counter(), time.process_time()
        mem.add_many(corpus(n, locomo), user_id="bench", batch_size=64)
        print(f"built {n} in {time.perf_counter() - t:.0f} s ({time.process_time() - c:.0f} s CPU)")


def compare(folder: Path, sides: dict[str, Path], n: int, locomo: Path) -> dict[str, Any]:
    texts = corpus(n + SINGLES + BULK, locomo)
    singles, extra = texts[n : n + SINGLES], texts[n + SINGLES :]
    steps: list[tuple[str, Any]] = [("add", t) for t in singles]
    steps += [("search", q) for q in search_queries(200)]
    steps += [("bulk", extra[i : i + 64]) for i in range(0, len(extra), 64)]
    work = Path(tempfile.mkdtemp(prefix="ab-throughput-"))
    procs: dict[str, subprocess.Popen[str]] = {}
    times: dict[str, dict[str, list[tuple[float, float]]]] = {}
    try:
        for name in ("before", "after", "chroma"):
            copy = work / name
            shutil.copytree(folder, copy)
            root = sides.get(name, sides["before"])
            env = dict(os.environ, PYTHONPATH=str(root), LITELLM_LOCAL_MODEL_COST_MAP="True")
            kind = "chroma" if name == "chroma" else "sage"
            # Run in the checkout: ``python -c`` puts the working directory first on the path.
            procs[name] = subprocess.Popen(
                [sys.executable, "-c", WORKER, kind, str(copy), str(HERE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=root,
            )
        wait_ready(procs, sides)  # each side runs its own checkout's code
        names = list(procs)
        times = {n: {"add": [], "search": [], "bulk": []} for n in names}
        load_before = round(os.getloadavg()[0], 1)
        for i, (op, arg) in enumerate(steps):
            for name in names[i % 3 :] + names[: i % 3]:  # rotate who goes first
                p = procs[name]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(json.dumps([op, arg]) + "\n")
                p.stdin.flush()
                wall, cpu = map(float, p.stdout.readline().split())
                times[name][op].append((wall, cpu))
    finally:
        for p in procs.values():
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    out: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "memories": n,
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 1),
        "cpus": os.cpu_count(),
    }
    for name in names:
        t = times[name]
        row: dict[str, Any] = {"commit": _commit(sides[name])} if name in sides else {}
        for op in ("search", "add"):
            for how, k in (("wall", 0), ("cpu", 1)):
                xs = [x[k] for x in t[op]]
                row[f"{op}_{how}_p50_ms"] = _pct(xs, 0.5)
                row[f"{op}_{how}_p95_ms"] = _pct(xs, 0.95)
        row["bulk_wall_per_s"] = round(len(extra) / sum(x[0] for x in t["bulk"]), 1)
        row["bulk_cpu_per_s"] = round(len(extra) / sum(x[1] for x in t["bulk"]), 1)
        out[name] = row
    chroma = out["chroma"]
    for name in sides:
        row = out[name]
        row["ratios"] = {
            k: round(row[k] / chroma[k], 2) for k in row if k.endswith("_ms") and chroma.get(k)
        }
        for how in ("wall", "cpu"):
            key = f"bulk_{how}_per_s"
            row["ratios"][key] = round(row[key] / chroma[key], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, help="write a folder of the first N turns and stop")
    ap.add_argument("--folder", type=Path, help="a folder written by --build")
    ap.add_argument("--before", type=Path, help="checkout measured as 'before'")
    ap.add_argument("--after", type=Path, help="checkout measured as 'after'")
    ap.add_argument("--n", type=int, default=10_000, help="turns in the folder")
    ap.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo dev split")
    args = ap.parse_args()
    if args.build is not None:
        build(args.build, args.n, args.locomo)
        return
    if args.folder is None or args.before is None or args.after is None:
        ap.error("--folder, --before and --after (or --build)")
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    print(json.dumps(compare(args.folder, sides, args.n, args.locomo), indent=1))


if __name__ == "__main__":
    main()
