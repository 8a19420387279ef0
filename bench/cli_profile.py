"""Where a `sage-memory search` or `add` process spends its CPU time, by import and by phase.

    .venv/bin/python bench/cli_profile.py                    # a folder of 1,000 turns
    .venv/bin/python bench/cli_profile.py --folder DIR       # an existing folder (user "bench")
    .venv/bin/python bench/cli_profile.py --baseline /other/venv/bin/python  # side by side

Runs each command (as ``cli.main`` runs it) in a fresh interpreter (bytecode cache on, as
installed) that counts the CPU time (``time.process_time``: user + system of this process)
spent importing each top-level package, and the time of each phase of the command: importing
the CLI, opening the folder, the command itself, closing. CPU time rather than wall time
because the machine may be shared (``python -X importtime`` measures wall time, which a loaded
machine inflates at random). An import's time is its own: a package's figure leaves out the
packages it imports, which are counted under their own names. The wall time of each process
is measured too (from start to exit), and for an ``add`` that started a background extraction
worker, the wall time the worker took to finish after it (each run waits for it). Commands:
`search`, `add` (which extracts inline, or in the background where the installation does
that), `add --no-infer`, and where there is background extraction, `add --extract now` and
`extract` (of one memory left pending).

Writes bench/results/cli_profile.json and the ``cli-profile`` section of bench/README.md.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sections import BENCH_README, write_section  # noqa: E402

NAME = "cli-profile"
COMMAND = ".venv/bin/python bench/cli_profile.py --baseline OTHER_VENV/bin/python"

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
# The command runs as `sage-memory ARGV` does (cli.main); opening and closing the folder are
# timed by wrapping the CLI's _open and the engine's close, the rest is the command's own.
spent = {"open": 0.0, "close": 0.0}
workers = []  # background extraction workers the command started (waited for by the parent)
real_open = cli._open

def timed_open(*a, **k):
    t = time.process_time()
    mem = real_open(*a, **k)
    spent["open"] += time.process_time() - t
    cls = type(mem)
    if not getattr(cls, "_timed", False):
        real_close = cls.close
        def close(self):
            t = time.process_time()
            try:
                real_close(self)
            finally:
                spent["close"] += time.process_time() - t
        cls.close, cls._timed = close, True
    return mem

cli._open = timed_open
try:
    import sage_memory.worker as worker
    real_spawn = worker.spawn
    def spawn(*a, **k):
        pid = real_spawn(*a, **k)
        workers.append(pid)
        return pid
    worker.spawn = spawn
except ImportError:  # an installation without background extraction
    pass
import contextlib, io
t = time.process_time()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = cli.main(argv)
if code != 0:
    sys.exit(f"exit status {code}")
ran = time.process_time() - t
phases["open"], phases["close"] = spent["open"], spent["close"]
phases["command"] = ran - spent["open"] - spent["close"]
phases["total"] = time.process_time()
heavy = [m for m in ("chromadb", "litellm", "networkx", "onnxruntime", "tokenizers", "spacy",
                     "lemminflect", "langchain_core", "llama_index", "snowballstemmer")
         if m in sys.modules]
print(json.dumps({"phases": phases, "imports": own, "loaded": heavy, "workers": workers}))
"""


# Leaves one memory pending (stored, not extracted, no worker started): what `extract` measures.
_PEND = r"""
import sys
from sage_memory import SageMemory
with SageMemory(sys.argv[1]) as mem:
    mem.add(sys.argv[2], user_id="bench", defer=True)
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("SAGE_MEMORY_EXTRACT", None)  # each installation's own default
    return env


def _pend(python: str, folder: Path, text: str) -> None:
    subprocess.run(
        [python, "-c", _PEND, str(folder), text],
        check=True,
        env=_env(),
        cwd=tempfile.gettempdir(),
    )


def _profile(python: str, argv: list[str]) -> dict[str, Any]:
    """One run: CPU by phase and import (the child's own count), wall seconds of the whole
    process (interpreter start to exit), and the wall seconds a background extraction worker
    it started took to finish after it (the run waits for it: the next run needs the folder)."""
    env = _env()
    began = time.perf_counter()
    done = subprocess.run(
        [python, "-c", _CHILD, json.dumps(argv)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not this checkout: `-c` puts the working folder on sys.path
    )
    wall = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"profiled command failed:\n{done.stderr}")
    out = done.stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    ended = time.perf_counter()
    for pid in result.get("workers", []):
        while _alive(pid):
            time.sleep(0.01)
    result["phases"]["wall"] = wall
    result["phases"]["worker wall"] = time.perf_counter() - ended if result.get("workers") else 0.0
    return result


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by init) counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


def _median(runs: list[dict[str, dict[str, float]]], key: str) -> dict[str, float]:
    names = {name for run in runs for name in run[key]}
    return {n: statistics.median(run[key].get(n, 0.0) for run in runs) for n in names}


PHASES = ("interpreter", "import cli", "open", "command", "close", "total")
#: Wall seconds, from the parent: the whole process, and the background worker after it.
WALL = ("wall", "worker wall")


def render(report: dict[str, Any], top: int) -> str:
    """The section of bench/README.md: CPU seconds by phase, then the costliest imports."""
    systems = list(report["systems"])
    commands = list(report["commands"])
    head = "| CPU s | " + " | ".join(f"`{c}`" for c in commands) + " |"
    rule = "|---|" + "---|" * len(commands)

    def cell(command: str, kind: str, key: str) -> str:
        got = [report["systems"][s].get(command) for s in systems]
        return " / ".join("-" if g is None else f"{g[kind].get(key, 0.0):.3f}" for g in got)

    rows = [head, rule]
    for phase in PHASES:
        rows.append(f"| {phase} | " + " | ".join(cell(c, "phases", phase) for c in commands) + " |")
    for phase in WALL:
        rows.append(
            f"| {phase} (wall s) | " + " | ".join(cell(c, "phases", phase) for c in commands) + " |"
        )
    weight: dict[str, float] = {}
    for system in systems:
        for command in report["systems"][system]:
            for name, secs in report["systems"][system][command]["imports"].items():
                weight[name] = max(weight.get(name, 0.0), secs)
    for name in sorted(weight, key=lambda n: -weight[n])[:top]:
        rows.append(
            f"| import {name} | " + " | ".join(cell(c, "imports", name) for c in commands) + " |"
        )
    loaded = [
        f"{s}: "
        + "; ".join(
            f"`{c}` {', '.join(report['systems'][s][c]['loaded']) or 'none'}"
            for c in commands
            if c in report["systems"][s]
        )
        for s in systems
    ]
    shown = " / ".join(f"{s} ({report['pythons'][s]})" for s in systems)
    return "\n".join(
        [
            f"Median CPU seconds of {report['runs']} runs each, {shown}, on a folder of "
            f"{report['n']} turns. An import's figure is its own time (the packages it imports "
            "are counted under their names).",
            "",
            *rows,
            "",
            "Heavy modules loaded: " + ". ".join(loaded) + ".",
            "",
            f"Measured {report['when']}, load average {report['load_average']} (2 CPUs shared "
            "with other work: CPU time, not wall time).",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="turns in the folder built")
    ap.add_argument("--folder", help="profile this folder (a copy of it) instead of building one")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", help="another installation's python, profiled interleaved")
    ap.add_argument("--top", type=int, default=12, help="imports listed")
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/ alone")
    args = ap.parse_args()
    pythons = {"this": sys.executable}
    if args.baseline:
        pythons["baseline"] = args.baseline
    tmp = Path(tempfile.mkdtemp(prefix="sage-prof-"))
    try:
        folder = tmp / "mem"
        if args.folder:
            shutil.copytree(args.folder, folder)
        else:
            build_folder(folder, args.n)
        copies = {name: tmp / f"copy-{name}" for name in pythons}
        for copy in copies.values():
            shutil.copytree(folder, copy)
        commands = {
            "search": ["search", "where does Caroline live now?"],
            "add": ["add", "Caroline moved to Lisbon."],
            "add --no-infer": ["add", "--no-infer", "Caroline moved to Porto."],
            # with background extraction: the inline add, and the worker's work for one add
            # when run in the foreground (`extract` of one pending memory)
            "add --extract now": ["add", "--extract", "now", "Caroline moved to Faro."],
            "extract": ["extract"],
        }
        supports = {  # an installation without background extraction skips the last two
            system: subprocess.run(
                [python, "-c", "import sage_memory.worker"],
                capture_output=True,
                check=False,
                cwd=tempfile.gettempdir(),
            ).returncode
            == 0
            for system, python in pythons.items()
        }
        newer = {"add --extract now", "extract"}

        def argv(system: str, command: list[str]) -> list[str]:
            return ["--path", str(copies[system]), "--user", "bench", *command]

        for system, python in pythons.items():  # bytecode caches, the model file cache
            _profile(python, argv(system, commands["search"]))
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {} for s in pythons}
        for _ in range(args.runs):
            for command, words in commands.items():
                for system, python in pythons.items():
                    if command in newer and not supports[system]:
                        continue
                    if command == "extract":
                        _pend(python, copies[system], "Caroline moved to Braga.")
                    got = _profile(python, argv(system, words))
                    runs[system].setdefault(command, []).append(got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report: dict[str, Any] = {
        "pythons": pythons,
        "n": "(given)" if args.folder else args.n,
        "runs": args.runs,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": round(os.getloadavg()[0], 1),
        "commands": list(commands),
        "systems": {
            system: {
                command: {
                    "phases": _median(got, "phases"),
                    "imports": _median(got, "imports"),
                    "loaded": got[-1]["loaded"],
                }
                for command, got in by_command.items()
            }
            for system, by_command in runs.items()
        },
    }
    text = render(report, args.top)
    print(text)
    if not args.no_write:
        (ROOT / "bench" / "results" / "cli_profile.json").write_text(
            json.dumps(report, indent=2) + "\n"
        )
        write_section(BENCH_README, NAME, COMMAND, text)


def build_folder(folder: Path, n: int) -> None:
    """A folder of ``n`` LoCoMo-like turns for user "bench", closed cleanly."""
    from throughput import corpus

    from sage_memory import SageMemory

    with SageMemory(folder) as mem:
        mem.add_many(corpus(n), user_id="bench")


if __name__ == "__main__":
    main()
