"""Fusion: presets, weighted features, RRF, neighbour smoothing and MMR (pure functions)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sage_memory.errors import ConfigError
from sage_memory.retrieve.fusion import (
    FEATURES,
    PRESETS,
    Features,
    Weights,
    check_weights,
    lexical_feature,
    mmr,
    own_scores,
    preset,
    recency,
    rrf,
    smooth,
)


def columns(**given: list[float]) -> dict[str, np.ndarray]:
    n = len(next(iter(given.values())))
    cols = {name: np.array(given.get(name, [0.0] * n), dtype=float) for name in FEATURES}
    cols["time"] = np.array(given.get("time", [0.0] * n), dtype=float)
    cols["expired"] = np.array(given.get("expired", [0.0] * n), dtype=bool)
    return cols


def test_every_preset_is_valid_and_unknown_names_fail_with_the_list() -> None:
    for w in PRESETS.values():
        check_weights(w)
    assert preset("balanced") == Weights()
    with pytest.raises(ConfigError, match="balanced"):
        preset("fastest")


def test_negative_weights_are_rejected() -> None:
    with pytest.raises(ConfigError, match="lexical"):
        check_weights(dataclasses.replace(Weights(), lexical=-0.1))


def test_rrf_rewards_agreement_and_respects_weights() -> None:
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "x"]})
    assert fused["x"] == pytest.approx(fused["y"])
    assert fused["x"] > fused["z"]
    tilted = rrf({"a": ["x", "y"], "b": ["y", "x"]}, {"a": 2.0, "b": 1.0})
    assert tilted["x"] > tilted["y"]


def test_linear_scores_weigh_features_and_demote_superseded_facts() -> None:
    w = Weights()
    cols = columns(dense=[0.8, 0.8, 0.2], lexical=[0.0, 1.0, 0.0], expired=[0, 0, 0])
    own = own_scores(cols, w)
    assert own[1] - own[0] == pytest.approx(w.lexical)
    assert own[0] > own[2]
    cols["expired"] = np.array([True, False, False])
    assert own_scores(cols, w)[0] == pytest.approx(own[0] - w.expired)


def test_rrf_mode_ranks_by_agreement_on_the_linear_scale() -> None:
    w = PRESETS["rrf"]
    cols = columns(dense=[0.9, 0.5, 0.1], lexical=[0.9, 0.0, 0.4])
    own = own_scores(cols, w)
    assert list(np.argsort(-own)) == [0, 2, 1]  # 2 is found by both channels, 1 by one
    assert 0.5 < own[0] <= 1.0 + 1e-9  # first in every channel scores about 1


def test_smooth_lifts_a_turn_by_its_best_neighbour_only_when_positive() -> None:
    own = np.array([0.1, 0.9, -0.5, 0.2])
    prev = np.array([-1, 0, 1, -1])  # rows: 0 <- 1 <- 2; row 3 alone
    nxt = np.array([1, 2, -1, -1])
    out = smooth(own, prev, nxt, 0.5)
    assert out[0] == pytest.approx(0.1 + 0.5 * 0.9)  # the reply after it matched
    assert out[1] == pytest.approx(0.9 + 0.5 * 0.1)
    assert out[2] == pytest.approx(-0.5 + 0.5 * 0.9)
    assert out[3] == pytest.approx(0.2)  # no neighbours: unchanged


def test_mmr_drops_a_near_duplicate_below_a_novel_item() -> None:
    a = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    a_dup = np.array([0.99, 0.14, 0.0], dtype=np.float32)
    b = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    scores = {"a": 1.0, "a2": 0.95, "b": 0.9}
    vectors = {"a": a, "a2": a_dup / np.linalg.norm(a_dup), "b": b}
    assert mmr(["a", "a2", "b"], scores, vectors, 1.0, 3) == ["a", "a2", "b"]
    assert mmr(["a", "a2", "b"], scores, vectors, 0.6, 3) == ["a", "b", "a2"]
    # Items without a vector are never redundant; the limit holds.
    assert mmr(["a", "x", "y"], {"a": 1, "x": 0.5, "y": 0.4}, {"a": a}, 0.5, 2) == ["a", "x"]


def test_features_row_reads_one_candidate() -> None:
    cols = columns(dense=[0.1, 0.7], author=[0.0, 1.0], time=[0.0, 0.33], expired=[0, 1])
    f = Features.row(cols, 1)
    assert (f.dense, f.author, f.time, f.expired) == (pytest.approx(0.7), 1.0, 0.33, True)


def test_recency_halves_per_half_life() -> None:
    assert recency(0) == 1.0
    assert recency(30) == pytest.approx(0.5)
    assert recency(-5) == 1.0


# -- the lexical feature ------------------------------------------------------------------------

bm25_lists = st.lists(
    # A real BM25 score is 0 or a normal float; a subnormal one (5e-324) underflows to 0 when
    # scaled, which says nothing about the feature.
    st.tuples(
        st.text(min_size=1, max_size=4),
        st.floats(0.0, 1e6, allow_nan=False, allow_subnormal=False),
    ),
    max_size=30,
    unique_by=lambda kv: kv[0],
).map(lambda hits: sorted(hits, key=lambda kv: -kv[1]))


@given(bm25_lists)
def test_the_lexical_feature_is_bounded_and_the_best_hit_scores_one(
    hits: list[tuple[str, float]],
) -> None:
    feat = lexical_feature(hits)
    assert set(feat) == {i for i, _ in hits}
    assert all(0.0 <= v <= 1.0 for v in feat.values())
    if hits and hits[0][1] > 0:
        assert feat[hits[0][0]] == 1.0


@given(bm25_lists)
def test_the_lexical_feature_keeps_the_bm25_order(hits: list[tuple[str, float]]) -> None:
    feat = lexical_feature(hits)
    for (a, sa), (b, sb) in itertools.pairwise(hits):
        assert sa >= sb and feat[a] >= feat[b]


@given(bm25_lists, st.floats(1e-3, 1e3))
def test_the_lexical_feature_ignores_the_bm25_scale(
    hits: list[tuple[str, float]], factor: float
) -> None:
    """BM25 magnitudes differ between scopes and backends; the feature does not."""
    scaled = lexical_feature([(i, s * factor) for i, s in hits])
    assert scaled == pytest.approx(lexical_feature(hits), rel=1e-9, abs=1e-12)


@given(bm25_lists, st.integers(0, 30))
def test_a_hit_keeps_its_feature_however_deep_the_list_is_read(
    hits: list[tuple[str, float]], depth: int
) -> None:
    """The feature of a memory is its BM25 over the query's best: reading more of the list
    (scoring more candidates) never changes the feature of one already read."""
    short, full = lexical_feature(hits[: depth + 1]), lexical_feature(hits)
    assert all(full[i] == v for i, v in short.items())
