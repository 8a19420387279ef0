"""The split check sweeps every node over successive runs, even in a small graph."""

from __future__ import annotations

from sage_memory import SageMemory
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import NodeSpec, Scope


def test_split_checks_move_on_each_run_and_come_back_round() -> None:
    with SageMemory(embedder="hashing", extractor=NoGraphExtractor()) as mem:
        mem.add_graph(
            "thirty things",
            nodes=[NodeSpec(f"k{i}", f"thing {i:02d}", "Concept") for i in range(30)],
            edges=[],
            user_id="u",
        )
        offsets = []
        for _ in range(3):
            mem.evolve(user_id="u", operations=["split"])
            offsets.append(mem._evolution.evolver.state(Scope(user_id="u")).get("split_offset"))
    # 30 nodes, 20 checks a run: the second run sees the last ten, the third starts over.
    assert offsets == [20, 0, 20]
