"""Employment after a verb of work with "for"/"at", job titles read by meaning in a role slot,
and tools named by a trade name's spelling or a software head noun: sentences written for these
tests, in our own words."""

from __future__ import annotations

import pytest

from sage_memory.extract import argtypes, syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")
needs_types = pytest.mark.skipif(
    argtypes.occupation_score("nurse") is None, reason="the MiniLM embedder is not available"
)


def rel(text: str, relation: str) -> set[tuple[str, str, bool]]:
    return {(s, t, neg) for s, r, t, neg in edges(text) if r == relation}


# --- "works for X", "teaches at X": the employer even when X reads as a place or a group ------


@needs_parser
@needs_types
def test_a_verb_of_work_with_for_or_at_names_the_employer() -> None:
    assert ("mr. okafor", "eastbrook high", False) in rel(
        "Mr. Okafor teaches at Eastbrook High.", "WORKS_AT"
    )
    assert ("kate", "county council", False) in rel(
        "Kate works for the county council.", "WORKS_AT"
    )
    assert ("dario", "harbour authority", False) in rel(
        "Dario works for the harbour authority.", "WORKS_AT"
    )
    assert ("lena", "bakery", False) in rel("Lena works at a bakery near the canal.", "WORKS_AT")


@needs_parser
@needs_types
def test_a_home_or_a_group_one_belongs_to_is_no_employer() -> None:
    assert not rel("Jo works in Porto.", "WORKS_AT")
    assert not rel("Sam left Lisbon last year.", "WORKS_AT")
    assert not rel("I left the cafe at noon.", "WORKS_AT")


# --- a job title no closed list holds, read by meaning in a role slot -------------------------


@needs_parser
@needs_types
def test_a_role_slot_takes_a_job_title_read_by_meaning() -> None:
    assert ("hana", "midwife", False) in rel("Hana is now our midwife.", "HAS_ROLE")
    assert ("ben", "paramedic", False) in rel("Ben, our paramedic, fixed the boiler.", "HAS_ROLE")


@needs_parser
@needs_types
def test_a_role_slot_takes_no_thing_or_act() -> None:
    assert not rel("It is now our project.", "HAS_ROLE")
    assert not rel("The boat is now ours.", "HAS_ROLE")


# --- tools: a trade name's medial capital, a software head noun, "we're on <X> now" -----------


@needs_parser
@needs_types
def test_a_trade_name_or_a_software_head_is_a_tool() -> None:
    assert ("ravi", "ridewithgps", False) in rel("Ravi logs his rides in RideWithGPS.", "USES")
    assert ("app", "mapbox api", False) in rel("The app calls the Mapbox API.", "USES")
    assert ("user", "mattermost", False) in rel("We're on MatterMost now.", "USES")


@needs_parser
@needs_types
def test_a_place_or_an_activity_is_no_tool() -> None:
    assert not rel("Sam keeps his bike in McAllen.", "USES")
    assert not rel("I'm on the phone.", "USES")
    assert not rel("Tom calls the plumber.", "USES")


# --- a local unit of an organization: the organization employs --------------------------------


@needs_parser
@needs_types
def test_a_unit_of_an_organization_names_the_organization_as_employer() -> None:
    assert ("marta", "lufthansa", False) in rel(
        "Marta works at Lufthansa's Munich base.", "WORKS_AT"
    )
    assert ("kofi", "stanbic bank", False) in rel(
        "Kofi works at the Kumasi branch of Stanbic Bank.", "WORKS_AT"
    )


@needs_parser
@needs_types
def test_a_role_read_by_meaning_claims_no_employer() -> None:
    assert not rel("Pia is the cook at the festival.", "WORKS_AT")
    assert not rel("I work at a depot run by Maersk.", "WORKS_AT") - {("user", "maersk", False)}


# --- a status holder's name: a lone noun keeps its place, a compound drops its purpose --------


def statuses(text: str) -> set[tuple[str, str, bool]]:
    return rel(text, "HAS_STATUS")


@needs_parser
def test_a_lone_noun_holder_keeps_where_the_work_is() -> None:
    assert ("dig at the quarry", "in progress", False) in statuses(
        "The dig at the quarry resumed on Monday."
    )
    assert ("meeting", "cancelled", False) in statuses("The meeting at noon is cancelled.")


@needs_parser
def test_a_compound_holder_drops_what_the_work_serves() -> None:
    assert ("crate design", "done", False) in statuses("Crate design for the museum: done.")
    assert ("class outing", "on hold", False) in statuses(
        "The class outing to the aquarium is postponed."
    )
    assert ("move to berlin", "on hold", False) in statuses("The move to Berlin is on hold.")


# --- more phrasings of employment: signing on, contracting, shifts, tenure, leaving ----------


@needs_parser
@needs_types
def test_employment_told_in_other_words() -> None:
    assert ("kwame", "leeds united", False) in rel(
        "Kwame signed with Leeds United as a physio.", "WORKS_AT"
    )
    assert ("joe", "verisk", False) in rel("Joe is contracting for Verisk until June.", "WORKS_AT")
    assert ("tess", "hilton", False) in rel("Tess works night shifts at the Hilton.", "WORKS_AT")
    assert ("ravi", "orbitek", False) in rel(
        "After the buyout, Ravi stayed on at Orbitek.", "WORKS_AT"
    )
    assert ("dr. moss", "yale", False) in rel("Dr. Moss is on the faculty at Yale.", "WORKS_AT")
    assert ("tom", "argos", True) in rel("Tom handed in his notice at Argos.", "WORKS_AT")


@needs_parser
@needs_types
def test_signing_for_a_thing_is_no_job() -> None:
    assert not rel("Mia signed for the petition as a witness.", "WORKS_AT")


# --- membership: performing groups, and a membership held or lapsed ----------------------------


@needs_parser
@needs_types
def test_membership_of_an_ensemble_and_a_membership_held_or_lapsed() -> None:
    assert ("kiri", "tauranga ensemble", False) in rel(
        "Kiri sings alto in the Tauranga Ensemble.", "MEMBER_OF"
    )
    held = edges("Ola has a membership at the Boulder Barn gym.")
    assert ("ola", "MEMBER_OF", "boulder barn gym", False) in held
    assert ("ola", "OWNS", "membership", False) not in held
    assert ("ola", "fitzone", True) in rel(
        "Ola's membership at Fitzone lapsed in May.", "MEMBER_OF"
    )
