"""Duplicate nodes (merge) and over-broad nodes (split). Pure functions; the runner fetches.

Merge confidence is a sum of log-odds (the constants below), turned into a probability:

- for: the same canonical name once aliases apply (``pd.read_csv`` = ``pandas.read_csv``, via
  :mod:`sage_memory.entities.names`; decisive), near-identical names (word order, a typo:
  similarity at ``ExtractConfig.fuzzy_threshold``), one name abbreviating the other (initials
  "NYC", a numeronym "k8s"), else the fuzzy similarity of the names
  (:func:`sage_memory.entities.resolution.name_similarity`) and of their embeddings; and each
  shared neighbour (the same co-mentioned thing);
- against: a prior (most candidate pairs are kin, not twins), each single-valued relation the
  two hold with different values (Sam LIVES_IN Porto, Samir LIVES_IN Leeds), and both being
  extracted from one memory as two nodes (the text spoke of two things).

Names and their embeddings are two views of one string: without a shared neighbour (or an
alias or near-identical name) the confidence stays at ``NAMES_ALONE``, below the display
threshold (``EvolveConfig.merge_suggest_confidence``). Some evidence rules a pair out whatever
else agrees: incompatible labels, different numbers ("Python 3.11" / "Python 3.12"), a typed
edge between them (IS_A, PART_OF, USES...), different qualifiers ("Springfield, Illinois" /
"Springfield, MA"), sibling names one distinctive word apart (``PosixPath`` / ``WindowsPath``,
see :mod:`sage_memory.entities.siblings`), unlike names with the same typed tie to one node
(Paris and Marseille, both LOCATED_IN France), and two nodes entity resolution kept apart at
write time (see :mod:`sage_memory.entities.referent`) until they share a neighbour.
bench/merges.py reports precision and recall of the shown suggestions at each threshold.

A merge keeps the better-attested node, gives it the other's name and aliases as aliases and
re-points every edge of the other to it; an edge between the two disappears (it would be a
loop) and an edge that now duplicates one of the kept node's is folded into it. The whole
merge is one journaled change set, so undo restores both nodes and every edge exactly.

A split is suggested when the contexts of a node's edges ("USES pandas: loaded the csv...")
form two well-separated clusters of embeddings; an LLM, when configured, names the senses or
vetoes the split.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import match_key
from sage_memory.entities.resolution import cosine, labels_compatible, name_similarity
from sage_memory.entities.siblings import are_siblings, edit_distance, name_tokens
from sage_memory.evolve.proposal import Proposal, is_current, pair_key
from sage_memory.store.base import name_key
from sage_memory.types import Edge, Node, new_id

SUMMARY_LABEL = "Summary"
#: The default single-valued relations (``ExtractConfig.single_valued``).
SINGLE_VALUED = ExtractConfig().single_valued
_NUMBER = re.compile(r"\d+")
#: Relations that say two nodes are alike or linked without saying they differ; any other
#: current edge between two nodes (IS_A, PART_OF, USES...) says they are two things.
LOOSE = frozenset({"RELATED_TO", "POSSIBLY_RELATED_TO", "ASSOCIATED_WITH", "MENTIONS"})
#: The highest score names alone reach, below the default suggestion threshold.
NAMES_ALONE = 0.5
#: Log-odds of the merge evidence (see :func:`merge_score`). A candidate pair is more often two
#: things than one (the candidates are the nearest names, most of them siblings or kin).
PRIOR = -1.5
#: The same canonical name once aliases apply (pd.read_csv / pandas.read_csv): decisive.
ALIAS = 6.0
#: Names at the fuzzy threshold: the same words reordered, a typo.
NEAR_IDENTICAL = 3.8
#: One name abbreviates the other (initials, numeronym, prefix): strong, not decisive.
ABBREVIATION = 2.5
#: Other names: log-odds per unit of fuzzy similarity around a neutral point.
NAME_SLOPE, NAME_NEUTRAL = 4.0, 0.6
#: Name embeddings: log-odds per unit of cosine around a neutral point (MiniLM cosines of
#: unrelated short names sit near 0.2-0.4, of one thing's two names near 0.6-0.9).
EMBEDDING_SLOPE, EMBEDDING_NEUTRAL = 3.0, 0.5
#: Each shared neighbour (the same co-mentioned thing), up to a cap.
SHARED_NEIGHBOUR = 1.0
NEIGHBOURS_CAP = 3.0
#: Each single-valued relation with different values on the two sides (at most two count).
CONTRADICTION = 2.0
#: Both extracted from one memory as two nodes: the text spoke of two things.
CO_MENTIONED = 1.5
#: Nodes with at least this many current edges are examined for a split.
SPLIT_MIN_DEGREE = 8


def canonical_names(node: Node, aliases: Mapping[str, str]) -> set[str]:
    """The normal forms of a node's name and aliases (``aliases`` from ``merge_aliases``)."""
    return {f for n in (node.name, *node.aliases) if (f := match_key(n, aliases, builtin=False))}


def merge_score(
    a: Node,
    b: Node,
    *,
    aliases: Mapping[str, str],
    vector_a: NDArray[np.floating] | None = None,
    vector_b: NDArray[np.floating] | None = None,
    neighbours_a: Iterable[str] = (),
    neighbours_b: Iterable[str] = (),
    linked_by: Iterable[str] = (),
    fuzzy: float = 0.92,
    typed_a: Iterable[tuple[str, bool, str]] = (),
    typed_b: Iterable[tuple[str, bool, str]] = (),
    single_valued: Iterable[str] = SINGLE_VALUED,
) -> tuple[float, dict[str, Any]] | None:
    """How likely ``a`` and ``b`` are one thing, with the evidence; None if they cannot be.

    Args:
        a: One node.
        b: The other (same partition).
        aliases: The alias table (:func:`sage_memory.entities.names.merge_aliases`).
        vector_a: Embedding of ``a``'s name, when stored.
        vector_b: Embedding of ``b``'s name, when stored.
        neighbours_a: Ids of the nodes ``a`` has current edges with.
        neighbours_b: Same for ``b``.
        linked_by: Relations of the current edges between ``a`` and ``b``; a typed one
            ("deep neural networks" IS_A "neural networks") rules the pair out.
        fuzzy: Name similarity from which names alone are near-certain
            (``ExtractConfig.fuzzy_threshold``).
        typed_a: ``(relation, outgoing, other id)`` of ``a``'s typed current edges.
        typed_b: Same for ``b``. Two nodes with the same typed tie to one node (both IS_A
            "city", both LOCATED_IN France) and unlike names are siblings under a parent.
        single_valued: Relations with one value at a time (``ExtractConfig.single_valued``):
            two nodes that hold different values of one are two things.
    """
    ruled_out = _ruled_out(a, b, aliases, linked_by, fuzzy, typed_a, typed_b)
    if ruled_out is None:
        return None
    alias, name = ruled_out
    embedding = 0.0
    if vector_a is not None and vector_b is not None:
        embedding = max(0.0, cosine(vector_a, vector_b))
    na, nb = set(neighbours_a) - {b.id}, set(neighbours_b) - {a.id}
    shared, union = na & nb, na | nb
    if not shared and _kept_apart(a, b):
        return None  # kept apart at write time for want of agreeing evidence; still none
    overlap = len(shared) / len(union) if union else 0.0
    neighbour_weight = min(NEIGHBOURS_CAP, SHARED_NEIGHBOUR * len(shared))
    abbreviation = not alias and name < fuzzy and _abbreviates(a, b)
    contradictions = _contradictions(typed_a, typed_b, frozenset(single_valued))
    co_mentioned = bool(set(a.memory_ids) & set(b.memory_ids))
    # Log-odds: a prior (most candidate pairs are two things), evidence for and against.
    if alias:
        names_say = ALIAS
    elif name >= fuzzy:  # the same words in another order, a typo
        names_say = NEAR_IDENTICAL
    elif abbreviation:
        names_say = ABBREVIATION
    else:
        names_say = NAME_SLOPE * (name - NAME_NEUTRAL)
    embedding_says = float(np.clip(EMBEDDING_SLOPE * (embedding - EMBEDDING_NEUTRAL), -1.0, 1.5))
    if alias or name >= fuzzy:
        embedding_says = max(0.0, embedding_says)  # the names already said it
    against = CONTRADICTION * min(2, contradictions) + (CO_MENTIONED if co_mentioned else 0.0)
    logit = PRIOR + names_say + embedding_says + neighbour_weight - against
    if not shared and not alias and name < fuzzy:
        # Name and name-embedding are two views of one string: without a shared neighbour
        # they do not make a suggestion ("machine learning" vs "machine learning model").
        logit = min(logit, _logit(NAMES_ALONE))
    score = 1.0 / (1.0 + math.exp(-logit))
    evidence: dict[str, Any] = {
        "alias_match": alias,
        "abbreviation": abbreviation,
        "name_similarity": round(name, 3),
        "embedding_similarity": round(embedding, 3),
        "neighbour_overlap": round(overlap, 3),
        "shared_neighbours": sorted(shared)[:10],
        "contradicting_facts": contradictions,
        "co_mentioned": co_mentioned,
        "labels": [a.label, b.label],
        "names": [a.name, b.name],
    }
    return round(score, 4), evidence


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _ruled_out(
    a: Node,
    b: Node,
    aliases: Mapping[str, str],
    linked_by: Iterable[str],
    fuzzy: float,
    typed_a: Iterable[tuple[str, bool, str]],
    typed_b: Iterable[tuple[str, bool, str]],
) -> tuple[bool, float] | None:
    """None when the pair cannot be one thing, else (alias match, name similarity).

    Evidence that decides alone: a summary node; incompatible labels; different numbers
    ("Python 3.11" / "Python 3.12"); a typed edge between them; different qualifiers
    ("Springfield, Illinois" / "Springfield, MA"); sibling names one distinctive word apart
    (``PosixPath`` / ``WindowsPath``); unlike names with the same typed tie to one node
    (Paris and Marseille, both LOCATED_IN France).
    """
    if a.id == b.id or SUMMARY_LABEL in (a.label, b.label):
        return None
    if not labels_compatible(a.label, b.label):
        return None
    if any(r not in LOOSE for r in linked_by):
        return None
    qa, qb = _qualifiers(a), _qualifiers(b)
    if qa and qb and not qa & qb:
        return None
    ca, cb = canonical_names(a, aliases), canonical_names(b, aliases)
    if not ca or not cb:
        return None
    alias = bool(ca & cb)
    numbers_differ = _NUMBER.findall(a.name) != _NUMBER.findall(b.name)
    if numbers_differ and not alias and not _abbreviates(a, b):
        return None  # "Python 3.11" / "Python 3.12"; but "k8s" is "kubernetes"
    if not alias and are_siblings((a.name, *a.aliases), (b.name, *b.aliases)):
        return None  # PosixPath / WindowsPath: one distinctive word apart, two things
    name = 1.0 if alias else max(name_similarity(x, y) for x in ca for y in cb)
    ties = {t for t in typed_a if t[0] not in LOOSE and t[2] != b.id} & {
        t for t in typed_b if t[0] not in LOOSE and t[2] != a.id
    }
    if ties and not alias and name < fuzzy and not _share_a_word(a, b):
        # Co-listed under one parent (Paris and Marseille, both IN France). Names that share
        # a word (collections.OrderedDict / OrderedDict) may be a qualified and a bare form.
        return None
    return alias, name


def _qualifiers(node: Node) -> set[str]:
    """The qualifiers seen after the node's name ("Springfield, Illinois"), recorded at write
    time (see :func:`sage_memory.entities.referent.qualifiers_in`)."""
    found = node.attributes.get("qualifiers", ())
    return {q for q in found if isinstance(q, str)} if isinstance(found, list | tuple) else set()


def _contradictions(
    typed_a: Iterable[tuple[str, bool, str]],
    typed_b: Iterable[tuple[str, bool, str]],
    single: frozenset[str],
) -> int:
    """Single-valued relations both nodes hold with different values and no common one (Sam
    LIVES_IN Porto, Samir LIVES_IN Leeds)."""
    values_a: dict[str, set[str]] = {}
    values_b: dict[str, set[str]] = {}
    for typed, values in ((typed_a, values_a), (typed_b, values_b)):
        for rel, outgoing, other in typed:
            if outgoing and rel in single:
                values.setdefault(rel, set()).add(other)
    return sum(1 for rel, va in values_a.items() if rel in values_b and not va & values_b[rel])


def _abbreviates(a: Node, b: Node) -> bool:
    """Whether one name is a short form of the other: the initials of its words ("NYC" /
    "New York City") or a numeronym ("k8s" / "kubernetes": first letter, the count of letters
    left out, last letter). A bare prefix is not one: "Java" is not "JavaScript"."""
    for x in (a.name, *a.aliases):
        for y in (b.name, *b.aliases):
            if is_short_form(x, y) or is_short_form(y, x):
                return True
    return False


def is_short_form(short: str, long: str) -> bool:
    """Whether ``short`` abbreviates ``long`` (see :func:`_abbreviates`)."""
    s = short.casefold().replace(".", "").strip()
    words = name_tokens(long)
    if not s or " " in s or not words or len(s) >= len("".join(words)):
        return False
    if len(words) >= 2 and s == "".join(w[0] for w in words):
        return True
    numeronym = re.fullmatch(r"([a-z])(\d+)([a-z])", s)
    if numeronym is None or len(words) != 1:
        return False
    first, count, last = numeronym.groups()
    word = words[0]
    return word[0] == first and word[-1] == last and len(word) - 2 == int(count)


def _kept_apart(a: Node, b: Node) -> bool:
    """Whether entity resolution kept one of these apart from the other (same name, no
    agreeing evidence: see :mod:`sage_memory.entities.referent`)."""
    return b.id in a.attributes.get("kept_apart_from", ()) or a.id in b.attributes.get(
        "kept_apart_from", ()
    )


def _share_a_word(a: Node, b: Node) -> bool:
    words_a = {t for n in (a.name, *a.aliases) for t in name_tokens(n)}
    return any(t in words_a for n in (b.name, *b.aliases) for t in name_tokens(n))


def choose_keep(
    a: Node,
    b: Node,
    degree: Mapping[str, int],
    aliases: Mapping[str, str] | None = None,
    tokens: Callable[[str], int] | None = None,
) -> tuple[Node, Node]:
    """(kept, merged away). Of two spellings of one word, the common one stays whatever the
    counts (a misspelling repeated twice is still a misspelling: see :func:`_spelling`);
    otherwise the better-attested node (more memories, more edges), then the one whose name
    is already canonical (``pandas.read_csv`` over ``pd.read_csv``), then the fuller name
    over a short form, then the older."""
    table = aliases or {}

    def rank(n: Node, other: Node) -> tuple[int, int, int, int, int, datetime, str]:
        canonical = match_key(n.name, table, builtin=False) == " ".join(n.name.casefold().split())
        return (
            _spelling(n.name, other.name, tokens),
            -len(n.memory_ids),
            -degree.get(n.id, 0),
            0 if canonical else 1,
            _short_form(n.name, other.name),
            n.created_at,
            n.id,
        )

    return (a, b) if rank(a, b) <= rank(b, a) else (b, a)


#: Longest one-word name counted as a short form (an acronym or abbreviation: nyc, k8s, pd).
_SHORT_FORM = 4


def _spelling(name: str, other: str, tokens: Callable[[str], int] | None) -> int:
    """Lower is better. Two spellings of one word (a few edits apart): the one the embedder's
    vocabulary splits into fewer pieces, i.e. the common spelling ("elasticsearch" is two word
    pieces, the misspelt "elasticsaerch" four; "colour" and "color" tie). Otherwise 0."""
    x, y = name.casefold(), other.casefold()
    if tokens is not None and edit_distance(x, y) <= 2 < min(len(x), len(y)):
        return tokens(name)
    return 0


def _short_form(name: str, other: str) -> int:
    """1 when ``name`` is a short form (one word of at most ``_SHORT_FORM`` characters) and
    ``other`` is not (``kubernetes`` over ``k8s``, ``new york city`` over ``nyc``)."""

    def short(n: str) -> bool:
        return " " not in n and len(n) <= _SHORT_FORM

    return 1 if short(name.casefold()) and not short(other.casefold()) else 0


def _signature(e: Edge, node_id: str) -> tuple[str, bool, str, bool]:
    out = e.source_id == node_id
    other = e.target_id if out else e.source_id
    return (e.relation, out, other, bool(e.attributes.get("negated")))


def _fold(into: Edge, other: Edge) -> Edge:
    starts = [t for t in (into.valid_from, other.valid_from) if t is not None]
    return dataclasses.replace(
        into,
        weight=max(into.weight, other.weight),
        confidence=max(into.confidence, other.confidence),
        memory_ids=tuple(dict.fromkeys((*into.memory_ids, *other.memory_ids))),
        valid_from=min(starts) if starts else None,
        fact=into.fact or other.fact,
    )


def merged_node(keep: Node, drop: Node, now: datetime) -> Node:
    """``keep`` with ``drop``'s names as aliases, its provenance, attributes and use."""
    own = name_key(keep.name)
    aliases = tuple(
        dict.fromkeys(
            x for x in (*keep.aliases, drop.name, *drop.aliases) if x and name_key(x) != own
        )
    )
    attributes = {**drop.attributes, **keep.attributes}
    pending = [c for c in attributes.get("merge_candidates", ()) if c not in (keep.id, drop.id)]
    if pending:
        attributes["merge_candidates"] = pending
    else:
        attributes.pop("merge_candidates", None)
    attributes["merged_from"] = [*keep.attributes.get("merged_from", ()), drop.id]
    label = keep.label
    if label in ("Entity", "Concept") and drop.label not in ("Entity", "Concept"):
        label = drop.label
    last = [t for t in (keep.last_accessed, drop.last_accessed) if t is not None]
    memory_ids = tuple(dict.fromkeys((*keep.memory_ids, *drop.memory_ids)))
    return dataclasses.replace(
        keep,
        aliases=aliases,
        label=label,
        summary=keep.summary or drop.summary,
        attributes=attributes,
        confidence=max(keep.confidence, drop.confidence),
        salience=max(keep.salience, drop.salience),
        memory_ids=memory_ids,
        # a memory that states a fact about one of the two is no mere mention of the merged one
        mention_ids=tuple(
            m for m in dict.fromkeys((*keep.mention_ids, *drop.mention_ids)) if m not in memory_ids
        ),
        access_count=keep.access_count + drop.access_count,
        last_accessed=max(last) if last else None,
        updated_at=now,
    )


def plan_merge(
    keep: Node,
    drop: Node,
    edges: Sequence[Edge],
    now: datetime,
    *,
    confidence: float = 1.0,
    evidence: Mapping[str, Any] | None = None,
) -> Proposal:
    """The rows a merge writes.

    Args:
        keep: The node that stays.
        drop: The node merged into it (deleted).
        edges: Every edge touching either node, current and expired.
        now: The time of the merge.
        confidence: The merge score, for the report.
        evidence: Why, for the report.
    """
    touching = {e.id: e for e in edges}
    current: dict[tuple[str, bool, str, bool], str] = {}
    pending: dict[str, Edge] = {}
    for e in touching.values():
        ends = (e.source_id, e.target_id)
        if keep.id in ends and drop.id not in ends and is_current(e):
            current.setdefault(_signature(e, keep.id), e.id)
    removes: list[Edge] = []
    looped = 0
    for e in touching.values():
        if drop.id not in (e.source_id, e.target_id):
            continue
        src = keep.id if e.source_id == drop.id else e.source_id
        dst = keep.id if e.target_id == drop.id else e.target_id
        if src == dst:
            removes.append(e)
            looped += 1
            continue
        moved = dataclasses.replace(e, source_id=src, target_id=dst)
        if is_current(moved):
            twin_id = current.get(_signature(moved, keep.id))
            if twin_id is not None:
                twin = pending.get(twin_id, touching[twin_id])
                pending[twin_id] = _fold(twin, moved)
                removes.append(e)
                continue
            current[_signature(moved, keep.id)] = moved.id
        pending[moved.id] = moved
    node = merged_node(keep, drop, now)
    info = dict(evidence or {})
    info.update(
        keep=keep.id,
        drop=drop.id,
        edges_repointed=len(pending),
        edges_folded=len(removes) - looped,
        edges_dropped_as_loops=looped,
    )
    return Proposal(
        op="merge",
        summary=f"merge {drop.name!r} into {keep.name!r}",
        puts=(node, *pending.values()),
        removes=(*removes, drop),
        confidence=confidence,
        evidence=info,
        key="merge:" + pair_key(keep.id, drop.id),
        payload={"keep": keep.id, "drop": drop.id},
    )


# -- split ---------------------------------------------------------------------------------


def edge_context(edge: Edge, node_id: str, names: Mapping[str, str]) -> str:
    """How one edge talks about a node: relation, the other end, and the fact sentence."""
    other = edge.target_id if edge.source_id == node_id else edge.source_id
    text = f"{edge.relation.replace('_', ' ').lower()} {names.get(other, '')}".strip()
    return f"{text}: {edge.fact}" if edge.fact else text


def split_groups(
    vectors: NDArray[np.floating], *, min_group: int = 3, margin: float = 0.2
) -> tuple[list[list[int]], float] | None:
    """Two clusters of edge-context vectors, when they are clearly apart.

    Spherical 2-means seeded with the least similar pair. Returns the groups (row indexes,
    larger first) and the separation (mean similarity inside groups minus between them), or
    None when a group would be smaller than ``min_group`` or the separation below ``margin``.
    """
    x = np.asarray(vectors, dtype=np.float64)
    n = x.shape[0]
    if n < 2 * min_group:
        return None
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.maximum(norms, 1e-12)
    sim = x @ x.T
    i, j = np.unravel_index(int(np.argmin(sim)), sim.shape)
    centres = x[[i, j]]
    assign = np.zeros(n, dtype=int)
    for _ in range(20):
        new_assign = np.argmax(x @ centres.T, axis=1)
        if np.array_equal(new_assign, assign) and _ > 0:
            break
        assign = new_assign
        if assign.min() == assign.max():
            return None
        centres = np.stack([x[assign == k].mean(axis=0) for k in (0, 1)])
        centres /= np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    groups = [np.flatnonzero(assign == k) for k in (0, 1)]
    if min(len(g) for g in groups) < min_group:
        return None
    inside = [sim[np.ix_(g, g)] for g in groups]
    intra = sum(float(m.sum() - np.trace(m)) for m in inside) / sum(
        len(g) * (len(g) - 1) for g in groups
    )
    inter = float(sim[np.ix_(groups[0], groups[1])].mean())
    separation = intra - inter
    if separation < margin:
        return None
    groups.sort(key=len, reverse=True)
    return [[int(k) for k in g] for g in groups], round(separation, 4)


def sense_name(node: Node, edges: Sequence[Edge], names: Mapping[str, str]) -> str:
    """An offline name for one sense of ``node``: its name and the neighbour most seen with it."""
    others = Counter(
        names.get(e.target_id if e.source_id == node.id else e.source_id, "") for e in edges
    )
    others.pop("", None)
    if not others:
        return f"{node.name} (2)"
    return f"{node.name} ({others.most_common(1)[0][0]})"


def plan_split(
    node: Node,
    groups: Sequence[Sequence[Edge]],
    names: Sequence[str],
    now: datetime,
    *,
    confidence: float,
    evidence: Mapping[str, Any] | None = None,
) -> Proposal:
    """Keep the first group on ``node``; each other group moves to a new node ``names[i]``."""
    puts: list[Node | Edge] = []
    created = []
    for group, name in zip(groups[1:], names[1:], strict=True):
        memories = tuple(
            dict.fromkeys(m for e in group for m in e.memory_ids if m in node.memory_ids)
        )
        sense = Node(
            id=new_id(),
            scope=node.scope,
            name=name,
            label=node.label,
            confidence=node.confidence,
            salience=node.salience,
            memory_ids=memories or node.memory_ids,
            attributes={"split_from": node.id},
            created_at=now,
            updated_at=now,
        )
        created.append(sense)
        puts.append(sense)
        for e in group:
            puts.append(
                dataclasses.replace(
                    e,
                    source_id=sense.id if e.source_id == node.id else e.source_id,
                    target_id=sense.id if e.target_id == node.id else e.target_id,
                )
            )
    info = dict(evidence or {})
    info.update(node=node.id, names=list(names), sizes=[len(g) for g in groups])
    return Proposal(
        op="split",
        summary=f"split {node.name!r} into " + ", ".join(repr(n) for n in names),
        puts=tuple(puts),
        confidence=confidence,
        evidence=info,
        key="split:" + node.id,
        payload={
            "node": node.id,
            "groups": [[e.id for e in g] for g in groups],
            "names": list(names),
        },
    )
