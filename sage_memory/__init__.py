"""sage_memory: graph-structured, time-aware long-term memory for LLM agents.

    >>> from sage_memory import SageMemory
    >>> mem = SageMemory()                      # in memory; SageMemory(path="./memory") persists
    >>> _ = mem.add("I moved to Berlin last week", user_id="alice")
    >>> mem.search("where does alice live?", user_id="alice").memories[0].text
    'I moved to Berlin last week'

Importing this package is cheap: heavy parts (the embedding model, Chroma, litellm) load on
first use. Public names are resolved lazily through ``__getattr__``.
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
    "AddResult": "sage_memory.types",
    "Change": "sage_memory.types",
    "Subgraph": "sage_memory.types",
    "Suggestion": "sage_memory.types",
    "EvolutionReport": "sage_memory.evolve.runner",
    "SageMemoryError": "sage_memory.errors",
    "ConfigError": "sage_memory.errors",
    "ValidationError": "sage_memory.errors",
    "NotFoundError": "sage_memory.errors",
    "StorageError": "sage_memory.errors",
    "DependencyError": "sage_memory.errors",
    "ExtractionError": "sage_memory.errors",
}

__all__ = [
    "AddResult",
    "AsyncSageMemory",
    "Change",
    "ConfigError",
    "DependencyError",
    "Edge",
    "EdgeHit",
    "EvolutionReport",
    "EvolveConfig",
    "ExtractConfig",
    "ExtractionError",
    "Memory",
    "MemoryHit",
    "Node",
    "NodeHit",
    "NotFoundError",
    "RetrievalResult",
    "RetrieveConfig",
    "SageConfig",
    "SageMemory",
    "SageMemoryError",
    "Scope",
    "StorageError",
    "Subgraph",
    "Suggestion",
    "ValidationError",
]

if TYPE_CHECKING:
    from sage_memory.config import EvolveConfig, ExtractConfig, RetrieveConfig, SageConfig
    from sage_memory.engine.aio import AsyncSageMemory
    from sage_memory.engine.core import SageMemory
    from sage_memory.errors import (
        ConfigError,
        DependencyError,
        ExtractionError,
        NotFoundError,
        SageMemoryError,
        StorageError,
        ValidationError,
    )
    from sage_memory.evolve.runner import EvolutionReport
    from sage_memory.types import (
        AddResult,
        Change,
        Edge,
        EdgeHit,
        Memory,
        MemoryHit,
        Node,
        NodeHit,
        RetrievalResult,
        Scope,
        Subgraph,
        Suggestion,
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
