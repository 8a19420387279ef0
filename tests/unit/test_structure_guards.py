"""The extractor's guards judge what an argument is by its grammar: a lone pronoun left of a
phrase refers (it is resolved, never a name), and a participle before a noun is an adjective of
that noun phrase, no verb of a clause (sentences written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


@needs_parser
def test_a_pronoun_shared_by_two_predicates_is_resolved_to_its_person() -> None:
    found = edges("Marek Novak is our new auditor. He transfers from Brno and lives in Olomouc.")
    assert ("marek novak", "LIVES_IN", "olomouc", False) in found
    assert not any(s == "he" for s, _, _, _ in found)


@needs_parser
def test_a_pronoun_subject_after_an_adverbial_is_resolved() -> None:
    found = edges(
        "Bruno rented in Lyon in May; in July he moved to Grenoble and bought a van there."
    )
    assert ("bruno", "OWNS", "van", False) in found


@needs_parser
@pytest.mark.parametrize(
    ("text", "edge"),
    [
        (
            "Raft is a replicated consensus protocol.",
            ("raft", "IS_A", "replicated consensus protocol", False),
        ),
        ("Miso is a fermented paste.", ("miso", "IS_A", "fermented paste", False)),
        (
            "Quicksort is a partitioning algorithm.",
            ("quicksort", "IS_A", "partitioning algorithm", False),
        ),
    ],
)
def test_a_participle_before_the_head_noun_is_part_of_the_class(
    text: str, edge: tuple[str, str, str, bool]
) -> None:
    assert edge in edges(text)


@needs_parser
def test_a_verb_of_the_copulas_complement_still_keeps_it_from_being_a_class() -> None:
    assert not any(r == "IS_A" for _, r, _, _ in edges("The plan is a mess we inherited."))
