"""Retrieval: seeds (dense, lexical, entity), graph expansion, fusion, context packing."""

from sage_memory.retrieve.hybrid import Retriever

__all__ = ["Retriever"]
