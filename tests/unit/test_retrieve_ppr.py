"""The lazy push PageRank (retrieve/ppr.py): a pure function over a neighbour callback."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from sage_memory.retrieve.ppr import push_ppr, settled


class Graph:
    """An undirected weighted graph behind a callback that records every key it is asked for."""

    def __init__(self, edges: Sequence[tuple[str, str, float]]) -> None:
        self.adj: dict[str, list[tuple[str, float]]] = {}
        for a, b, w in edges:
            self.adj.setdefault(a, []).append((b, w))
            self.adj.setdefault(b, []).append((a, w))
        self.asked: list[str] = []

    def __call__(self, keys: Sequence[str]) -> Mapping[str, Sequence[tuple[str, float]]]:
        self.asked.extend(keys)
        return {k: self.adj[k] for k in keys if k in self.adj}


def test_mass_is_conserved() -> None:
    g = Graph([("a", "b", 1.0), ("b", "c", 2.0), ("c", "a", 1.0), ("c", "d", 0.5)])
    res = push_ppr({"a": 3.0, "d": 1.0}, g, eps=1e-6)
    total = sum(res.mass.values()) + sum(res.residual.values())
    assert total == pytest.approx(1.0, abs=1e-12)
    assert sum(settled(res).values()) == pytest.approx(1.0, abs=1e-12)
    # A tight threshold leaves almost nothing unpushed.
    assert sum(res.residual.values()) < 1e-3


def test_no_seed_weight_no_walk() -> None:
    g = Graph([("a", "b", 1.0)])
    res = push_ppr({"a": 0.0, "b": -1.0}, g)
    assert res.mass == {} and g.asked == []


def test_locality_reads_only_what_it_pushes_on_a_huge_chain() -> None:
    # A chain of 100,000 nodes: the walk must not care how long it is.
    n = 100_000
    g = Graph([(f"x{i}", f"x{i + 1}", 1.0) for i in range(n)])
    alpha, eps = 0.5, 1e-4
    res = push_ppr({"x0": 1.0}, g, alpha=alpha, eps=eps)
    assert set(g.asked) == res.read
    assert len(res.read) <= 1 / (alpha * eps)
    assert len(res.read) < 40  # mass halves per hop: 1e-4 is about 14 hops away
    assert "x50" not in res.read


def test_read_budget_is_a_hard_cap() -> None:
    g = Graph([("hub", f"leaf{i}", 1.0) for i in range(50)] + [("hub", "x", 1.0)])
    res = push_ppr({"hub": 1.0}, g, eps=1e-9, max_reads=5)
    assert len(res.read) <= 5 and len(g.asked) <= 5


def test_reaches_a_memory_three_hops_away() -> None:
    # memory m1 -> entity e1 -> entity e2 -> memory m2: no seed touches m2 directly.
    g = Graph([("m:1", "n:e1", 1.0), ("n:e1", "n:e2", 1.0), ("n:e2", "m:2", 1.0)])
    res = push_ppr({"m:1": 1.0}, g)
    assert settled(res).get("m:2", 0.0) > 0.0
    assert "n:e2" in res.read


def test_hub_damping_favours_the_specific_path() -> None:
    # Seed s mentions a hub (shared by 200 memories) and a specific entity (one other memory).
    edges = [("s", "hub", 1.0), ("s", "specific", 1.0), ("specific", "target", 1.0)]
    edges += [("hub", f"m{i}", 1.0) for i in range(200)]
    g = Graph(edges)
    est = settled(push_ppr({"s": 1.0}, g, eps=1e-5))
    hub_memories = [est.get(f"m{i}", 0.0) for i in range(200)]
    assert est["target"] > 10 * max(hub_memories)
    # The hub spreads what it got a hundredfold thin; it never concentrates it.
    assert max(hub_memories) < est["hub"] / 100


def test_links_never_loop_back_to_themselves() -> None:
    g = Graph([("a", "a", 5.0), ("a", "b", 1.0)])
    est = settled(push_ppr({"a": 1.0}, g, eps=1e-8))
    assert est["b"] > 0.2


def test_the_batch_size_changes_only_the_order_of_reads() -> None:
    # Nodes queued while a short batch is pushed are pushed in the next ones, whatever the
    # batch size: every setting settles the same mass, up to the order of float additions.
    g = Graph(
        [(f"s{i}", f"s{i + 1}", 1.0) for i in range(30)]
        + [("s0", f"leaf{i}", 0.5) for i in range(10)]
        + [("s5", "s20", 2.0)]
    )
    whole = push_ppr({"s0": 1.0, "s9": 0.5}, g, eps=1e-6, batch=1000)
    for batch in (1, 2, 3, 64):
        res = push_ppr({"s0": 1.0, "s9": 0.5}, g, eps=1e-6, batch=batch)
        est, ref = settled(res), settled(whole)
        assert set(est) == set(ref)
        for k, v in ref.items():
            assert est[k] == pytest.approx(v, abs=1e-5)
