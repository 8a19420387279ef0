"""Packing retrieved items into a prompt context that fits a token budget and cites its sources.

Sections, in priority order: core facts (current graph facts), next steps (plans, diagnosis
chains), related background (source memories), history (facts that no longer hold). Each line
cites memory ids (8-character prefixes); facts carry their validity dates. Lines are added in
rank order until the budget is spent; a long memory is cut rather than dropped when there is
room for a useful part of it.

Tokens are counted by the :data:`~sage_memory.embed.tokens.TokenCounter` the engine passes in.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sage_memory.embed.tokens import TokenCounter, count_all
from sage_memory.types import EdgeHit, MemoryHit

CORE = "Core facts"
NEXT = "Next steps"
BACKGROUND = "Related background"
HISTORY = "History"


def day(d: datetime | None) -> str:
    return d.date().isoformat() if d else "?"


def cite(ids: Sequence[str], most: int = 3) -> str:
    """Memory ids as short prefixes: 'mem 1a2b3c4d,5e6f7a8b'."""
    shown = ",".join(i[:8] for i in list(dict.fromkeys(ids))[-most:])
    return f"mem {shown}" if shown else ""


def validity(hit: EdgeHit) -> str:
    e = hit.edge
    if e.attributes.get("competing"):  # kept beside a more confident fact, awaiting review
        return f"competing claim since {day(e.valid_from)}"
    if e.valid_to is not None:
        return f"{day(e.valid_from)} to {day(e.valid_to)}"
    if e.expired_at is not None:
        return f"{day(e.valid_from)} to ? (superseded)"
    return f"since {day(e.valid_from)}" if e.valid_from else ""


def fact_line(hit: EdgeHit) -> str:
    """One fact: '- Alice LIVES_IN Berlin (Alice moved to Berlin) [since 2026-06-01; conf 0.85;
    mem 1a2b3c4d]'."""
    e = hit.edge
    neg = "NOT " if e.attributes.get("negated") else ""
    core = f"{hit.source_name} {neg}{e.relation} {hit.target_name}"
    fact = f" ({e.fact})" if e.fact and len(e.fact) <= 200 and e.fact != core else ""
    conf = f"conf {e.confidence:.2f}" if e.confidence < 1.0 else ""
    bits = [b for b in (validity(hit), conf, cite(e.memory_ids)) if b]
    return f"- {core}{fact} [{'; '.join(bits)}]" if bits else f"- {core}{fact}"


def memory_line(hit: MemoryHit) -> str:
    """'- [2023-05-08] Caroline: ... [mem 1a2b3c4d]'."""
    m = hit.memory
    role = f"{m.role}: " if m.role and not m.text.startswith(f"{m.role}:") else ""
    return f"- [{day(m.timestamp)}] {role}{m.text} [mem {m.id[:8]}]"


def pack(
    sections: Sequence[tuple[str, Sequence[str]]],
    budget: int,
    count: TokenCounter,
) -> str:
    """Join titled sections of lines, in order, while they fit in ``budget`` tokens.

    A section header is only written with at least one of its lines. A line that does not fit
    is skipped (a shorter later one may still fit); a long one is cut to the room left.
    """
    flat = [line for _, lines in sections for line in lines]
    known = dict(zip(flat, count_all(count, flat), strict=True))
    out: list[str] = []
    used = 0
    for title, lines in sections:
        header = f"## {title}"
        taken: list[str] = []
        cost = count(header) + 1
        for line in lines:
            if used + cost >= budget:
                break
            c = known[line] + 1
            if used + cost + c > budget:
                room = budget - used - cost - 1
                if room < 24 or len(line) < 120:
                    continue
                line = _cut(line, room, count)
                c = count(line) + 1
                if used + cost + c > budget:
                    continue
            taken.append(line)
            cost += c
        if taken:
            out.append(header)
            out.extend(taken)
            used += cost
    return "\n".join(out)


def _cut(line: str, tokens: int, count: TokenCounter) -> str:
    """The longest prefix of ``line`` that fits in ``tokens`` with an ellipsis, keeping a
    trailing citation ("[mem ...]") so a cut line still names its source."""
    mark = line.rfind(" [")
    suffix = line[mark:] if mark > 0 and line.endswith("]") else ""
    body = line[: len(line) - len(suffix)]
    lo, hi = 0, len(body)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(body[:mid] + " …" + suffix) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return body[:lo].rstrip() + " …" + suffix
