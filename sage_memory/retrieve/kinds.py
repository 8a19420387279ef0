"""Kinds that matter: knowledge and experience memories, told apart in a search.

- ``search(..., kind="experience")`` (or ``"knowledge"``) keeps only memories of that kind,
  and only the facts a memory of that kind supports;
- a question about what was done before ("how did we ... last time", "what happened when I
  tried ...") prefers experience memories: they get :data:`EXPERIENCE_BONUS` on their score.
  The cues are data (:data:`EXPERIENCE_CUES`, regular expressions over the lowered query), not
  code, so a deployment can read, test and extend them;
- the packed context marks each experience line (:func:`label`), so the model reading it knows
  a record of something done from a fact that holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sage_memory.errors import ValidationError
from sage_memory.retrieve.reader import GraphReader
from sage_memory.types import EdgeHit, MemoryHit, MemoryKind, Scope, replace

KINDS: tuple[MemoryKind, ...] = ("knowledge", "experience")

#: Query cues that ask about past doing rather than standing facts. Each is a regular
#: expression searched in the lowered query; one match is enough.
EXPERIENCE_CUES: tuple[str, ...] = (
    # "how did I / we / you ... (last time | before)"
    r"\bhow (?:did|do|have) (?:i|we|you)\b.*\b(?:last time|before|previously|earlier)\b",
    r"\bhow did (?:i|we|you)\b",
    # "what did I / we do / try / run when ..."
    r"\bwhat (?:did|have) (?:i|we|you) (?:do|done|try|tried|use|used|run|ran)\b",
    r"\bwhat happened (?:when|the last time|last time)\b",
    r"\b(?:last|previous) time (?:i|we|you)\b",
    r"\bwhat worked\b",
    r"\bwhat went wrong\b",
    r"\bwhat (?:did|have) (?:i|we) learn(?:ed|t)?\b",
)
_CUES = tuple(re.compile(c) for c in EXPERIENCE_CUES)

#: Added to an experience memory's score when the query asks about past doing.
EXPERIENCE_BONUS = 0.15
#: Provenance memories read per fact to tell its kind.
PROVENANCE_READ = 5
#: The mark an experience line carries in the packed context.
EXPERIENCE_MARK = "(experience)"


def check_kind(kind: object) -> MemoryKind | None:
    """``kind`` as a MemoryKind, or None for every kind.

    Raises:
        ValidationError: for anything else (the message lists the kinds).
    """
    if kind is None:
        return None
    if kind not in KINDS:
        raise ValidationError(f"kind={kind!r}: use 'knowledge', 'experience' or None (both)")
    return kind  # type: ignore[return-value]


def asks_experience(query: str) -> bool:
    """Whether the query asks how something was done before (see :data:`EXPERIENCE_CUES`)."""
    q = query.casefold()
    return any(c.search(q) for c in _CUES)


def prefer(hits: Sequence[MemoryHit], kind: MemoryKind | None, query: str) -> list[MemoryHit]:
    """Filter by ``kind`` when given; otherwise lift experience for a past-doing question.

    Returns the hits best first.
    """
    if kind is not None:
        return [h for h in hits if h.memory.kind == kind]
    if not asks_experience(query):
        return list(hits)
    lifted = [
        replace(
            h,
            score=round(h.score + EXPERIENCE_BONUS, 6),
            why=f"{h.why}; experience, asked how it was done",
        )
        if h.memory.kind == "experience"
        else h
        for h in hits
    ]
    return sorted(lifted, key=lambda h: -h.score)


def keep_edges(
    edges: Sequence[EdgeHit], kind: MemoryKind | None, store: GraphReader, scope: Scope
) -> list[EdgeHit]:
    """With a kind, only the facts that a memory of that kind supports (the last
    :data:`PROVENANCE_READ` memories of each fact are read); without, all of them."""
    if kind is None or not edges:
        return list(edges)
    ids = list(dict.fromkeys(m for h in edges for m in h.edge.memory_ids[-PROVENANCE_READ:]))
    of_kind = {m.id for m in store.get_memories(scope, ids) if m.kind == kind}
    return [h for h in edges if not of_kind.isdisjoint(h.edge.memory_ids[-PROVENANCE_READ:])]


def label(line: str, hit: MemoryHit) -> str:
    """A context line with the experience mark after its date (knowledge lines unchanged).

    '- [2026-05-01] text [mem ..]' -> '- [2026-05-01] (experience) text [mem ..]'.
    """
    if hit.memory.kind != "experience":
        return line
    head, sep, rest = line.partition("] ")
    return f"{head}{sep}{EXPERIENCE_MARK} {rest}" if sep else f"{EXPERIENCE_MARK} {line}"
