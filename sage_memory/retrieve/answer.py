"""Structure answers inside a search: the plan or the diagnosis a query asks for, as lines.

A search whose query asks "what should I do next", "what comes after", "what do I need for"
(see :func:`sage_memory.retrieve.query.structure_intent`) gets the plan around the task it names;
a query that names a problem with known causes or fixes gets the diagnosis chain (causes, then
fixes, then what the fixes need). The lines go to the context's "Next steps" section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sage_memory.retrieve import structure as st
from sage_memory.retrieve.context import cite
from sage_memory.retrieve.query import QueryPlan
from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.seeds import LinkedNode
from sage_memory.types import Edge, EdgeHit, Node, NodeHit, Scope

#: Labels a plan question is most likely about, most specific first.
PLAN_LABELS = ("Task", "Step", "Event", "Project")
#: Linked nodes scoring below this share of the best one are not taken as the subject.
SUBJECT_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class StructureView:
    """Lines for the context plus the nodes and facts behind them."""

    lines: tuple[str, ...] = ()
    nodes: tuple[NodeHit, ...] = ()
    edges: tuple[EdgeHit, ...] = ()
    names: dict[str, str] = field(default_factory=dict)


def _subject(linked: Sequence[LinkedNode]) -> Node | None:
    if not linked:
        return None
    best = linked[0].score
    near = [ln.node for ln in linked if ln.score >= SUBJECT_SHARE * best]
    for label in PLAN_LABELS:
        for node in near:
            if node.label == label:
                return node
    return near[0]


def _status(step: st.Step) -> str:
    return f" (status: {step.status})" if step.status else ""


def _src(step: st.Step) -> str:
    ids = step.edge.memory_ids if step.edge is not None else step.node.memory_ids
    c = cite(ids)
    return f" [{c}]" if c else ""


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.nodes: dict[str, NodeHit] = {}
        self.edges: dict[str, Edge] = {}
        self.known: dict[str, str] = {}  # names of nodes seen but not listed

    def name_of(self, node_id: str) -> str:
        hit = self.nodes.get(node_id)
        return hit.node.name if hit is not None else self.known.get(node_id, "?")

    def add(self, line: str, step: st.Step, why: str) -> None:
        self.lines.append(line)
        self.nodes.setdefault(step.node.id, step.hit(why))
        if step.edge is not None:
            self.edges.setdefault(step.edge.id, step.edge)

    def view(self, store: GraphReader, scope: Scope) -> StructureView:
        hits = st.edge_hits(store, scope, list(self.edges.values()))
        names = {h.edge.source_id: h.source_name for h in hits}
        names.update({h.edge.target_id: h.target_name for h in hits})
        return StructureView(tuple(self.lines), tuple(self.nodes.values()), tuple(hits), names)


def _plan_lines(
    b: _Builder, store: GraphReader, scope: Scope, node: Node, *, kind: str, at: datetime | None
) -> None:
    name = node.name
    if st.tasks_of(store, scope, node.id, at):
        # A project's plan, each step with what it needs: "what next on the backend?" asked
        # of the project wants the step's resources too, not only its place in the order.
        for i, step in enumerate(st.next_steps(store, scope, node.id, at=at), 1):
            needs = st.requirements(store, scope, step.node.id, at=at)
            uses = f"; needs {', '.join(s.node.name for s in needs)}" if needs else ""
            b.add(
                f"- {i}. {step.node.name}{_status(step)}{uses}{_src(step)}",
                step,
                f"task of {name}",
            )
            b.edges.update((s.edge.id, s.edge) for s in needs if s.edge is not None)
        return
    before = st.predecessors(store, scope, node.id, transitive=kind != "requires", at=at)
    after = st.successors(store, scope, node.id, transitive=kind == "after", at=at)
    needs = st.requirements(store, scope, node.id, at=at)
    if kind in ("next", "before", "requires"):
        todo = [s for s in before if not st.is_done(s.status)]
        first = max(todo, key=lambda s: s.hops) if kind == "next" and todo else None
        if first is not None:
            b.add(
                f"- First: {first.node.name}{_status(first)}, which comes before {name}"
                f"{_src(first)}",
                first,
                f"unfinished, before {name}",
            )
        for s in sorted(before, key=lambda s: -s.hops):
            if s is not first:
                b.add(f"- Before {name}: {s.node.name}{_status(s)}{_src(s)}", s, f"before {name}")
    if kind in ("next", "requires"):
        for s in needs:
            b.add(
                f"- {name} {s.edge.relation if s.edge else 'REQUIRES'} {s.node.name}{_src(s)}",
                s,
                f"needed by {name}",
            )
    if kind in ("next", "after"):
        own = st.status(store, scope, node, at)
        if kind == "next" and own:
            b.lines.append(f"- {name} (status: {own})")
        for s in after:
            b.add(f"- After {name}: {s.node.name}{_status(s)}{_src(s)}", s, f"after {name}")


#: Questions answered by a chain: the relation followed, and how a step reads.
CHAINS: dict[str, tuple[tuple[st.Link, ...], str]] = {
    "blockers": (st.BLOCKERS, "blocked by"),
    "kinds": (st.KINDS, "a kind of"),
    "causes": (st.CAUSES, "caused by"),
}


def _chain_lines(
    b: _Builder, store: GraphReader, scope: Scope, node: Node, *, kind: str, at: datetime | None
) -> None:
    """The relation followed from ``node`` level by level (bounded), in order, each cited."""
    links, verb = CHAINS[kind]
    steps = st.chain(store, scope, node.id, links, transitive=True, at=at)
    b.known[node.id] = node.name
    for s in steps:
        e = s.edge
        near = (
            node.name
            if e is None
            else b.name_of(e.source_id if e.source_id != s.node.id else e.target_id)
        )
        level = f" (level {s.hops})" if s.hops > 1 else ""
        b.add(f"- {near} {verb} {s.node.name}{level}{_status(s)}{_src(s)}", s, f"{verb} {near}")
        b.known[s.node.id] = s.node.name


def _diagnosis_lines(
    b: _Builder, d: st.Diagnosis, subject: Node, store: GraphReader, scope: Scope
) -> None:
    needers = [s.edge.source_id for s in d.preconditions if s.edge is not None]
    b.known.update((n.id, n.name) for n in store.get_nodes(scope, needers))
    for s in d.causes:
        b.add(f"- Possible cause: {s.node.name}{_src(s)}", s, f"causes {subject.name}")
    for s in d.fixes:
        b.add(f"- Fix: {s.node.name}{_src(s)}", s, f"solves {subject.name}")
    for s in d.preconditions:
        needs = f" (needed for {b.name_of(s.edge.source_id)})" if s.edge is not None else ""
        b.add(f"- Precondition: {s.node.name}{needs}{_src(s)}", s, "a fix depends on it")


def structure_view(
    store: GraphReader,
    scope: Scope,
    plan: QueryPlan,
    linked: Sequence[LinkedNode],
    at: datetime | None,
) -> StructureView:
    """The structure answer for a search, or an empty view when the query asks for none."""
    if not linked:
        return StructureView()
    b = _Builder()
    kind = plan.structure
    if kind == "path" and len(linked) >= 2:
        a, z = linked[0].node, linked[1].node
        edges = st.path(store, scope, a.id, z.id, at=at)
        hits = st.edge_hits(store, scope, edges)
        for h in hits:
            c = cite(h.edge.memory_ids)
            b.lines.append(
                f"- {h.source_name} -{h.relation}-> {h.target_name}" + (f" [{c}]" if c else "")
            )
            b.edges.setdefault(h.edge.id, h.edge)
    elif kind in CHAINS:
        subject = _subject(linked)
        if subject is not None:
            _chain_lines(b, store, scope, subject, kind=kind, at=at)
    elif kind is not None:
        subject = _subject(linked)
        if subject is not None:
            _plan_lines(b, store, scope, subject, kind=kind, at=at)
    best = linked[0].score
    for ln in linked[:3]:
        if ln.score < SUBJECT_SHARE * best:
            break
        if not plan.problem and ln.node.label != "Error":
            continue  # only a problem gets a diagnosis (and only then its cost)
        d = st.diagnose(store, scope, ln.node.id, at=at)
        if d:
            _diagnosis_lines(b, d, ln.node, store, scope)
            break
    if not b.lines:
        return StructureView()
    return b.view(store, scope)
