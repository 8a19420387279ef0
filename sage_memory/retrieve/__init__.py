"""Retrieval: seeds (dense, lexical, entity), graph expansion, fusion, context packing.

``Retriever`` resolves on first use, so importing one of this package's modules (the engine's
structure queries and focus read a few) does not import the whole search: a command-line
``add`` opens the engine without ever searching.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sage_memory.retrieve.retriever import Retriever

__all__ = ["Retriever"]


def __getattr__(name: str) -> Any:
    if name == "Retriever":
        from sage_memory.retrieve.retriever import Retriever

        return Retriever
    raise AttributeError(f"module 'sage_memory.retrieve' has no attribute {name!r}")
