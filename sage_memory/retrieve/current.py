"""Current value first: a later statement of the same thing ranks above an earlier one.

A fact that changes ("Ines works from the Lyon office", later "Ines rents a flat in Ghent") leaves
several memories that answer the same question, each stating the value of its time. The graph
orders them when the extractor read the fact (an expired edge demotes its memory, see
``Weights.expired``); this works from the text alone, so it holds for phrasings no extractor
read.

Among the memories a search returns (after fusion and MMR chose them), two are *statements of
one slot* when they are near paraphrases of each other (their vectors are close), both answer
the query about as well as the best of them does, and they name the same of the query's names
(so a twin team's note is never mixed in). In each group of such statements the latest one
takes the group's best score and the others keep their order one place lower. The set of
memories returned does not change, only their order inside a group.

The time that counts is the memory's own timestamp (when it was said), never the order it was
added. A question about the past ("used to", "before", "originally", a past tense without a
date) keeps the fused order; a question with a reference time (``as_of``, or a window it names
such as "in April 2026") puts first the latest statement made by then, and the statements made
after it last.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from sage_memory.retrieve.query import QueryPlan
from sage_memory.types import Memory, Vector

#: Chosen memories (best first) among which statements of one slot are looked for.
WINDOW = 10
#: Cosine two memories need to count as statements of one thing (MiniLM; a paraphrase of the
#: same sentence scores far above this, two notes of one team about different things below).
PARAPHRASE = 0.45
#: Share of the best candidate's query similarity a statement needs to take part.
RELEVANT_SHARE = 0.6
#: Query cues of a historical question beyond the query reader's past tense ("did", "was",
#: ...). A bare "first" is not one: "the first release's size" may ask for a current value.
_HISTORICAL = re.compile(
    r"\b(originally|initially|used to|before|previous(?:ly)?|former(?:ly)?|earlier"
    r"|at first|in the past|history|over time|in order|ever)\b"
)


def historical(plan: QueryPlan) -> bool:
    """Whether the query asks about the past without naming when (then no reordering)."""
    if plan.window is not None:
        return False
    return plan.past or bool(_HISTORICAL.search(plan.text.casefold()))


def reference_time(plan: QueryPlan, as_of: datetime | None, now: datetime) -> datetime | None:
    """The moment whose value the query asks for: ``as_of``, else the end of a window the
    query names (not after ``now``); None for "now", when the latest statement counts
    whatever its stamp."""
    if as_of is not None:
        return as_of
    if plan.window is not None:
        # A month without a year is its latest occurrence not after now (as for facts).
        return min(plan.window.end, now)
    return None


def current_first(
    scores: Mapping[str, float],
    memories: Mapping[str, Memory],
    vectors: Mapping[str, Vector],
    qvec: Vector,
    plan: QueryPlan,
    at: datetime | None,
) -> dict[str, float]:
    """``scores`` with each slot's scores handed out again, the latest statement first.

    Args:
        scores: candidate memory id -> fused score.
        memories: the candidates' memories (timestamps and text).
        vectors: the candidates' vectors (a memory without one takes no part).
        qvec: the query's vector.
        plan: the read query (names; the caller checks :func:`historical`).
        at: the reference time (:func:`reference_time`; None: the latest statement first).
    """
    top = [i for i in sorted(scores, key=lambda i: (-scores[i], i)) if i in vectors][:WINDOW]
    if len(top) < 2:
        return dict(scores)
    mat = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in top])
    to_query = mat @ np.asarray(qvec, dtype=np.float32)
    floor = RELEVANT_SHARE * float(to_query.max())
    names = [_named(memories[i].text, plan.names) for i in top]

    def same_subject(a: int, b: int) -> bool:
        # Statements naming the query's names must share one (a twin team's note names its
        # own team, not the asked one); two that name none of them may be one slot.
        return not (names[a] or names[b]) or bool(names[a] & names[b])

    sims = mat @ mat.T
    group = list(range(len(top)))  # union-find parents

    def root(r: int) -> int:
        while group[r] != r:
            group[r] = group[group[r]]
            r = group[r]
        return r

    for a in range(len(top)):
        if to_query[a] < floor:
            continue
        for b in range(a + 1, len(top)):
            if to_query[b] >= floor and sims[a, b] >= PARAPHRASE and same_subject(a, b):
                group[root(b)] = root(a)
    members: dict[int, list[int]] = {}
    for r in range(len(top)):
        members.setdefault(root(r), []).append(r)
    out = dict(scores)
    for rows in members.values():
        if len(rows) < 2:
            continue
        ids = [top[r] for r in rows]  # best first
        lead = _by_time(ids, memories, at)[0]
        if _numbers(plan.text) & (_numbers(memories[ids[0]].text) - _numbers(memories[lead].text)):
            continue  # the query names a number of the best statement: it asks for that one
        # The statement of the asked time takes the group's best score; the others keep their
        # order one step lower, so an earlier statement (evidence of the change too) is
        # displaced by one place, never sent to the group's end.
        order = [lead, *(i for i in ids if i != lead)]
        held = sorted((scores[i] for i in ids), reverse=True)
        for i, s in zip(order, held, strict=True):
            out[i] = s
    return out


def _by_time(ids: Sequence[str], memories: Mapping[str, Memory], at: datetime | None) -> list[str]:
    """Statements made by ``at``, latest first, then those made after it, earliest first."""

    def made_by(i: str) -> bool:
        return at is None or memories[i].timestamp <= at

    made = sorted((i for i in ids if made_by(i)), key=lambda i: _when(i, memories))
    later = sorted((i for i in ids if not made_by(i)), key=lambda i: _when(i, memories))
    return [*reversed(made), *later]


def _when(mid: str, memories: Mapping[str, Memory]) -> tuple[datetime, str]:
    return (memories[mid].timestamp, mid)


def _named(text: str, names: Sequence[str]) -> frozenset[str]:
    """The query's names this text mentions (whole words, any case)."""
    low = text.casefold()
    return frozenset(n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", low))


def _numbers(text: str) -> set[str]:
    """The words of ``text`` that hold a digit ("7", "v2", "2026")."""
    return {w for w in re.findall(r"\w+", text.casefold()) if any(c.isdigit() for c in w)}
