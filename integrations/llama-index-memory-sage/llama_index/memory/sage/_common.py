"""Helpers shared by the LlamaIndex adapters: engine unwrapping, scopes, message text, formats."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole

# The engine helpers live in the core (sage_memory.adapters), shared with the other adapters.
from sage_memory import MemoryHit, Subgraph, async_engine_of, engine_of, scope_kwargs

#: Roles whose messages are remembered: tool traffic and system prompts are not the user's.
SAVED_ROLES = {MessageRole.USER: "user", MessageRole.ASSISTANT: "assistant"}


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


__all__ = ["async_engine_of", "engine_of", "scope_kwargs"]  # re-exported from the core
