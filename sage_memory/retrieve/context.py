"""Packing retrieved items into a prompt context that fits a token budget and cites its sources.

Sections, in priority order: core facts (current graph facts), next steps (plans, diagnosis
chains), related background (source memories), history (facts that no longer hold). Each line
cites memory ids (8-character prefixes); facts carry their validity dates. Lines are added in
rank order until the budget is spent; a long memory is cut rather than dropped when there is
room for a useful part of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sage_memory.types import EdgeHit, MemoryHit

TokenCounter = Callable[[str], int]

CORE = "Core facts"
NEXT = "Next steps"
BACKGROUND = "Related background"
HISTORY = "History"


def approx_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters per token) when no tokenizer is at hand."""
    return max(1, (len(text) + 3) // 4)


class WordPieceCounter:
    """Counts tokens with the MiniLM WordPiece tokenizer (offline), one text or a batch."""

    #: Lines remembered; the same memory lines come back query after query.
    CACHE_SIZE = 20_000

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer
        self._known: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        n = self._known.get(text)
        if n is None:
            n = len(self._tok.encode(text, add_special_tokens=False).ids)
            self._remember(text, n)
        return n

    def _remember(self, text: str, n: int) -> None:
        if len(self._known) >= self.CACHE_SIZE:
            self._known.clear()  # crude, but bounded and rarely hit
        self._known[text] = n

    def many(self, texts: Sequence[str]) -> list[int]:
        """Counts of many texts; unseen ones go to the tokenizer in one call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._known))
        if len(todo) > 8:
            for text, enc in zip(
                todo, self._tok.encode_batch(todo, add_special_tokens=False), strict=True
            ):
                self._remember(text, len(enc.ids))
        return [self(t) for t in texts]


def default_counter() -> TokenCounter:
    """The MiniLM WordPiece tokenizer when its files are installed, else an estimate."""
    try:
        from tokenizers import Tokenizer

        from sage_memory.embed.minilm import model_dir

        tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        return WordPieceCounter(tok)
    except Exception:  # missing weights: an estimate is better than failing a search
        return approx_tokens


def count_all(count: TokenCounter, texts: Sequence[str]) -> list[int]:
    """Token counts of ``texts``, batched when the counter can batch."""
    many = getattr(count, "many", None)
    if callable(many):
        return list(many(texts))
    return [count(t) for t in texts]


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
