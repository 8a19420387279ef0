"""sage_memory: graph-structured, time-aware long-term memory for LLM agents.

    >>> from sage_memory import SageMemory
    >>> mem = SageMemory()                      # in memory; SageMemory(path="./memory") persists
    >>> _ = mem.add("I moved to Berlin last week", user_id="alice")
    >>> mem.search("where does alice live?", user_id="alice").memories[0].text
    'I moved to Berlin last week'

Importing this package is cheap: heavy parts (the embedding model, Chroma, litellm) load on
first use. Public names are resolved lazily through ``__getattr__``. Besides the engine, its
config and its data types, the ports (GraphStore with the optional EvolverState and ScopeLocking,
VectorIndex, Embedder, ChatModel, Extractor) and the adapter helpers are exported here:
integrations import only from this surface.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "SageMemory": "sage_memory.engine.core",
    "AsyncSageMemory": "sage_memory.engine.aio",
    "SageConfig": "sage_memory.config",
    "ExtractConfig": "sage_memory.config",
    "RetrieveConfig": "sage_memory.config",
    "EvolveConfig": "sage_memory.config",
    "Scope": "sage_memory.types",
    "Memory": "sage_memory.types",
    "Node": "sage_memory.types",
    "Edge": "sage_memory.types",
    "MemoryHit": "sage_memory.types",
    "NodeHit": "sage_memory.types",
    "EdgeHit": "sage_memory.types",
    "RetrievalResult": "sage_memory.types",
    "RerankOutcome": "sage_memory.types",
    "AddResult": "sage_memory.types",
    "Change": "sage_memory.types",
    "Subgraph": "sage_memory.types",
    "Suggestion": "sage_memory.types",
    "EvolutionReport": "sage_memory.evolve.report",
    # the ports and the helpers adapters and third-party backends build on
    "GraphDelta": "sage_memory.types",
    "NodeSpec": "sage_memory.types",
    "EdgeSpec": "sage_memory.types",
    "Vector": "sage_memory.types",
    "GraphStore": "sage_memory.store.base",
    "EvolverState": "sage_memory.store.base",
    "ScopeLocking": "sage_memory.store.base",
    "VectorIndex": "sage_memory.index.base",
    "Embedder": "sage_memory.embed.base",
    "ChatModel": "sage_memory.llm.base",
    "ChatResponse": "sage_memory.llm.base",
    "Message": "sage_memory.llm.base",
    "Extractor": "sage_memory.extract.base",
    "ExtractionContext": "sage_memory.extract.base",
    "BridgedEmbedder": "sage_memory.adapters",
    "engine_of": "sage_memory.adapters",
    "async_engine_of": "sage_memory.adapters",
    "scope_kwargs": "sage_memory.adapters",
    "SageMemoryError": "sage_memory.errors",
    "ConfigError": "sage_memory.errors",
    "ValidationError": "sage_memory.errors",
    "NotFoundError": "sage_memory.errors",
    "StorageError": "sage_memory.errors",
    "FolderBusyError": "sage_memory.errors",
    "DependencyError": "sage_memory.errors",
    "ExtractionError": "sage_memory.errors",
}

__all__ = [
    "AddResult",
    "AsyncSageMemory",
    "BridgedEmbedder",
    "Change",
    "ChatModel",
    "ChatResponse",
    "ConfigError",
    "DependencyError",
    "Edge",
    "EdgeHit",
    "EdgeSpec",
    "Embedder",
    "EvolutionReport",
    "EvolveConfig",
    "EvolverState",
    "ExtractConfig",
    "ExtractionContext",
    "ExtractionError",
    "Extractor",
    "FolderBusyError",
    "GraphDelta",
    "GraphStore",
    "Memory",
    "MemoryHit",
    "Message",
    "Node",
    "NodeHit",
    "NodeSpec",
    "NotFoundError",
    "RerankOutcome",
    "RetrievalResult",
    "RetrieveConfig",
    "SageConfig",
    "SageMemory",
    "SageMemoryError",
    "Scope",
    "ScopeLocking",
    "StorageError",
    "Subgraph",
    "Suggestion",
    "ValidationError",
    "Vector",
    "VectorIndex",
    "async_engine_of",
    "engine_of",
    "scope_kwargs",
]

if TYPE_CHECKING:
    from sage_memory.adapters import BridgedEmbedder, async_engine_of, engine_of, scope_kwargs
    from sage_memory.config import EvolveConfig, ExtractConfig, RetrieveConfig, SageConfig
    from sage_memory.embed.base import Embedder
    from sage_memory.engine.aio import AsyncSageMemory
    from sage_memory.engine.core import SageMemory
    from sage_memory.errors import (
        ConfigError,
        DependencyError,
        ExtractionError,
        FolderBusyError,
        NotFoundError,
        SageMemoryError,
        StorageError,
        ValidationError,
    )
    from sage_memory.evolve.report import EvolutionReport
    from sage_memory.extract.base import ExtractionContext, Extractor
    from sage_memory.index.base import VectorIndex
    from sage_memory.llm.base import ChatModel, ChatResponse, Message
    from sage_memory.store.base import EvolverState, GraphStore, ScopeLocking
    from sage_memory.types import (
        AddResult,
        Change,
        Edge,
        EdgeHit,
        EdgeSpec,
        GraphDelta,
        Memory,
        MemoryHit,
        Node,
        NodeHit,
        NodeSpec,
        RerankOutcome,
        RetrievalResult,
        Scope,
        Subgraph,
        Suggestion,
        Vector,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sage_memory' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
