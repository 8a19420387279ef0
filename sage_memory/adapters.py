"""Framework-free helpers that every adapter under integrations/ shares.

Adapters (LangChain, LlamaIndex, MCP) accept either engine flavour and pass scopes through;
these are the few lines they would otherwise each write again.
"""

from __future__ import annotations

from typing import Any

from sage_memory.engine.aio import AsyncSageMemory
from sage_memory.engine.core import SageMemory


def engine_of(mem: object) -> SageMemory:
    """The synchronous engine behind ``mem`` (a SageMemory or an AsyncSageMemory)."""
    if isinstance(mem, SageMemory):
        return mem
    if isinstance(mem, AsyncSageMemory):
        return mem.sync
    raise TypeError(
        f"expected a SageMemory or AsyncSageMemory, got {type(mem).__name__}; "
        "create one with sage_memory.SageMemory(path=...)"
    )


def async_engine_of(mem: object) -> AsyncSageMemory:
    """An async view of ``mem`` that runs each call in a worker thread."""
    if isinstance(mem, AsyncSageMemory):
        return mem
    return AsyncSageMemory.wrap(engine_of(mem))


def scope_kwargs(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, Any]:
    """The scope keyword arguments the engine takes, without the unset ones."""
    out = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {k: v for k, v in out.items() if v is not None}
