"""The per-text analyses a search reads again and again are kept, frozen, and equal to a fresh
analysis: a cached answer never differs from the one computed anew, and no caller can change
what the next caller reads."""

from __future__ import annotations

from collections.abc import Callable
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
