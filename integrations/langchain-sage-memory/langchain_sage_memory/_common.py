"""Small helpers shared by the adapters: engine unwrapping, scopes, message text, hit shapes.

Nothing here decides what to remember or how to rank: that is the engine's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The engine helpers live in the core (sage_memory.adapters), shared with the other adapters.
from sage_memory import MemoryHit, Subgraph, async_engine_of, engine_of, scope_kwargs


def read_scope(
    user_id: str | None, agent_id: str | None, run_id: str | None, *, recall_across_runs: bool
) -> dict[str, Any]:
    """Scope for reads: a run tags writes, but recall spans the user's runs unless told not to."""
    return scope_kwargs(user_id, agent_id, None if recall_across_runs else run_id)


def message_text(content: Any) -> str:
    """Plain text of a message's content (a string or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "\n".join(p for p in parts if p)
    return "" if content is None else str(content)


def hit_record(hit: MemoryHit) -> dict[str, Any]:
    """A JSON-friendly view of a memory hit (tool artifacts, document metadata)."""
    m = hit.memory
    return {
        "id": m.id,
        "text": m.text,
        "score": hit.score,
        "channels": list(hit.channels),
        "timestamp": m.timestamp.isoformat(),
        "kind": m.kind,
        "role": m.role,
        "metadata": dict(m.metadata),
    }


def subgraph_record(graph: Subgraph) -> dict[str, Any]:
    """A JSON-friendly view of a subgraph: nodes and edges with names resolved."""
    names = {n.id: n.name for n in graph.nodes}
    return {
        "start": list(graph.start),
        "nodes": [
            {"id": n.id, "name": n.name, "label": n.label, "summary": n.summary}
            for n in graph.nodes
        ],
        "edges": [
            {
                "id": e.id,
                "source": names.get(e.source_id, e.source_id),
                "relation": e.relation,
                "target": names.get(e.target_id, e.target_id),
                "fact": e.fact,
                "valid_from": e.valid_from.isoformat() if e.valid_from else None,
                "valid_to": e.valid_to.isoformat() if e.valid_to else None,
            }
            for e in graph.edges
        ],
    }


def subgraph_text(graph: Subgraph) -> str:
    """The subgraph as one fact per line, for a model to read."""
    record = subgraph_record(graph)
    start = next((n["name"] for n in record["nodes"] if n["id"] in graph.start), "?")
    lines = [f"Around {start} ({len(record['nodes'])} nodes, {len(record['edges'])} edges):"]
    for e in record["edges"]:
        fact = f" ({e['fact']})" if e["fact"] else ""
        lines.append(f"- {e['source']} {e['relation']} {e['target']}{fact}")
    if not record["edges"]:
        lines.append("- no relations recorded yet")
    return "\n".join(lines)


__all__ = ["async_engine_of", "engine_of", "scope_kwargs"]  # re-exported from the core
