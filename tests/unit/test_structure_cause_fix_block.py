"""Recall of the causality, fixing and blocking families: causes and effects stated as clauses,
phrasings of each family (sentences written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


# --- an effect stated as a clause names its event ---------------------------------------------


@needs_parser
def test_an_effect_clause_names_its_event() -> None:
    assert ("storm", "CAUSES", "river flooded", False) in edges(
        "The river flooded across the fields because of the storm."
    )


@needs_parser
def test_a_passive_clause_and_the_relation_verb_name_no_event() -> None:
    found = edges("Our ferry was delayed across the bay due to high winds.")
    assert not any(t.startswith("ferry") for _, r, t, _ in found if r == "CAUSES")


@needs_parser
def test_an_existential_cause_names_what_there_was() -> None:
    assert ("power surge", "CAUSES", "router rebooted", False) in edges(
        "There was a power surge overnight, and that caused the router rebooted."
    ) or ("power surge", "CAUSES", "router rebooted", False) in edges(
        "The router rebooted because there was a power surge overnight."
    )


@needs_parser
def test_a_clause_with_an_object_or_a_person_subject_names_no_event() -> None:
    found = edges("The demo was cancelled because Priya was ill.")
    assert not any(s.startswith("priya") for s, _, _, _ in found)
    found = edges("The invoices were delayed because the clerk lost the stamp.")
    assert not any(r == "CAUSES" and s.startswith("clerk") for s, r, _, _ in found)


@needs_parser
def test_since_states_a_cause_only_with_a_clause() -> None:
    assert any(
        r == "CAUSES" and s.startswith("heater")
        for s, r, _, _ in edges("The office froze since the heater broke.")
    )
    assert not any(r == "CAUSES" for _, r, _, _ in edges("Since the move, we have been happier."))
    assert not any(
        r == "CAUSES" for _, r, _, _ in edges("The shop has been quiet since the roadworks.")
    )


# --- phrasings of each family -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("The outage was traced to a faulty switch.", ("faulty switch", "CAUSES", "outage")),
        ("The leak was blamed on a loose fitting.", ("loose fitting", "CAUSES", "leak")),
        ("The dropouts were put down to a bad cable.", ("bad cable", "CAUSES", "dropout")),
        ("A worn belt was to blame for the squeal.", ("worn belt", "CAUSES", "squeal")),
        (
            "The power cut is the reason why the freezer thawed.",
            ("power cut", "CAUSES", "freezer thawed"),
        ),
        ("The delay came down to a staffing gap.", ("staffing gap", "CAUSES", "delay")),
        ("Replacing the gasket rectified the leak.", ("leak", "SOLVED_BY", "replace the gasket")),
        ("A humidifier relieved the dry cough.", ("dry cough", "SOLVED_BY", "humidifier")),
    ],
)
def test_phrasing_of_the_family(text: str, edge: tuple[str, str, str]) -> None:
    assert (*edge, False) in edges(text)


@needs_parser
def test_a_status_with_its_reason_names_no_event() -> None:
    found = edges("The street fair was called off because of the storm.")
    assert not any(r == "CAUSES" for _, r, _, _ in found)
