"""Personalized PageRank by lazy push (Andersen, Chung and Lang, 2006), over a neighbour callback.

The walk never holds the graph: it asks ``neighbours`` for the links of the nodes it is about
to push, a batch at a time, and nothing else. Mass starts on the seeds; a node whose residual is
at least ``eps`` times its degree keeps ``alpha`` of it and hands the rest to its neighbours in
proportion to the link weights. The total work is bounded by about ``1 / (alpha * eps)`` link
updates (each push spends at least ``eps * degree`` of a residual that sums to at most one), and
by ``max_pushes`` and ``max_reads``: it depends on the mass pushed, never on the graph's size.

The degree in the push rule is what damps hubs: a node linked to a thousand memories (a speaker,
"the user") is pushed only when a thousandfold residual reaches it, and then spreads it a
thousandfold thin, so it cannot swallow the ranking of the few memories a specific node leads to.

This module is pure: the store-backed callback lives in :mod:`sage_memory.retrieve.walk`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

#: (neighbour key, link weight > 0) pairs of each key asked for; keys not returned have none.
Neighbours = Callable[[Sequence[str]], Mapping[str, Sequence[tuple[str, float]]]]


@dataclass(slots=True)
class PushResult:
    """The outcome of one walk.

    Attributes:
        mass: settled PageRank mass per node (an under-estimate of the true PPR).
        residual: mass still waiting to be pushed (``sum(mass) + sum(residual) == 1``).
        read: the nodes whose neighbours were asked for: the walk's whole footprint.
        pushes: how many pushes ran.
    """

    mass: dict[str, float] = field(default_factory=dict)
    residual: dict[str, float] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)
    pushes: int = 0


def push_ppr(
    seeds: Mapping[str, float],
    neighbours: Neighbours,
    *,
    alpha: float = 0.5,
    eps: float = 1e-4,
    max_pushes: int = 2000,
    max_reads: int = 600,
    batch: int = 64,
) -> PushResult:
    """Approximate personalized PageRank from ``seeds`` by local push.

    Args:
        seeds: starting weights (normalised to sum 1; non-positive ones are dropped).
        neighbours: returns the weighted links of the keys asked for (called in batches, only
            for nodes whose residual could be pushed).
        alpha: teleport probability: the share of a pushed residual a node keeps. 0.5 is
            HippoRAG 2's setting (damping 0.5): mass halves at every hop.
        eps: push threshold per unit of degree; smaller reaches further and costs more.
        max_pushes: hard cap on pushes.
        max_reads: hard cap on nodes whose neighbours are read.
        batch: how many nodes' neighbours are asked for in one call.

    Returns:
        Settled mass, the residual left, the nodes read and the push count. A node with no
        links (a dead end, or one the callback declines to expand) keeps all it receives.
    """
    out = PushResult()
    total = sum(v for v in seeds.values() if v > 0)
    if total <= 0:
        return out
    residual = out.residual
    residual.update({s: v / total for s, v in seeds.items() if v > 0})
    links: dict[str, Sequence[tuple[str, float]]] = {}
    # Per node read, computed once (a node is pushed again and again, and its neighbours are
    # tested after every push that reaches them): its links' summed weight, and the residual
    # it needs to be pushed, eps per link (eps alone for a node not read yet).
    spreads: dict[str, float] = {}
    bars: dict[str, float] = {}
    # The queue is consumed from ``head`` on rather than sliced: cutting its front off at
    # every step copied the rest of it, and a walk steps a few hundred times. Locals stand for
    # the dicts' methods the inner loop calls hundreds of thousands of times per search.
    queue = list(residual)
    queued = set(queue)
    head = 0
    pushes = 0
    mass = out.mass
    read = out.read
    get_residual, get_bar = residual.get, bars.get
    enqueue, mark = queue.append, queued.add
    while head < len(queue) and pushes < max_pushes:
        step = queue[head : head + batch]
        head += len(step)
        queued.difference_update(step)
        unread = [u for u in step if u not in links and get_residual(u, 0.0) >= eps]
        room = max_reads - len(read)
        if unread and room > 0:
            got = neighbours(unread[:room])
            for u in unread[:room]:
                kept = [(v, w) for v, w in got.get(u, ()) if w > 0 and v != u]
                links[u] = kept
                spreads[u] = sum(w for _, w in kept)
                bars[u] = eps * max(1, len(kept))
                read.add(u)
        for u in step:
            near = links.get(u)
            if near is None:
                continue  # over the read budget: its residual stays where it is
            ru = get_residual(u, 0.0)
            if ru < bars[u]:
                continue
            pushes += 1
            residual[u] = 0.0
            spread = spreads[u]
            if spread <= 0:
                mass[u] = mass.get(u, 0.0) + ru
                continue
            mass[u] = mass.get(u, 0.0) + alpha * ru
            share = (1.0 - alpha) * ru / spread
            for v, w in near:
                rv = get_residual(v, 0.0) + share * w
                residual[v] = rv
                if rv >= get_bar(v, eps) and v not in queued:
                    enqueue(v)
                    mark(v)
    out.pushes = pushes
    return out


def settled(result: PushResult) -> dict[str, float]:
    """Mass plus the residual still waiting at each node: the best estimate the walk has (the
    residual of a node the budget stopped at is mass that reached it)."""
    est = dict(result.mass)
    for k, r in result.residual.items():
        if r > 0:
            est[k] = est.get(k, 0.0) + r
    return est
