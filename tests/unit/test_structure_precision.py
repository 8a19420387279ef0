"""Precision of the structure extractor: text that states no fact gives no edge, and a node is
named by its noun phrase or task, not by a clause, a chat aside or a guessed word (sentences
written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


# --- machine text states nothing --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-02 11:45:09 INFO worker uses the cache for lookups",
        "WARN the exporter depends on the queue service",
        'def load(path): """Load the config. Returns: the settings, which need a schema."""',
        "Returns: the parser needs a valid grammar file.",
    ],
)
def test_log_records_and_code_documentation_give_no_edge(text: str) -> None:
    assert edges(text) == set()


# --- status -----------------------------------------------------------------------------------


@needs_parser
def test_a_status_after_a_modal_is_a_plan_not_a_status() -> None:
    found = edges("The migration will be finished soon.")
    assert not any(r == "HAS_STATUS" for _, r, _, _ in found)


@needs_parser
def test_a_denied_block_states_no_blocked_status() -> None:
    found = edges("The kiln firing is no longer blocked by the vent inspection.")
    assert ("kiln firing", "BLOCKED_BY", "vent inspection", True) in found
    assert not any(r == "HAS_STATUS" for _, r, _, _ in found)


# --- names ------------------------------------------------------------------------------------


@needs_parser
def test_an_emphasizing_adjective_and_a_chat_aside_are_no_part_of_a_name() -> None:
    assert ("billing pipeline", "DEPENDS_ON", "ledger service", False) in edges(
        "The whole billing pipeline depends on the ledger service."
    )
    assert ("team", "USES", "hybrid board", False) in edges("Our team uses a hybrid board lol.")


@needs_parser
def test_a_lone_gerund_of_an_unknown_verb_keeps_its_written_form() -> None:
    assert ("ines", "PREFERS", "geocaching", False) in edges("Ines is really into geocaching.")
    assert ("overgrazing", "CAUSES", "erosion", False) in edges(
        "The erosion on the hillside came from overgrazing."
    )


@needs_parser
def test_a_gerund_with_an_object_is_a_task_named_by_its_verb() -> None:
    assert ("leak", "SOLVED_BY", "reseal the joint", False) in edges(
        "The leak was fixed by resealing the joint."
    )


# --- relations --------------------------------------------------------------------------------


@needs_parser
@pytest.mark.parametrize(
    "text",
    ["The gazebo was blown over by the wind.", "The clinic is staffed by volunteers."],
)
def test_the_agent_of_a_passive_is_no_instrument(text: str) -> None:
    assert not any(r in ("USES", "REQUIRES") for _, r, _, _ in edges(text))


@needs_parser
def test_a_so_result_is_no_effect_of_the_subject_alone() -> None:
    found = edges("The heater is a heat pump, so it qualifies for the energy grant.")
    assert ("heater", "IS_A", "heat pump", False) in found
    assert not any(r == "CAUSES" for _, r, _, _ in found)


@needs_parser
def test_being_in_a_named_group_is_membership_and_in_a_city_is_living() -> None:
    found = edges("Idris and Noor are in the Sea Cadets.")
    assert ("idris", "MEMBER_OF", "sea cadets", False) in found
    assert ("noor", "MEMBER_OF", "sea cadets", False) in found
    assert ("ruth", "LIVES_IN", "porto", False) in edges("Ruth has been in Porto since March.")


@needs_parser
def test_a_thing_named_or_called_by_a_proper_name_is_that_name() -> None:
    assert ("uncle", "OWNS", "petrel", False) in edges("My uncle owns a sloop called Petrel.")
    assert ("user", "OWNS", "kiwi", False) in edges("We have a parrot named Kiwi.")


@needs_parser
def test_a_measure_noun_before_of_is_no_part_of_the_name() -> None:
    assert ("squeaky hinge", "SOLVED_BY", "machine oil", False) in edges(
        "The squeaky hinge was fixed with a squirt of machine oil."
    )
    assert ("price rise", "CAUSES", "drop", False) in edges(
        "The drop in sales was caused by the price rise."
    )


@needs_parser
def test_a_request_to_the_reader_states_no_order() -> None:
    assert edges("Please open a ticket before pushing to main.") == set()
    assert edges("Kindly read the manual before using the lathe.") == set()
    assert edges("Let's regroup on this after the demo.") == set()
    assert ("let it cool", "PRECEDES", "slice it", False) in edges(
        "Let it cool before you slice it."
    )
    # a fact before the request stays, and a bare imperative step is still an order
    assert ("booking page", "DEPENDS_ON", "payment widget", False) in edges(
        "Hi all, the booking page depends on the payment widget, so please don't remove it."
    )
    assert ("sand the boards", "PRECEDES", "paint the boards", False) in edges(
        "Sand the boards before you paint them."
    )


@needs_parser
def test_a_proper_name_in_apposition_names_the_argument() -> None:
    assert ("tomas", "WORKS_AT", "crumbly", False) in edges(
        "Tomas works for a small bakery, Crumbly."
    )
    assert ("site", "DEPENDS_ON", "nimbuscloud", False) in edges(
        "Our site relies on a hosting provider, Nimbuscloud."
    )


@needs_parser
def test_the_verb_closing_an_until_clause_is_no_part_of_its_subject_name() -> None:
    assert ("tile", "BLOCKED_BY", "screed", False) in edges(
        "Tiling is blocked until the screed cures."
    )
    assert ("kiln install", "BLOCKED_BY", "school holiday", False) in edges(
        "The kiln install waits until the school holidays."
    )


@needs_parser
def test_a_reduced_clause_with_a_negated_participle_names_a_cause() -> None:
    # no finite verb ("workers not started"): a state named as a thing, not a whole clause
    assert ("workers not started", "CAUSES", "502 error", False) in edges(
        "A 502 error can be caused by workers not started or by a full queue."
    )


# --- a person is no fix, no cause and no step ----------------------------------------------------


@needs_parser
@pytest.mark.parametrize(
    "text",
    [
        "The landlord finally fixed the heating.",
        "The plumber fixed the boiler last week.",
        "I fixed the garden gate on Sunday.",
        "Omar solved the outage.",
    ],
)
def test_who_fixed_a_thing_is_not_its_fix(text: str) -> None:
    assert not any(r == "SOLVED_BY" for _, r, _, _ in edges(text))


@needs_parser
def test_a_fix_named_by_a_thing_or_an_act_still_stands() -> None:
    assert ("crash", "SOLVED_BY", "new patch", False) in edges("The new patch fixed the crash.")
    assert ("outage", "SOLVED_BY", "restart the pods", False) in edges(
        "Priya solved the outage by restarting the pods."
    )


# --- a greeting or an interjection names nothing ------------------------------------------------


@needs_parser
def test_a_greeting_is_no_step_of_an_order() -> None:
    found = edges("lol we did the soundcheck before the gig")
    assert not any("lol" in (s, t) for s, _, t, _ in found)
