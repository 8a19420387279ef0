"""Associative recall end to end: the walk over real stores and ``SageMemory.search``.

A memory that shares no word with the query is reached through the entities between it and
what the query names; with the graph channel off it is not found. The walk stays inside its
scope, and hubs do not carry it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageConfig, SageMemory
from sage_memory.config import RetrieveConfig
from sage_memory.retrieve.expand import EdgeFilter
from sage_memory.retrieve.runview import RunView
from sage_memory.retrieve.walk import ENTITY, MEMORY, StoreGraph, associate
from sage_memory.retrieve.walk_links import WalkLinks
from sage_memory.types import EdgeSpec, NodeSpec, Scope

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
NOW = datetime(2026, 7, 1, tzinfo=UTC)
QUERY = "What has Dana accomplished lately?"
# Shares no word with QUERY (and its hashing vector happens to be orthogonal to the query's):
# only the graph (Dana -> Orion Works -> this memory) leads here.
TARGET = "Orion Works won a gold medal in Berlin."


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    # The "graph" preset: the channel this file is about counts as much as the words do.
    config = SageConfig(retrieve=RetrieveConfig(preset="graph"))
    m = SageMemory(path, config=config, embedder="hashing", clock=lambda: NOW)
    yield m
    m.close()


def world(mem: SageMemory, user: str = "u") -> dict[str, str]:
    """Dana mentors Orion Works; Orion Works won a trophy; filler that the words do match."""
    ids: dict[str, str] = {}
    day = timedelta(days=1)
    # Filler first: other words, no entities.
    fill = [
        {
            "text": f"The canteen menu {i} listed soup and bread.",
            "timestamp": T0 + i * day,
        }
        for i in range(12)
    ]
    mem.add_many(fill, user_id=user, infer=False)
    ids["bridge"] = mem.add_graph(
        "Dana mentors Orion Works on Saturdays.",
        nodes=[NodeSpec("dana", "Dana", "Person"), NodeSpec("ow", "Orion Works", "Organization")],
        edges=[EdgeSpec("dana", "ow", "RELATED_TO", "Dana mentors Orion Works")],
        user_id=user,
        timestamp=T0 + 20 * day,
    ).memory_id
    ids["target"] = mem.add_graph(
        TARGET,
        nodes=[
            NodeSpec("ow", "Orion Works", "Organization"),
            NodeSpec("medal", "gold medal", "Concept"),
        ],
        user_id=user,
        timestamp=T0 + 40 * day,
    ).memory_id
    return ids


def test_walk_reaches_a_memory_two_entities_away_on_the_store(mem: SageMemory) -> None:
    ids = world(mem)
    scope = Scope("u")
    (dana,) = mem.store.find_nodes(scope, ["Dana"])
    graph = StoreGraph(mem.store, scope, EdgeFilter())
    scores, result = associate(graph, {ENTITY + dana.id: 1.0})
    assert scores[ids["target"]] > 0
    assert scores[ids["bridge"]] > scores[ids["target"]]
    # Only the neighbourhood was read: no filler memory (they mention no entity).
    assert all(not k.startswith(MEMORY) or k[2:] in ids.values() for k in result.read)


def test_search_finds_the_wordless_memory_only_through_the_graph(mem: SageMemory) -> None:
    ids = world(mem)
    res = mem.search(QUERY, user_id="u", limit=3)
    top = [h.id for h in res.memories]
    assert ids["target"] in top
    hit = next(h for h in res.memories if h.id == ids["target"])
    assert "graph" in hit.channels and "associative walk" in hit.why
    # The same search with the graph channel off does not find it.
    off = dataclasses.replace(mem.retriever.weights, graph=0.0, entity=0.0)
    res_off = mem.retriever.search(
        QUERY,
        Scope("u"),
        limit=3,
        as_of=None,
        context_tokens=2000,
        now=NOW,
        weights=off,
    )
    assert ids["target"] not in [h.id for h in res_off.memories]


def test_walk_never_leaves_the_scope(mem: SageMemory) -> None:
    mine = world(mem, "u")
    theirs = world(mem, "v")  # the same names in another scope
    res = mem.search(QUERY, user_id="u", limit=10)
    found = {h.id for h in res.memories}
    assert mine["target"] in found
    assert not found & set(theirs.values())
    scope = Scope("u")
    graph = StoreGraph(mem.store, scope, EdgeFilter())
    (dana,) = mem.store.find_nodes(scope, ["Dana"])
    scores, _ = associate(graph, {ENTITY + dana.id: 1.0})
    assert not set(scores) & set(theirs.values())
    assert all(n.scope == scope for n in graph.nodes.values())


def test_kept_links_walk_as_fresh_ones_until_a_write_drops_them(tmp_path: Path) -> None:
    """The walk's links kept between searches (walk_links.py) give the same walk as reading
    them; a write in between is seen by the next walk."""
    m = SageMemory(tmp_path / "m", embedder="hashing", clock=lambda: NOW)
    try:
        ids = world(m)
        scope = Scope("u")
        (dana,) = m.store.find_nodes(scope, ["Dana"])
        seeds = {ENTITY + dana.id: 1.0}
        fresh, _ = associate(StoreGraph(m.store, scope, EdgeFilter()), seeds)
        cache = WalkLinks()
        first, _ = associate(StoreGraph(m.store, scope, EdgeFilter(), cache=cache), seeds)
        kept, _ = associate(StoreGraph(m.store, scope, EdgeFilter(), cache=cache), seeds)
        assert first == fresh and kept == fresh
        # A new memory about Orion Works: the kept links of Orion Works no longer list all.
        later = m.add_graph(
            "Orion Works opened a lab in Lisbon.",
            nodes=[NodeSpec("ow", "Orion Works", "Organization")],
            user_id="u",
            timestamp=T0 + 60 * timedelta(days=1),
        ).memory_id
        after, _ = associate(StoreGraph(m.store, scope, EdgeFilter(), cache=cache), seeds)
        assert after.get(later, 0.0) > 0
        assert after == associate(StoreGraph(m.store, scope, EdgeFilter()), seeds)[0]
        assert ids["target"] in after
    finally:
        m.close()


def test_a_store_that_cannot_tell_its_writes_keeps_no_links() -> None:
    """A run's view (and any store without a write epoch) reads its links on every walk."""
    m = SageMemory(None, embedder="hashing", clock=lambda: NOW)
    try:
        world(m)
        view = RunView(m.store, Scope("u", run_id="r"))
        assert WalkLinks().session(view, "setting") is None
    finally:
        m.close()
