"""A graph view as one self-contained SVG document (no script, no external reference).

Nodes are circles coloured by label, edges are lines labelled with their relation, an expired
fact is dashed, confidence sets the stroke width, and the query path is drawn in a highlight
colour. The same markup serves the browser (which adds click handlers by ``data-id``), the
command line and notebooks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from html import escape

from sage_memory.ui.layout import GraphView, ViewEdge, positions

# Tableau 10; the common labels get distinct colours, any other label a stable hashed one
_PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
_KNOWN = {
    "Project": 0, "Task": 1, "Tool": 4, "Person": 6, "Place": 3, "Value": 5,
    "Concept": 8, "Document": 7, "Summary": 9, "Entity": 9, "Resource": 2,
}  # fmt: skip
_NODE_R = 11
_PAD = 60
_LEGEND_W = 130  # a column on the right for the legend, outside the layout area


def label_colour(label: str) -> str:
    """A stable colour for a node label (a content hash, never ``hash()``, so runs agree)."""
    if label in _KNOWN:
        return _PALETTE[_KNOWN[label]]
    digest = hashlib.sha256(label.encode("utf-8")).digest()
    return _PALETTE[digest[0] % len(_PALETTE)]


def edge_width(confidence: float) -> float:
    """Stroke width from an edge's confidence: 0.8 px for nothing, 4 px for certain."""
    return round(0.8 + 3.2 * max(0.0, min(1.0, confidence)), 2)


def _a(value: object) -> str:
    return escape(str(value), quote=True)


def render_view(view: GraphView, *, width: int = 900, height: int = 600) -> str:
    """The SVG markup of ``view``, laid out with networkx (deterministic)."""
    pos = positions(view.nodes, view.edges)
    # the right padding is wider: names are written to the right of their node
    inner_w = max(1, width - 2 * _PAD - 90 - _LEGEND_W)
    inner_h = max(1, height - 2 * _PAD)
    xy = {nid: (_PAD + x * inner_w, _PAD + y * inner_h) for nid, (x, y) in pos.items()}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sage-graph" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'data-nodes="{len(view.nodes)}" data-edges="{len(view.edges)}" '
        f'data-total-nodes="{view.total_nodes}">',
        "<defs>"
        '<marker id="sage-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#777"/></marker>'
        '<marker id="sage-arrow-path" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#d62728"/></marker></defs>',
        "<style>"
        ".sage-graph{font:12px system-ui,sans-serif;background:#fff}"
        ".sage-graph .edge line{stroke:#888}"
        ".sage-graph .edge.expired line{stroke-dasharray:6 4;stroke:#aaa}"
        ".sage-graph .edge.on-path line{stroke:#d62728}"
        ".sage-graph .edge text{fill:#555;font-size:10px}"
        ".sage-graph .node circle{stroke:#333;stroke-width:1}"
        ".sage-graph .node.start circle{stroke:#000;stroke-width:3}"
        ".sage-graph .node text{fill:#111}"
        "</style>",
    ]
    parts += _edges(view.edges, xy)
    for n in view.nodes:
        if n.id not in xy:
            continue
        x, y = xy[n.id]
        cls = "node start" if n.start else "node"
        parts.append(
            f'<g class="{cls}" data-id="{_a(n.id)}" data-label="{_a(n.label)}" '
            f'transform="translate({x:.1f},{y:.1f})"><title>{_a(n.name)} ({_a(n.label)})</title>'
            f'<circle r="{_NODE_R}" fill="{label_colour(n.label)}"/>'
            f'<text x="{_NODE_R + 3}" y="4">{_a(_short(n.name))}</text></g>'
        )
    parts += _legend(view, width)
    if view.total_nodes > len(view.nodes):
        first = view.offset + 1
        last = view.offset + len(view.nodes)
        parts.append(
            f'<text class="sampled" x="8" y="{height - 8}" fill="#555">nodes {first}-{last} of '
            f"{view.total_nodes:,} (best connected first)</text>"
        )
    if not view.nodes:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no graph</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(name: str, limit: int = 28) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _edges(edges: Sequence[ViewEdge], xy: Mapping[str, tuple[float, float]]) -> list[str]:
    out: list[str] = []
    seen_pairs: dict[tuple[str, str], int] = {}
    # path edges last, so the highlight is drawn over the rest
    for e in sorted(edges, key=lambda e: e.on_path):
        if e.source not in xy or e.target not in xy:
            continue
        (x1, y1), (x2, y2) = xy[e.source], xy[e.target]
        pair = (min(e.source, e.target), max(e.source, e.target))
        nth = seen_pairs.get(pair, 0)
        seen_pairs[pair] = nth + 1
        dx, dy = x2 - x1, y2 - y1
        length = max(1.0, (dx * dx + dy * dy) ** 0.5)
        # stop at the circle's rim so the arrow head shows; offset parallel edges sideways
        ux, uy = dx / length, dy / length
        off = 7.0 * nth
        ox, oy = -uy * off, ux * off
        sx, sy = x1 + ux * _NODE_R + ox, y1 + uy * _NODE_R + oy
        tx, ty = x2 - ux * (_NODE_R + 2) + ox, y2 - uy * (_NODE_R + 2) + oy
        cls = "edge" + (" expired" if e.expired else "") + (" on-path" if e.on_path else "")
        marker = "sage-arrow-path" if e.on_path else "sage-arrow"
        width = edge_width(e.confidence) + (1.5 if e.on_path else 0.0)
        title = f"{e.relation}: {e.fact}" if e.fact else e.relation
        if e.expired:
            title += " (expired)"
        out.append(
            f'<g class="{cls}" data-id="{_a(e.id)}" data-relation="{_a(e.relation)}">'
            f"<title>{_a(title)}</title>"
            f'<line x1="{sx:.1f}" y1="{sy:.1f}" x2="{tx:.1f}" y2="{ty:.1f}" '
            f'stroke-width="{width}" marker-end="url(#{marker})"/>'
            f'<text x="{(sx + tx) / 2:.1f}" y="{(sy + ty) / 2 - 3:.1f}" '
            f'text-anchor="middle">{_a(e.relation)}</text></g>'
        )
    return out


def _legend(view: GraphView, width: int) -> list[str]:
    labels = sorted({n.label for n in view.nodes})[:10]
    out = ['<g class="legend">']
    for i, label in enumerate(labels):
        y = 14 + i * 16
        out.append(
            f'<circle cx="{width - _LEGEND_W + 10}" cy="{y}" r="5" '
            f'fill="{label_colour(label)}"/>'
            f'<text x="{width - _LEGEND_W + 20}" y="{y + 4}">{_a(label)}</text>'
        )
    out.append("</g>")
    return out
