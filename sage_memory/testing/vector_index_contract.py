"""The contract every VectorIndex backend must meet, as a pytest base class.

A backend's tests subclass :class:`VectorIndexContract` and say how to build an index::

    from sage_memory.testing.vector_index_contract import VectorIndexContract

    class TestMyIndex(VectorIndexContract):
        def make_index(self, path):
            return MyIndex(path)

pytest then runs every ``test_*`` method below against that backend. The suite needs pytest,
hypothesis and numpy; it runs offline, uses small random unit vectors and few hypothesis
examples, and asserts no timings.

Vector sets stay small (well under Chroma's default HNSW ``ef_search`` of 100), where an
approximate index is exact in practice, so the suite can demand exact nearest neighbours.
"""

from __future__ import annotations

import abc
import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from sage_memory.errors import SageMemoryError, StorageError, ValidationError
from sage_memory.index.base import VectorIndex
from sage_memory.types import Vector

__all__ = ["VectorIndexContract", "brute_force_top_k", "random_unit_vectors"]


#: Tolerance on similarities: float32 storage and an index's own arithmetic differ slightly.
SCORE_TOLERANCE = 1e-4

#: Logical collection names an engine may produce; every backend must keep them apart.
ODD_NAMES = (
    "user:ALICE|a b/ü",
    "user:alice|a b/ü",  # differs only in case from the one above
    "u:alice|a:|memory",
    "a",
    "..",
    "名前 with spaces\tand\nnewlines",
    "x" * 300,
    "x" * 299 + "y",  # differs only in the last of 300 characters
)


def random_unit_vectors(rng: np.random.Generator, n: int, dim: int) -> Vector:
    """``n`` random L2-normalised float32 vectors of width ``dim``."""
    raw = rng.standard_normal((n, dim))
    unit: Vector = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)
    return unit


def brute_force_top_k(
    ids: list[str], matrix: Vector, query: Vector, k: int
) -> list[tuple[str, float]]:
    """The exact answer a VectorIndex must give: cosine similarities, best first."""
    if not ids or k <= 0:
        return []
    unit = query / max(float(np.linalg.norm(query)), 1e-30)
    scores = matrix.astype(np.float64) @ unit.astype(np.float64)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(ids[row], float(scores[row])) for row in order]


def _assert_matches(actual: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    """Same ids in the same order and the same scores, up to float tolerance."""
    assert [item for item, _ in actual] == [item for item, _ in expected]
    np.testing.assert_allclose(
        [score for _, score in actual], [score for _, score in expected], atol=SCORE_TOLERANCE
    )


class VectorIndexContract(abc.ABC):
    """Behaviour shared by every :class:`~sage_memory.index.base.VectorIndex` backend.

    Subclasses implement :meth:`make_index`; the class attributes below tune sizes.
    """

    #: Vector width used by the tests.
    dim: ClassVar[int] = 16
    #: Examples and steps of the hypothesis state machine (kept modest for speed).
    state_machine_examples: ClassVar[int] = 15
    state_machine_steps: ClassVar[int] = 25

    @abc.abstractmethod
    def make_index(self, path: Path) -> VectorIndex:
        """Build an index; a persistent backend stores its data under ``path``.

        Calling it again with the same ``path`` after :meth:`VectorIndex.close` must reopen the
        same data when the index is persistent.
        """

    @pytest.fixture
    def index(self, tmp_path: Path) -> Iterator[VectorIndex]:
        """A fresh index, closed after the test."""
        index = self.make_index(tmp_path / "index")
        yield index
        index.close()

    @pytest.fixture
    def rng(self) -> np.random.Generator:
        """A seeded generator, so failures reproduce."""
        return np.random.default_rng(20240611)

    # -- basics -------------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, index: VectorIndex) -> None:
        """The backend is a runtime-checkable VectorIndex with a boolean ``persistent``."""
        assert isinstance(index, VectorIndex)
        assert isinstance(index.persistent, bool)

    def test_exact_nearest_neighbours(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """A stored vector finds itself first; random queries get the exact top 5."""
        ids = [f"v{i}" for i in range(60)]
        matrix = random_unit_vectors(rng, len(ids), self.dim)
        index.upsert("c", ids, matrix)

        for row in (0, 17, 59):
            hits = index.query("c", matrix[row], k=1)
            assert hits[0][0] == ids[row]
            assert hits[0][1] == pytest.approx(1.0, abs=SCORE_TOLERANCE)
        for query in random_unit_vectors(rng, 5, self.dim):
            _assert_matches(index.query("c", query, k=5), brute_force_top_k(ids, matrix, query, 5))

    def test_scores_are_sorted_cosines(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """Scores are floats in [-1, 1], best first, equal to the true cosines."""
        ids = [f"v{i}" for i in range(40)]
        matrix = random_unit_vectors(rng, len(ids), self.dim)
        index.upsert("c", ids, matrix)
        query = random_unit_vectors(rng, 1, self.dim)[0]

        hits = index.query("c", query, k=len(ids))
        scores = [score for _, score in hits]
        assert all(isinstance(score, float) for score in scores)
        assert scores == sorted(scores, reverse=True)
        assert all(-1.0 <= score <= 1.0 for score in scores)
        by_id = dict(zip(ids, (matrix @ query).tolist(), strict=True))
        for item, score in hits:
            assert score == pytest.approx(by_id[item], abs=SCORE_TOLERANCE)
        # (1, dim) is accepted for a query as well as (dim,).
        _assert_matches(index.query("c", query.reshape(1, -1), k=3), hits[:3])

    def test_upsert_replaces(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """Upserting a known id replaces its vector instead of adding a row."""
        first, second, other = random_unit_vectors(rng, 3, self.dim)
        index.upsert("c", ["a", "b"], np.stack([first, other]))
        index.upsert("c", ["a"], second[np.newaxis, :])

        assert index.count("c") == 2
        assert index.ids("c") == {"a", "b"}
        hits = dict(index.query("c", second, k=2))
        assert hits["a"] == pytest.approx(1.0, abs=SCORE_TOLERANCE)
        assert dict(index.query("c", first, k=2))["a"] == pytest.approx(
            float(first @ second), abs=SCORE_TOLERANCE
        )

    def test_repeated_id_in_one_batch_keeps_the_last_row(
        self, index: VectorIndex, rng: np.random.Generator
    ) -> None:
        """An id twice in one batch behaves like two upserts: the last row wins."""
        vectors = random_unit_vectors(rng, 3, self.dim)
        index.upsert("c", ["a", "b", "a"], vectors)

        assert index.count("c") == 2
        _assert_matches(index.query("c", vectors[2], k=1), [("a", 1.0)])

    def test_delete_and_unknown_ids_are_ignored(
        self, index: VectorIndex, rng: np.random.Generator
    ) -> None:
        """Deleted ids vanish from every read; unknown ids and collections are no-ops."""
        ids = [f"v{i}" for i in range(10)]
        matrix = random_unit_vectors(rng, len(ids), self.dim)
        index.upsert("c", ids, matrix)

        index.delete("c", ["v0", "v5", "missing", "v5"])
        index.delete("c", [])
        index.delete("no such collection", ["v1"])

        kept = [item for item in ids if item not in {"v0", "v5"}]
        assert index.ids("c") == set(kept)
        assert index.count("c") == len(kept)
        hits = index.query("c", matrix[0], k=len(ids))
        assert {item for item, _ in hits} == set(kept)
        rows = [ids.index(item) for item in kept]
        _assert_matches(
            index.query("c", matrix[5], k=3), brute_force_top_k(kept, matrix[rows], matrix[5], 3)
        )

    def test_collections_are_isolated(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """Nothing stored in one collection is ever returned, counted or deleted via another."""
        only_a = [f"a{i}" for i in range(20)]
        shared = ["s0", "s1", "s2"]
        vectors_a = random_unit_vectors(rng, len(only_a) + len(shared), self.dim)
        vectors_b = random_unit_vectors(rng, len(shared), self.dim)
        index.upsert("user:a|memory", only_a + shared, vectors_a)
        index.upsert("user:b|memory", shared, vectors_b)

        # Even a query that is exactly one of A's vectors finds nothing of A in B.
        for query in vectors_a:
            hits = index.query("user:b|memory", query, k=10)
            assert {item for item, _ in hits} == set(shared)
            _assert_matches(hits, brute_force_top_k(shared, vectors_b, query, 10))
        assert index.ids("user:b|memory") == set(shared)

        index.delete("user:a|memory", shared)
        assert index.ids("user:b|memory") == set(shared)
        index.drop("user:a|memory")
        assert index.count("user:b|memory") == len(shared)
        assert index.query("user:a|memory", vectors_a[0], k=5) == []

    def test_ids_and_count(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """``ids`` and ``count`` reflect every upsert, counting replacements once."""
        assert index.ids("c") == set()
        assert index.count("c") == 0
        ids = [f"id-{i}" for i in range(250)]
        index.upsert("c", ids[:100], random_unit_vectors(rng, 100, self.dim))
        index.upsert("c", ids[100:], random_unit_vectors(rng, 150, self.dim))
        index.upsert("c", ids[:50], random_unit_vectors(rng, 50, self.dim))

        assert index.ids("c") == set(ids)
        assert index.count("c") == len(ids)

    def test_drop(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """A dropped collection reads as empty, dropping twice is harmless, and it can return."""
        index.upsert("c", ["a", "b"], random_unit_vectors(rng, 2, self.dim))
        index.drop("c")
        index.drop("c")
        index.drop("never existed")

        assert index.count("c") == 0
        assert index.ids("c") == set()
        assert index.query("c", random_unit_vectors(rng, 1, self.dim)[0], k=3) == []
        # A dropped collection is gone for good: it may come back with another width.
        wider = random_unit_vectors(rng, 1, self.dim * 2)
        index.upsert("c", ["z"], wider)
        _assert_matches(index.query("c", wider[0], k=3), [("z", 1.0)])

    def test_k_larger_than_count_and_k_below_one(
        self, index: VectorIndex, rng: np.random.Generator
    ) -> None:
        """A ``k`` above the count returns everything; a ``k`` below 1 returns nothing."""
        ids = ["a", "b", "c"]
        matrix = random_unit_vectors(rng, 3, self.dim)
        index.upsert("c", ids, matrix)

        _assert_matches(
            index.query("c", matrix[1], k=1000), brute_force_top_k(ids, matrix, matrix[1], 3)
        )
        assert index.query("c", matrix[1], k=0) == []
        assert index.query("c", matrix[1], k=-1) == []

    def test_unknown_and_empty_collections(
        self, index: VectorIndex, rng: np.random.Generator
    ) -> None:
        """Unknown and emptied collections read as empty without raising."""
        query = random_unit_vectors(rng, 1, self.dim)[0]
        assert index.query("unknown", query, k=5) == []
        assert index.ids("unknown") == set()
        assert index.count("unknown") == 0

        index.upsert("c", ["a"], query[np.newaxis, :])
        index.delete("c", ["a"])
        assert index.query("c", query, k=5) == []
        assert index.count("c") == 0
        # Reading an unknown collection must not create it as a side effect.
        assert index.ids("unknown") == set()

    def test_odd_collection_names(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """Any string names a collection: case, punctuation, unicode and 300 characters."""
        vectors = random_unit_vectors(rng, len(ODD_NAMES), self.dim)
        for number, name in enumerate(ODD_NAMES):
            index.upsert(name, [f"id{number}"], vectors[number : number + 1])

        for number, name in enumerate(ODD_NAMES):
            assert index.ids(name) == {f"id{number}"}
            hits = index.query(name, vectors[(number + 1) % len(ODD_NAMES)], k=10)
            assert [item for item, _ in hits] == [f"id{number}"]
        index.drop(ODD_NAMES[0])
        assert index.count(ODD_NAMES[0]) == 0
        assert index.count(ODD_NAMES[1]) == 1

    def test_bad_shapes_are_validation_errors(
        self, index: VectorIndex, rng: np.random.Generator
    ) -> None:
        """Mismatched shapes, widths and NaNs raise ValidationError and change nothing."""
        vectors = random_unit_vectors(rng, 2, self.dim)
        with pytest.raises(ValidationError):
            index.upsert("c", ["a", "b", "c"], vectors)
        index.upsert("c", ["a", "b"], vectors)
        with pytest.raises(ValidationError):
            index.upsert("c", ["x"], random_unit_vectors(rng, 1, self.dim + 1))
        with pytest.raises(ValidationError):
            index.query("c", random_unit_vectors(rng, 1, self.dim + 1)[0], k=1)
        with pytest.raises(ValidationError):
            index.upsert("c", ["n"], np.full((1, self.dim), np.nan, dtype=np.float32))
        assert index.ids("c") == {"a", "b"}

    def test_concurrent_writers(self, index: VectorIndex, rng: np.random.Generator) -> None:
        """Writers on several threads lose no rows and raise nothing."""
        workers, rows = 4, 6
        batches = [random_unit_vectors(rng, rows, self.dim) for _ in range(workers)]

        def write(worker: int) -> None:
            for row in range(rows):
                item = f"w{worker}-{row}"
                index.upsert("shared", [item], batches[worker][row : row + 1])
                index.upsert(f"own{worker}", [item], batches[worker][row : row + 1])
                index.query("shared", batches[worker][row], k=3)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            # result() re-raises a worker's exception here, in the test's thread.
            for future in [pool.submit(write, worker) for worker in range(workers)]:
                future.result()

        assert index.count("shared") == workers * rows
        assert [index.count(f"own{worker}") for worker in range(workers)] == [rows] * workers

    def test_close_is_idempotent_and_final(self, tmp_path: Path) -> None:
        """``close`` may be called twice; a closed index refuses work with StorageError."""
        index = self.make_index(tmp_path / "closing")
        index.close()
        index.close()
        with pytest.raises(StorageError):
            index.upsert("c", ["a"], np.ones((1, self.dim), dtype=np.float32))
        assert issubclass(StorageError, SageMemoryError)

    def test_persistence_across_reopen(self, tmp_path: Path, rng: np.random.Generator) -> None:
        """A persistent index reopened on the same path holds the same data."""
        path = tmp_path / "persist"
        index = self.make_index(path)
        if not index.persistent:
            index.close()
            pytest.skip("the backend keeps nothing on disk")
        ids = [f"v{i}" for i in range(30)]
        matrix = random_unit_vectors(rng, len(ids), self.dim)
        index.upsert(ODD_NAMES[0], ids, matrix)
        index.upsert("other", ["o"], matrix[:1])
        index.delete(ODD_NAMES[0], ["v3"])
        index.drop("other")
        index.close()

        reopened = self.make_index(path)
        try:
            kept = [item for item in ids if item != "v3"]
            rows = [ids.index(item) for item in kept]
            assert reopened.ids(ODD_NAMES[0]) == set(kept)
            assert reopened.count("other") == 0
            _assert_matches(
                reopened.query(ODD_NAMES[0], matrix[3], k=4),
                brute_force_top_k(kept, matrix[rows], matrix[3], 4),
            )
        finally:
            reopened.close()

    # -- model-based --------------------------------------------------------------------------

    def test_matches_a_brute_force_model(self, tmp_path: Path) -> None:
        """Random upserts, deletes, drops, queries and reopens agree with a dict of vectors."""
        run_state_machine_as_test(
            _machine_for(self, tmp_path),
            settings=settings(
                max_examples=self.state_machine_examples,
                stateful_step_count=self.state_machine_steps,
                deadline=None,
                database=None,  # keep the shared repository free of a .hypothesis folder
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )


_MODEL_DIM = 8
_MODEL_COLLECTIONS = ("c0", "user:ALICE|a b/ü")
_MODEL_IDS = ("a", "b", "c", "d", "e", "f")


def _machine_for(contract: VectorIndexContract, tmp_path: Path) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend; each run gets a fresh folder."""
    folders = itertools.count()
    seeds = st.integers(min_value=0, max_value=2**32 - 1)
    collections = st.sampled_from(_MODEL_COLLECTIONS)
    id_lists = st.lists(st.sampled_from(_MODEL_IDS), max_size=4)

    class IndexAgainstModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.path = tmp_path / f"run{next(folders)}"
            self.index = contract.make_index(self.path)
            self.model: dict[str, dict[str, Vector]] = {name: {} for name in _MODEL_COLLECTIONS}

        @rule(collection=collections, ids=id_lists.filter(bool), seed=seeds)
        def upsert(self, collection: str, ids: list[str], seed: int) -> None:
            vectors = random_unit_vectors(np.random.default_rng(seed), len(ids), _MODEL_DIM)
            self.index.upsert(collection, ids, vectors)
            for item, vector in zip(ids, vectors, strict=True):
                self.model[collection][item] = vector

        @rule(collection=collections, ids=id_lists)
        def delete(self, collection: str, ids: list[str]) -> None:
            self.index.delete(collection, ids)
            for item in ids:
                self.model[collection].pop(item, None)

        @rule(collection=collections)
        def drop(self, collection: str) -> None:
            self.index.drop(collection)
            self.model[collection] = {}

        @rule(collection=collections, seed=seeds, k=st.integers(min_value=1, max_value=8))
        def query(self, collection: str, seed: int, k: int) -> None:
            query = random_unit_vectors(np.random.default_rng(seed), 1, _MODEL_DIM)[0]
            stored = self.model[collection]
            ids = list(stored)
            matrix = (
                np.stack([stored[item] for item in ids])
                if ids
                else np.empty((0, _MODEL_DIM), np.float32)
            )
            expected = brute_force_top_k(ids, matrix, query, k)
            actual = self.index.query(collection, query, k)
            # Compare scores rank by rank rather than ids, so near-ties cannot flake.
            assert len(actual) == len(expected)
            assert len({item for item, _ in actual}) == len(actual)
            np.testing.assert_allclose(
                [score for _, score in actual],
                [score for _, score in expected],
                atol=SCORE_TOLERANCE,
            )
            for item, score in actual:
                assert score == pytest.approx(float(stored[item] @ query), abs=SCORE_TOLERANCE)

        @precondition(lambda self: self.index.persistent)
        @rule()
        def reopen(self) -> None:
            self.index.close()
            self.index = contract.make_index(self.path)

        @invariant()
        def ids_and_counts_agree(self) -> None:
            for collection, stored in self.model.items():
                assert self.index.ids(collection) == set(stored)
                assert self.index.count(collection) == len(stored)

        def teardown(self) -> None:
            self.index.close()

    return IndexAgainstModel
