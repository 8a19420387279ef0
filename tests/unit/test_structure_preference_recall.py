"""Recall of the preference family: dislikes said as "can't abide" or "gone off", a liking
denied (sentences written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


@needs_parser
def test_cannot_abide_is_a_dislike() -> None:
    assert ("ines", "DISLIKES", "loud music", False) in edges("Ines can't abide loud music.")


@needs_parser
def test_going_off_a_thing_is_a_dislike_and_an_alarm_going_off_is_not() -> None:
    assert ("ines", "DISLIKES", "cheese", False) in edges("Ines has gone off cheese.")
    assert not any(r == "DISLIKES" for _, r, _, _ in edges("The alarm went off at six."))


@needs_parser
def test_not_liking_denies_a_liking() -> None:
    got = edges("Keiko doesn't like spicy ramen.")
    assert ("keiko", "PREFERS", "spicy ramen", True) in got
    assert not any(r == "DISLIKES" for _, r, _, _ in got)
    assert ("ines", "PREFERS", "golf", True) in edges("Ines loves tennis but doesn't like golf.")
