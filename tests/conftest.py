"""Shared fixtures. Everything runs offline; litellm must never reach for the network."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from sage_memory.extract.base import ExtractionContext
from sage_memory.types import EdgeSpec, GraphDelta, Memory, NodeSpec

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

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
