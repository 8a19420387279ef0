"""bench/graph_reach.py's tally: a channel's novel recall counts only evidence the dense and
lexical top 10 miss, and a graph candidate "outside" is one past the fused top 10."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tests.conftest import load_bench


def _load() -> ModuleType:
    return load_bench("graph_reach.py")


@dataclass(frozen=True)
class _Question:
    category: int
    evidence: frozenset[str]


def test_novel_recall_and_candidates_outside_the_cut() -> None:
    reach = _load()
    # Twelve turns of a garden log; the question's evidence is the sowing and the harvest turn.
    turns = [f"m{i}" for i in range(12)]
    by_memory = {m: f"T{i}" for i, m in enumerate(turns)}
    q = _Question(1, frozenset({"T0", "T11"}))
    channels = {
        "fused": [*turns[:10], "m11"],
        "dense": turns[:10],
        "lexical": turns[:5],
        "walk": ["m3", "m11"],
        "walk beyond its seeds": ["m11"],
        "concept links": ["m2", "m11"],
    }
    recall: Any = defaultdict(lambda: defaultdict(list))
    at_rank: Any = defaultdict(lambda: defaultdict(list))
    reach._tally(q, channels, by_memory, recall, at_rank)
    assert recall["dense"][1] == [0.5]
    assert recall["dense (novel)"][1] == [0.0]
    # The walk finds the harvest turn, which neither word nor vector top 10 holds.
    assert recall["walk (novel)"]["all"] == [0.5]
    # The fused list holds the harvest turn at rank 11: past the cut.
    assert at_rank["fused rank 11"][1] == [0.5]
    assert at_rank["concept links, candidate 1 outside"][1] == [0.5]
    assert at_rank["walk, candidate 2 outside"][1] == [0.0]
