"""A VectorIndex on Chroma: one HNSW collection per logical collection, cosine space.

chromadb is imported only when a :class:`ChromaVectorIndex` is created, never when this module
is imported, so ``import sage_memory`` stays light and works without the package.

Offline by construction: collections are created and opened with ``embedding_function=None``
and every call passes our own vectors (``embeddings=`` / ``query_embeddings=``), never
documents, so Chroma never reaches for its default ONNX model (a download from S3 that fails
offline). Anonymised telemetry is switched off for clients this module creates.

Concurrency: Chroma is thread-safe but not process-safe. Several processes writing one
``PersistentClient`` folder read stale data and can corrupt the HNSW files, so only one process
may hold a folder at a time; the engine takes a lock on its folder before opening the index.
Several processes should share one Chroma server through ``client=chromadb.HttpClient(...)``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from sage_memory.errors import ConfigError, DependencyError, StorageError, ValidationError
from sage_memory.index.numpy import prepare_batch, prepare_query
from sage_memory.types import Vector

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.collection_configuration import CreateCollectionConfiguration
    from chromadb.api.models.Collection import Collection

__all__ = ["ChromaVectorIndex", "chroma_collection_name"]

_T = TypeVar("_T")

#: Collection metadata key holding the logical name, so a folder can be inspected and a
#: (vanishingly unlikely) digest collision is detected instead of mixing two collections.
LOGICAL_NAME_KEY = "sage_memory_collection"

#: Rows per ``get`` page when listing ids: large enough for few round trips, small enough that
#: a page of ids never holds much memory.
_ID_PAGE = 5_000

#: Chroma APIs that run in this process; with any of them and no persist directory the data
#: dies with the process.
_IN_PROCESS_APIS = frozenset(
    {"chromadb.api.rust.RustBindingsAPI", "chromadb.api.segment.SegmentAPI"}
)

#: HNSW settings a caller may tune; the space is always cosine, since scores are cosines.
_HNSW_KEYS = frozenset(
    {
        "ef_construction",
        "ef_search",
        "max_neighbors",
        "num_threads",
        "batch_size",
        "sync_threshold",
        "resize_factor",
    }
)

_INSTALL_HINT = (
    "ChromaVectorIndex needs the package 'chromadb'; install it with: pip install chromadb"
)


def chroma_collection_name(collection: str) -> str:
    """Map a logical collection name to a valid, deterministic Chroma collection name.

    Chroma accepts 3-512 characters from ``[a-zA-Z0-9._-]`` that start and end alphanumeric,
    while the engine's names hold arbitrary text (``"u:alice|a:|memory"``). A 128-bit BLAKE2b
    digest is fixed-length, valid for any input and stable across processes and versions.

    Args:
        collection: The logical name chosen by the engine.

    Returns:
        ``"sm-"`` followed by 32 lowercase hex digits.
    """
    digest = hashlib.blake2b(collection.encode("utf-8"), digest_size=16).hexdigest()
    return f"sm-{digest}"


class ChromaVectorIndex:
    """Approximate nearest-neighbour search in Chroma collections (HNSW, cosine space).

    Each logical collection becomes its own Chroma collection, named by
    :func:`chroma_collection_name` and carrying the logical name in its metadata. Scoping by a
    collection per partition keeps queries in the millisecond range, where a metadata ``where``
    filter over one shared collection costs 20-100x more.

    Similarity is ``1 - cosine distance``, clipped to [-1, 1]. HNSW is approximate: on large
    collections a true neighbour can occasionally be missed; small collections are searched
    exactly in practice.

    Args:
        path: Folder of an on-disk ``chromadb.PersistentClient`` (created when missing). Only
            one process may use a folder at a time.
        client: An existing Chroma client to use instead (for example a ``chromadb.HttpClient``
            shared by several processes). The caller keeps ownership: :meth:`close` leaves it
            open.
        hnsw: HNSW settings for collections this index creates (``ef_search``,
            ``ef_construction``, ``max_neighbors``, ...); Chroma's defaults when omitted.
            Recall on hard data rises sharply with ``ef_search`` (about 0.53 -> 0.91 recall@10
            from 100 to 400 on 10k random 384-d vectors, for about 1 ms more per query).
            Existing collections keep the settings they were created with.

    Raises:
        ConfigError: If both or neither of ``path`` and ``client`` are given, or ``hnsw`` holds
            an unknown key.
        DependencyError: If chromadb is not installed.
        StorageError: If the folder cannot be opened.
    """

    persistent: bool

    def __init__(
        self,
        path: str | Path | None = None,
        client: ClientAPI | None = None,
        *,
        hnsw: Mapping[str, int | float] | None = None,
    ) -> None:
        if (path is None) == (client is None):
            # An implicit EphemeralClient would silently share its data with every other
            # ephemeral client in the process, so in-memory use has to be asked for explicitly.
            raise ConfigError(
                "ChromaVectorIndex needs exactly one of path= (a folder for a PersistentClient) "
                "or client= (an existing Chroma client); for an in-memory index use "
                "NumpyVectorIndex"
            )
        unknown = sorted(set(hnsw or {}) - _HNSW_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown HNSW settings {unknown}; use only {sorted(_HNSW_KEYS)} (the space is "
                "always cosine)"
            )
        self._hnsw: dict[str, Any] = {**(hnsw or {}), "space": "cosine"}
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:
            raise DependencyError(_INSTALL_HINT) from exc

        if client is None:
            folder = Path(path).expanduser() if path is not None else Path()
            try:
                client = chromadb.PersistentClient(
                    path=str(folder),
                    settings=Settings(anonymized_telemetry=False, allow_reset=False),
                )
            except Exception as exc:  # chromadb raises assorted types for an unusable folder
                _evict_failed_system(str(folder))
                raise StorageError(
                    f"cannot open the Chroma index folder {str(folder)!r}: {exc}; check that "
                    "it is a writable directory not used by another process"
                ) from exc
            self._owns_client = True
            self.persistent = True
        else:
            settings = client.get_settings()
            self._owns_client = False
            self.persistent = bool(settings.is_persistent) or (
                settings.chroma_api_impl not in _IN_PROCESS_APIS
            )
        self._client: ClientAPI = client
        self._handles: dict[str, Collection] = {}
        self._max_batch: int | None = None
        # Guards the handle cache and the closed flag; Chroma calls on a handle run outside it
        # because Chroma does its own locking.
        self._lock = threading.RLock()
        self._closed = False

    # -- collection handles -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this ChromaVectorIndex is closed; open a new one")

    def _handle(self, collection: str, *, create: bool) -> Collection | None:
        """The cached handle of ``collection``, opened or created on first use."""
        from chromadb.errors import NotFoundError

        with self._lock:
            self._check_open()
            handle = self._handles.get(collection)
            if handle is not None:
                return handle
            name = chroma_collection_name(collection)
            with _translated_errors(f"open the collection {collection!r}"):
                if create:
                    handle = self._client.get_or_create_collection(
                        name,
                        # A fresh dict per call: Chroma writes into the configuration it gets.
                        configuration=cast(
                            "CreateCollectionConfiguration", {"hnsw": dict(self._hnsw)}
                        ),
                        metadata={LOGICAL_NAME_KEY: collection},
                        # None, not Chroma's default: with no embedding function an accidental
                        # call with documents fails fast instead of downloading a model.
                        embedding_function=None,
                    )
                else:
                    try:
                        handle = self._client.get_collection(name, embedding_function=None)
                    except NotFoundError:
                        return None
            stored = (handle.metadata or {}).get(LOGICAL_NAME_KEY)
            if stored != collection:
                raise StorageError(
                    f"the Chroma collection {name!r} belongs to {stored!r}, not {collection!r}; "
                    "the index folder holds foreign data: use a fresh folder"
                )
            self._handles[collection] = handle
            return handle

    def _forget(self, collection: str, handle: Collection) -> None:
        with self._lock:
            if self._handles.get(collection) is handle:
                del self._handles[collection]

    def _run(
        self, collection: str, op: Callable[[Collection], _T], *, create: bool, what: str
    ) -> _T | None:
        """Run ``op`` on the collection's handle; None when it does not exist and not ``create``.

        A cached handle goes stale when the collection is deleted through another handle on the
        same client (another index object, or an admin tool on a shared server); the handle is
        then re-resolved once instead of failing forever.
        """
        from chromadb.errors import NotFoundError

        for attempt in range(2):
            handle = self._handle(collection, create=create)
            if handle is None:
                return None
            try:
                with _translated_errors(what):
                    return op(handle)
            except NotFoundError as exc:
                self._forget(collection, handle)
                if attempt == 1:
                    raise StorageError(
                        f"the Chroma collection for {collection!r} vanished while trying to "
                        f"{what}; is another process using the same index?"
                    ) from exc
            except StorageError:
                # A collection dropped by another thread during the call fails with assorted
                # internal errors ("Missing metadata segment"), not NotFoundError. If it is gone
                # now, it was simply missing: re-resolve like a stale handle.
                self._forget(collection, handle)
                if attempt == 1 or not self._gone(collection):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns

    def _gone(self, collection: str) -> bool:
        from chromadb.errors import NotFoundError

        try:
            self._client.get_collection(chroma_collection_name(collection), embedding_function=None)
        except NotFoundError:
            return True
        except Exception:  # chromadb raises assorted types; "not known to be gone"
            return False
        return False

    def _batch_size(self) -> int:
        self._check_open()
        if self._max_batch is None:
            with _translated_errors("read the maximum batch size"):
                self._max_batch = max(1, int(self._client.get_max_batch_size()))
        return self._max_batch

    # -- VectorIndex --------------------------------------------------------------------------

    def upsert(self, collection: str, ids: Sequence[str], vectors: Vector) -> None:
        """Insert or replace vectors, in chunks below Chroma's maximum batch size.

        Args:
            collection: The logical collection; its Chroma collection is created on first use.
            ids: One id per row of ``vectors``. An id repeated in the batch keeps its last row.
            vectors: Float array of shape (len(ids), dim); rows are normalised to unit length.

        Raises:
            ValidationError: If the shape is wrong, a value is not finite, or ``dim`` differs
                from the vectors already in the collection.
            StorageError: If Chroma fails to write.
        """
        if len(ids) == 0:
            return
        unique_ids, batch = prepare_batch(ids, vectors)
        step = self._batch_size()

        def write(handle: Collection) -> None:
            for start in range(0, len(unique_ids), step):
                handle.upsert(
                    ids=unique_ids[start : start + step], embeddings=batch[start : start + step]
                )

        self._run(collection, write, create=True, what=f"upsert into {collection!r}")

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove vectors; unknown ids and unknown collections are ignored."""
        unique_ids = list(dict.fromkeys(ids))
        if not unique_ids:
            return
        step = self._batch_size()

        def remove(handle: Collection) -> None:
            for start in range(0, len(unique_ids), step):
                handle.delete(ids=unique_ids[start : start + step])

        self._run(collection, remove, create=False, what=f"delete from {collection!r}")

    def query(self, collection: str, vector: Vector, k: int) -> list[tuple[str, float]]:
        """Return up to ``k`` nearest ids with their cosine similarity, best first.

        Args:
            collection: The logical collection to search.
            vector: The query, shape (dim,) or (1, dim).
            k: How many results at most; a larger ``k`` than the collection holds is fine.

        Returns:
            ``(id, similarity)`` pairs by decreasing similarity; ``[]`` for an unknown or empty
            collection or a ``k`` below 1.

        Raises:
            ValidationError: If the vector's shape or width does not fit the collection.
        """
        query = prepare_query(vector)
        if k <= 0:
            return []

        def search(handle: Collection) -> list[tuple[str, float]]:
            result = handle.query(
                query_embeddings=query.reshape(1, -1), n_results=k, include=["distances"]
            )
            found = result["ids"][0] if result["ids"] else []
            distances = result["distances"][0] if result["distances"] else []
            # float32 rounding can put a self-match a hair past distance 0; keep true cosines.
            scores = np.clip(1.0 - np.asarray(distances, dtype=np.float64), -1.0, 1.0)
            return [(item, float(score)) for item, score in zip(found, scores, strict=True)]

        hits = self._run(collection, search, create=False, what=f"query {collection!r}")
        return hits if hits is not None else []

    def query_many(self, collection: str, vectors: Vector, k: int) -> list[list[tuple[str, float]]]:
        """:meth:`query` for each row of ``vectors`` (shape (n, dim)), in one Chroma call."""
        queries = np.stack([prepare_query(row) for row in np.asarray(vectors, dtype=np.float32)])
        if k <= 0 or len(queries) == 0:
            return [[] for _ in queries]

        def search(handle: Collection) -> list[list[tuple[str, float]]]:
            result = handle.query(query_embeddings=queries, n_results=k, include=["distances"])
            out = []
            for found, distances in zip(
                result["ids"] or [], result["distances"] or [], strict=True
            ):
                scores = np.clip(1.0 - np.asarray(distances, dtype=np.float64), -1.0, 1.0)
                out.append([(i, float(s)) for i, s in zip(found, scores, strict=True)])
            return out

        hits = self._run(collection, search, create=False, what=f"query {collection!r}")
        return hits if hits is not None else [[] for _ in queries]

    def ids(self, collection: str) -> set[str]:
        """Every id in ``collection``, read page by page (empty for an unknown collection)."""

        def list_ids(handle: Collection) -> set[str]:
            found: set[str] = set()
            offset = 0
            while True:
                page = handle.get(include=[], limit=_ID_PAGE, offset=offset)["ids"]
                found.update(page)
                if len(page) < _ID_PAGE:
                    return found
                offset += len(page)

        found = self._run(collection, list_ids, create=False, what=f"list ids of {collection!r}")
        return found if found is not None else set()

    def count(self, collection: str) -> int:
        """How many vectors ``collection`` holds (0 for an unknown collection)."""
        counted = self._run(
            collection, lambda handle: handle.count(), create=False, what=f"count {collection!r}"
        )
        return counted if counted is not None else 0

    def drop(self, collection: str) -> None:
        """Delete a whole collection and its files; unknown collections are ignored."""
        from chromadb.errors import NotFoundError

        with self._lock:
            self._check_open()
            self._handles.pop(collection, None)
            try:
                with _translated_errors(f"drop {collection!r}"):
                    self._client.delete_collection(chroma_collection_name(collection))
            except NotFoundError:
                pass

    def close(self) -> None:
        """Forget cached handles and close the client if this index created it.

        Closing twice is harmless; any other call afterwards raises :class:`StorageError`.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._handles.clear()
            if self._owns_client:
                # ClientAPI does not declare close(); the concrete Client of chromadb >= 1.x has
                # it and releases the folder's SQLite and HNSW files.
                close: Any = getattr(self._client, "close", None)
                if callable(close):
                    close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._handles)} open collections"
        return f"ChromaVectorIndex(persistent={self.persistent}, {state})"


def _evict_failed_system(identifier: str) -> None:
    """Forget the Chroma system of a folder whose client failed to start.

    Chroma caches one system per folder before starting it; when the start fails (a damaged
    chroma.sqlite3) the broken system stays cached and every later client of that folder, even
    after the folder is repaired or rebuilt, fails with an unrelated AttributeError. Only an
    entry no live client holds is evicted. The table is private: absent, nothing is done.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        systems: dict[str, Any] = SharedSystemClient._identifier_to_system
        refcounts: dict[str, int] = SharedSystemClient._identifier_to_refcount
    except (ImportError, AttributeError):  # pragma: no cover - another chromadb layout
        return
    if refcounts.get(identifier, 0) <= 0:
        systems.pop(identifier, None)


@contextmanager
def _translated_errors(what: str) -> Iterator[None]:
    """Re-raise Chroma's errors as sage_memory's, except NotFoundError which callers handle."""
    from chromadb.errors import ChromaError, InvalidArgumentError, NotFoundError

    try:
        yield
    except NotFoundError:
        raise
    except InvalidArgumentError as exc:
        raise ValidationError(f"Chroma rejected the request to {what}: {exc}") from exc
    except ChromaError as exc:
        raise StorageError(f"Chroma failed to {what}: {exc}") from exc
