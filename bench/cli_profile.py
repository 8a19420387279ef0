"""Where a `sage-memory search` or `add` process spends its CPU time, by import and by phase.

    .venv/bin/python bench/cli_profile.py                    # a folder of 1,000 turns
    .venv/bin/python bench/cli_profile.py --folder DIR       # an existing folder (user "bench")
    .venv/bin/python bench/cli_profile.py --python /other/venv/bin/python   # another install

Runs each command in a fresh interpreter (bytecode cache on, as installed) that counts the CPU
time (``time.process_time``: user + system of this process) spent importing each top-level
package, and the time of each phase of the command: importing the CLI, opening the folder,
the command itself, closing. CPU time rather than wall time because the machine may be shared
(``python -X importtime`` measures wall time, which a loaded machine inflates at random). An
import's time is its own: a package's figure leaves out the packages it imports, which are
counted under their own names. Writes bench/results/cli_profile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

# Run inside the measured interpreter: an import hook that charges each module's execution
# (minus its nested imports) to its top-level package, then the CLI's phases.
_CHILD = r"""
import importlib.abc, importlib.machinery, json, sys, time

own = {}          # top-level package (sage_memory: its subpackage) -> CPU seconds
stack = []        # per module being executed: CPU seconds spent in nested imports

def group(name):
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "sage_memory" else parts[0]

class Timed(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner
    def __getattr__(self, name):  # resource readers, get_source, ...: the real loader's
        return getattr(self.inner, name)
    def create_module(self, spec):
        return self.inner.create_module(spec)
    def exec_module(self, module):
        stack.append(0.0)
        t = time.process_time()
        try:
            self.inner.exec_module(module)
        finally:
            spent = time.process_time() - t
            nested = stack.pop()
            key = group(module.__name__)
            own[key] = own.get(key, 0.0) + spent - nested
            if stack:
                stack[-1] += spent

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = Timed(spec.loader)
                return spec
        return None

sys.meta_path.insert(0, Finder())
start = time.process_time()
phases = {"interpreter": start}  # CPU spent before this line: Python's own start-up
import sage_memory.cli as cli
phases["import cli"] = time.process_time() - start
argv = json.loads(sys.argv[1])
args = cli.build_parser().parse_args(argv)
t = time.process_time()
mem = cli._open(args)
phases["open"] = time.process_time() - t
t = time.process_time()
if args.command == "search":
    mem.search(args.query, user_id=args.user)
else:
    mem.add(args.text, user_id=args.user)
phases[args.command] = time.process_time() - t
t = time.process_time()
mem.close()
phases["close"] = time.process_time() - t
phases["total"] = time.process_time()
heavy = [m for m in ("chromadb", "litellm", "networkx", "onnxruntime", "tokenizers", "spacy",
                     "lemminflect", "langchain_core", "llama_index", "snowballstemmer")
         if m in sys.modules]
print(json.dumps({"phases": phases, "imports": own, "loaded": heavy}))
"""


def _profile(python: str, argv: list[str]) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [python, "-c", _CHILD, json.dumps(argv)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not this checkout: `-c` puts the working folder on sys.path
    )
    if done.returncode != 0:
        sys.exit(f"profiled command failed:\n{done.stderr}")
    out = done.stdout
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def _median(runs: list[dict[str, dict[str, float]]], key: str) -> dict[str, float]:
    names = {name for run in runs for name in run[key]}
    return {n: statistics.median(run[key].get(n, 0.0) for run in runs) for n in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="turns in the folder built")
    ap.add_argument("--folder", help="profile this folder (a copy of it) instead of building one")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the interpreter to profile")
    ap.add_argument("--top", type=int, default=14, help="imports listed per command")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sage-prof-"))
    try:
        folder = tmp / "mem"
        if args.folder:
            shutil.copytree(args.folder, folder)
        else:
            from throughput import corpus

            from sage_memory import SageMemory

            with SageMemory(folder) as mem:
                mem.add_many(corpus(args.n), user_id="bench")
        base = ["--path", str(folder), "--user", "bench"]
        commands = {
            "search": [*base, "search", "where does Caroline live now?"],
            "add": [*base, "add", "Caroline moved to Lisbon."],
        }
        _profile(args.python, commands["search"])  # bytecode caches, the model file cache
        report: dict[str, object] = {}
        for name, argv in commands.items():
            runs = [_profile(args.python, argv) for _ in range(args.runs)]
            phases = _median(runs, "phases")  # type: ignore[arg-type]
            imports = _median(runs, "imports")  # type: ignore[arg-type]
            top = dict(sorted(imports.items(), key=lambda kv: -kv[1])[: args.top])
            report[name] = {
                "phases_cpu_s": phases,
                "imports_cpu_s": top,
                "imports_total_cpu_s": sum(imports.values()),
                "heavy_modules_loaded": runs[-1]["loaded"],
            }
            print(f"{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in phases.items()))
            print(f"  imports (own CPU s, total {sum(imports.values()):.3f}):")
            for mod, secs in top.items():
                print(f"    {mod:34s} {secs:.3f}")
            print(f"  heavy modules loaded: {', '.join(runs[-1]['loaded']) or 'none'}")  # type: ignore[arg-type]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {
        "python": args.python,
        "n": None if args.folder else args.n,
        "runs": args.runs,
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "load_average": round(os.getloadavg()[0], 1),
        **report,
    }
    path = ROOT / "bench" / "results" / "cli_profile.json"
    path.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
