"""Shared fixtures. Everything runs offline; litellm must never reach for the network."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The command line's `add` builds the graph in a background process by default; the CLI tests
# that explore the graph right after an add ask for it inline, as a script would. The background
# worker has its own tests (tests/e2e/test_cli_background.py), which unset this.
os.environ.setdefault("SAGE_MEMORY_EXTRACT", "now")

from sage_memory.extract.base import ExtractionContext
from sage_memory.types import EdgeSpec, GraphDelta, Memory, NodeSpec

#: Set to a PostgreSQL URL (with pgvector) to test server mode on your own server instead
#: of the pgserver one the session starts.
POSTGRES_ENV_URL = "SAGE_TEST_POSTGRES_URL"

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(script: str) -> ModuleType:
    """A script of bench/ as a module (``bench_<name>``), with bench/ importable for its own
    imports (``common``), so tests can call its functions on data of their own."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{Path(script).stem}", BENCH / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


_LIVES = re.compile(r"(\w+) (?:lives in|moved to) (\w+)")


class WhereExtractor:
    """A user-defined extractor (a supported extension point), small enough to reason about:
    "X lives in Y" / "X moved to Y" -> Person X -LIVES_IN-> Place Y."""

    name = "where"

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        m = _LIVES.search(memory.text)
        if not m:
            return GraphDelta()
        return GraphDelta(
            nodes=(NodeSpec("p", m[1], "Person"), NodeSpec("c", m[2], "Place")),
            edges=(EdgeSpec("p", "c", "LIVES_IN", fact=m[0]),),
        )

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        return [self.extract(m, c) for m, c in items]


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A SageMemory in memory and one in a real folder (SQLite + Chroma), hashing embedder."""
    from sage_memory import SageMemory

    path = None if request.param == "memory" else tmp_path / "mem"
    m = SageMemory(path, embedder="hashing", extractor=WhereExtractor())
    yield m
    m.close()


def write_big_export(path: Path, n: int, user: str = "big") -> None:
    """A jsonl export of one scope with ``n`` nodes, each linked to the previous one and to a
    random earlier one (about 2n edges): a large graph loaded in seconds, not built by add."""
    import json
    import random
    import uuid

    rng = random.Random(7)
    at = "2026-05-01T09:00:00+00:00"
    scope = {"agent_id": None, "run_id": None, "user_id": user}

    def uid() -> str:
        return uuid.UUID(int=rng.getrandbits(128)).hex

    mid, ids = uid(), [uid() for _ in range(n)]
    memory = {
        "access_count": 0, "archived": False, "created_at": at, "event_time": None,
        "extraction": "skipped", "extraction_error": None, "id": mid, "kind": "knowledge",
        "last_accessed": None, "metadata": {}, "role": None, "salience": 0.5, "scope": scope,
        "source": None, "text": "a big generated graph", "timestamp": at, "updated_at": at,
    }  # fmt: skip
    with path.open("w", encoding="utf-8") as fh:
        header = {"embedder": "hashing-256", "type": "sage_memory.export", "version": 1}
        fh.write(json.dumps(header) + "\n")
        fh.write(json.dumps({"data": memory, "type": "memory"}) + "\n")
        for i, nid in enumerate(ids):
            node = {
                "access_count": 0, "aliases": [], "attributes": {}, "confidence": 0.8,
                "created_at": at, "id": nid, "label": "Concept", "last_accessed": None,
                "memory_ids": [mid], "name": f"topic {i}", "salience": 0.5, "scope": scope,
                "summary": "", "updated_at": at,
            }  # fmt: skip
            fh.write(json.dumps({"data": node, "type": "node"}) + "\n")
        for i in range(1, n):
            for j in (i - 1, rng.randrange(0, i)):
                edge = {
                    "attributes": {}, "confidence": 0.8, "created_at": at, "expired_at": None,
                    "fact": "", "id": uid(), "memory_ids": [mid], "relation": "RELATED_TO",
                    "scope": scope, "source_id": ids[i], "target_id": ids[j], "valid_from": at,
                    "valid_to": None, "weight": 1.0,
                }  # fmt: skip
                fh.write(json.dumps({"data": edge, "type": "edge"}) + "\n")


@pytest.fixture(scope="session")
def big_scope(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A SageMemory (in memory, hashing embedder) whose scope user_id="big" has 10k nodes."""
    from sage_memory import SageMemory

    export = tmp_path_factory.mktemp("big") / "big.jsonl"
    write_big_export(export, 10_000)
    m = SageMemory.load(export, None, embedder="hashing")
    yield m
    m.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a PostgreSQL server with pgvector available."""
    url = os.environ.get(POSTGRES_ENV_URL)
    if url:
        yield url
        return
    import pgserver  # the dev extra; a missing server must fail the run, not skip it

    # A short path: the server's unix socket lives in this folder (108-byte limit on sockets).
    folder = tempfile.mkdtemp(prefix="sagepg")
    server = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
