"""The VectorIndex port: nearest-neighbour search over named collections of unit vectors.

The index is derived data: SQLite holds every vector, and the engine rebuilds or reconciles
the index from it. Collections are named by the engine (one per scope partition and entity
kind, so a query never filters across other users' vectors); a backend maps those names to
whatever its storage accepts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from sage_memory.types import Vector


@runtime_checkable
class VectorIndex(Protocol):
    """Batch-first vector search. Vectors are L2-normalised; scores are cosine similarities."""

    #: True when the index keeps its data on disk between processes.
    persistent: bool

    def upsert(self, collection: str, ids: Sequence[str], vectors: Vector) -> None:
        """Insert or replace vectors (shape (len(ids), dim))."""
        ...

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove vectors; unknown ids are ignored."""
        ...

    def query(self, collection: str, vector: Vector, k: int) -> list[tuple[str, float]]:
        """The k nearest ids with cosine similarity, best first; [] for an unknown collection."""
        ...

    def ids(self, collection: str) -> set[str]:
        """Every id in a collection (used to reconcile with the source of truth)."""
        ...

    def count(self, collection: str) -> int: ...

    def drop(self, collection: str) -> None:
        """Delete a whole collection; unknown collections are ignored."""
        ...

    def close(self) -> None: ...


def query_many(
    index: VectorIndex, collection: str, vectors: Vector, k: int
) -> list[list[tuple[str, float]]]:
    """The k nearest ids of each row of ``vectors``: one call when the backend batches.

    A backend may offer ``query_many(collection, vectors, k)`` (Chroma and numpy do: one
    round trip or one matrix product for a whole add_many chunk); any other gets one
    :meth:`VectorIndex.query` per row.
    """
    batched = getattr(index, "query_many", None)
    if batched is not None:
        found: list[list[tuple[str, float]]] = batched(collection, vectors, k)
        return found
    return [index.query(collection, row, k) for row in vectors]


def collection_name(scope_key: str, entity: str) -> str:
    """The logical collection of one partition's memories or nodes (backends map it further).

    The scope key is hashed, so the index never holds user or agent ids: after
    ``delete_all(user_id=...)`` drops a partition's collections, no trace of the id is left in
    the index's files (Chroma keeps dropped names in free pages of its SQLite file).
    """
    digest = hashlib.blake2b(scope_key.encode("utf-8"), digest_size=16).hexdigest()
    return f"{entity}|{digest}"
