"""Duplicate nodes (merge) and over-broad nodes (split). Pure functions; the runner fetches.

Merge evidence, each reported with the suggestion:

- names: the same canonical name once aliases apply (``pd.read_csv`` = ``pandas.read_csv``,
  via :mod:`sage_memory.entities.names`), else the fuzzy similarity of the names
  (:func:`sage_memory.entities.resolution.name_similarity`);
- embeddings: cosine similarity of the name vectors;
- neighbours: the Jaccard overlap of the two nodes' neighbours, counted fully from two shared
  neighbours on ("deep learning" and "deep neural networks" sit among the same things).

Two nodes joined by a typed edge (IS_A, PART_OF, USES...) are two things and never candidates;
nor are two that entity resolution kept apart at write time (one name, no agreeing evidence,
see :mod:`sage_memory.entities.referent`) until they share a neighbour.
Neither are siblings: names one distinctive word apart (``PosixPath`` / ``WindowsPath``, see
:mod:`sage_memory.entities.siblings`), or unlike names with the same typed tie to one node
(Paris and Marseille, both LOCATED_IN France).
A name match is decisive (0.99) and near-identical names (word order, a typo: similarity at
``ExtractConfig.fuzzy_threshold``) score about 0.95; otherwise the score is ``0.4 name + 0.3
embedding + 0.3 neighbours``, capped at 0.5 without a shared neighbour (the name and its
embedding are two views of one string), so only corroborated pairs reach a suggestion. Names
that differ in a number ("Python 3.11", "Python 3.12") are never candidates, and labels must be
compatible.

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
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sage_memory.entities.names import match_key
from sage_memory.entities.resolution import cosine, labels_compatible, name_similarity
from sage_memory.entities.siblings import are_siblings, edit_distance, name_tokens
from sage_memory.evolve.proposal import Proposal, is_current, pair_key
from sage_memory.store.base import name_key
from sage_memory.types import Edge, Node, new_id

SUMMARY_LABEL = "Summary"
_NUMBER = re.compile(r"\d+")
#: Relations that say two nodes are alike or linked without saying they differ; any other
#: current edge between two nodes (IS_A, PART_OF, USES...) says they are two things.
LOOSE = frozenset({"RELATED_TO", "POSSIBLY_RELATED_TO", "ASSOCIATED_WITH", "MENTIONS"})
#: The highest score names alone reach, below the default suggestion threshold.
NAMES_ALONE = 0.5
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
    """
    if a.id == b.id or SUMMARY_LABEL in (a.label, b.label):
        return None
    if not labels_compatible(a.label, b.label):
        return None
    if _NUMBER.findall(a.name) != _NUMBER.findall(b.name):
        return None
    if any(r not in LOOSE for r in linked_by):
        return None
    ca, cb = canonical_names(a, aliases), canonical_names(b, aliases)
    if not ca or not cb:
        return None
    alias = bool(ca & cb)
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
    embedding = 0.0
    if vector_a is not None and vector_b is not None:
        embedding = max(0.0, cosine(vector_a, vector_b))
    na, nb = set(neighbours_a) - {b.id}, set(neighbours_b) - {a.id}
    shared, union = na & nb, na | nb
    if not shared and _kept_apart(a, b):
        return None  # kept apart at write time for want of agreeing evidence; still none
    overlap = len(shared) / len(union) if union else 0.0
    support = min(1.0, len(shared) / 2)
    if alias:
        score = 0.99
    elif name >= fuzzy:  # the same words in another order, a typo
        score = min(0.96, 0.6 + 0.35 * name + 0.05 * overlap)
    else:
        score = 0.4 * name + 0.3 * embedding + 0.3 * overlap * support
        if not shared:
            # Name and name-embedding are two views of one string: without a shared
            # neighbour they do not make a suggestion ("machine learning" vs "... model").
            score = min(score, NAMES_ALONE)
    evidence: dict[str, Any] = {
        "alias_match": alias,
        "name_similarity": round(name, 3),
        "embedding_similarity": round(embedding, 3),
        "neighbour_overlap": round(overlap, 3),
        "shared_neighbours": sorted(shared)[:10],
        "labels": [a.label, b.label],
        "names": [a.name, b.name],
    }
    return round(score, 4), evidence


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
    """(kept, merged away): the better-attested node stays (more memories, more edges), then
    the one whose name is already canonical (``pandas.read_csv`` over ``pd.read_csv``), then
    the better-spelt or fuller name (see :func:`_name_quality`), then the older."""
    table = aliases or {}

    def rank(n: Node, other: Node) -> tuple[int, int, int, int, datetime, str]:
        canonical = match_key(n.name, table, builtin=False) == " ".join(n.name.casefold().split())
        return (
            -len(n.memory_ids),
            -degree.get(n.id, 0),
            0 if canonical else 1,
            _name_quality(n.name, other.name, tokens),
            n.created_at,
            n.id,
        )

    return (a, b) if rank(a, b) <= rank(b, a) else (b, a)


#: Longest one-word name counted as a short form (an acronym or abbreviation: nyc, k8s, pd).
_SHORT_FORM = 4


def _name_quality(name: str, other: str, tokens: Callable[[str], int] | None) -> int:
    """Lower is better. Two spellings of one word (a few edits apart): the one the embedder's
    vocabulary splits into fewer pieces, i.e. the common spelling ("elasticsearch" is two
    word pieces, the misspelt "elasticsaerch" four). A short form (one word of at most
    ``_SHORT_FORM`` characters) gives way to the other name (``kubernetes`` over ``k8s``,
    ``new york city`` over ``nyc``). Otherwise no preference (the older node stays)."""
    x, y = name.casefold(), other.casefold()
    if tokens is not None and edit_distance(x, y) <= 2 < min(len(x), len(y)):
        return tokens(name)

    def short(n: str) -> bool:
        return " " not in n and len(n) <= _SHORT_FORM

    return 1 if short(x) and not short(y) else 0


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
    return dataclasses.replace(
        keep,
        aliases=aliases,
        label=label,
        summary=keep.summary or drop.summary,
        attributes=attributes,
        confidence=max(keep.confidence, drop.confidence),
        salience=max(keep.salience, drop.salience),
        memory_ids=tuple(dict.fromkeys((*keep.memory_ids, *drop.memory_ids))),
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
