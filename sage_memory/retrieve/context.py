"""Packing retrieved items into a prompt context that fits a token budget and cites its sources.

Sections, in priority order: current facts (graph edges), next steps (structure), memories
(source episodes), history (expired facts). Each line cites memory ids; facts carry their
validity dates. Lines are added in rank order until the budget is spent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sage_memory.types import EdgeHit, MemoryHit

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters per token) when no tokenizer is at hand."""
    return max(1, (len(text) + 3) // 4)


def default_counter() -> TokenCounter:
    """The MiniLM WordPiece tokenizer when its weights are installed (offline), else the estimate."""
    try:
        from sage_memory.embed.minilm import default_embedder

        emb = default_embedder()
        emb.count_tokens("warm up")
        return emb.count_tokens
    except Exception:  # missing weights: an estimate is better than failing a search
        return approx_tokens


def _date(d: datetime | None) -> str:
    return d.date().isoformat() if d else "?"


def _cite(ids: Sequence[str]) -> str:
    return ",".join(i[:8] for i in ids[:3])


def fact_line(hit: EdgeHit) -> str:
    e = hit.edge
    when = f"since {_date(e.valid_from)}" if e.valid_from else ""
    if e.valid_to:
        when = f"{_date(e.valid_from)} to {_date(e.valid_to)}"
    neg = "NOT " if e.attributes.get("negated") else ""
    core = f"{hit.source_name} {neg}{e.relation} {hit.target_name}"
    fact = f" ({e.fact})" if e.fact and len(e.fact) < 200 else ""
    bits = [b for b in (when, f"mem {_cite(e.memory_ids)}" if e.memory_ids else "") if b]
    return f"- {core}{fact} [{'; '.join(bits)}]" if bits else f"- {core}{fact}"


def memory_line(hit: MemoryHit) -> str:
    m = hit.memory
    role = f"{m.role}: " if m.role else ""
    return f"- [{_date(m.timestamp)}] {role}{m.text} [mem {m.id[:8]}]"


def pack(
    sections: Sequence[tuple[str, Sequence[str]]],
    budget: int,
    count: TokenCounter,
) -> str:
    """Join titled sections of lines, in order, until ``budget`` tokens are used."""
    out: list[str] = []
    used = 0
    for title, lines in sections:
        if not lines:
            continue
        header = f"## {title}"
        cost = count(header) + 1
        if used + cost >= budget:
            break
        taken: list[str] = []
        for line in lines:
            c = count(line) + 1
            if used + cost + c > budget:
                if len(line) > 80 and used + cost + 20 < budget:
                    # A long memory is cut rather than dropped when most of the budget is left.
                    room = budget - used - cost - 2
                    line = _cut(line, room, count)
                    c = count(line) + 1
                    if used + cost + c > budget:
                        continue
                else:
                    continue
            taken.append(line)
            cost += c
        if taken:
            out.append(header)
            out.extend(taken)
            used += cost
    return "\n".join(out)


def _cut(line: str, tokens: int, count: TokenCounter) -> str:
    lo, hi = 0, len(line)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(line[:mid] + " …") <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return line[:lo] + " …"
