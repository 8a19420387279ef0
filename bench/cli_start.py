"""How long `sage-memory search` and `add` take on an existing folder, as a user runs them.

    .venv/bin/python bench/cli_start.py                       # 1,000 memories, 7 runs each
    .venv/bin/python bench/cli_start.py --baseline /path/to/other/venv/bin/sage-memory

Builds a folder of N LoCoMo-like turns (closed cleanly), then runs each command in a fresh
process R times, interleaved with `sage-memory --help` (the interpreter's own start-up floor)
and, with ``--baseline``, the same commands through another installation (e.g. the previous
release) on a copy of the same folder. Prints the median wall time and the median CPU time
(user + system) of each: on a shared machine the CPU time is the steadier figure. Python's
bytecode cache is on, as for an installed package. Writes bench/results/cli_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _timed(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", help="another sage-memory executable to time on a copy")
    args = ap.parse_args()
    from throughput import corpus

    from sage_memory import SageMemory

    exe = str(Path(sys.executable).with_name("sage-memory"))
    tmp = Path(tempfile.mkdtemp(prefix="sage-cli-"))
    try:
        folder = tmp / "mem"
        with SageMemory(folder) as mem:
            mem.add_many(corpus(args.n), user_id="bench")
        systems = {"this": (exe, folder)}
        if args.baseline:
            shutil.copytree(folder, tmp / "base")
            systems["baseline"] = (args.baseline, tmp / "base")
        for cli, where in systems.values():  # first runs: bytecode caches, index counts
            _timed([cli, "--path", str(where), "--user", "bench", "search", "warm up"])
        times: dict[str, list[tuple[float, float]]] = {}
        for i in range(args.runs):
            for name, (cli, where) in systems.items():
                base = [cli, "--path", str(where), "--user", "bench"]
                for what, cmd in (
                    ("--help", [cli, "--help"]),
                    ("search", [*base, "search", "where does Caroline live now?"]),
                    ("add", [*base, "add", f"Caroline moved to Lisbon (run {i})."]),
                ):
                    times.setdefault(f"{name} {what}", []).append(_timed(cmd))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = {
        key: {
            "wall_s": statistics.median(w for w, _ in runs),
            "cpu_s": statistics.median(c for _, c in runs),
        }
        for key, runs in times.items()
    }
    for key, row in rows.items():
        print(f"{key:20s} wall {row['wall_s']:.2f} s   cpu {row['cpu_s']:.2f} s")
    out = {
        "n": args.n,
        "runs": args.runs,
        "when": time.strftime("%Y-%m-%d"),
        "load_average": round(os.getloadavg()[0], 1),
        "rows": rows,
    }
    path = ROOT / "bench" / "results" / "cli_start.json"
    path.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
