"""Relation families read from the words of the arguments: a liking denied, a numbered thing
that is nobody, a group that is what its subject is, a person who gets rid of a possession
and a person who leaves a town (sentences written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import argtypes, syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")
needs_embedder = pytest.mark.skipif(
    not argtypes.type_scores("a hammer"), reason="the MiniLM embedder is not installed"
)


@needs_parser
def test_not_into_denies_a_liking() -> None:
    assert ("user", "PREFERS", "crime drama", True) in edges("I'm not really into crime dramas.")
    got = edges("Marco isn't into opera anymore.")
    assert ("marco", "PREFERS", "opera", True) in got
    assert not any(r == "DISLIKES" for _, r, _, _ in got)


@needs_parser
def test_a_numbered_or_lettered_name_is_no_person() -> None:
    assert ("ward 9", "PART_OF", "surgical wing", False) in edges(
        "Ward 9 is part of the surgical wing."
    )
    assert ("annex c", "PART_OF", "main building", False) in edges(
        "Annex C is part of the main building."
    )


@needs_parser
def test_a_group_noun_after_is_a_says_what_the_subject_is() -> None:
    assert ("numba", "IS_A", "python library", False) in edges("Numba is a Python library.")
    assert ("jonas", "MEMBER_OF", "chess club", False) in edges("Jonas is part of the chess club.")


@needs_parser
def test_a_person_who_gets_rid_of_a_thing_no_longer_owns_it() -> None:
    assert ("bruno", "OWNS", "old motorbike", True) in edges(
        "Bruno got rid of his old motorbike last spring."
    )
    assert ("limescale", "SOLVED_BY", "vinegar rinse", False) in edges(
        "A vinegar rinse got rid of the limescale."
    )


@needs_parser
@needs_embedder
def test_leaving_a_town_is_moving_out_not_quitting_a_job() -> None:
    assert edges("Olga left Minsk last year.") >= {("olga", "LIVES_IN", "minsk", True)}
    assert ("karim", "WORKS_AT", "deloitte", True) in edges("Karim left Deloitte in March.")


@needs_parser
def test_a_liking_that_ended_is_denied() -> None:
    got = edges("Ben doesn't like horror films anymore.")
    assert ("ben", "PREFERS", "horror film", True) in got
    assert not any(r == "DISLIKES" for _, r, _, _ in got)


@needs_parser
def test_one_of_the_parts_of_a_whole_is_part_of_it() -> None:
    got = edges("The loader module is one of six modules in the billing suite.")
    assert ("loader module", "PART_OF", "billing suite", False) in got
    assert ("gdansk", "PART_OF", "poland", False) in edges("Gdansk is one of the ports of Poland.")
    assert ("mia", "IS_A", "founder", False) in edges(
        "Mia is one of the founders of the book club."
    )


@needs_parser
def test_a_noun_of_judgement_after_is_a_is_no_class() -> None:
    assert not edges("The tax portal is a nightmare.")
    assert not edges("The new printer is a real pain.")
    assert ("kestrel", "IS_A", "small falcon", False) in edges("The kestrel is a small falcon.")
