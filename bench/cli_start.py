"""How long `sage-memory search` and `add` take on an existing folder, as a user runs them.

    .venv/bin/python bench/cli_start.py                       # 1,000 memories, 7 runs each
    .venv/bin/python bench/cli_start.py --baseline /path/to/other/venv/bin/sage-memory

Builds a folder of N LoCoMo-like turns (closed cleanly), then runs each command in a fresh
process R times, interleaved with `sage-memory --help` (the interpreter's own start-up floor)
and, with ``--baseline``, the same commands through another installation (e.g. the previous
release) on a copy of the same folder. Prints the median wall time and the median CPU time
(user + system) of each: on a shared machine the CPU time is the steadier figure. Python's
bytecode cache is on, as for an installed package. Writes bench/results/cli_start.json and the
``cli-start`` section of bench/README.md.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sections import BENCH_README, write_section  # noqa: E402

NAME = "cli-start"
COMMAND = ".venv/bin/python bench/cli_start.py --baseline OTHER_VENV/bin/sage-memory"


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
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/ alone")
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
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": round(os.getloadavg()[0], 1),
        "baseline": args.baseline,
        "rows": rows,
    }
    if args.no_write:
        return
    path = ROOT / "bench" / "results" / "cli_start.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    write_section(BENCH_README, NAME, COMMAND, render(out))


def render(out: dict[str, Any]) -> str:
    """The section of bench/README.md: median wall and CPU seconds of each command."""
    rows = out["rows"]
    systems = [s for s in ("this", "baseline") if f"{s} search" in rows]
    head = "| command | " + " | ".join(f"{s} wall s | {s} CPU s" for s in systems) + " |"
    lines = [head, "|---|" + "---|---|" * len(systems)]
    for what in ("--help", "search", "add"):
        cells = " | ".join(
            f"{rows[f'{s} {what}']['wall_s']:.2f} | {rows[f'{s} {what}']['cpu_s']:.2f}"
            for s in systems
        )
        lines.append(f"| `{what}` | {cells} |")
    baseline = f"; baseline: `{out['baseline']}`" if out.get("baseline") else ""
    return "\n".join(
        [
            f"Median of {out['runs']} runs each, interleaved, on a folder of {out['n']} turns"
            f"{baseline}.",
            "",
            *lines,
            "",
            f"Measured {out['when']}, load average {out['load_average']} (2 CPUs shared with "
            "other work: wall time there is noisy, CPU time is the steadier figure).",
        ]
    )


if __name__ == "__main__":
    main()
