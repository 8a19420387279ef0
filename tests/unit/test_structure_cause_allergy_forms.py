"""Causes told with a causative "make", "blamed on" or "set off", a noun of change with its
"in" phrase, and allergies told as "X's allergic", "a peanut allergy" or "allergic to A and
to B": sentences written for these tests, in our own words."""

from __future__ import annotations

import pytest

from sage_memory.extract import argtypes, syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")
needs_types = pytest.mark.skipif(
    argtypes.condition_score("rash") is None, reason="the MiniLM embedder is not available"
)


def related(text: str, relation: str) -> set[tuple[str, str, bool]]:
    return {(s, t, neg) for s, r, t, neg in edges(text) if r == relation}


# --- causative "make": the effect is the object's event ------------------------------------


@needs_parser
def test_a_causative_make_names_the_event_it_brings_about() -> None:
    assert ("heat", "glue fail", False) in related("The heat made the glue fail.", "CAUSES")
    assert ("grit", "hinge squeak", False) in related("Grit made the hinges squeak.", "CAUSES")


@needs_parser
def test_a_causative_make_on_a_person_states_no_cause() -> None:
    assert not related("The film made me cry.", "CAUSES")
    assert not related("Our coach made the players run laps.", "CAUSES")
    assert not related("She made a cheese board.", "CAUSES")


# --- a cause as a noun phrase ---------------------------------------------------------------


@needs_parser
def test_a_fault_blamed_on_its_cause() -> None:
    assert ("stone bruise", "limp", False) in related(
        "The vet blamed the limp on a stone bruise.", "CAUSES"
    )


@needs_parser
@needs_types
def test_a_trigger_sets_off_its_effect() -> None:
    assert ("pollen", "cough", False) in related("Pollen sets off my cough.", "CAUSES")
    assert not related("The team set off a firework.", "CAUSES")


@needs_parser
def test_a_noun_of_change_keeps_what_changed() -> None:
    assert ("storm", "spike in power cut", False) in related(
        "The storm caused a spike in power cuts.", "CAUSES"
    )


@needs_parser
@needs_types
def test_a_common_noun_opening_the_sentence_is_no_person() -> None:
    assert ("gluten", "stomach cramp", False) in related(
        "Gluten gives Idris stomach cramps.", "CAUSES"
    )


# --- allergies --------------------------------------------------------------------------


@needs_parser
def test_a_clitic_before_a_predicative_adjective_is_is() -> None:
    assert ("odile", "latex", False) in related("Odile's allergic to latex.", "ALLERGIC_TO")
    assert not related("Odile's old bike broke.", "ALLERGIC_TO")


@needs_parser
def test_an_allergy_named_by_a_premodifying_noun() -> None:
    assert ("ines", "peanut", False) in related("Ines has a peanut allergy.", "ALLERGIC_TO")
    assert ("brother", "cat", False) in related(
        "My brother's cat allergy rules out the farm stay.", "ALLERGIC_TO"
    )
    # the holder of a possessive is not the allergen when a verb comes between
    assert ("son", "sesame", False) in related("Oren's son has a sesame allergy.", "ALLERGIC_TO")
    assert ("oren", "son", False) not in related("Oren's son has a sesame allergy.", "ALLERGIC_TO")


@needs_parser
def test_a_repeated_preposition_continues_the_list() -> None:
    got = related("Tavi is allergic to pollen and to wool.", "ALLERGIC_TO")
    assert {("tavi", "pollen", False), ("tavi", "wool", False)} <= got
