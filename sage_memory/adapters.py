"""Framework-free helpers that every adapter under integrations/ shares.

Adapters (LangChain, LlamaIndex, MCP) accept either engine flavour, or a PostgreSQL URL for
server mode, and pass scopes through;
these are the few lines they would otherwise each write again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from sage_memory.embed.base import unit_rows
from sage_memory.engine.aio import AsyncSageMemory
from sage_memory.engine.core import SageMemory
from sage_memory.types import Vector


def engine_of(mem: object) -> SageMemory:
    """The synchronous engine behind ``mem``: a SageMemory, an AsyncSageMemory, or a
    ``postgresql://...[?schema=NAME]`` URL (server mode; one engine per URL per process,
    configured from the ``SAGE_*`` environment like the CLI and the MCP server)."""
    if isinstance(mem, SageMemory):
        return mem
    if isinstance(mem, AsyncSageMemory):
        return mem.sync
    if isinstance(mem, str) and mem.startswith(("postgresql://", "postgres://")):
        return _server_engine(mem)
    raise TypeError(
        f"expected a SageMemory, an AsyncSageMemory or a postgresql:// URL, got "
        f"{type(mem).__name__}; create one with sage_memory.SageMemory(path=...)"
    )


_BY_URL: dict[str, SageMemory] = {}
_BY_URL_LOCK = threading.Lock()


def _server_engine(url: str) -> SageMemory:
    """The process's engine for a server-mode URL, opened on first use: adapters built from
    the same URL share it (and its connection pool) for the life of the process."""
    from sage_memory.config import SageConfig

    with _BY_URL_LOCK:
        mem = _BY_URL.get(url)
        if mem is None:
            mem = _BY_URL[url] = SageMemory(url=url, config=SageConfig.from_env())
        return mem


def async_engine_of(mem: object) -> AsyncSageMemory:
    """An async view of ``mem`` that runs each call in a worker thread."""
    if isinstance(mem, AsyncSageMemory):
        return mem
    return AsyncSageMemory.wrap(engine_of(mem))


def scope_kwargs(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, Any]:
    """The scope keyword arguments the engine takes, without the unset ones."""
    out = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {k: v for k, v in out.items() if v is not None}


class BridgedEmbedder:
    """Base of the adapters' Embedders that wrap a framework's embedding model.

    Subclasses implement :meth:`_documents` and :meth:`_query` (lists of floats from the
    framework); this class normalises them and learns the width from one probe embedding on
    first use unless ``dim`` is given. Keep ``name`` stable: a memory folder refuses to reopen
    with an embedder of another name, since vectors of two models cannot be mixed.
    """

    def __init__(self, name: str, dim: int | None = None) -> None:
        self._name = name
        self._dim = dim

    def _documents(self, texts: list[str]) -> Sequence[Sequence[float]]:
        raise NotImplementedError

    def _query(self, text: str) -> Sequence[float]:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_query("dimension probe").shape[0])
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(self._documents(list(texts)))

    def embed_query(self, text: str) -> Vector:
        row: Vector = unit_rows([self._query(text)])[0]
        return row
