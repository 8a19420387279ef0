"""Graph expansion: bounded BFS with filters, hubs, and local-push personalized PageRank.

Graphs are stated exactly with ``SageMemory.add_graph`` (no extractor guesswork), on the
in-memory store and on a real SQLite folder.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.retrieve import expand
from sage_memory.retrieve.expand import EdgeFilter, Neighbourhood, bfs, local_ppr
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import EdgeSpec, Node, NodeSpec, Scope

U = Scope("u")


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", extractor=NoGraphExtractor())
    yield m
    m.close()


def chain(
    mem: SageMemory, names: Sequence[str], relation: str = "RELATED_TO", **edge: object
) -> None:
    nodes = [NodeSpec(n, n) for n in names]
    edges = [EdgeSpec(a, b, relation, **edge) for a, b in itertools.pairwise(names)]  # type: ignore[arg-type]
    mem.add_graph(" then ".join(names), nodes=nodes, edges=edges, user_id="u")


def ids(mem: SageMemory, *names: str) -> list[str]:
    return [mem.find_node(n, user_id="u").id for n in names]


def by_name(mem: SageMemory, node_ids: Sequence[str]) -> set[str]:
    return {n.name for n in mem.store.get_nodes(U, list(node_ids))}


def test_bfs_stops_at_max_hops_and_keeps_paths(mem: SageMemory) -> None:
    chain(mem, ["a", "b", "c", "d", "e"])
    (a,) = ids(mem, "a")
    hood = Neighbourhood(mem.store, U)
    out = bfs(hood, [a], max_hops=2)
    assert by_name(mem, list(out.reach)) == {"a", "b", "c"}
    (c,) = ids(mem, "c")
    path = out.path(c)
    names = {n.id: n.name for n in mem.store.list_nodes(U)}
    assert [(names[e.source_id], names[e.target_id]) for e in path] == [("a", "b"), ("b", "c")]
    assert out.path(a) == []
    assert len(bfs(Neighbourhood(mem.store, U), [a], max_hops=4, max_nodes=3).reach) == 3


def test_relation_confidence_and_time_filters(mem: SageMemory) -> None:
    chain(mem, ["p", "q"], "PRECEDES")
    chain(mem, ["p", "weak"], "RELATED_TO", confidence=0.2)
    chain(
        mem,
        ["p", "old"],
        "LIVES_IN",
        valid_from=datetime(2019, 1, 1, tzinfo=UTC),
        valid_to=datetime(2020, 1, 1, tzinfo=UTC),
    )
    (p,) = ids(mem, "p")

    def reach(f: EdgeFilter) -> set[str]:
        return by_name(mem, list(bfs(Neighbourhood(mem.store, U, f), [p], max_hops=1).reach))

    assert reach(EdgeFilter()) == {"p", "q", "weak", "old"}
    assert reach(EdgeFilter(relations=frozenset({"PRECEDES"}))) == {"p", "q"}
    assert reach(EdgeFilter(min_confidence=0.5)) == {"p", "q", "old"}
    in_2025 = EdgeFilter(
        start=datetime(2025, 1, 1, tzinfo=UTC), end=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert "old" not in reach(in_2025)
    assert "old" not in reach(EdgeFilter(include_expired=False))
    assert "old" in reach(EdgeFilter(at=datetime(2019, 6, 1, tzinfo=UTC)))


def test_a_hub_is_reached_but_not_expanded(mem: SageMemory) -> None:
    for i in range(3):  # "hub" is supported by three memories
        chain(mem, ["hub", f"leaf{i}"])
    chain(mem, ["start", "hub"])
    start, hub = ids(mem, "start", "hub")
    hood = Neighbourhood(mem.store, U, max_memories=2)
    out = bfs(hood, [start], max_hops=2)
    assert hub in out.reach
    assert by_name(mem, list(out.reach)) == {"start", "hub"}
    assert hood.is_hub(hub)
    open_hood = Neighbourhood(mem.store, U, max_memories=10)
    assert len(bfs(open_hood, [start], max_hops=2).reach) == 5


def test_fanout_is_capped_keeping_the_strongest_edges(mem: SageMemory) -> None:
    chain(mem, ["x", "strong"], confidence=0.95)
    for i in range(5):
        chain(mem, ["x", f"weak{i}"], confidence=0.3)
    (x,) = ids(mem, "x")
    hood = Neighbourhood(mem.store, U, max_fanout=2)
    assert "strong" in by_name(mem, [e.target_id for e in hood.of(x)])
    assert len(hood.of(x)) == 2


def test_a_busy_node_reads_only_its_latest_edges(
    mem: SageMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trade-off of bounding the read in the store: past EDGES_READ edges on an end, the
    # oldest are not read at all, however strong (the cost follows the bound, not the degree).
    monkeypatch.setattr(expand, "EDGES_READ", 3)
    chain(mem, ["x", "oldest"], confidence=0.95)
    for i in range(5):
        chain(mem, ["x", f"later{i}"], confidence=0.3)
    (x,) = ids(mem, "x")
    hood = Neighbourhood(mem.store, U, max_fanout=2)
    assert by_name(mem, [e.target_id for e in hood.of(x)]) <= {"later2", "later3", "later4"}
    assert len(hood.of(x)) == 2


def test_local_ppr_mass_decays_with_distance(mem: SageMemory) -> None:
    chain(mem, ["s", "n1", "n2", "n3"])
    s, n1, n2, n3 = ids(mem, "s", "n1", "n2", "n3")
    hood = Neighbourhood(mem.store, U)
    mass = local_ppr(hood, {s: 1.0}, eps=1e-4)
    # PageRank favours well-connected nodes: compare per unit of degree along the path.
    assert mass[s] / 1 > mass[n1] / 2 > mass[n2] / 2 > mass.get(n3, 0.0) / 1
    assert mass[n1] > mass[n2] > mass.get(n3, 0.0)
    assert sum(mass.values()) <= 1.0 + 1e-9
    assert local_ppr(hood, {}) == {}


def test_query_cost_does_not_grow_with_unrelated_graph(mem: SageMemory) -> None:
    chain(mem, ["seed", "m1", "m2", "m3"])
    (seed,) = ids(mem, "seed")

    def work() -> tuple[int, int]:
        hood = Neighbourhood(mem.store, U)
        bfs(hood, [seed], max_hops=2)
        local_ppr(hood, {seed: 1.0})
        return hood.touched, len(hood.edges)

    before = work()
    names = [f"far{i}" for i in range(400)]
    mem.add_graph(
        "a long unrelated chain",
        nodes=[NodeSpec(n, n) for n in names],
        edges=[EdgeSpec(a, b, "RELATED_TO") for a, b in itertools.pairwise(names)],
        user_id="u",
    )
    assert work() == before


def test_linked_records_are_reused(mem: SageMemory) -> None:
    chain(mem, ["k", "l"])
    node: Node = mem.find_node("k", user_id="u")
    hood = Neighbourhood(mem.store, U)
    hood.add_nodes([node])
    assert hood.nodes[node.id] is node
