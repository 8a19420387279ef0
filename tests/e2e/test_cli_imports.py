"""What a short CLI command loads: `search` and `add` on a small folder import neither chromadb,
litellm, networkx nor an agent framework, and `search` and `add` (which leaves extraction to a
background worker) load nothing of extraction. `search` loads nothing of the write path (the
ingest of extracted graphs, forgetting, write-time salience) nor of the evolver's planning and
review, and `add` none of the evolver's either, nor the search (the retriever is built on the
first search, and the focus, name seeds and kind filter load with it); `add --no-infer` passes
the salience gate without the ingest of graphs; the lexical channel loads Snowball's English
stemmer without the package's other languages.

A small partition (up to 5,000 vectors) is served exactly from SQLite's vectors and never copied
into Chroma (engine/folder_index.py), so neither command has a reason to open Chroma; the
extractor is built on the first extraction (extract/base.py's LazyExtractor).

A behaviour test (which modules a fresh process ends up with), not a timing: how fast the
commands start is measured by bench/cli_start.py and bench/cli_profile.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sage_memory import SageMemory

# Runs the command line in a fresh interpreter, as the `sage-memory` script does, then lists
# every module the process imported.
_RUN_CLI = """
import json, sys
from sage_memory.cli import main
code = main(json.loads(sys.argv[1]))
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

#: Never on the path of a short command on a small folder.
HEAVY = ("chromadb", "litellm", "networkx", "langchain_core", "llama_index", "langgraph")
#: What only an add that extracts needs (the extractor, its word tables, a parser model).
EXTRACTION = ("sage_memory.extract.structure", "lemminflect", "spacy")
#: What only a write that builds or removes graph rows needs (built on the first such write).
WRITE_PATH = (
    "sage_memory.engine.writes",
    "sage_memory.engine.ingest",
    "sage_memory.engine.forget",
    "sage_memory.extract.salience",
    "sage_memory.entities.resolution",
)
#: What plans graph rows from an extracted delta (a write without one never needs it).
GRAPH_INGEST = (
    "sage_memory.engine.ingest",
    "sage_memory.engine.timeline",
    "sage_memory.entities.resolution",
    "rapidfuzz",
)
#: The evolver's planning and review (a search only logs what it returned).
EVOLVER = ("sage_memory.evolve.runner", "sage_memory.evolve.suggestions")
#: The search itself (a write opens the engine without searching), its focus and name seeds.
SEARCH = (
    "sage_memory.retrieve.retriever",
    "sage_memory.retrieve.graph",
    "sage_memory.retrieve.focus",
    "sage_memory.retrieve.seeds",
    "sage_memory.retrieve.kinds",
)
#: snowballstemmer's package __init__, which imports every language it has.
EVERY_LANGUAGE = ("snowballstemmer",)


def _modules(folder: Path, *command: str) -> set[str]:
    argv = ["--path", str(folder), "--user", "u", *command]
    env = {**os.environ, "SAGE_MEMORY_PATH": "", "SAGE_MEMORY_USER": ""}
    env.pop("SAGE_MEMORY_EXTRACT", None)  # the shipped default
    out = subprocess.run(
        [sys.executable, "-c", _RUN_CLI, json.dumps(argv)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, out.stderr
    return set(result["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in names or m in names)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-imports") / "mem"
    with SageMemory(path) as mem:  # the default embedder, as the CLI uses it
        mem.add_many(
            [
                "Caroline moved to Lisbon in May.",
                "Melanie paints landscapes on weekends.",
                "The release was blocked by a failing migration.",
            ],
            user_id="u",
        )
    return path


def test_search_loads_no_index_server_framework_or_extraction(folder: Path) -> None:
    modules = _modules(folder, "search", "where does Caroline live?")
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, EXTRACTION) == []


def test_search_loads_no_write_path_evolver_or_other_languages(folder: Path) -> None:
    modules = _modules(folder, "search", "where does Caroline live?")
    assert _loaded(modules, WRITE_PATH) == []
    assert _loaded(modules, EVOLVER) == []
    assert _loaded(modules, EVERY_LANGUAGE) == []


def test_add_to_a_small_partition_loads_no_chromadb(folder: Path) -> None:
    modules = _modules(folder, "add", "--extract", "now", "Caroline moved to Porto in June.")
    assert _loaded(modules, HEAVY) == []
    assert "sage_memory.extract.structure" in modules  # it extracted, as asked
    assert not (folder / "chroma").exists()  # the small partition has no Chroma copy


def test_add_leaves_extraction_to_the_worker_and_loads_none_of_it(folder: Path) -> None:
    modules = _modules(folder, "add", "Melanie moved to Faro in July.")
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, EXTRACTION) == []
    # stored as it is: nothing that plans graph rows, nor the evolver
    assert _loaded(modules, WRITE_PATH[1:]) == []
    assert _loaded(modules, EVOLVER) == []
    assert _loaded(modules, SEARCH) == []
    deadline = time.monotonic() + 300  # the worker it started, before the next test's add
    while time.monotonic() < deadline:
        with SageMemory(folder, read_only=True) as mem:
            if mem.stats()["pending"] == 0:
                break
        time.sleep(0.2)


def test_add_without_extraction_loads_none_of_it(folder: Path) -> None:
    modules = _modules(folder, "add", "--no-infer", "A note kept as it is.")
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, EXTRACTION) == []
    # no graph to plan: the salience gate alone, not the ingest, entity resolution, rapidfuzz
    assert "sage_memory.extract.salience" in modules
    assert _loaded(modules, GRAPH_INGEST) == []


def test_the_parser_alone_loads_no_numpy() -> None:
    """`sage-memory --help` (and a usage error) costs the interpreter and argparse only."""
    probe = (
        "import sys; from sage_memory.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('numpy', 'sage_memory.engine') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
