"""The per-text analyses a search reads again and again are kept, frozen, and equal to a fresh
analysis: a cached answer never differs from the one computed anew, and no caller can change
what the next caller reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sage_memory.retrieve import current, mentions, structure
from sage_memory.store import lexical

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "The memory limit of the build job was raised from 2 GB to 4 GB on 3 May 2026.",
    "Team Heron: we switched the printer vendor to Inkwise; v2 API ships in Q3.",
    "Café Müller moved to Zürich, then the meetings covered merged coverage.",
    "",
]

CACHED: list[tuple[str, Callable[[str], Any]]] = [
    ("current._stems", current._stems),
    ("current._numbers", current._numbers),
    ("current._statuses", current._statuses),
    ("current._undated_figures", current._undated_figures),
    ("structure.stems", structure.stems),
    ("lexical.term_set", lexical.term_set),
    ("mentions._spaced", mentions._spaced),
]


@pytest.mark.parametrize(("name", "fn"), CACHED, ids=[n for n, _ in CACHED])
def test_a_kept_analysis_equals_a_fresh_one_and_cannot_be_changed(
    name: str, fn: Callable[[str], Any]
) -> None:
    fresh = fn.__wrapped__  # type: ignore[attr-defined]
    for text in TEXTS:
        first, again = fn(text), fn(text)
        assert first == fresh(text), name
        assert again is first  # read once, kept
        assert isinstance(first, frozenset | tuple | str)  # immutable: nobody edits the cache


def test_term_set_is_the_distinct_terms() -> None:
    for text in TEXTS:
        assert lexical.term_set(text) == set(lexical.terms(text))


def _clear_kept() -> None:
    for _, fn in CACHED:
        fn.cache_clear()  # type: ignore[attr-defined]


def test_a_search_finds_the_same_with_the_analyses_kept_or_read_anew(tmp_path: Path) -> None:
    """The equality check of the ranking code: the same hits, scores, facts and context
    whether the per-text analyses come from the caches (warm) or are computed anew (cold)."""
    from sage_memory import SageMemory

    now = datetime(2026, 7, 1, tzinfo=UTC)
    texts = [
        "Caroline: I moved to Berlin in March for the new job at Zalando.",
        "Caroline: the rent is 1200 EUR, and the flat is done now.",
        "Melanie: we went camping with the kids, then pottery class on Saturday.",
        "Caroline: update, I moved again: I live in Hamburg now.",
        "Melanie: the pottery class moved to Fridays; status: blocked until the kiln is fixed.",
        "Team Heron: the budget was raised from 40k to 55k on 3 May 2026.",
    ]
    questions = [
        "where does Caroline live now?",
        "what does Melanie do with her kids?",
        "what is the Heron budget?",
    ]

    def run() -> list[object]:
        with SageMemory(tmp_path / "m", embedder="hashing", clock=lambda: now) as mem:
            out: list[object] = []
            for q in questions:
                r = mem.search(q, user_id="u", limit=5)
                out.append(
                    (
                        [(h.memory.id, h.score, h.channels, h.why) for h in r.memories],
                        [(e.edge.id, e.score) for e in r.edges],
                        r.context,
                    )
                )
            return out

    with SageMemory(tmp_path / "m", embedder="hashing", clock=lambda: now) as mem:
        items = [
            {"text": t, "timestamp": datetime(2026, 3, 1, tzinfo=UTC) + timedelta(days=i)}
            for i, t in enumerate(texts)
        ]
        mem.add_many(items, user_id="u")
    _clear_kept()
    cold = run()
    warm = run()
    assert warm == cold
    assert any(hits for hits, _, _ in cold)  # type: ignore[misc]
