"""Helpers shared by the LlamaIndex adapters: engine unwrapping, scopes, message text, formats."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole

from sage_memory.engine.aio import AsyncSageMemory
from sage_memory.engine.core import SageMemory
from sage_memory.types import MemoryHit, Subgraph

#: Roles whose messages are remembered: tool traffic and system prompts are not the user's.
SAVED_ROLES = {MessageRole.USER: "user", MessageRole.ASSISTANT: "assistant"}


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
    out = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {k: v for k, v in out.items() if v is not None}


def to_remember(messages: list[ChatMessage]) -> list[dict[str, str]]:
    """The user and assistant messages with text, as the engine's message dicts."""
    out = []
    for m in messages:
        role = SAVED_ROLES.get(m.role)
        text = m.content or ""
        if role is not None and text.strip():
            out.append({"role": role, "content": text})
    return out


def last_user_text(messages: list[ChatMessage] | None) -> str:
    for m in reversed(messages or []):
        if m.role == MessageRole.USER and (m.content or "").strip():
            return m.content or ""
    return ""


def hit_metadata(hit: MemoryHit) -> dict[str, Any]:
    m = hit.memory
    return {
        "memory_id": m.id,
        "timestamp": m.timestamp.isoformat(),
        "kind": m.kind,
        "role": m.role or "",
        "channels": ",".join(hit.channels),
    }


def subgraph_text(graph: Subgraph) -> str:
    """The subgraph as one fact per line, for a model to read."""
    names = {n.id: n.name for n in graph.nodes}
    start = names.get(graph.start[0], "?") if graph.start else "?"
    lines = [f"Around {start} ({len(graph.nodes)} nodes, {len(graph.edges)} edges):"]
    for e in graph.edges:
        fact = f" ({e.fact})" if e.fact else ""
        src, dst = names.get(e.source_id, "?"), names.get(e.target_id, "?")
        lines.append(f"- {src} {e.relation} {dst}{fact}")
    if not graph.edges:
        lines.append("- no relations recorded yet")
    return "\n".join(lines)
