"""Structure answers inside a search: the plan or the diagnosis a query asks for, as lines.

A search whose query asks "what should I do next", "what comes after", "what do I need for"
(see :func:`sage_memory.retrieve.query.structure_intent`) gets the plan around the task it names;
a query that names a problem with known causes or fixes gets the diagnosis chain (causes, then
fixes, then what the fixes need). The lines go to the context's "Next steps" section.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sage_memory.retrieve import structure as st
from sage_memory.retrieve.context import cite
from sage_memory.retrieve.query import QueryPlan
from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.seeds import LinkedNode
from sage_memory.retrieve.story import Story, story_of
from sage_memory.retrieve.walk import specificity
from sage_memory.types import Edge, EdgeHit, MemoryHit, Node, NodeHit, Scope

#: Labels a plan question is most likely about, most specific first.
PLAN_LABELS = ("Task", "Step", "Event", "Project")
#: Linked nodes scoring below this share of the best one are not taken as the subject.
SUBJECT_SHARE = 0.5
#: ... of a structure question (whose subject is chosen by the words it shares with it).
SUBJECT_FLOOR = 0.3
#: Subjects a chain question tries (the linked nodes near the best), and the chains kept.
CHAIN_SUBJECTS = 3
#: Memories cited per step (the latest statements of its fact), and in all.
MEMORIES_PER_STEP = 2
MAX_MEMORIES = 12


@dataclass(frozen=True, slots=True)
class StructureView:
    """Lines for the context plus the nodes and facts behind them."""

    lines: tuple[str, ...] = ()
    nodes: tuple[NodeHit, ...] = ()
    edges: tuple[EdgeHit, ...] = ()
    names: dict[str, str] = field(default_factory=dict)
    #: The memories that state the answer's steps, in the answer's order: the context
    #: packs them ahead of the other hits, so a whole chain is told even when the ranking
    #: alone would keep only its first link.
    memories: tuple[str, ...] = ()


def _subjects(linked: Sequence[LinkedNode], plan: QueryPlan) -> list[Node]:
    """The linked nodes that may be the question's subject, likeliest first: not one of the
    proper names the question uses to say whose story it is ("what blocks the Riverside
    team's roof repair?" asks about the repair, not the team), then those naming more of the
    question's words (a task named in full beats a status word the question also names), then
    plan-like labels, then the linking score. A hub comes last."""
    if not linked:
        return []
    best = linked[0].score
    asked = set(st.stems(plan.text))
    proper = set(st.stems(" ".join(plan.names)))
    rank = {label: i for i, label in enumerate(PLAN_LABELS)}
    near = [ln for ln in linked if ln.score >= SUBJECT_FLOOR * best]
    near.sort(
        key=lambda ln: (
            bool(proper) and set(st.stems(ln.node.name)) <= proper,
            # A hub ("step", "team": a word many stories use) is nobody's subject.
            specificity(ln.node) < 1.0,
            -len(asked & set(st.stems(ln.node.name))),
            rank.get(ln.node.label, len(rank)),
            -ln.score,
        )
    )
    return [ln.node for ln in near[:CHAIN_SUBJECTS]]


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
        self.memories: dict[str, None] = {}  # cited memories, in order

    def name_of(self, node_id: str) -> str:
        hit = self.nodes.get(node_id)
        return hit.node.name if hit is not None else self.known.get(node_id, "?")

    def add(self, line: str, step: st.Step, why: str) -> None:
        self.lines.append(line)
        self.nodes.setdefault(step.node.id, step.hit(why))
        if step.edge is not None:
            self.edges.setdefault(step.edge.id, step.edge)
            self.memories.update(dict.fromkeys(step.edge.memory_ids[-MEMORIES_PER_STEP:]))

    def view(self, store: GraphReader, scope: Scope) -> StructureView:
        hits = st.edge_hits(store, scope, list(self.edges.values()))
        names = {h.edge.source_id: h.source_name for h in hits}
        names.update({h.edge.target_id: h.target_name for h in hits})
        return StructureView(
            tuple(self.lines),
            tuple(self.nodes.values()),
            tuple(hits),
            names,
            tuple(list(self.memories)[:MAX_MEMORIES]),
        )


def _plan_lines(
    b: _Builder,
    store: GraphReader,
    scope: Scope,
    node: Node,
    *,
    kind: str,
    plan: QueryPlan,
    at: datetime | None,
) -> None:
    name = node.name
    story = story_of(store, scope, plan, st.stems(name))
    told = _told_by(story, store, scope)
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
    before = st.predecessors(
        store, scope, node.id, transitive=kind != "requires", at=at, bridge=True, told=told
    )
    after = st.successors(
        store, scope, node.id, transitive=kind == "after", at=at, bridge=True, told=told
    )
    needs = st.requirements(store, scope, node.id, at=at)
    if max(sum(s.hops == 1 for s in before), sum(s.hops == 1 for s in after)) > HUB_FANOUT:
        return  # a hub many stories' plans pass through: no one plan's order
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
        if kind == "before" and before:
            # Where the order in the graph starts may not be where the plan starts.
            _told(
                b,
                store,
                scope,
                _ends(before),
                (),
                plan=plan,
                story=story,
                relations=st.ORDER,
                at=at,
            )
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
#: How a kind chain's class inclusion reads (see ``st.PAST_FIRST``).
INCLUDED = {"PART_OF": "falls under", "MEMBER_OF": "belongs to"}
#: The chains tried, in order, for a question naming one (blockers and causes are often
#: asked in each other's words: "what ultimately delayed ...").
FALLBACK: dict[str, tuple[str, ...]] = {"blockers": ("causes",), "causes": ("blockers",)}
#: A subject whose first level fans out past this is a hub many stories share ("team").
HUB_FANOUT = 5
#: Chain ends whose memories start the walk through memories.
TOLD_ENDS = 3


def _chain_lines(
    b: _Builder,
    store: GraphReader,
    scope: Scope,
    subjects: Sequence[Node],
    *,
    kind: str,
    plan: QueryPlan,
    at: datetime | None,
) -> None:
    """The relation followed from the subject level by level (bounded), in order, each step
    cited; then the memories that tell how the chain goes on past its last link in the graph.

    The subject is the first of ``subjects`` with such a chain that is not a hub (a node
    many stories share, whose first level fans out past :data:`HUB_FANOUT`). When the
    relation the question names gives no chain, the next one of its group is tried (an
    "ultimately delayed" question may be answered by blockers or by causes).
    """
    for family in (kind, *(k for k in FALLBACK.get(kind, ()) if k != kind)):
        links, verb = CHAINS[family]
        for node in subjects:
            story = story_of(store, scope, plan, st.stems(node.name))
            told = _told_by(story, store, scope)
            steps = st.chain(
                store, scope, node.id, links, transitive=True, at=at, bridge=True, told=told
            )
            if (
                steps
                and sum(s.hops == 1 for s in steps) <= HUB_FANOUT
                and _in_story(store, scope, [s for s in steps if s.hops == 1], plan)
            ):
                _write_chain(b, store, scope, node, steps, verb)
                _told(
                    b,
                    store,
                    scope,
                    _ends(steps),
                    (),
                    plan=plan,
                    story=story,
                    relations=[r for r, _ in links],
                    at=at,
                )
                return
    # No chain in the graph: the memories that mention the subject may tell it.
    story = story_of(store, scope, plan, st.stems(subjects[0].name) if subjects else ())
    relations = [r for r, _ in CHAINS[kind][0]]
    _told(b, store, scope, [], subjects, plan=plan, story=story, relations=relations, at=at)


def _told_by(story: Story, store: GraphReader, scope: Scope) -> st.Told | None:
    """The story's test of a walk's links, or None when the question names no story."""
    if not story:
        return None
    return lambda edges: story.told(store, scope, edges)


def _in_story(store: GraphReader, scope: Scope, first: Sequence[st.Step], plan: QueryPlan) -> bool:
    """Whether a chain's first links are stated in the question's story: when the question
    names things (a team, a person), some memory stating a first link names one of them. A
    subject many stories share otherwise starts another story's chain."""
    named = set(st.stems(" ".join(plan.names)))
    if not named:
        return True
    ids = [m for s in first if s.edge is not None for m in s.edge.memory_ids[-MEMORIES_PER_STEP:]]
    return any(named & set(st.stems(m.text)) for m in store.get_memories(scope, ids))


def _write_chain(
    b: _Builder, store: GraphReader, scope: Scope, node: Node, steps: Sequence[st.Step], verb: str
) -> None:
    b.known[node.id] = node.name
    b.known.update((s.node.id, s.node.name) for s in steps)
    ends = {i for s in steps if s.edge is not None for i in (s.edge.source_id, s.edge.target_id)}
    # A step reached through another phrasing of a node starts at a node not listed.
    b.known.update((n.id, n.name) for n in store.get_nodes(scope, sorted(ends - set(b.known))))
    for s in steps:
        e = s.edge
        near = (
            node.name
            if e is None
            else b.name_of(e.source_id if e.source_id != s.node.id else e.target_id)
        )
        level = f" (level {s.hops})" if s.hops > 1 else ""
        says = INCLUDED.get(e.relation, verb) if e is not None else verb
        b.add(f"- {near} {says} {s.node.name}{level}{_status(s)}{_src(s)}", s, f"{says} {near}")


def _ends(steps: Sequence[st.Step]) -> list[st.Step]:
    """The steps a chain stops at (no step leaves them), deepest first."""
    leaving = {
        (s.edge.source_id if s.edge.target_id == s.node.id else s.edge.target_id)
        for s in steps
        if s.edge is not None
    }
    ends = [s for s in steps if s.node.id not in leaving]
    return sorted(ends, key=lambda s: -s.hops)


def _told(
    b: _Builder,
    store: GraphReader,
    scope: Scope,
    ends: Sequence[st.Step],
    subjects: Sequence[Node],
    *,
    plan: QueryPlan,
    story: Story,
    relations: Collection[str],
    at: datetime | None,
) -> None:
    """Past the chain's last links in the graph (or from the subject, when the graph holds
    no link), the memories that tell the chain on join the answer's memories, each with a
    line: the facts of the asked ``relations`` it states that the chain did not reach (a
    link the extractor missed breaks the chain, not the memory's other links: "b's are c,
    and c's are d"), else just its citation. When the question names its story, only
    memories naming it are taken: a near-twin story's memory shares the words of the chain
    but is not where this one goes on."""
    anchors = " ".join(plan.names)
    ids = [e.memory_ids[-1] for s in ends[:TOLD_ENDS] if (e := s.edge) is not None and e.memory_ids]
    # The ends whose memories name the question's story first: a chain that wandered into
    # a near-twin story through a shared name is not where its own story goes on.
    named = set(st.stems(anchors))
    start = sorted(
        store.get_memories(scope, list(dict.fromkeys(ids))),
        key=lambda m: not named & set(st.stems(m.text)),
    )
    if story:
        start = [m for m in start if story.names(m.text)]
    for m in start:  # the chain's last notes may state more of it than the chain reached
        _fact_lines(b, store, scope, m.id, relations, "In the same note", at=at)
    if not start and subjects:
        start = st.mentions(
            store,
            scope,
            [n.name for n in subjects],
            anchors=anchors,
            skip=b.memories,
            at=at,
            limit=TOLD_ENDS,
        )
        for m in start:
            _told_line(b, store, scope, m.id, relations, "As told", at=at)
    known = plan.text
    for m in st.told_hops(
        store,
        scope,
        start,
        known=known,
        anchors=anchors,
        skip=b.memories,
        at=at,
        story=story.words,
    ):
        _told_line(b, store, scope, m.id, relations, "Further along, as told", at=at)


#: How a told fact of each relation reads.
VERBS = {
    "IS_A": "a kind of",
    "BLOCKED_BY": "blocked by",
    "DEPENDS_ON": "depends on",
    "CAUSED_BY": "caused by",
    "CAUSES": "causes",
    "PRECEDES": "comes before",
    "REQUIRES": "requires",
    "USES": "uses",
}
#: Facts printed per told memory.
FACTS_PER_NOTE = 4


def _fact_lines(
    b: _Builder,
    store: GraphReader,
    scope: Scope,
    memory_id: str,
    relations: Collection[str],
    lead: str,
    *,
    at: datetime | None,
) -> int:
    """Lines for the facts of ``relations`` the memory states that are not listed yet."""
    edges = [
        e for e in st.stated_in(store, scope, memory_id, relations, at=at) if e.id not in b.edges
    ][:FACTS_PER_NOTE]
    if not edges:
        return 0
    names = {
        n.id: n.name
        for n in store.get_nodes(scope, [i for e in edges for i in (e.source_id, e.target_id)])
    }
    for e in edges:
        verb = VERBS.get(e.relation, e.relation)
        src, dst = names.get(e.source_id, "?"), names.get(e.target_id, "?")
        b.lines.append(f"- {lead}: {src} {verb} {dst} [mem {memory_id[:8]}]")
        b.edges.setdefault(e.id, e)
    b.memories.setdefault(memory_id, None)
    return len(edges)


def _told_line(
    b: _Builder,
    store: GraphReader,
    scope: Scope,
    memory_id: str,
    relations: Collection[str],
    lead: str,
    *,
    at: datetime | None,
) -> None:
    """A told memory's facts of the asked relations, else its citation alone."""
    if not _fact_lines(b, store, scope, memory_id, relations, lead, at=at):
        b.lines.append(f"- {lead}: [mem {memory_id[:8]}]")
        b.memories.setdefault(memory_id, None)


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
        _chain_lines(b, store, scope, _subjects(linked, plan), kind=kind, plan=plan, at=at)
    elif kind is not None:
        # The first likely subject that has a plan around it (a question also names its
        # team, a status, a person: those have none).
        subjects = _subjects(linked, plan)
        for subject in subjects:
            _plan_lines(b, store, scope, subject, kind=kind, plan=plan, at=at)
            if b.lines:
                break
        if kind == "before" and not b.lines:
            # No order in the graph: the memories that mention the subject may tell it.
            story = story_of(store, scope, plan, st.stems(subjects[0].name) if subjects else ())
            _told(b, store, scope, [], subjects, plan=plan, story=story, relations=st.ORDER, at=at)
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


def lead_memories(
    store: GraphReader, scope: Scope, view: StructureView, hits: Sequence[MemoryHit]
) -> list[MemoryHit]:
    """``hits`` with the memories the structure answer cites first, in the answer's order.

    A cited memory the ranking did not keep is read from the store (channel "structure"), so
    every step of a chain is told in the context, ahead of less useful hits.
    """
    if not view.memories:
        return list(hits)
    have = {h.id: h for h in hits}
    missing = [i for i in view.memories if i not in have]
    read = {m.id: m for m in store.get_memories(scope, missing) if not m.archived}
    top = max((h.score for h in hits), default=1.0)
    lead: list[MemoryHit] = []
    for i in view.memories:
        if i in have:
            lead.append(have[i])
        elif i in read:
            lead.append(MemoryHit(read[i], top, ("structure",), "states a step of the answer"))
    cited = set(view.memories)
    return lead + [h for h in hits if h.id not in cited]
