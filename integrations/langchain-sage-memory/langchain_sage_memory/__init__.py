"""LangChain and LangGraph adapters for sage_memory (graph-structured long-term memory).

==============================  =====================================================
name                            plugs into
==============================  =====================================================
``SageMemoryMiddleware``        ``create_agent(middleware=[...])``: recall + write-back
``SageStore``                   ``create_agent(store=...)``, LangGraph, langmem
``create_memory_tools``         the four tools below, bound to one scope
``QueryRelatedMemoriesTool``    ``query_related_memories``
``ExploreGraphTool``            ``explore_graph``
``SaveMemoryTool``              ``save_memory``
``ForgetMemoryTool``            ``forget_memory``
``SageMemoryRetriever``         any retriever slot (RAG chains, retriever tools)
``SageConversationMemory``      legacy ``ConversationChain`` / ``LLMChain`` (classic)
``SageChatModel``               your LangChain chat model as sage_memory's LLM
``SageEmbedder``                your LangChain embeddings as sage_memory's embedder
==============================  =====================================================

Names load lazily, so ``SageConversationMemory`` needs langchain-classic only when used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "SageConversationMemory": "langchain_sage_memory.memory",
    "QueryRelatedMemoriesTool": "langchain_sage_memory.tools",
    "ExploreGraphTool": "langchain_sage_memory.tools",
    "SaveMemoryTool": "langchain_sage_memory.tools",
    "ForgetMemoryTool": "langchain_sage_memory.tools",
    "create_memory_tools": "langchain_sage_memory.tools",
    "SageMemoryRetriever": "langchain_sage_memory.retrievers",
    "SageStore": "langchain_sage_memory.store",
    "SageMemoryMiddleware": "langchain_sage_memory.middleware",
    "SageChatModel": "langchain_sage_memory.models",
    "SageEmbedder": "langchain_sage_memory.models",
}

__all__ = [
    "ExploreGraphTool",
    "ForgetMemoryTool",
    "QueryRelatedMemoriesTool",
    "SageChatModel",
    "SageConversationMemory",
    "SageEmbedder",
    "SageMemoryMiddleware",
    "SageMemoryRetriever",
    "SageStore",
    "SaveMemoryTool",
    "create_memory_tools",
]

if TYPE_CHECKING:
    from langchain_sage_memory.memory import SageConversationMemory
    from langchain_sage_memory.middleware import SageMemoryMiddleware
    from langchain_sage_memory.models import SageChatModel, SageEmbedder
    from langchain_sage_memory.retrievers import SageMemoryRetriever
    from langchain_sage_memory.store import SageStore
    from langchain_sage_memory.tools import (
        ExploreGraphTool,
        ForgetMemoryTool,
        QueryRelatedMemoriesTool,
        SaveMemoryTool,
        create_memory_tools,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_sage_memory' has no attribute {name!r}")
    try:
        value = getattr(import_module(module), name)
    except ImportError as exc:
        if name == "SageConversationMemory":
            raise ImportError(
                "SageConversationMemory needs langchain-classic: "
                "pip install 'langchain-sage-memory[classic]'"
            ) from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
