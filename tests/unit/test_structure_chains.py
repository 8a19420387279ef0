"""Chains through SageMemory's API: blockers of blockers, every broader kind, root causes,
followed level by level, each step citing the memory that states it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sage_memory import AsyncSageMemory, SageMemory
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import EdgeSpec, NodeSpec

T0 = datetime(2026, 5, 4, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", extractor=NoGraphExtractor())
    yield m
    m.close()


def state(mem: SageMemory, text: str, src: NodeSpec, rel: str, dst: NodeSpec) -> str:
    """One memory stating one fact; returns the memory id."""
    added = mem.add_graph(
        text, nodes=[src, dst], edges=[EdgeSpec(src.key, dst.key, rel)], user_id="u", timestamp=T0
    )
    return added.memory.id


def names(hits: Sequence[object]) -> list[str]:
    return [h.node.name for h in hits]  # type: ignore[attr-defined]


def test_blockers_one_level_or_the_whole_chain_in_order(mem: SageMemory) -> None:
    launch, signoff = (
        NodeSpec("a", "launch the mobile app", "Task"),
        NodeSpec("b", "QA signoff", "Task"),
    )
    staging, kit = NodeSpec("c", "staging cluster", "Task"), NodeSpec("d", "test devices", "Task")
    m1 = state(mem, "The launch waits on QA signoff.", launch, "BLOCKED_BY", signoff)
    state(mem, "QA signoff depends on the staging cluster.", signoff, "DEPENDS_ON", staging)
    m3 = state(mem, "Staging is held up by the test devices.", staging, "BLOCKED_BY", kit)
    assert names(mem.blockers("launch the mobile app", user_id="u")) == ["QA signoff"]
    chain = mem.blockers("launch the mobile app", transitive=True, user_id="u")
    assert names(chain) == ["QA signoff", "staging cluster", "test devices"]
    assert m1[:8] in chain[0].why and m3[:8] in chain[-1].why
    # Nothing blocks the last link: the walk stops there.
    assert mem.blockers("test devices", transitive=True, user_id="u") == []


def test_ancestors_list_every_broader_kind_most_general_last(mem: SageMemory) -> None:
    flat, coffee = NodeSpec("a", "flat white", "Concept"), NodeSpec("b", "coffee", "Concept")
    hot, drink = NodeSpec("c", "hot drink", "Concept"), NodeSpec("d", "beverage", "Concept")
    state(mem, "A flat white is a coffee.", flat, "IS_A", coffee)
    state(mem, "Coffee is a hot drink.", coffee, "IS_A", hot)
    state(mem, "Hot drinks are beverages.", hot, "IS_A", drink)
    assert names(mem.ancestors("flat white", user_id="u")) == ["coffee", "hot drink", "beverage"]
    assert names(mem.ancestors("hot drink", user_id="u")) == ["beverage"]


def test_causes_reach_the_root_through_either_phrasing(mem: SageMemory) -> None:
    outage, disk = (
        NodeSpec("a", "checkout outage", "Problem"),
        NodeSpec("b", "full disk", "Problem"),
    )
    logs, cron = (
        NodeSpec("c", "unrotated logs", "Problem"),
        NodeSpec("d", "broken cron job", "Problem"),
    )
    state(mem, "The checkout outage came from a full disk.", outage, "CAUSED_BY", disk)
    state(mem, "The disk filled with unrotated logs.", disk, "CAUSED_BY", logs)
    # Stated from the cause's side: the walk follows it backwards.
    state(mem, "A broken cron job left the logs unrotated.", cron, "CAUSES", logs)
    assert names(mem.causes("checkout outage", user_id="u")) == ["full disk"]
    chain = mem.causes("checkout outage", transitive=True, user_id="u")
    assert names(chain)[-1] == "broken cron job"  # the root cause
    assert names(chain) == ["full disk", "unrotated logs", "broken cron job"]


def test_a_cycle_of_blockers_ends_and_transitive_requirements(mem: SageMemory) -> None:
    a, b = NodeSpec("a", "alpha task", "Task"), NodeSpec("b", "beta task", "Task")
    c = NodeSpec("c", "gamma tool", "Resource")
    state(mem, "Alpha is blocked by beta.", a, "BLOCKED_BY", b)
    state(mem, "Beta is blocked by alpha.", b, "BLOCKED_BY", a)
    state(mem, "Beta needs the gamma tool.", b, "REQUIRES", c)
    assert names(mem.blockers("alpha task", transitive=True, user_id="u")) == ["beta task"]
    assert names(mem.requirements("alpha task", user_id="u")) == ["beta task"]
    assert names(mem.requirements("alpha task", transitive=True, user_id="u")) == [
        "beta task",
        "gamma tool",
    ]


def test_async_mirrors_the_chain_methods(tmp_path: Path) -> None:
    async def run() -> list[list[str]]:
        amem = AsyncSageMemory(tmp_path / "m", embedder="hashing", extractor=NoGraphExtractor())
        try:
            x, y = NodeSpec("a", "ship docs", "Task"), NodeSpec("b", "write docs", "Task")
            # The async facade has no add_graph: state the fact through the sync engine it wraps.
            amem.sync.add_graph(
                "Shipping docs waits for writing them.",
                nodes=[x, y],
                edges=[EdgeSpec("a", "b", "BLOCKED_BY")],
                user_id="u",
                timestamp=T0,
            )
            blockers = await amem.blockers("ship docs", transitive=True, user_id="u")
            kinds = await amem.ancestors("ship docs", user_id="u")
            causes = await amem.causes("ship docs", transitive=True, user_id="u")
            return [names(blockers), names(kinds), names(causes)]
        finally:
            await amem.close()

    assert asyncio.run(run()) == [["write docs"], [], []]


def test_search_context_lists_the_whole_chain_for_a_root_cause_question(mem: SageMemory) -> None:
    outage, disk = (
        NodeSpec("a", "checkout outage", "Problem"),
        NodeSpec("b", "full disk", "Problem"),
    )
    logs = NodeSpec("c", "unrotated logs", "Problem")
    state(mem, "The checkout outage came from a full disk.", outage, "CAUSED_BY", disk)
    root = state(mem, "The disk filled with unrotated logs.", disk, "CAUSED_BY", logs)
    context = mem.search("What was the root cause of the checkout outage?", user_id="u").context
    first, deepest = context.find("caused by full disk"), context.find("caused by unrotated logs")
    assert 0 <= first < deepest
    assert root[:8] in context[deepest:]
