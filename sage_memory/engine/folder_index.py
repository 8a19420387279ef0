"""A folder's vector index: small collections served exactly from SQLite, large ones by Chroma.

SQLite holds every vector. For a collection (one partition's memories or nodes) of up to
``exact_limit`` vectors, an exact scan of SQLite's vectors is as fast as an HNSW query (and
exact), so :class:`FolderIndex` keeps such a collection in memory only, loaded from SQLite on
first use, and writes nothing of it to Chroma: a small memory costs no Chroma bytes, no Chroma
upsert per add, and a read-only command never imports chromadb. A collection that grows past
the limit is *mirrored*: copied into Chroma once (from SQLite, which already holds the rows
just written) and kept there from then on, even if it shrinks again. A process that searches
a mirrored collection of up to ``read_exact_limit`` vectors before it has opened Chroma (a
one-shot ``sage-memory search``) loads an exact copy from SQLite instead of importing chromadb,
and keeps that copy in step with Chroma's from then on.

Which collections Chroma mirrors is recorded in the store's meta table (``MIRRORED_KEY``),
written before Chroma is filled, so the record may name a collection Chroma lacks (the repair
on open fills it) but never misses one Chroma holds: every delete of a mirrored collection
reaches Chroma. A folder written before this record existed mirrored every collection, and
goes on doing so for the partitions it had (new ones start exact).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence

import numpy as np

from sage_memory.index.base import VectorIndex, collection_name, query_many
from sage_memory.index.numpy import NumpyVectorIndex
from sage_memory.store.base import GraphStore
from sage_memory.types import Scope, Vector

#: Largest collection served exactly from SQLite without a Chroma copy. Scanning 384-d vectors
#: on one BLAS thread, against Chroma's HNSW query on the same vectors, alternated query by
#: query on a loaded 2-core VM (load 12): p50 0.8 vs 4.3 ms at 5,000, 1.7 vs 7.5 ms at 10,000,
#: 2.8 vs 2.5 ms at 20,000, 20 vs 10 ms at 50,000. Up to 20,000 (30 MB) the exact scan is as
#: fast, so such a collection pays no Chroma upsert per add (at 10,000 memories that upsert
#: was the largest part of a single add) and no chromadb import; past it, HNSW wins.
EXACT_LIMIT = 20_000
#: Largest mirrored collection that a process which has not opened Chroma yet searches
#: exactly from SQLite's vectors instead (a one-shot ``sage-memory search``): importing
#: chromadb and opening its index cost about a second of CPU, loading 10,000 stored vectors
#: a few tens of milliseconds. Once loaded, the copy follows every write (Chroma too).
READ_EXACT_LIMIT = 50_000
#: Meta key: the JSON list of the collections Chroma mirrors.
MIRRORED_KEY = "index_mirrored"


class FolderIndex:
    """A :class:`VectorIndex` that mirrors only large collections into a lazily opened one.

    Args:
        open_index: Opens the real index (called at most once, under a lock).
        store: The source of truth holding every vector (vectors are written to it before the
            index is told of them).
        exact_limit: Most vectors in a collection served from the store alone; 0 mirrors
            every collection.
        read_exact_limit: Most vectors in a mirrored collection searched exactly from the
            store before Chroma is opened (``READ_EXACT_LIMIT``; 0 when ``exact_limit`` is).
    """

    persistent = True

    def __init__(
        self,
        open_index: Callable[[], VectorIndex],
        store: GraphStore,
        exact_limit: int | None = None,
        read_exact_limit: int | None = None,
    ) -> None:
        self._open_index = open_index
        self._store = store
        self.exact_limit = EXACT_LIMIT if exact_limit is None else exact_limit
        self._real: VectorIndex | None = None
        self._exact = NumpyVectorIndex()
        self._loaded: set[str] = set()
        #: Mirrored collections also held exactly in ``_exact`` (see ``READ_EXACT_LIMIT``).
        self._shadowed: set[str] = set()
        if read_exact_limit is None:  # "chroma" (exact_limit 0) asks for Chroma's answers
            read_exact_limit = READ_EXACT_LIMIT if self.exact_limit else 0
        self.read_exact_limit = read_exact_limit
        self._mirrored: set[str] | None = None
        self._names: dict[str, tuple[Scope, str]] | None = None
        self._lock = threading.RLock()
        # Read (or, for a folder from before the record, written) as the folder is found, before
        # any write of this process adds a partition.
        self.mirrored()

    @property
    def opened(self) -> bool:
        """Whether the real index was opened (a mirrored collection was used)."""
        return self._real is not None

    def real(self) -> VectorIndex:
        """The real index, opened on first call."""
        with self._lock:
            if self._real is None:
                self._real = self._open_index()
            return self._real

    def mirrored(self) -> set[str]:
        """The collections Chroma mirrors (as recorded; see the module's docstring)."""
        with self._lock:
            if self._mirrored is None:
                raw = self._store.get_meta(MIRRORED_KEY)
                if raw is None:  # an older folder: Chroma mirrored every collection
                    self._mirrored = set(self._owners())
                    self._record()
                else:
                    self._mirrored = set(json.loads(raw))
            return self._mirrored

    def is_mirrored(self, collection: str) -> bool:
        """Whether ``collection`` lives in the real index (a large one is mirrored now)."""
        with self._lock:
            return not self._exact_ready(collection)

    def _record(self) -> None:
        assert self._mirrored is not None
        if self._store.persistent:
            self._store.set_meta(MIRRORED_KEY, json.dumps(sorted(self._mirrored)))

    def _owners(self) -> dict[str, tuple[Scope, str]]:
        if self._names is None:
            self._names = {
                collection_name(part.key, entity): (part, entity)
                for part in self._store.partitions()
                for entity in ("memory", "node")
            }
        return self._names

    def _stored_ids(self, collection: str) -> list[str]:
        owner = self._owners().get(collection)
        if owner is None:
            self._names = None  # a partition created since the names were listed
            owner = self._owners().get(collection)
        if owner is None:
            return []
        part, entity = owner
        return sorted(self._store.vector_ids(part, entity))  # type: ignore[arg-type]

    def _exact_ready(self, collection: str) -> bool:
        """True when ``collection`` is served exactly (loading it from the store first); False
        when it is mirrored (mirroring it first if it grew past the limit)."""
        if collection in self._loaded:
            return True
        if collection in self.mirrored():
            return False
        ids = self._stored_ids(collection)
        if len(ids) > self.exact_limit:
            self._mirror(collection, ids)
            return False
        self._load_exact(collection, ids)
        self._loaded.add(collection)
        return True

    def _load_exact(self, collection: str, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            vectors = self._store.get_vectors(chunk)
            found = [i for i in chunk if i in vectors]
            if found:
                self._exact.upsert(collection, found, np.stack([vectors[i] for i in found]))

    def _shadow_ready(self, collection: str) -> bool:
        """Whether a mirrored ``collection`` is searched from its exact copy: it has one, or
        Chroma is not open yet and it is small enough to load one from the store."""
        if collection in self._shadowed:
            return True
        if self._real is not None or collection not in self.mirrored():
            return False
        ids = self._stored_ids(collection)
        if len(ids) > self.read_exact_limit:
            return False
        self._exact.drop(collection)
        self._load_exact(collection, ids)
        self._shadowed.add(collection)
        return True

    def _mirror(self, collection: str, ids: Sequence[str]) -> None:
        """Copy a collection that outgrew the limit into the real index, once."""
        real = self.real()
        self.mirrored().add(collection)
        self._record()  # before Chroma holds it: the record never misses a mirrored collection
        real.drop(collection)  # whatever an interrupted copy left
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            vectors = self._store.get_vectors(chunk)
            found = [i for i in chunk if i in vectors]
            if found:
                real.upsert(collection, found, np.stack([vectors[i] for i in found]))
        self._exact.drop(collection)
        self._loaded.discard(collection)

    def query(self, collection: str, vector: Vector, k: int) -> list[tuple[str, float]]:
        with self._lock:
            if self._exact_ready(collection) or self._shadow_ready(collection):
                return self._exact.query(collection, vector, k)
        return self.real().query(collection, vector, k)

    def query_many(self, collection: str, vectors: Vector, k: int) -> list[list[tuple[str, float]]]:
        with self._lock:
            if self._exact_ready(collection) or self._shadow_ready(collection):
                return self._exact.query_many(collection, vectors, k)
        return query_many(self.real(), collection, vectors, k)

    def upsert(self, collection: str, ids: Sequence[str], vectors: Vector) -> None:
        with self._lock:
            if self._exact_ready(collection):
                self._exact.upsert(collection, ids, vectors)
                if self._exact.count(collection) > self.exact_limit:
                    self._mirror(collection, self._stored_ids(collection))
                return
            if collection in self._shadowed:
                self._exact.upsert(collection, ids, vectors)
        self.real().upsert(collection, ids, vectors)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        with self._lock:
            if self._exact_ready(collection):
                self._exact.delete(collection, ids)
                return
            if collection in self._shadowed:
                self._exact.delete(collection, ids)
        self.real().delete(collection, ids)

    def ids(self, collection: str) -> set[str]:
        with self._lock:
            if self._exact_ready(collection):
                return self._exact.ids(collection)
        return self.real().ids(collection)

    def count(self, collection: str) -> int:
        with self._lock:
            if self._exact_ready(collection):
                return self._exact.count(collection)
        return self.real().count(collection)

    def drop(self, collection: str) -> None:
        with self._lock:
            self._exact.drop(collection)
            self._loaded.discard(collection)
            self._shadowed.discard(collection)
            if collection in self.mirrored():
                self.real().drop(collection)
                self.mirrored().discard(collection)
                self._record()

    def close(self) -> None:
        with self._lock:
            self._exact.close()
            if self._real is not None:
                self._real.close()
