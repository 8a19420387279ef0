"""A folder's vector index that opens Chroma only when it is needed.

Importing chromadb and opening its client costs about a second, most of a short CLI command
(``sage-memory search``). Reading does not need it for small partitions: SQLite already holds
every vector, and an exact scan of a few thousand of them is as fast as an HNSW query (and
exact). So :class:`FolderIndex` answers queries of collections up to ``exact_limit`` vectors
from SQLite, with a :class:`~sage_memory.index.numpy.NumpyVectorIndex` filled on first use,
until anything writes, lists or counts: then it opens the real index and forwards every call to
it from then on (the exact copies are dropped, so no answer can come from stale vectors).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from sage_memory.index.base import VectorIndex, collection_name, query_many
from sage_memory.index.numpy import NumpyVectorIndex
from sage_memory.store.base import GraphStore
from sage_memory.types import Scope, Vector

#: Largest collection answered exactly from SQLite before Chroma is opened. Loading 5,000
#: vectors (7.5 MB) and scanning them (a fraction of a millisecond, on one BLAS thread) costs
#: far less than importing chromadb; past that, an HNSW query beats the exact scan.
EXACT_LIMIT = 5_000


class FolderIndex:
    """A :class:`VectorIndex` over a lazily opened one, with exact reads from the store before.

    Args:
        open_index: Opens the real index (called at most once, under a lock).
        store: The source of truth holding every vector.
        exact_limit: Most vectors in a collection answered from the store.
    """

    persistent = True

    def __init__(
        self,
        open_index: Callable[[], VectorIndex],
        store: GraphStore,
        exact_limit: int = EXACT_LIMIT,
    ) -> None:
        self._open_index = open_index
        self._store = store
        self._limit = exact_limit
        self._real: VectorIndex | None = None
        self._exact = NumpyVectorIndex()
        self._loaded: set[str] = set()
        self._names: dict[str, tuple[Scope, str]] | None = None
        self._lock = threading.RLock()

    @property
    def opened(self) -> bool:
        """Whether the real index was opened (anything wrote, listed or counted)."""
        return self._real is not None

    def real(self) -> VectorIndex:
        """The real index, opened on first call; the exact copies are dropped then."""
        with self._lock:
            if self._real is None:
                self._real = self._open_index()
                self._exact.close()
                self._loaded.clear()
            return self._real

    def _exact_ready(self, collection: str) -> bool:
        """Load ``collection`` from the store if it is small enough; False: use the real one."""
        if collection in self._loaded:
            return True
        if self._names is None:
            self._names = {
                collection_name(part.key, entity): (part, entity)
                for part in self._store.partitions()
                for entity in ("memory", "node")
            }
        owner = self._names.get(collection)
        if owner is None:  # nothing stored for it: an empty answer needs no index
            self._loaded.add(collection)
            return True
        part, entity = owner
        ids = sorted(self._store.vector_ids(part, entity))  # type: ignore[arg-type]
        if len(ids) > self._limit:
            return False
        vectors = self._store.get_vectors(ids)
        found = [i for i in ids if i in vectors]
        if found:
            self._exact.upsert(collection, found, np.stack([vectors[i] for i in found]))
        self._loaded.add(collection)
        return True

    def query(self, collection: str, vector: Vector, k: int) -> list[tuple[str, float]]:
        with self._lock:
            if self._real is None and self._exact_ready(collection):
                return self._exact.query(collection, vector, k)
        return self.real().query(collection, vector, k)

    def query_many(self, collection: str, vectors: Vector, k: int) -> list[list[tuple[str, float]]]:
        with self._lock:
            if self._real is None and self._exact_ready(collection):
                return self._exact.query_many(collection, vectors, k)
        return query_many(self.real(), collection, vectors, k)

    def upsert(self, collection: str, ids: Sequence[str], vectors: Vector) -> None:
        self.real().upsert(collection, ids, vectors)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        self.real().delete(collection, ids)

    def ids(self, collection: str) -> set[str]:
        return self.real().ids(collection)

    def count(self, collection: str) -> int:
        return self.real().count(collection)

    def drop(self, collection: str) -> None:
        self.real().drop(collection)

    def close(self) -> None:
        with self._lock:
            self._exact.close()
            if self._real is not None:
                self._real.close()
