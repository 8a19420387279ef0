"""Small SVG line plots (sparklines) for metrics over evolution runs."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def sparkline(title: str, values: Sequence[float], *, width: int = 220, height: int = 60) -> str:
    """A titled line plot of ``values`` in run order; one point is a dot, none says so."""
    pad, top = 6, 16
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sparkline" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" data-points="{len(values)}">',
        f'<text x="{pad}" y="12" font-size="11" fill="#333">{escape(title)}</text>',
    ]
    if not values:
        parts.append(f'<text x="{pad}" y="{height - 10}" font-size="10" fill="#888">no runs yet')
        parts.append("</text></svg>")
        return "".join(parts)
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    n = len(values)
    inner_w, inner_h = width - 2 * pad - 40, height - top - pad
    pts = [
        (pad + (i / (n - 1) if n > 1 else 0.5) * inner_w, top + (1 - (v - lo) / span) * inner_h)
        for i, v in enumerate(values)
    ]
    if n > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        parts.append(f'<polyline points="{path}" fill="none" stroke="#0072B2" stroke-width="1.5"/>')
    for x, y in pts:
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="#0072B2"/>')
    last = values[-1]
    parts.append(
        f'<text x="{width - 38}" y="{pts[-1][1] + 4:.1f}" font-size="10" fill="#333">'
        f"{last:.3g}</text></svg>"
    )
    return "".join(parts)
