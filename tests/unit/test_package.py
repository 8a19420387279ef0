"""`import sage_memory` stays light: no framework, no litellm, no chromadb, well under 300 ms."""

from __future__ import annotations

import json
import subprocess
import sys

import sage_memory

HEAVY = (
    "langchain",
    "langchain_core",
    "langgraph",
    "llama_index",
    "litellm",
    "chromadb",
    "torch",
    "spacy",
)

_PROBE = """
import json, sys, time
t = time.perf_counter()
import sage_memory
took = time.perf_counter() - t
print(json.dumps({"took": took, "modules": sorted(sys.modules)}))
"""


def _probe() -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def test_import_loads_no_heavy_dependency_and_is_fast() -> None:
    runs = [_probe() for _ in range(3)]
    modules = runs[0]["modules"]
    assert isinstance(modules, list)
    loaded = [m for m in modules if m.split(".")[0] in HEAVY]
    assert loaded == []
    # The budget: under 300 ms (best of three, so a busy machine does not flake it).
    assert min(float(r["took"]) for r in runs) < 0.3  # type: ignore[arg-type]


def test_public_names_resolve() -> None:
    for name in sage_memory.__all__:
        assert getattr(sage_memory, name) is not None
    assert "SageMemory" in dir(sage_memory)
