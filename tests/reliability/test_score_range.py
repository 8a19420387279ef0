"""``hit.score`` has one documented range on every backend (README, "API").

Memory scores are the weighted sum of the channel features, each on a fixed scale whatever the
backend (cosine; BM25 divided by the query's best, so FTS-style, BM25 and ts_rank stores agree
in scale; graph, entity and author evidence in [0, 1]), plus the neighbouring turn's and the
time window's bonuses, less the superseded-fact penalty: so within
[-(dense + expired), (sum of the feature weights) * (1 + neighbour) + time] of the preset's
weights, which is [-0.95, 2.26] for the default. Node and edge scores are in [0, 1].
"""

from __future__ import annotations

import random
from typing import Any

from sage_memory.retrieve.fusion import PRESETS, Weights

FEATURES = ("dense", "lexical", "graph", "entity", "author", "recency", "salience")


def memory_score_range(w: Weights) -> tuple[float, float]:
    """The documented bounds of a memory hit's score under weights ``w``."""
    own = 1.0 if w.mode == "rrf" else sum(getattr(w, f) for f in FEATURES)
    low = -w.expired - (0.0 if w.mode == "rrf" else w.dense)
    return low, own * (1 + w.neighbour) + w.time


def test_the_default_range_is_the_documented_one() -> None:
    low, high = memory_score_range(PRESETS["balanced"])
    assert (round(low, 2), round(high, 2)) == (-0.95, 2.26)


def test_scores_stay_in_the_documented_range_on_every_backend(backend: Any) -> None:
    mem = backend.open(extractor=None)
    rng = random.Random(3)
    names = ["Alice", "Bob", "Carol", "Paris", "Berlin", "Acme", "Python", "Kyoto"]
    texts = [f"{rng.choice(names)} lives in {rng.choice(names)}" for _ in range(15)]
    texts += [f"{rng.choice(names)} works at {rng.choice(names)} since 2020" for _ in range(15)]
    texts += ["Alice moved to Berlin", "Bob prefers tea", "Bob now prefers coffee"]
    mem.add_many(texts, user_id="u")
    low, high = memory_score_range(PRESETS["balanced"])
    seen = 0
    for query in ("where does alice live", "who works at acme", "tea or coffee", "Kyoto in 2020"):
        res = mem.search(query, user_id="u")
        scores = [h.score for h in res.memories]
        assert scores == sorted(scores, reverse=True)  # listed by the score they print
        assert all(low <= s <= high for s in scores), scores
        assert all(0.0 <= h.score <= 1.0 for h in (*res.nodes, *res.edges))
        seen += len(scores)
    assert seen > 10
