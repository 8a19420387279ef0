"""Focus: what the agent is working on (a project, a task, a customer) steers a search.

A focus is one or more nodes. It acts on a search twice:

- **seed**: the focus nodes join the query's linked nodes as extra seeds of the graph walk,
  with :data:`FOCUS_SEED` as their link score, so the walk spends part of its mass around them;
- **boost**: every candidate memory gets ``focus_weight * proximity``, where proximity is 1 for
  a memory behind a focus node (its provenance) or naming it, :data:`SHORT_NAME` for one that
  names it by a word of its name no other node has ("Osprey" for "Project Osprey"),
  ``HOP_DECAY ** h`` for a memory behind (or naming) a node ``h`` facts away (at most
  ``RetrieveConfig.focus_hops``), :data:`SESSION` for a memory said in a session (run) where
  the focus was mentioned, and, for a fact, the proximity of its nearer end. A hub (a node
  many memories support, such as the speaker) passes on proximity in proportion to how
  specific it is, and the walk does not go through it: twin projects that share only "the
  user" stay apart.

When no focus is given, one can be inferred from the session: the nodes the last few memories
of the same run mention most (:func:`infer_focus`). Everything here reads a bounded
neighbourhood (``max_nodes``), never the whole scope.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.seeds import LinkedNode, WordSeeds
from sage_memory.retrieve.structure import stored_order
from sage_memory.types import Edge, EdgeHit, Memory, MemoryHit, Node, Scope, replace
from sage_memory.words import QUERY_STOPWORDS as STOPWORDS

#: Link score of a focus node when it joins the query's seeds (a name the query itself says
#: scores 1.0; the focus counts, but less than what is asked).
FOCUS_SEED = 0.6
#: Proximity lost per fact away from the focus.
HOP_DECAY = 0.5
#: A node supported by more memories than this is a hub: it passes on proximity in proportion
#: and the walk does not continue through it.
HUB_MEMORIES = 25
#: Nodes one focus neighbourhood may read.
MAX_NODES = 200
#: Edges read per node.
MAX_FANOUT = 50
#: Shortest node name matched in a memory's text.
MIN_NAME_CHARS = 3
#: Proximity of a memory that names a focus node by a word of its name that names it alone.
SHORT_NAME = 0.8
#: Proximity of a memory said in a session (run) where the focus node was mentioned.
SESSION = 0.5
#: Memories of the focus nodes read to find their sessions (the latest ones).
MAX_SESSION_READS = 100
#: Inference: a node must be mentioned by at least this many of the recent memories.
MIN_MENTIONS = 2
#: Inference: at most this many nodes are taken as the inferred focus.
MAX_INFERRED = 2

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Focus:
    """The resolved focus of one search.

    Attributes:
        nodes: the focus nodes.
        inferred: True when the focus came from the session's recent memories.
        terms: focus names that matched no node: they still count as text (memories that say
            them, and the sessions those were said in).
    """

    nodes: tuple[Node, ...] = ()
    inferred: bool = False
    terms: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (*(n.name for n in self.nodes), *self.terms)

    def __bool__(self) -> bool:
        return bool(self.nodes or self.terms)


def with_seeds(words: WordSeeds, focus: Focus) -> WordSeeds:
    """The query's word seeds plus the focus nodes as linked nodes ("focus"), so the graph
    walk starts from them too; a node the query names itself keeps its own link."""
    named = {ln.node.id for ln in words.linked}
    extra = [LinkedNode(n, FOCUS_SEED, "focus") for n in focus.nodes if n.id not in named]
    return WordSeeds(words.memories, [*words.linked, *extra], words.scored)


@dataclass(slots=True)
class Proximity:
    """How near the focus each node and memory is, in [0, 1]."""

    nodes: dict[str, float] = field(default_factory=dict)
    memories: dict[str, float] = field(default_factory=dict)
    # memory id -> the focus-near node or fact that makes it near (for the hit's "why")
    via: dict[str, str] = field(default_factory=dict)
    # names of the focus-near nodes, for memories that say a name without an extracted fact
    names: list[tuple[re.Pattern[str], float, str]] = field(default_factory=list)
    # the sessions (run ids) in which the focus nodes were mentioned
    runs: frozenset[str] = frozenset()

    def of(self, memory: Memory) -> tuple[float, str]:
        """A memory's proximity and why: by provenance, by naming a focus-near node, or by
        being said in a session where the focus was mentioned."""
        best, via = self.memories.get(memory.id, 0.0), self.via.get(memory.id, "")
        for pattern, value, name in self.names:
            if value > best and pattern.search(memory.text):
                best, via = value, f"names {name}"
        run = memory.scope.run_id
        if best < SESSION and run is not None and run in self.runs:
            best, via = SESSION, f"said in a session about the focus ({run})"
        return best, via


def specificity(node: Node) -> float:
    """1 for a node a few memories support; less for a hub, in proportion."""
    return min(1.0, HUB_MEMORIES / max(1, len(node.memory_ids)))


def proximity(
    store: GraphReader,
    part: Scope,
    focus: Focus,
    *,
    hops: int,
    max_nodes: int = MAX_NODES,
) -> Proximity:
    """How near the focus each node and memory is: a bounded walk from the focus nodes, the
    names they go by, and the sessions the focus was mentioned in."""
    out = Proximity()
    nodes, edges = _walk(store, part, focus, out, hops=hops, max_nodes=max_nodes)
    for node in nodes.values():
        value = out.nodes.get(node.id, 0.0)
        _credit(out, node.memory_ids, value, node.name)
        pattern = name_pattern(node)
        if pattern is not None and value > 0:
            out.names.append((pattern, value, node.name))
    for e in edges.values():
        a, b = out.nodes.get(e.source_id, 0.0), out.nodes.get(e.target_id, 0.0)
        src, dst = nodes.get(e.source_id), nodes.get(e.target_id)
        label = f"{src.name if src else '?'} -{e.relation}-> {dst.name if dst else '?'}"
        _credit(out, e.memory_ids, max(a, b), label)
    named: list[tuple[str, str | None]] = [(n.name, n.id) for n in focus.nodes]
    named += [(t, None) for t in focus.terms]
    for term in focus.terms:
        pattern = phrase_pattern([term])
        if pattern is not None:
            out.names.append((pattern, 1.0, term))
    for name, node_id in named:
        short = short_name_pattern(store, part, name, node_id)
        if short is not None:
            out.names.append((short, SHORT_NAME, f"{name} (by its short name)"))
    out.names.sort(key=lambda item: -item[1])
    said = [m for n in focus.nodes for m in n.memory_ids]
    out.runs = _sessions(store, part, said + _saying(store, part, [n for n, _ in named]))
    return out


def _walk(
    store: GraphReader,
    part: Scope,
    focus: Focus,
    out: Proximity,
    *,
    hops: int,
    max_nodes: int,
) -> tuple[dict[str, Node], dict[str, Edge]]:
    """Breadth-first from the focus nodes, ``hops`` facts out, at most ``max_nodes`` nodes;
    fills ``out.nodes`` with each node's proximity and returns the nodes and facts read."""
    nodes: dict[str, Node] = {n.id: n for n in focus.nodes}
    out.nodes.update((n.id, 1.0) for n in focus.nodes)
    edges: dict[str, Edge] = {}
    frontier = [n.id for n in focus.nodes]
    for hop in range(1, hops + 1):
        if not frontier or len(nodes) >= max_nodes:
            break
        reached: list[str] = []
        for e in _capped(store.edges_of(part, frontier), frontier):
            edges[e.id] = e
            for nid in (e.source_id, e.target_id):
                room = len(nodes) + len(reached) < max_nodes
                if nid not in out.nodes and nid not in reached and room:
                    reached.append(nid)
        for n in store.get_nodes(part, reached):
            nodes[n.id] = n
            # Proximity through the node it was reached from, discounted for hubs.
            out.nodes[n.id] = HOP_DECAY**hop * specificity(n)
        # Hubs are not walked through: they would join everything to everything.
        frontier = [nid for nid in reached if nid in nodes and specificity(nodes[nid]) >= 1.0]
    return nodes, edges


def _saying(store: GraphReader, part: Scope, names: Sequence[str]) -> list[str]:
    """Memories whose text says one of ``names`` (not only those an extractor tied to a
    node): one bounded text search per name."""
    out: list[str] = []
    for name in names:
        pattern = phrase_pattern([name])
        if pattern is None:
            continue
        found = store.search_text(part, name, entity="memory", limit=MAX_SESSION_READS)
        texts = store.get_memories(part, [mid for mid, _ in found])
        out += [m.id for m in texts if pattern.search(m.text)]
    return out


def name_pattern(node: Node) -> re.Pattern[str] | None:
    """A case-insensitive whole-word pattern for a node's name and aliases (names shorter
    than :data:`MIN_NAME_CHARS` are left out: too many accidental matches)."""
    return phrase_pattern((node.name, *node.aliases))


def _sessions(store: GraphReader, part: Scope, said: Sequence[str]) -> frozenset[str]:
    """The runs of the memories that state the focus (at most :data:`MAX_SESSION_READS` read):
    a session that talks about the focus is about it in its other turns too, even those that
    say only "we" or "it"."""
    ids = list(dict.fromkeys(said))[-MAX_SESSION_READS:]
    if not ids:
        return frozenset()
    return frozenset(
        m.scope.run_id for m in store.get_memories(part, ids) if m.scope.run_id is not None
    )


def short_name_pattern(
    store: GraphReader, part: Scope, name: str, node_id: str | None
) -> re.Pattern[str] | None:
    """A pattern for the words of a focus name that name it alone.

    "Project Osprey" is often just "Osprey": a capitalised word of the name (three letters or
    more, not a stopword) counts when no other node of the partition has it in its name (one
    bounded text search per word), so "Project", shared by every project, never does.
    ``node_id`` is the focus's own node (None for a focus given as text only).
    """
    words: list[str] = []
    for word in _WORD.findall(name):
        if len(word) < MIN_NAME_CHARS or not word[0].isupper() or word.casefold() in STOPWORDS:
            continue
        if word.casefold() == name.casefold():
            return None  # a one-word name is matched whole already
        others = [i for i, _ in store.search_text(part, word, entity="node", limit=5)]
        if any(i != node_id for i in others):
            continue
        words.append(word)
    return phrase_pattern(words)


def phrase_pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    """A case-insensitive whole-word pattern for any of ``phrases`` (None for none)."""
    kept = sorted({p.strip() for p in phrases if len(p.strip()) >= MIN_NAME_CHARS}, key=len)
    if not kept:
        return None
    alternatives = "|".join(re.escape(p) for p in reversed(kept))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _capped(edges: Iterable[Edge], frontier: Sequence[str]) -> list[Edge]:
    """At most MAX_FANOUT current edges per frontier node (heaviest first)."""
    per: Counter[str] = Counter()
    kept: list[Edge] = []
    wanted = set(frontier)
    for e in sorted(edges, key=lambda e: (-e.weight, *stored_order(e))):
        if not e.is_current():
            continue
        ends = [n for n in (e.source_id, e.target_id) if n in wanted]
        if ends and all(per[n] >= MAX_FANOUT for n in ends):
            continue
        per.update(ends)
        kept.append(e)
    return kept


def _credit(out: Proximity, memory_ids: Iterable[str], value: float, via: str) -> None:
    if value <= 0:
        return
    for mid in memory_ids:
        if value > out.memories.get(mid, 0.0):
            out.memories[mid] = value
            out.via[mid] = via


def boost(hits: Sequence[MemoryHit], near: Proximity, weight: float) -> list[MemoryHit]:
    """Each hit's score plus ``weight`` times its proximity to the focus, best first.

    A hit that gained says so in its channels ("focus") and its why.
    """
    out: list[MemoryHit] = []
    for h in hits:
        p, via = near.of(h.memory)
        if p <= 0 or weight <= 0:
            out.append(h)
            continue
        out.append(
            replace(
                h,
                score=round(h.score + weight * p, 6),
                channels=(*h.channels, "focus"),
                why=f"{h.why}; focus: {via} ({p:.2f})",
            )
        )
    return sorted(out, key=lambda h: -h.score)


def boost_edges(
    edges: Sequence[EdgeHit], near: Proximity, hits: Sequence[MemoryHit], weight: float
) -> list[EdgeHit]:
    """Facts near the focus first: each fact's score plus ``weight`` times the proximity of
    its nearer end, or of the nearest memory behind it (among the search's memory hits and
    the focus neighbourhood's provenance). Ties keep their order."""
    if weight <= 0:
        return list(edges)
    by_hit = {h.id: near.of(h.memory)[0] for h in hits}
    scored: list[tuple[float, int, EdgeHit]] = []
    for i, h in enumerate(edges):
        e = h.edge
        p = max(
            near.nodes.get(e.source_id, 0.0),
            near.nodes.get(e.target_id, 0.0),
            *(max(by_hit.get(m, 0.0), near.memories.get(m, 0.0)) for m in e.memory_ids),
        )
        hit = replace(h, score=round(h.score + weight * p, 6)) if p > 0 else h
        scored.append((-hit.score, i, hit))
    return [h for _, _, h in sorted(scored, key=lambda t: (t[0], t[1]))]


def infer_focus(recent: Sequence[Memory], candidates: Mapping[str, Sequence[Node]]) -> Focus:
    """The nodes the session's recent memories mention most, as an inferred focus.

    Args:
        recent: the last few memories of the run (the caller picks how many,
            ``RetrieveConfig.focus_recent``).
        candidates: for each of them, nodes it may mention: those derived from it and those
            whose names the store's text search matched.

    A memory mentions a node when the node lists it as provenance or its text says the node's
    name or an alias (whole words). A node counts when at least :data:`MIN_MENTIONS` of the
    memories mention it; a hub (the speaker, mentioned everywhere) never counts. The most
    mentioned come first, at most :data:`MAX_INFERRED`; none when nothing qualifies.
    """
    nodes: dict[str, Node] = {n.id: n for found in candidates.values() for n in found}
    patterns = {nid: name_pattern(n) for nid, n in nodes.items()}
    counts: Counter[str] = Counter()
    for m in recent:
        said = {
            nid
            for nid, n in nodes.items()
            if m.id in n.memory_ids or ((p := patterns[nid]) is not None and p.search(m.text))
        }
        counts.update(said)
    ranked = sorted(
        (
            nodes[nid]
            for nid, c in counts.items()
            if c >= MIN_MENTIONS and specificity(nodes[nid]) >= 1.0
        ),
        key=lambda n: (-counts[n.id], n.name),
    )
    return Focus(tuple(ranked[:MAX_INFERRED]), inferred=True) if ranked else Focus()
