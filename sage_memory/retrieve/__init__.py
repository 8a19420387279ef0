"""Retrieval: seeds (dense, lexical, entity), graph expansion, fusion, context packing."""

from sage_memory.retrieve.retriever import Retriever

__all__ = ["Retriever"]
