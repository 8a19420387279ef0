"""Fusion and ranking: weighted features, reciprocal-rank fusion, named presets, MMR.

Each memory candidate carries a small set of features in [0, 1] (held as one array per feature);
a preset's weights turn them into one score (``mode="linear"``) or rank the candidates per
feature and fuse the ranks (``mode="rrf"``).
Two features are contextual rather than per item: the best neighbouring turn's score (a
question is often answered in the reply after the turn that matches its words) and a match
with the time window the query names.

The "balanced" weights were tuned on the LoCoMo dev split (see bench/README.md), the only
labelled data at hand; the other presets shift the balance for other uses.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from sage_memory.errors import ConfigError
from sage_memory.types import Vector

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each feature counts. Features are in [0, 1] unless noted.

    Attributes:
        dense: cosine similarity of the query and the memory.
        lexical: BM25 score divided by the best BM25 score of the query (every candidate
            the channel scores, not only its seeds: :func:`lexical_feature`).
        graph: graph proximity (personalized PageRank mass of the nodes the memory supports,
            relative to the best).
        entity: the memory mentions or is about a node the query names.
        author: the memory was said by a person the query names ("Name: ..." turns).
        neighbour: multiplier of the best adjacent turn's score, added to a memory's own.
        time: bonus for a memory inside the time window the query names (day, scaled down for
            coarser windows).
        recency: exp(-age / half_life) style freshness.
        salience: the memory's salience, as a ranked feature (off by default).
        salience_prior: a small prior for write-time salience, applied in every mode:
            ``salience_prior * (salience - 0.5)`` is added to each memory's own score, so small
            talk (salience near 0) sinks a little below a memory that matches as well, and an
            average memory (0.5) is unchanged.
        expired: penalty for a memory whose facts were all superseded (unless the query asks
            about the past or a time).
        mmr_lambda: relevance vs novelty in MMR (1.0 = off).
        mode: "linear" (weighted sum) or "rrf" (reciprocal-rank fusion of the channels).
        walk: the graph feature is the associative walk's PageRank mass on the memory
            (:mod:`sage_memory.retrieve.walk`); False falls back to the provenance of the
            nodes and facts near the linked nodes (the BFS), for comparison.
        assoc_keep: the associative hop (:func:`promote`) leaves this many of the fused
            ranking first.
        assoc_take: at most this many memories one shared name away from the best hits
            (:func:`sage_memory.retrieve.mentions.hop_scores`) come right after them; 0 = off.
        assoc_min: ...only when at least this share of the seeds' weight reaches the memory
            through names it shares with them: a name a top hit shares with one or two other
            memories, not one a dozen share (evidence that is absent in most chat turns, so
            the step switches itself off there).
        concept: the walk's graph feature of a memory one concept away from the best hits
            (:mod:`sage_memory.retrieve.concepts`: topic words they share, within the named
            person's memories) is at least this times its concept score; 0 = off.
    """

    dense: float = 0.65
    lexical: float = 0.35
    graph: float = 0.1
    entity: float = 0.05
    author: float = 0.2
    neighbour: float = 0.45
    time: float = 0.3
    recency: float = 0.0
    salience: float = 0.0
    salience_prior: float = 0.05
    expired: float = 0.3
    mmr_lambda: float = 1.0
    mode: Literal["linear", "rrf"] = "linear"
    walk: bool = True
    assoc_keep: int = 2
    assoc_take: int = 2
    assoc_min: float = 0.1
    concept: float = 1.0


#: Named weightings. "balanced" is the default (``RetrieveConfig.preset``).
PRESETS: Mapping[str, Weights] = {
    "balanced": Weights(),
    # Meaning over words: paraphrases, other languages, short notes.
    "semantic": Weights(dense=0.85, lexical=0.15, neighbour=0.3),
    # Exact words: ids, error messages, code.
    "lexical": Weights(dense=0.3, lexical=0.7, neighbour=0.3),
    # Structured knowledge first: follow the graph further from what the query names.
    "graph": Weights(graph=0.4, entity=0.25, neighbour=0.2, author=0.1),
    # An assistant's working memory: what happened lately counts more.
    "recent": Weights(recency=0.2, neighbour=0.3, salience=0.05),
    # Diverse results: stronger MMR against near-duplicates.
    "diverse": Weights(mmr_lambda=0.7),
    # Rank fusion of the channels, robust when score scales are unknown.
    "rrf": Weights(mode="rrf"),
}

#: Features of a memory itself; ``time`` and the neighbour bonus are added after smoothing.
FEATURES = ("dense", "lexical", "graph", "entity", "author", "recency", "salience")


def preset(name: str) -> Weights:
    """The weights of a named preset.

    Raises:
        ConfigError: for an unknown name (the message lists the known ones).
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(
            f"unknown retrieval preset {name!r}; choose one of {', '.join(sorted(PRESETS))}"
        ) from None


#: Feature columns of a set of candidates: one float array per name in FEATURES plus "time",
#: and a boolean array "expired".
Columns = Mapping[str, npt.NDArray[Any]]


@dataclass(slots=True)
class Features:
    """One memory's features (for explaining a hit; ranking works on :data:`Columns`)."""

    dense: float = 0.0
    lexical: float = 0.0
    graph: float = 0.0
    entity: float = 0.0
    author: float = 0.0
    time: float = 0.0
    recency: float = 0.0
    salience: float = 0.0
    expired: bool = False

    @classmethod
    def row(cls, cols: Columns, i: int) -> Features:
        f = cls(time=float(cols["time"][i]), expired=bool(cols["expired"][i]))
        for name in FEATURES:
            setattr(f, name, float(cols[name][i]))
        return f


def rrf(
    rankings: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: sum over channels of weight / (k + rank)."""
    scores: dict[str, float] = defaultdict(float)
    for channel, ids in rankings.items():
        w = 1.0 if weights is None else weights.get(channel, 1.0)
        for rank, item in enumerate(ids):
            scores[item] += w / (k + rank + 1)
    return dict(scores)


def lexical_feature(lexical: Sequence[tuple[str, float]]) -> dict[str, float]:
    """The lexical feature: each scored memory's BM25 divided by the query's best, in [0, 1].

    ``lexical`` is the channel's list, best first, read well past its seeds
    (:data:`~sage_memory.retrieve.seeds.SCORED_PER_SEED`) so that the candidates the other
    channels found carry the credit their words earn. Reading only the seeds made the
    feature fall from the last seed's share of the best to 0 at the cut: on short turns that
    share is small, but long messages (a technical chat's code and plans) each match many
    query words, the seeds all score near the best, and every memory just past the cut,
    dense finds included, lost nearly the whole lexical weight to the seeds (the lexical
    channel alone is the weaker one there: bench/beam.py). Dividing by the query's
    own best keeps the feature free of the scope's BM25 magnitude, and it is monotone in
    BM25; a memory's feature never depends on how deep the list is read, only whether it is.
    """
    top = max((s for _, s in lexical), default=0.0) or 1.0
    return {i: s / top for i, s in lexical}


def own_scores(cols: Columns, w: Weights) -> npt.NDArray[np.float64]:
    """Each candidate's own score, less the penalty for superseded facts.

    "linear": the weighted sum of the features. "rrf": reciprocal-rank fusion of one ranking
    per weighted feature, scaled so that a candidate first in every channel scores about 1 (so
    the neighbour and time bonuses keep their meaning).
    """
    n = len(cols["expired"])
    if w.mode == "linear":
        own = np.zeros(n)
        for name in FEATURES:
            own += getattr(w, name) * np.asarray(cols[name], dtype=np.float64)
    else:
        rankings: dict[str, list[str]] = {}
        weights: dict[str, float] = {}
        for name in FEATURES:
            col = np.asarray(cols[name], dtype=np.float64)
            if getattr(w, name) <= 0 or not (col > 0).any():
                continue
            order = [int(i) for i in np.argsort(-col, kind="stable") if col[i] > 0]
            rankings[name] = [str(i) for i in order]
            weights[name] = getattr(w, name)
        fused = rrf(rankings, weights)
        top = sum(weights.values()) / (RRF_K + 1) or 1.0
        own = np.array([fused.get(str(i), 0.0) / top for i in range(n)])
    own = own + salience_prior(cols, w)
    return own - w.expired * np.asarray(cols["expired"], dtype=np.float64)


def salience_prior(cols: Columns, w: Weights) -> npt.NDArray[np.float64]:
    """The write-time salience prior (see ``Weights.salience_prior``), centred on 0.5."""
    return w.salience_prior * (np.asarray(cols["salience"], dtype=np.float64) - 0.5)


def promote(
    ranked: Sequence[str],
    scores: dict[str, float],
    assoc: Sequence[str],
    *,
    keep: int,
    take: int,
) -> list[str]:
    """Interleave the associative ranking into the fused one: the first ``keep`` stay, then come
    the first ``take`` of ``assoc`` (those among the candidates), then the rest.

    Word and vector channels find the memory a question names; the memory it leads to (the
    second hop) shares no words with the question and sinks below near-misses. Its score rises
    to sit between the kept and the rest (``scores`` is updated), so listed scores stay
    ordered and inside the range of the scores around them.
    """
    keep, take = int(keep), int(take)
    head = list(ranked[:keep])
    lift = [i for i in assoc[:take] if i in scores and i not in head]
    if not lift or len(ranked) <= keep:
        return list(ranked)
    rest = [i for i in ranked[keep:] if i not in lift]
    hi = scores[head[-1]] if head else max(scores[i] for i in ranked)
    lo = scores[rest[0]] if rest else min(scores[i] for i in lift)
    step = (hi - lo) / (len(lift) + 1)
    for j, i in enumerate(lift):
        scores[i] = max(scores[i], hi - step * (j + 1))
    lift.sort(key=lambda i: -scores[i])
    return head + lift + rest


def smooth(
    own: npt.NDArray[np.float64],
    prev: npt.NDArray[np.int64],
    nxt: npt.NDArray[np.int64],
    weight: float,
) -> npt.NDArray[np.float64]:
    """Add ``weight`` times the best adjacent turn's (positive) score to each score.

    ``prev``/``nxt`` hold the row of the previous/next turn, or -1. A conversation answers in
    its next turn what the previous one asked: this lifts the reply whose words do not match
    the query and the question whose answer does.
    """
    padded = np.append(np.maximum(own, 0.0), 0.0)  # row -1 reads the 0 at the end
    out: npt.NDArray[np.float64] = own + weight * np.maximum(padded[prev], padded[nxt])
    return out


def recency(age_days: float, half_life_days: float = 30.0) -> float:
    """1.0 for now, 0.5 after one half-life."""
    return math.pow(0.5, max(0.0, age_days) / half_life_days)


def mmr(
    ranked: Sequence[str],
    scores: Mapping[str, float],
    vectors: Mapping[str, Vector],
    lam: float,
    limit: int,
) -> list[str]:
    """Maximal marginal relevance: re-pick ``ranked`` trading relevance against redundancy.

    Relevance is the score min-max scaled over ``ranked``; redundancy is the highest cosine
    similarity to an item already picked. Items without a vector are never redundant.
    ``lam >= 1`` returns the first ``limit`` unchanged.
    """
    if lam >= 1.0 or len(ranked) <= 1:
        return list(ranked[:limit])
    vals = np.array([scores[i] for i in ranked], dtype=np.float64)
    span = float(vals.max() - vals.min()) or 1.0
    rel = (vals - vals.min()) / span
    dims = {v.shape[-1] for v in vectors.values()}
    dim = dims.pop() if len(dims) == 1 else 0
    has = np.array([i in vectors and dim > 0 for i in ranked])
    mat = np.zeros((len(ranked), max(dim, 1)), dtype=np.float32)
    for row, i in enumerate(ranked):
        if has[row]:
            mat[row] = vectors[i]
    # Highest similarity of each item to anything picked so far, updated once per pick.
    redundancy = np.zeros(len(ranked), dtype=np.float64)
    free = np.ones(len(ranked), dtype=bool)
    picked: list[str] = []
    while free.any() and len(picked) < limit:
        value = np.where(free, lam * rel - (1.0 - lam) * redundancy, -np.inf)
        row = int(np.argmax(value))
        free[row] = False
        picked.append(ranked[row])
        if has[row]:
            sims = (mat @ mat[row]).astype(np.float64)
            redundancy = np.maximum(redundancy, np.where(has, sims, 0.0))
    return picked


def check_weights(w: Weights) -> None:
    """Reject negative weights (a typo in a custom preset should fail loudly)."""
    for f in fields(w):
        value = getattr(w, f.name)
        if isinstance(value, float) and value < 0:
            raise ConfigError(f"retrieval weight {f.name}={value} must not be negative")
