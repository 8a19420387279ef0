"""Causes told with a double object ("X gave me a headache"), with "from" after a symptom, in a
correction after a denied cause, and advice of an amount ("less salt"): sentences written for
these tests, in our own words."""

from __future__ import annotations

import pytest

from sage_memory.extract import argtypes, syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")
needs_types = pytest.mark.skipif(
    argtypes.condition_score("rash") is None, reason="the MiniLM embedder is not available"
)


def causes(text: str) -> set[tuple[str, str, bool]]:
    return {(s, t, neg) for s, r, t, neg in edges(text) if r == "CAUSES"}


# --- a double object: "A gave me B" states a cause when B is a symptom or a fault ----------


@needs_parser
@needs_types
def test_a_cause_gives_someone_a_symptom() -> None:
    assert ("pollen", "sneezing fit", False) in causes("The pollen gave me a sneezing fit.")
    assert ("red wine", "heartburn", False) in causes("Red wine gives Oksana heartburn.")


@needs_parser
@needs_types
def test_a_person_giving_a_thing_states_no_cause() -> None:
    assert not causes("My uncle gave me a ride home.")
    assert not causes("The school gave Priya a scholarship.")


# --- "B is from A": a symptom or a fault and its source ---------------------------------


@needs_parser
@needs_types
def test_a_symptom_is_from_its_cause() -> None:
    assert ("damp", "cough", False) in causes("Her cough is from the damp in the flat.")
    assert ("loose heat shield", "rattle", False) in causes(
        "The rattle in the engine is from a loose heat shield."
    )


@needs_parser
@needs_types
def test_a_person_or_a_message_is_from_a_place_or_a_sender() -> None:
    assert not causes("Tariq is from Karachi.")
    assert not causes("The letter was from the council.")


# --- a denied cause and the alternative or the correction --------------------------------


@needs_parser
def test_the_alternative_of_a_passive_cause_is_denied() -> None:
    found = causes("The leak was caused by a loose washer, not by the frost.")
    assert ("loose washer", "leak", False) in found
    assert ("frost", "leak", True) in found


@needs_parser
def test_a_cleft_after_a_denied_cause_states_the_cause() -> None:
    found = causes("The fever wasn't caused by the vaccine; it was a chest infection.")
    assert ("vaccine", "fever", True) in found
    assert ("chest infection", "fever", False) in found
    found = causes("The stain wasn't caused by the bleach, it was the rusty pipe.")
    assert ("rusty pipe", "stain", False) in found


@needs_parser
def test_an_elided_do_after_a_denied_cause_states_the_cause() -> None:
    found = causes("The wind didn't cause the fence damage; a reversing van did.")
    assert ("reversing van", "fence damage", False) in found


@needs_parser
def test_a_second_denial_states_no_cause() -> None:
    found = causes("The noise wasn't caused by the fan; it wasn't the pump either.")
    assert not any(not neg for _, _, neg in found)


# --- advice of an amount ---------------------------------------------------------------


@needs_parser
def test_advice_of_an_amount_keeps_the_amount() -> None:
    found = edges("The cardiologist advised less salt and more walking.")
    assert ("cardiologist", "RECOMMENDS", "less salt", False) in found
    assert ("cardiologist", "RECOMMENDS", "salt", False) not in found


# --- allergy fields of a patient record ------------------------------------------------------


def test_each_item_of_an_allergy_field_is_an_allergy_of_the_named_patient() -> None:
    found = edges("Patient: Hana Sato. Allergies: aspirin, shellfish.")
    assert ("hana sato", "ALLERGIC_TO", "aspirin", False) in found
    assert ("hana sato", "ALLERGIC_TO", "shellfish", False) in found
    found = edges("Admission form, Mrs. Okafor - intolerances: lactose (mild).")
    assert ("mrs. okafor", "ALLERGIC_TO", "lactose", False) in found


def test_a_record_without_a_name_is_about_the_patient() -> None:
    found = edges("Patient record - Allergies: iodine.")
    assert ("patient", "ALLERGIC_TO", "iodine", False) in found


def test_an_allergy_field_that_lists_nothing_states_no_allergy() -> None:
    found = edges("Patient: Hana Sato. Allergies: none known.")
    assert not any(r == "ALLERGIC_TO" for _, r, _, _ in found)
    found = edges("Spring allergies: brutal this year.")
    assert not any(r == "ALLERGIC_TO" for _, r, _, _ in found)
