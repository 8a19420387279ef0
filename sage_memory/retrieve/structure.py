"""Structure queries over the graph: order, requirements, what's next, paths, diagnosis chains.

Order relations: ``a PRECEDES b`` puts a before b; ``a BLOCKED_BY b`` and ``a DEPENDS_ON b``
put b before a. Requirements of a node are the targets of its REQUIRES, DEPENDS_ON, BLOCKED_BY
and USES edges. A task's status is its ``status`` attribute or its current HAS_STATUS edge.
Only facts that hold at ``at`` (default: now) count. Every walk is bounded.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sage_memory.retrieve.reader import GraphReader
from sage_memory.types import Edge, EdgeHit, Memory, Node, NodeHit, Scope, as_utc
from sage_memory.words import QUERY_STOPWORDS, TEXT_CACHE, word_tokens

FORWARD = frozenset({"PRECEDES"})
BACKWARD = frozenset({"BLOCKED_BY", "DEPENDS_ON"})
ORDER = FORWARD | BACKWARD
REQUIREMENT = ("REQUIRES", "DEPENDS_ON", "BLOCKED_BY", "USES")
CONTAINS = ("CONTAINS_TASK",)
CAUSE = frozenset({"CAUSED_BY", "CAUSES"})
FIX = frozenset({"SOLVED_BY"})
PRECONDITION = frozenset({"DEPENDS_ON", "REQUIRES", "BLOCKED_BY"})
DONE = frozenset(
    {"done", "completed", "complete", "finished", "closed", "resolved", "fixed", "shipped"}
)
MAX_DEPTH = 10
#: Causes and fixes whose other phrasings are looked up for preconditions.
MAX_CHAIN = 6
Direction = Literal["out", "in", "both"]
#: Which of some edges a question's own story states (ids); see :mod:`.story`.
Told = Callable[[Sequence[Edge]], set[str]]


@dataclass(frozen=True, slots=True)
class Step:
    """A node found by a structure query, the edge that relates it and how far it is."""

    node: Node
    edge: Edge | None
    hops: int
    status: str | None = None

    def hit(self, why: str) -> NodeHit:
        return NodeHit(self.node, 1.0 / max(1, self.hops), ("structure",), why)


def _current(edges: Sequence[Edge], at: datetime | None) -> list[Edge]:
    when = None if at is None else as_utc(at)  # a naive datetime is taken as UTC
    return [e for e in edges if e.is_current(when)]


def reader(store: GraphReader, scope: Scope) -> GraphReader:
    """``store`` as ``scope`` may see it: a run sees only what its own memories support."""
    from sage_memory.retrieve.runview import RunView, needs_view

    return RunView(store, scope) if needs_view(scope) else store


def status(store: GraphReader, scope: Scope, node: Node, at: datetime | None = None) -> str | None:
    """A node's status: its ``status`` attribute, else the target of a current HAS_STATUS."""
    edges = _current(
        store.edges_of(scope, [node.id], direction="out", relations=["HAS_STATUS"]), at
    )
    if edges:
        latest = max(edges, key=lambda e: (e.valid_from or e.created_at, e.created_at))
        target = store.get_nodes(scope, [latest.target_id])
        if target:
            return target[0].name
    value = node.attributes.get("status")
    return str(value) if value is not None else None


def is_done(value: str | None) -> bool:
    return value is not None and value.strip().casefold() in DONE


def _order_edges(
    store: GraphReader, scope: Scope, ids: Sequence[str], at: datetime | None
) -> list[Edge]:
    return _current(store.edges_of(scope, ids, relations=sorted(ORDER)), at)


def _before_of(e: Edge) -> tuple[str, str]:
    """(earlier node, later node) of an order edge."""
    return (e.source_id, e.target_id) if e.relation in FORWARD else (e.target_id, e.source_id)


def _walk_order(
    store: GraphReader,
    scope: Scope,
    start: str,
    *,
    backwards: bool,
    transitive: bool,
    at: datetime | None,
    bridge: bool = False,
    told: Told | None = None,
) -> list[tuple[str, Edge, int]]:
    """Nodes before (or after) ``start`` with the edge that reached them and their depth;
    with ``bridge``, each level's nodes also walk through their other phrasings; with
    ``told``, a node some of whose links the question's story states takes only those."""
    seen: dict[str, tuple[Edge, int]] = {}
    frontier = [start]
    for depth in range(1, (MAX_DEPTH if transitive else 1) + 1):
        if not frontier:
            break
        here = set(frontier)
        if bridge:
            here |= _aliases(store, scope, frontier, exclude=set(seen) | {start})
        nxt: list[str] = []

        def near_of(e: Edge) -> str:
            early, late = _before_of(e)
            return late if backwards else early

        for e in _prefer_told(_order_edges(store, scope, sorted(here), at), near_of, told):
            early, late = _before_of(e)
            near, other = (late, early) if backwards else (early, late)
            if near in here and other != start and other not in seen and other not in here:
                seen[other] = (e, depth)
                nxt.append(other)
        frontier = nxt
    return [(nid, e, d) for nid, (e, d) in seen.items()]


def _prefer_told(
    edges: Sequence[Edge], near_of: Callable[[Edge], str], told: Told | None
) -> list[Edge]:
    """``edges`` less, at each node they leave from (``near_of``), the links the question's
    story does not state when the story states some link of that node (either way):
    near-twin stories share a task's node, and each tells its own order around it. A node
    none of whose links the story states keeps them all (its links may be told without
    naming the story)."""
    if told is None or not edges:
        return list(edges)
    ids = told(edges)
    owned = {n for e in edges if e.id in ids for n in (e.source_id, e.target_id)}
    return [e for e in edges if e.id in ids or near_of(e) not in owned]


def _steps(
    store: GraphReader,
    scope: Scope,
    found: Sequence[tuple[str, Edge | None, int]],
    at: datetime | None,
) -> list[Step]:
    nodes = {n.id: n for n in store.get_nodes(scope, [nid for nid, _, _ in found])}
    return _in_told_order(
        [
            Step(nodes[nid], e, d, status(store, scope, nodes[nid], at))
            for nid, e, d in found
            if nid in nodes
        ]
    )


def _in_told_order(steps: list[Step]) -> list[Step]:
    """Neighbouring steps reached by facts of one sentence ("needs the bucket and the
    cluster"), in the order the sentence names them: such facts share their storage time, and
    their random ids must not order a rebuilt folder's answer."""

    def group(item: tuple[int, Step]) -> tuple[Any, ...]:
        i, s = item
        e = s.edge
        return (
            ("alone", i) if e is None else (s.hops, e.created_at, e.valid_from, e.fact, e.relation)
        )

    out: list[Step] = []
    for _, items in itertools.groupby(enumerate(steps), key=group):
        run = [s for _, s in items]
        fact = run[0].edge.fact if run[0].edge is not None else ""
        out += sorted(run, key=lambda s: (_told_at(fact, s.node.name), s.node.name))
    return out


def _told_at(fact: str, name: str) -> int:
    """Where ``name`` first appears in ``fact`` (case aside); past its end when it does not."""
    folded = fact.casefold()
    i = folded.find(name.casefold()) if name else -1
    return len(folded) if i < 0 else i


def predecessors(
    store: GraphReader,
    scope: Scope,
    node_id: str,
    *,
    transitive: bool = False,
    at: datetime | None = None,
    bridge: bool = False,
    told: Told | None = None,
) -> list[Step]:
    """What comes before ``node_id``, nearest first (transitively: up to 10 steps back;
    ``bridge``: through other phrasings of each step too, see :func:`other_phrasings`;
    ``told``: the question's story's own links where it states some, see :func:`_prefer_told`)."""
    found = _walk_order(
        store,
        scope,
        node_id,
        backwards=True,
        transitive=transitive,
        at=at,
        bridge=bridge,
        told=told,
    )
    return sorted(_steps(store, scope, found, at), key=lambda s: (s.hops, s.node.name))


def successors(
    store: GraphReader,
    scope: Scope,
    node_id: str,
    *,
    transitive: bool = False,
    at: datetime | None = None,
    bridge: bool = False,
    told: Told | None = None,
) -> list[Step]:
    """What comes after ``node_id``, nearest first (``bridge``, ``told`` as in
    :func:`predecessors`)."""
    found = _walk_order(
        store,
        scope,
        node_id,
        backwards=False,
        transitive=transitive,
        at=at,
        bridge=bridge,
        told=told,
    )
    return sorted(_steps(store, scope, found, at), key=lambda s: (s.hops, s.node.name))


def requirements(
    store: GraphReader, scope: Scope, node_id: str, *, at: datetime | None = None
) -> list[Step]:
    """What ``node_id`` needs: targets of its REQUIRES / DEPENDS_ON / BLOCKED_BY / USES."""
    edges = _current(store.edges_of(scope, [node_id], direction="out", relations=REQUIREMENT), at)
    order = {r: i for i, r in enumerate(REQUIREMENT)}
    edges.sort(key=lambda e: (order[e.relation], -e.weight))
    return _steps(store, scope, [(e.target_id, e, 1) for e in edges], at)


def neighbors(
    store: GraphReader,
    scope: Scope,
    node_id: str,
    *,
    relations: Sequence[str] | None = None,
    direction: Direction = "both",
    at: datetime | None = None,
) -> list[Step]:
    """Nodes one edge away, through ``relations`` (all when None), current facts only."""
    edges = _current(store.edges_of(scope, [node_id], direction=direction, relations=relations), at)
    edges.sort(key=lambda e: (-e.weight * e.confidence, e.relation))
    found: list[tuple[str, Edge | None, int]] = []
    seen: set[str] = set()
    for e in edges:
        other = e.target_id if e.source_id == node_id else e.source_id
        if other not in seen:
            seen.add(other)
            found.append((other, e, 1))
    return _steps(store, scope, found, at)


def tasks_of(store: GraphReader, scope: Scope, project_id: str, at: datetime | None) -> list[str]:
    edges = store.edges_of(scope, [project_id], direction="out", relations=CONTAINS)
    return [e.target_id for e in _current(edges, at)]


def next_steps(
    store: GraphReader, scope: Scope, node_id: str, *, at: datetime | None = None
) -> list[Step]:
    """The remaining plan around a task or a project, what to do first at the front.

    For a project: its unfinished tasks, those whose predecessors are all done first, then in
    order. For a task: its unfinished predecessors (earliest first), the task itself when
    unfinished, then the unfinished tasks right after it.
    """
    tasks = tasks_of(store, scope, node_id, at)
    if tasks:
        depth = {
            t: len(_walk_order(store, scope, t, backwards=True, transitive=True, at=at))
            for t in tasks
        }
        steps = _steps(store, scope, [(t, None, 1) for t in tasks], at)
        todo = [s for s in steps if not is_done(s.status)]
        ready = {s.node.id for s in todo if _ready(store, scope, s.node.id, at)}
        todo.sort(key=lambda s: (s.node.id not in ready, depth[s.node.id], s.node.name))
        return todo
    before = predecessors(store, scope, node_id, transitive=True, at=at)
    plan = sorted((s for s in before if not is_done(s.status)), key=lambda s: -s.hops)
    itself = _steps(store, scope, [(node_id, None, 0)], at)
    plan += [s for s in itself if not is_done(s.status)]
    plan += [s for s in successors(store, scope, node_id, at=at) if not is_done(s.status)]
    return plan


def _ready(store: GraphReader, scope: Scope, node_id: str, at: datetime | None) -> bool:
    return all(is_done(s.status) for s in predecessors(store, scope, node_id, at=at))


def path(
    store: GraphReader,
    scope: Scope,
    source_id: str,
    target_id: str,
    *,
    max_hops: int = 4,
    relations: Sequence[str] | None = None,
    at: datetime | None = None,
    max_nodes: int = 2000,
) -> list[Edge]:
    """A shortest path between two nodes over current edges in either direction ([] if none
    within ``max_hops``). Bidirectional BFS, so the work is the two small balls around the
    ends, not the graph."""
    if source_id == target_id:
        return []
    parents: tuple[dict[str, tuple[str, Edge] | None], dict[str, tuple[str, Edge] | None]] = (
        {source_id: None},
        {target_id: None},
    )
    frontiers: tuple[list[str], list[str]] = ([source_id], [target_id])
    for _ in range(max_hops):
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        if not frontiers[side] or sum(len(p) for p in parents) > max_nodes:
            break
        mine, theirs = parents[side], parents[1 - side]
        current = set(frontiers[side])
        nxt: list[str] = []
        for e in _current(store.edges_of(scope, frontiers[side], relations=relations), at):
            for here, other in ((e.source_id, e.target_id), (e.target_id, e.source_id)):
                if here in current and other not in mine:
                    mine[other] = (here, e)
                    nxt.append(other)
                    if other in theirs:
                        return _join(parents, other)
        frontiers = (nxt, frontiers[1]) if side == 0 else (frontiers[0], nxt)
    return []


def _join(
    parents: tuple[dict[str, tuple[str, Edge] | None], dict[str, tuple[str, Edge] | None]],
    meet: str,
) -> list[Edge]:
    left: list[Edge] = []
    at = parents[0].get(meet)
    while at is not None:
        left.append(at[1])
        at = parents[0].get(at[0])
    right: list[Edge] = []
    at = parents[1].get(meet)
    while at is not None:
        right.append(at[1])
        at = parents[1].get(at[0])
    return left[::-1] + right


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What explains a problem and what to do about it, in the order to act on it."""

    causes: tuple[Step, ...] = ()
    fixes: tuple[Step, ...] = ()
    preconditions: tuple[Step, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.causes or self.fixes)


def diagnose(
    store: GraphReader, scope: Scope, node_id: str, *, at: datetime | None = None
) -> Diagnosis:
    """Causes of a problem (CAUSED_BY out, CAUSES in), fixes (SOLVED_BY of the problem and of
    its causes) and the preconditions of those fixes and causes (DEPENDS_ON / REQUIRES)."""
    edges = _current(store.edges_of(scope, [node_id], relations=sorted(CAUSE | FIX)), at)
    cause_ids: list[tuple[str, Edge | None, int]] = []
    fix_ids: list[tuple[str, Edge | None, int]] = []
    for e in edges:
        if e.relation == "CAUSED_BY" and e.source_id == node_id:
            cause_ids.append((e.target_id, e, 1))
        elif e.relation == "CAUSES" and e.target_id == node_id:
            cause_ids.append((e.source_id, e, 1))
        elif e.relation == "SOLVED_BY" and e.source_id == node_id:
            fix_ids.append((e.target_id, e, 1))
    if cause_ids:
        edges = store.edges_of(
            scope, [c for c, _, _ in cause_ids], direction="out", relations=["SOLVED_BY"]
        )
        # Several nodes' edges are listed by node id (random): in stored order instead.
        for e in sorted(_current(edges, at), key=stored_order):
            fix_ids.append((e.target_id, e, 2))
    fix_ids = list({nid: (nid, e, d) for nid, e, d in reversed(fix_ids)}.values())[::-1]
    ends = [n for n, _, _ in cause_ids + fix_ids]
    steps = _steps(store, scope, cause_ids + fix_ids, at)
    # A precondition is often stated of another phrasing of a fix or a cause ("running
    # migrations" for "python manage.py migrate"): nodes sharing a (stemmed) word with one
    # of them count too, found by the store's node text search; a few lookups at most.
    near = set(ends)
    for step in steps[:MAX_CHAIN]:
        near.update(i for i, _ in store.search_text(scope, step.node.name, entity="node", limit=5))
    near.discard(node_id)
    pre: list[tuple[str, Edge | None, int]] = []
    if near:
        edges = store.edges_of(scope, sorted(near), direction="out", relations=sorted(PRECONDITION))
        for e in sorted(_current(edges, at), key=stored_order):
            if e.target_id not in ends and e.target_id != node_id:
                pre.append((e.target_id, e, 2))
    by_id = {s.node.id: s for s in steps}
    return Diagnosis(
        tuple(by_id[n] for n, _, _ in cause_ids if n in by_id),
        tuple(s for s in steps if s.node.id in {n for n, _, _ in fix_ids}),
        tuple(_steps(store, scope, list({p[0]: p for p in pre}.values()), at)),
    )


def edge_hits(store: GraphReader, scope: Scope, edges: Sequence[Edge]) -> list[EdgeHit]:
    """Edges with their end names, for a path or a listing."""
    ids = [i for e in edges for i in (e.source_id, e.target_id)]
    names = {n.id: n.name for n in store.get_nodes(scope, ids)}
    out = []
    for e in edges:
        src, dst = names.get(e.source_id, "?"), names.get(e.target_id, "?")
        out.append(EdgeHit(e, 1.0, src, dst, ("structure",), f"{src} -{e.relation}-> {dst}"))
    return out


def node_hits(store: GraphReader, scope: Scope, steps: Sequence[Step]) -> list[NodeHit]:
    """Steps as NodeHits whose ``why`` names the fact that relates them, and their status."""
    ends = {i for s in steps if s.edge is not None for i in (s.edge.source_id, s.edge.target_id)}
    names = {n.id: n.name for n in store.get_nodes(scope, sorted(ends))}
    out = []
    for s in steps:
        bits = []
        if s.edge is not None:
            e = s.edge
            bits.append(
                f"{names.get(e.source_id, '?')} -{e.relation}-> {names.get(e.target_id, '?')}"
            )
        if s.status:
            bits.append(f"status: {s.status}")
        if s.hops > 1:
            bits.append(f"{s.hops} steps away")
        if s.edge is not None and s.edge.memory_ids:
            # Each step cites the memories that state its fact.
            bits.append("mem " + ", ".join(m[:8] for m in s.edge.memory_ids[:3]))
        out.append(s.hit("; ".join(bits) or s.node.name))
    return out


#: Chains a question may follow: relation -> which end of the edge is the next step.
#: ``"target"``: ``a REL b`` leads from a to b; ``"source"``: it leads from b to a.
Link = tuple[str, Literal["source", "target"]]
BLOCKERS: tuple[Link, ...] = (("BLOCKED_BY", "target"), ("DEPENDS_ON", "target"))
NEEDS: tuple[Link, ...] = tuple((r, "target") for r in REQUIREMENT)
KINDS: tuple[Link, ...] = (("IS_A", "target"), ("PART_OF", "target"), ("MEMBER_OF", "target"))
#: Relations a chain follows only past its first level: from a kind the walk reached, "falls
#: under" / "belongs to" (which extractors read as PART_OF / MEMBER_OF) is class inclusion,
#: a broader kind ("wood finishes belong to the surface coatings"); from the asked thing
#: itself it is not ("the lacquer is part of the restoration kit").
PAST_FIRST = frozenset({"PART_OF", "MEMBER_OF"})
CAUSES: tuple[Link, ...] = (("CAUSED_BY", "target"), ("CAUSES", "source"))


#: Other phrasings of a node looked up per chain node.
PHRASINGS = 5
#: Memories a chain reads past its graph end, in all, so what the extractor missed is
#: still told in the context.
TOLD_MAX = 8
#: Rounds of the walk through memories past the graph's end, and the links taken from
#: each memory per round (the best lexical match is not always the next link).
TOLD_HOPS = 3
TOLD_WIDTH = 2


def _content_words(text: str) -> tuple[str, ...]:
    """Meaningful words of a name, plural-folded ("contracts" -> "contract")."""
    words = [w for w in word_tokens(text) if w not in QUERY_STOPWORDS]
    return tuple(
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words
    )


def same_thing(a: str, b: str) -> bool:
    """Whether two names plausibly name one thing in fewer or more words: the content words
    of one contain the other's, which are at least two words or the other's head word
    ("identity provider" / "identity provider contract", "roof" / "install the roof")."""
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb or wa == wb:
        return bool(wa) and wa == wb
    short, long = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    if not set(short) <= set(long):
        return False
    return len(short) >= 2 or short[0] == long[-1]


def other_phrasings(store: GraphReader, scope: Scope, node: Node) -> list[Node]:
    """Nodes that name ``node``'s thing in other words (see :func:`same_thing`), found by the
    store's node text search: a bounded lookup, not a scan."""
    ids = [i for i, _ in store.search_text(scope, node.name, entity="node", limit=PHRASINGS)]
    return [
        n
        for n in store.get_nodes(scope, [i for i in ids if i != node.id])
        if same_thing(n.name, node.name)
    ]


def chain(
    store: GraphReader,
    scope: Scope,
    node_id: str,
    links: Sequence[Link],
    *,
    transitive: bool = False,
    at: datetime | None = None,
    max_depth: int = MAX_DEPTH,
    bridge: bool = False,
    told: Told | None = None,
) -> list[Step]:
    """Follow ``links`` from ``node_id``: one step, or transitively up to ``max_depth`` levels.

    Breadth first, so the result is in chain order (nearest first, the deepest last); each
    step keeps the fact that reached it (its memory ids cite it). A node is visited once,
    so a cycle ends the walk; the cost is one edge read per level. A relation of
    :data:`PAST_FIRST` is followed from the second level on. With ``bridge``, each
    level's nodes are also followed through their other phrasings (a task named with and
    without a modifier is often two nodes): a few node lookups per level. With ``told``, a
    node some of whose links the question's story states follows only those.
    """
    lead = dict(links)
    seen: dict[str, tuple[Edge, int]] = {}
    frontier = [node_id]
    for depth in range(1, (max_depth if transitive else 1) + 1):
        if not frontier:
            break
        here = set(frontier)
        nxt: list[str] = []
        if bridge:
            here |= _aliases(store, scope, frontier, exclude=set(seen) | {node_id})
        asked = sorted(r for r in lead if depth > 1 or r not in PAST_FIRST)
        edges = _current(store.edges_of(scope, sorted(here), relations=asked), at) if asked else []

        def near_of(e: Edge) -> str:
            return e.source_id if lead[e.relation] == "target" else e.target_id

        edges = _prefer_told(edges, near_of, told)
        for e in sorted(edges, key=lambda e: (-e.weight, *stored_order(e))):
            end = lead[e.relation]
            src, dst = (e.source_id, e.target_id) if end == "target" else (e.target_id, e.source_id)
            if src in here and dst not in here and dst != node_id and dst not in seen:
                seen[dst] = (e, depth)
                nxt.append(dst)
        frontier = nxt
    found = [(nid, e, d) for nid, (e, d) in seen.items()]
    return _steps(store, scope, found, at)


def stored_order(e: Edge) -> tuple[Any, ...]:
    """Edges of equal weight, earliest stored first; those one batch stored together by world
    time, then by what they say. Their random ids come last, so a folder rebuilt from the same
    inputs (new ids) picks and lists the same edges: the memories of one ``add_many`` share
    their storage time."""
    return (e.created_at, e.valid_from or _DAWN, e.fact, e.relation, e.id)


_DAWN = datetime.min.replace(tzinfo=UTC)


def stated_in(
    store: GraphReader,
    scope: Scope,
    memory_id: str,
    relations: Collection[str],
    *,
    at: datetime | None = None,
) -> list[Edge]:
    """The current facts of ``relations`` that the memory ``memory_id`` states: a bounded
    read of the edges of the nodes it mentions."""
    nodes = store.memory_nodes(scope, [memory_id]).get(memory_id, [])
    if not nodes or not relations:
        return []
    edges = store.edges_of(scope, nodes, relations=sorted(relations))
    mine = {e.id: e for e in _current(edges, at) if memory_id in e.memory_ids}
    names = {
        n.id: n.name.casefold()
        for n in store.get_nodes(
            scope, [i for e in mine.values() for i in (e.source_id, e.target_id)]
        )
    }
    return sorted(mine.values(), key=lambda e: _told_order(e, names))


def _told_order(e: Edge, names: Mapping[str, str]) -> tuple[Any, ...]:
    """Facts of one memory in the order its text tells them (where each end's name first
    appears in the sentence), then by their names: a memory's edges share one storage time,
    and their random ids must not decide the order a rebuilt folder lists them in."""
    src, dst = names.get(e.source_id, ""), names.get(e.target_id, "")
    at_src, at_dst = _told_at(e.fact, src), _told_at(e.fact, dst)
    return (e.created_at, min(at_src, at_dst), at_src, e.relation, src, dst, e.id)


def _aliases(
    store: GraphReader, scope: Scope, ids: Sequence[str], *, exclude: Collection[str]
) -> set[str]:
    """Other phrasings of the first :data:`MAX_CHAIN` of ``ids`` (not in ``exclude``)."""
    out: set[str] = set()
    for node in store.get_nodes(scope, list(ids)[:MAX_CHAIN]):
        out.update(n.id for n in other_phrasings(store, scope, node))
    return out - set(ids) - set(exclude)


def _stem(word: str) -> str:
    """A crude stem, enough to match "imaging" with "image" and "laptops" with "laptop"."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)].rstrip("e")
    return word.rstrip("e") if len(word) > 4 else word


#: Modal and negating auxiliaries, whole or as a contraction's first part ("can't" reads
#: "can" "t"): a closed class of function words that links no two notes of a chain.
AUXILIARIES = frozenset(
    (
        "can",
        "cannot",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "would",
        "not",
        "no",
        "don",
        "doesn",
        "didn",
        "isn",
        "aren",
        "wasn",
        "weren",
        "won",
        "hasn",
        "haven",
        "hadn",
        "couldn",
        "shouldn",
        "wouldn",
        "mustn",
        "needn",
    )
)


def _new_words(text: str, seen: Collection[str]) -> list[str]:
    """Content words of ``text`` whose stems are not in ``seen``, in text order (no
    auxiliary: "can't print" and "can't make it" share no step)."""
    return list(
        dict.fromkeys(
            w
            for w in _content_words(text)
            if len(w) > 1 and w not in AUXILIARIES and _stem(w) not in seen
        )
    )


@functools.lru_cache(maxsize=TEXT_CACHE)
def stems(text: str) -> tuple[str, ...]:
    """Distinct crude stems of the content words of ``text``, in text order (kept per text:
    a structure answer reads the same notes' stems again at each step)."""
    return tuple(dict.fromkeys(_stem(w) for w in _content_words(text) if len(w) > 1))


def mentions(
    store: GraphReader,
    scope: Scope,
    names: Sequence[str],
    *,
    anchors: str,
    skip: Collection[str],
    at: datetime | None,
    limit: int,
) -> list[Memory]:
    """Memories (not in ``skip``, not after ``at``) that mention ``names``: for each name
    the best lexical match of the name plus ``anchors`` that holds most of the name's words;
    ``limit`` in all."""
    out: list[Memory] = []
    taken = set(skip)
    for name in names:
        words = set(stems(name))
        if not words:
            continue
        query = f"{name} {anchors}".strip()
        ids = [i for i, _ in store.search_text(scope, query, limit=8) if i not in taken]
        for m in _in_order(store, scope, ids):
            if len(out) >= limit:
                return out
            if m.archived or (at is not None and m.timestamp > at):
                continue
            if 2 * len(words & set(stems(m.text))) >= len(words):
                out.append(m)
                taken.add(m.id)
                break
    return out


def told_hops(
    store: GraphReader,
    scope: Scope,
    start: Sequence[Memory],
    *,
    known: str,
    anchors: str,
    skip: Collection[str],
    at: datetime | None,
    hops: int = TOLD_HOPS,
    story: Collection[str] = (),
) -> list[Memory]:
    """Follow a chain through the memories that tell it, past what the graph holds.

    From each memory of the frontier, the words it adds to what is already known (the
    question, the memories taken) become the next lexical query, with ``anchors`` (the names
    the question uses, which tell near-twin stories apart): the best memory sharing one of
    those new words is the next link. An entity found in one hop seeds the next without
    needing the extractor to have typed the relation. With ``story`` (the stems that name
    the asked story, see :mod:`.story`), a link must name it. Bounded: ``hops`` rounds,
    :data:`TOLD_WIDTH` memories per frontier memory per round, :data:`TOLD_MAX` in all.
    """
    seen = set(stems(known))
    taken = set(skip) | {m.id for m in start}
    out: list[Memory] = []
    frontier = list(start)
    anchor_stems = set(stems(anchors))
    for _ in range(hops):
        nxt: list[Memory] = []
        for m in frontier:
            new = [w for w in _new_words(m.text, seen) if _stem(w) not in anchor_stems]
            if not new or len(out) >= TOLD_MAX:
                continue
            query = " ".join([*new, anchors])
            ids = [i for i, _ in store.search_text(scope, query, limit=10) if i not in taken]
            cands = [
                c
                for c in _in_order(store, scope, ids)
                if not c.archived and (at is None or c.timestamp <= at)
            ]
            linking = {_stem(w) for w in new}
            for _ in range(TOLD_WIDTH):
                pick = _next_link(cands, linking, anchor_stems, set(story))
                if pick is None or len(out) >= TOLD_MAX:
                    break
                out.append(pick)
                nxt.append(pick)
                taken.add(pick.id)
                cands = [c for c in cands if c.id != pick.id]
        for m in frontier:  # what this round read is known to the next
            seen.update(stems(m.text))
        frontier = nxt
        if not frontier:
            break
    return out


def _in_order(store: GraphReader, scope: Scope, ids: Sequence[str]) -> list[Memory]:
    """The memories of ``ids`` in that order (a search's ranking)."""
    by_id = {m.id: m for m in store.get_memories(scope, ids)}
    return [by_id[i] for i in ids if i in by_id]


def _next_link(
    cands: Sequence[Memory], new: set[str], anchors: set[str], story: set[str]
) -> Memory | None:
    """The best candidate that shares a new word and names the question's story (one of its
    anchors); else one that shares two new words (a memory need not repeat the story's name,
    but one common word alone is too weak a link). With ``story`` words, a candidate must
    name the story: in a store of near-twin stories, two shared words are common."""
    fallback = None
    for c in cands:
        words = set(stems(c.text))
        if story and not story & words:
            continue
        shared = len(new & words)
        if shared and (not anchors or anchors & words):
            return c
        if fallback is None and shared >= 2:
            fallback = c
    return fallback
