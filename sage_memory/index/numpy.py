"""An in-memory, exact cosine-similarity VectorIndex built on numpy.

Each collection is one contiguous float32 matrix plus an id <-> row map, so a query is a single
matrix-vector product. It is the index of choice for tests, for small memories, and for any
scope small enough that an exact scan beats an approximate graph index; it keeps nothing on
disk, so the engine rebuilds it from SQLite when a folder is opened.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from sage_memory.errors import StorageError, ValidationError
from sage_memory.types import Vector

__all__ = ["NumpyVectorIndex"]

# Rows allocated the first time a collection is written; capacity doubles from there so that
# growing one row at a time stays amortised O(1) instead of copying the matrix on every upsert.
_INITIAL_CAPACITY = 64


_controller: list[Any] = []


def _one_blas_thread() -> Any:
    """Run a product on one BLAS thread (threadpoolctl, a few microseconds), or as numpy would.

    A matrix-vector product of a few thousand rows takes well under a millisecond; with two
    OpenBLAS threads on a busy machine it was seen taking 25 ms, the threads waiting for each
    other (the same stall the MiniLM embedder avoids the same way).
    """
    if not _controller:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # optional: without it numpy keeps its own thread setting
            _controller.append(None)
        else:
            _controller.append(ThreadpoolController())
    if _controller[0] is None:
        return contextlib.nullcontext()
    return _controller[0].limit(limits=1, user_api="blas")


def _normalise_rows(matrix: Vector) -> Vector:
    """Return ``matrix`` with every row scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero row divided by `tiny` stays zero and so scores 0 against everything, as in Chroma.
    np.maximum(norms, np.finfo(np.float32).tiny, out=norms)
    unit: Vector = (matrix / norms).astype(np.float32, copy=False)
    return unit


def prepare_batch(ids: Sequence[str], vectors: Vector) -> tuple[list[str], Vector]:
    """Validate an upsert batch; return unique ids and their unit-length float32 rows.

    Shared by every backend in this package so they accept and reject the same input. Callers
    promise unit vectors, but renormalising is cheap and keeps a slightly off-norm vector from
    turning a dot product into something that is not a cosine. An id repeated in the batch keeps
    its last row, the same as upserting the rows one after the other.

    Args:
        ids: One id per row.
        vectors: Array of shape (len(ids), dim); a 1-D array is accepted for a single id.

    Returns:
        The unique ids in first-seen order and a matching (n, dim) float32 array.

    Raises:
        ValidationError: If the shape does not match ``ids`` or a value is not finite.
    """
    ids = list(ids)
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1 and len(ids) == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[0] != len(ids) or array.shape[1] == 0:
        raise ValidationError(
            f"vectors must have shape (len(ids), dim) = ({len(ids)}, dim) with dim >= 1, got "
            f"{array.shape}; pass one row per id"
        )
    if not np.all(np.isfinite(array)):
        raise ValidationError("vectors contain NaN or infinity; embed the texts again")
    last = {item: row for row, item in enumerate(ids)}  # later rows overwrite earlier ones
    if len(last) != len(ids):
        ids = list(last)
        array = array[list(last.values())]
    return ids, _normalise_rows(array)


def prepare_query(vector: Vector) -> Vector:
    """Validate a query vector of shape (dim,) or (1, dim); return it 1-D and unit-length.

    Raises:
        ValidationError: If the shape is wrong or a value is not finite.
    """
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim == 2 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 1 or array.shape[0] == 0:
        raise ValidationError(
            f"a query vector must have shape (dim,) or (1, dim), got {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValidationError("the query vector contains NaN or infinity; embed the query again")
    unit: Vector = _normalise_rows(array.reshape(1, -1))[0]
    return unit


class _Collection:
    """One collection: a matrix with spare capacity and the id <-> row maps."""

    __slots__ = ("dim", "ids", "matrix", "rows")

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.matrix: Vector = np.empty((_INITIAL_CAPACITY, dim), dtype=np.float32)
        #: Row -> id; its length is the number of live rows (a prefix of ``matrix``).
        self.ids: list[str] = []
        #: Id -> row.
        self.rows: dict[str, int] = {}

    def upsert(self, ids: Sequence[str], vectors: Vector) -> None:
        new = [item for item in ids if item not in self.rows]
        needed = len(self.ids) + len(new)
        if needed > self.matrix.shape[0]:
            capacity = max(needed, 2 * self.matrix.shape[0])
            grown: Vector = np.empty((capacity, self.dim), dtype=np.float32)
            grown[: len(self.ids)] = self.matrix[: len(self.ids)]
            self.matrix = grown
        for item in new:
            self.rows[item] = len(self.ids)
            self.ids.append(item)
        # One fancy-indexed assignment writes replacements and new rows alike.
        self.matrix[[self.rows[item] for item in ids]] = vectors

    def delete(self, ids: Sequence[str]) -> None:
        for item in ids:
            row = self.rows.pop(item, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:
                # Move the last row into the hole so live rows stay a contiguous prefix.
                moved = self.ids[last]
                self.matrix[row] = self.matrix[last]
                self.ids[row] = moved
                self.rows[moved] = row
            self.ids.pop()
        # Give memory back once a collection has shrunk to a quarter of its allocation.
        size = len(self.ids)
        if self.matrix.shape[0] > _INITIAL_CAPACITY and size * 4 < self.matrix.shape[0]:
            capacity = max(_INITIAL_CAPACITY, 2 * size)
            self.matrix = np.ascontiguousarray(self.matrix[:capacity])

    def query(self, vector: Vector, k: int) -> list[tuple[str, float]]:
        size = len(self.ids)
        k = min(k, size)
        if k <= 0:
            return []
        with _one_blas_thread():
            scores = self.matrix[:size] @ vector
        # argpartition finds the top k in O(n); only those k are then sorted.
        top = np.argpartition(-scores, k - 1)[:k] if k < size else np.arange(size)
        order = top[np.argsort(-scores[top], kind="stable")]
        # float32 rounding can put a self-match a hair above 1; keep scores true cosines.
        best = np.clip(scores[order], -1.0, 1.0)
        return [(self.ids[row], float(score)) for row, score in zip(order, best, strict=True)]


class NumpyVectorIndex:
    """Exact cosine search over in-memory float32 matrices, one per collection.

    Thread-safe: a single lock guards every collection, so a query never sees a half-applied
    upsert or delete. Nothing is written to disk (``persistent`` is False).

    Example:
        >>> import numpy as np
        >>> index = NumpyVectorIndex()
        >>> index.upsert("notes", ["a", "b"], np.eye(2, dtype=np.float32))
        >>> index.query("notes", np.array([1.0, 0.0], dtype=np.float32), k=1)
        [('a', 1.0)]
    """

    persistent: bool = False

    def __init__(self) -> None:
        """Create an empty index."""
        self._collections: dict[str, _Collection] = {}
        self._lock = threading.Lock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this NumpyVectorIndex is closed; create a new one")

    def upsert(self, collection: str, ids: Sequence[str], vectors: Vector) -> None:
        """Insert or replace vectors.

        Args:
            collection: The collection name; it is created on first use.
            ids: One id per row of ``vectors``. An id repeated in the batch keeps its last row.
            vectors: Float array of shape (len(ids), dim); rows are normalised to unit length.

        Raises:
            ValidationError: If the shape is wrong, a value is not finite, or ``dim`` differs
                from the vectors already in the collection.
        """
        if len(ids) == 0:
            return
        ids, batch = prepare_batch(ids, vectors)
        with self._lock:
            self._check_open()
            entry = self._collections.get(collection)
            if entry is None:
                entry = self._collections[collection] = _Collection(batch.shape[1])
            elif entry.dim != batch.shape[1]:
                raise ValidationError(
                    f"collection {collection!r} holds {entry.dim}-d vectors, got "
                    f"{batch.shape[1]}-d; use one embedder per collection or drop it first"
                )
            entry.upsert(ids, batch)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove vectors; unknown ids and unknown collections are ignored."""
        with self._lock:
            self._check_open()
            entry = self._collections.get(collection)
            if entry is not None:
                entry.delete(ids)

    def query(self, collection: str, vector: Vector, k: int) -> list[tuple[str, float]]:
        """Return the ``k`` nearest ids with their cosine similarity, best first.

        Args:
            collection: The collection to search.
            vector: The query, shape (dim,) or (1, dim); it is normalised to unit length.
            k: How many results at most; fewer come back when the collection is smaller.

        Returns:
            ``(id, similarity)`` pairs sorted by decreasing similarity; ``[]`` for an unknown
            or empty collection or a ``k`` below 1.

        Raises:
            ValidationError: If the vector's shape or width does not fit the collection.
        """
        query = prepare_query(vector)
        with self._lock:
            self._check_open()
            entry = self._collections.get(collection)
            if entry is None or not entry.ids or k <= 0:
                return []
            if entry.dim != query.shape[0]:
                raise ValidationError(
                    f"collection {collection!r} holds {entry.dim}-d vectors, the query is "
                    f"{query.shape[0]}-d; embed the query with the collection's embedder"
                )
            return entry.query(query, k)

    def query_many(self, collection: str, vectors: Vector, k: int) -> list[list[tuple[str, float]]]:
        """:meth:`query` for each row of ``vectors`` (shape (n, dim)), under one lock."""
        queries = [prepare_query(row) for row in np.asarray(vectors, dtype=np.float32)]
        with self._lock:
            self._check_open()
            entry = self._collections.get(collection)
            if entry is None or not entry.ids or k <= 0:
                return [[] for _ in queries]
            for query in queries:
                if entry.dim != query.shape[0]:
                    raise ValidationError(
                        f"collection {collection!r} holds {entry.dim}-d vectors, the query is "
                        f"{query.shape[0]}-d; embed the query with the collection's embedder"
                    )
            return [entry.query(query, k) for query in queries]

    def ids(self, collection: str) -> set[str]:
        """Every id in ``collection`` (empty for an unknown collection)."""
        with self._lock:
            self._check_open()
            entry = self._collections.get(collection)
            return set(entry.ids) if entry is not None else set()

    def count(self, collection: str) -> int:
        """How many vectors ``collection`` holds (0 for an unknown collection)."""
        with self._lock:
            self._check_open()
            entry = self._collections.get(collection)
            return len(entry.ids) if entry is not None else 0

    def drop(self, collection: str) -> None:
        """Delete a whole collection; unknown collections are ignored."""
        with self._lock:
            self._check_open()
            self._collections.pop(collection, None)

    def close(self) -> None:
        """Release every matrix. Closing twice is harmless; any other call afterwards fails."""
        with self._lock:
            self._collections.clear()
            self._closed = True
