"""See the memory: SVG pictures of subgraphs and a local graph explorer (``sage-memory ui``).

This package sits beside ``sage_memory.cli``, above the engine: it uses only the public
``SageMemory`` methods, and nothing in the core imports it. It needs nothing beyond the core's
dependencies (networkx for layout, the standard library's HTTP server).

    >>> from sage_memory import SageMemory
    >>> from sage_memory.ui import render_svg
    >>> mem = SageMemory(embedder="hashing")
    >>> _ = mem.add("Alice lives in Paris", user_id="alice")
    >>> render_svg(mem.explore("Alice", user_id="alice")).startswith("<svg")
    True
"""

from __future__ import annotations

from html import escape
from typing import Any

from sage_memory.ui.layout import MAX_DRAWN_NODES, GraphView, sample
from sage_memory.ui.svg import render_view

__all__ = ["GraphView", "render_svg", "subgraph_html"]


def render_svg(
    subgraph: Any,
    *,
    width: int = 900,
    height: int = 600,
    max_nodes: int = MAX_DRAWN_NODES,
    path_edge_ids: tuple[str, ...] = (),
) -> str:
    """A :class:`~sage_memory.types.Subgraph` (from ``explore`` or ``graph``) as SVG markup.

    In a notebook: ``IPython.display.SVG(render_svg(sub))``. Graphs larger than ``max_nodes``
    show their best-connected nodes.
    """
    view = GraphView.from_subgraph(subgraph, path_edge_ids=path_edge_ids)
    return render_view(sample(view, limit=max_nodes), width=width, height=height)


def subgraph_html(subgraph: Any, *, title: str = "sage_memory subgraph", **kw: Any) -> str:
    """A standalone HTML page holding :func:`render_svg` of ``subgraph`` and its facts."""
    names = {n.id: n.name for n in subgraph.nodes}
    rows = "".join(
        f"<tr><td>{escape(names.get(e.source_id, e.source_id))}</td><td>{escape(e.relation)}</td>"
        f"<td>{escape(names.get(e.target_id, e.target_id))}</td><td>{escape(e.fact)}</td>"
        f"<td>{'' if e.valid_to is None else escape(e.valid_to.date().isoformat())}</td></tr>"
        for e in subgraph.edges
    )
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title>'
        "<style>body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}</style></head><body>"
        f"<h1>{escape(title)}</h1>{render_svg(subgraph, **kw)}"
        "<table><tr><th>source</th><th>relation</th><th>target</th><th>fact</th>"
        f"<th>until</th></tr>{rows}</table></body></html>"
    )
