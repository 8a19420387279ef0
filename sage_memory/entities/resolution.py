"""Entity resolution: is this proposed node one we already have? Pure functions, no I/O.

The engine fetches candidate nodes (and, when it has them, name embeddings) and asks
:func:`resolve_entity`. Matches are tried from the most literal to the loosest:

1. ``exact``: the same name once case, punctuation and leading articles are ignored;
2. ``alias``: the same after aliases (``pd`` -> ``pandas``, ``pd.read_csv`` ->
   ``pandas.read_csv``, the user's own), or a name or alias equal to one of the other's;
3. ``fuzzy``: string similarity of the normalised names >= ``ExtractConfig.fuzzy_threshold``;
4. ``embedding``: cosine similarity of name vectors >= ``ExtractConfig.embedding_threshold``.

Names that are the other's words plus more (``pathlib.PurePath`` / ``pathlib.Path``) and
siblings (``PosixPath`` / ``WindowsPath``) never match by 3 or 4: such a pair is reported as
ambiguous at most. A name match is then checked against the context
(:mod:`sage_memory.entities.referent`) by the engine before it merges.

A candidate whose best similarity lies between ``ambiguous_threshold`` and those thresholds is
reported as ambiguous: the caller creates a new node and records a merge candidate for review,
because a wrong merge is much harder to undo than a late one.

Labels must be compatible: a Person is never merged with a Tool, while Entity and Concept (what
an extractor says when it does not know) are compatible with anything. So is a label that is
only a relation slot's default (``NodeSpec.label_default``, or a node marked ``DEFAULT_LABEL``),
for the same name: "Acme Labs owns the server" supposes a person owner, but an "Acme Labs"
already known as an organization is the one meant. A default label never licenses a merge by
likeness alone (fuzzy, embedding): a name spelt the same is the evidence.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import match_key, merge_aliases
from sage_memory.entities.siblings import are_siblings, name_tokens
from sage_memory.types import Node, NodeSpec

try:  # rapidfuzz is a core dependency, but stay usable if a slim install lacks it
    from rapidfuzz import fuzz as _rapidfuzz
except ImportError:  # pragma: no cover - exercised only without rapidfuzz
    _rapidfuzz = None  # type: ignore[assignment]

ResolutionMethod = Literal["exact", "alias", "fuzzy", "embedding"]

#: Labels that say "unknown kind": compatible with every label.
WILDCARD_LABELS: frozenset[str] = frozenset({"entity", "concept"})

#: Pairs of different labels that may still name one thing (an extractor may call pandas a
#: Tool once and a Resource the next time). Lower case; order does not matter.
COMPATIBLE_LABELS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("tool", "resource"),
        ("tool", "project"),
        ("resource", "project"),
        ("resource", "document"),
        ("task", "step"),
        ("task", "project"),
    )
)

#: The node attribute that marks a label as only a relation slot's default (``NodeSpec.
#: label_default``): the node was named where the relation supposes a kind ("X owns Y": a
#: Person), never shown to be one.
DEFAULT_LABEL = "label_default"

#: Most ambiguous candidates reported.
MAX_AMBIGUOUS = 5


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome of resolving one proposed node.

    Attributes:
        node_id: The existing node it is, or ``None`` for a new node.
        method: How the match was made, or ``None`` when there is none.
        score: The similarity of the match (1.0 for exact and alias matches), else the best
            similarity seen.
        ambiguous: Other compatible candidates, ``(node_id, score)`` best first, whose
            similarity is at least ``ambiguous_threshold`` but that were not matched: merge
            candidates for review.
    """

    node_id: str | None
    method: ResolutionMethod | None = None
    score: float = 0.0
    ambiguous: tuple[tuple[str, float], ...] = ()


def labels_compatible(a: str, b: str) -> bool:
    """Whether nodes labelled ``a`` and ``b`` may be the same thing."""
    x, y = a.strip().lower(), b.strip().lower()
    if x == y or x in WILDCARD_LABELS or y in WILDCARD_LABELS:
        return True
    return frozenset((x, y)) in COMPATIBLE_LABELS


def _label_gate(spec: NodeSpec, node: Node) -> Literal["any", "name"] | None:
    """How a proposed node may match an existing one by their labels: by any method when the
    labels are compatible, by the same name only when they differ but one of them is only a
    relation slot's default, not at all otherwise."""
    if labels_compatible(spec.label, node.label):
        return "any"
    if spec.label_default or node.attributes.get(DEFAULT_LABEL):
        return "name"
    return None


def name_similarity(a: str, b: str) -> float:
    """Similarity of two normalised names in [0, 1], word order ignored.

    Names that contain different numbers score below any automatic threshold: "Python 3.11"
    and "Python 3.12", or "ticket 41" and "ticket 42", are different things however alike.
    """
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    if _rapidfuzz is not None:
        score = max(_rapidfuzz.ratio(a, b), _rapidfuzz.token_sort_ratio(a, b)) / 100.0
    else:
        score = max(
            difflib.SequenceMatcher(None, a, b).ratio(),
            difflib.SequenceMatcher(
                None, " ".join(sorted(a.split())), " ".join(sorted(b.split()))
            ).ratio(),
        )
    if _digits(a) != _digits(b):
        score = min(score, 0.89)
    return float(score)


def _digits(text: str) -> tuple[str, ...]:
    """The runs of digits in ``text``, in order."""
    runs: list[str] = []
    current = ""
    for ch in text:
        if ch.isdigit():
            current += ch
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    return tuple(runs)


def adds_words(names_a: Iterable[str], names_b: Iterable[str]) -> bool:
    """Whether, for some pair of names, one's words are the other's plus at least one more
    (``pathlib.PurePath`` / ``pathlib.Path``), and no pair of names is the same words."""
    pairs = [(set(name_tokens(x)), set(name_tokens(y))) for x in names_a for y in names_b]
    if any(x == y for x, y in pairs if x):
        return False
    return any(x and y and (x < y or y < x) for x, y in pairs)


def cosine(a: NDArray[np.floating], b: NDArray[np.floating]) -> float:
    """Cosine similarity; 0 for zero vectors or mismatched shapes."""
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape:
        return 0.0
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    if norm == 0.0 or not np.isfinite(norm):
        return 0.0
    return float(np.dot(x, y) / norm)


def _canonical(names: Iterable[str], table: Mapping[str, str]) -> set[str]:
    """The normal forms of a node's names, aliases applied; empty ones left out."""
    return {form for n in names if (form := match_key(n, table, builtin=False))}


def resolve_entity(
    spec: NodeSpec,
    candidates: Sequence[Node],
    *,
    spec_vector: NDArray[np.floating] | None = None,
    candidate_vectors: Mapping[str, NDArray[np.floating]] | None = None,
    config: ExtractConfig,
) -> Resolution:
    """Find the existing node a proposed node refers to, if any.

    Args:
        spec: The proposed node (name, aliases, label).
        candidates: Existing nodes of the same scope worth comparing (bounded by the caller).
        spec_vector: Embedding of the proposed name, to enable the embedding match.
        candidate_vectors: Embeddings of candidate names, by node id; candidates without one
            are compared by name only.
        config: Thresholds and user aliases.

    Returns:
        The match (or none) and the ambiguous near-matches.
    """
    table = merge_aliases(config.aliases)
    spec_name = match_key(spec.name, None, builtin=False)
    spec_canon = _canonical((spec.name, *spec.aliases), table)
    if not spec_canon:
        return Resolution(None)

    # Lower sort key wins: the more literal method first, then the higher score, then the same
    # label, then the better-attested node, then the one spelt exactly as proposed, then the
    # node's own name, label and aliases, and the id last: ids are random, so a tie they broke
    # would send the same mention to a different node on each ingest of the same text. The
    # result depends neither on the order of the candidates nor on their ids.
    best_key: tuple[int, float, int, int, int, str, str, tuple[str, ...], str] | None = None
    best: Resolution | None = None
    scores: dict[str, float] = {}
    for node in candidates:
        gate = _label_gate(spec, node)
        if gate is None:
            continue
        canon = _canonical((node.name, *node.aliases), table)
        fuzzy = max((name_similarity(a, b) for a in spec_canon for b in canon), default=0.0)
        embedded = 0.0
        if spec_vector is not None and candidate_vectors and node.id in candidate_vectors:
            embedded = cosine(spec_vector, candidate_vectors[node.id])
        match: tuple[int, ResolutionMethod, float] | None = None
        if spec_name and spec_name == match_key(node.name, None, builtin=False):
            match = (0, "exact", 1.0)
        elif spec_canon & canon:
            match = (1, "alias", 1.0)
        elif are_siblings((spec.name, *spec.aliases), (node.name, *node.aliases)):
            # typing.Iterable / typing.Iterator: alike as strings, two members of a family;
            # never merged here, at most reported as ambiguous for review.
            pass
        elif adds_words((spec.name, *spec.aliases), (node.name, *node.aliases)):
            # pathlib.PurePath / pathlib.Path, urinary tract infection / infection: one name
            # is the other plus a word, a narrower thing as often as the same one. Alike as
            # strings, but no match here: at most ambiguous, for the evolver's evidence.
            pass
        elif fuzzy >= config.fuzzy_threshold:
            match = (2, "fuzzy", fuzzy)
        elif embedded >= config.embedding_threshold:
            match = (3, "embedding", embedded)
        if gate == "name" and (match is None or match[0] > 1):
            continue  # kinds that differ merge on the same name only, never as candidates
        scores[node.id] = match[2] if match else max(fuzzy, embedded)
        if match is None:
            continue
        key = (
            match[0],
            -match[2],
            0 if node.label == spec.label else 1,
            -len(node.memory_ids),
            0 if node.name == spec.name else 1,
            node.name,
            node.label,
            node.aliases,
            node.id,
        )
        if best_key is None or key < best_key:
            best_key, best = key, Resolution(node.id, match[1], match[2])

    chosen = best.node_id if best else None
    ambiguous = sorted(
        (
            (node_id, round(score, 4))
            for node_id, score in scores.items()
            if node_id != chosen and score >= config.ambiguous_threshold
        ),
        key=lambda pair: (-pair[1], pair[0]),
    )[:MAX_AMBIGUOUS]
    if best is None:
        return Resolution(None, None, max(scores.values(), default=0.0), tuple(ambiguous))
    return Resolution(best.node_id, best.method, best.score, tuple(ambiguous))
