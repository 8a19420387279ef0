"""Vector indexes: the :class:`VectorIndex` port and its backends.

``NumpyVectorIndex`` (exact, in memory) is always available. ``ChromaVectorIndex`` is resolved
on first access so that importing this package never imports chromadb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sage_memory.index.base import VectorIndex
from sage_memory.index.numpy import NumpyVectorIndex
from sage_memory.types import Vector

if TYPE_CHECKING:
    from sage_memory.index.chroma import ChromaVectorIndex

__all__ = ["ChromaVectorIndex", "NumpyVectorIndex", "Vector", "VectorIndex"]


def __getattr__(name: str) -> Any:
    # PEP 562 hook: only reached for names not defined above. The chroma module itself imports
    # chromadb lazily too, so this import is cheap; the package is needed once an index is made.
    if name == "ChromaVectorIndex":
        from sage_memory.index.chroma import ChromaVectorIndex

        return ChromaVectorIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
