"""The Embedder port: text in, unit-length float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from sage_memory.types import Vector


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed width.

    ``name`` identifies the model: vectors of two embedders with different names are never
    mixed in one index (the engine checks it when a folder is reopened).
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vector:
        """Embed a batch of documents; returns an array of shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Embed one query; returns shape (dim,)."""
        ...


def unit_rows(rows: Sequence[Sequence[float]] | Vector) -> Vector:
    """Rows as a float32 matrix of unit vectors (a zero row stays zero), for any embedder."""
    arr = np.array(rows, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    arr /= norms
    return arr


def embed_fixed(embedder: Embedder, texts: Sequence[str]) -> Vector:
    """Vectors of texts that never change (prototype phrases compared with every query or name).

    An embedder that can keep them between processes (``embed_fixed``, as the MiniLM one does
    in its cache folder) is asked to; any other embeds them, once per caller.
    """
    keep = getattr(embedder, "embed_fixed", None)
    if callable(keep):
        vectors: Vector = keep(texts)
        return vectors
    return embedder.embed(texts)
