"""Recall of the order, blocking, fixing and dependency families: clause arguments the tagger
read as noun phrases, quantity words in names (sentences written for these tests, in our own
words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


# --- a clause read as one noun phrase ---------------------------------------------------------


@needs_parser
def test_a_gerund_clause_after_rely_on_names_its_subject() -> None:
    found = edges("The greenhouse sensor relies on the garden router staying online.")
    assert ("greenhouse sensor", "DEPENDS_ON", "garden router", False) in found


@needs_parser
def test_a_gerund_that_modifies_a_noun_stays_in_the_name() -> None:
    found = edges("The quiz app cannot function without the core scoring library.")
    assert ("quiz app", "DEPENDS_ON", "core scoring library", False) in found


@needs_parser
def test_a_subject_ending_in_a_gerund_noun_is_kept() -> None:
    found = {(s, r) for s, r, _, _ in edges("The cheese tasting comes before the quiz night.")}
    assert ("cheese tasting", "PRECEDES") in found


# --- quantity words are no part of a name -----------------------------------------------------


def test_whole_and_single_are_dropped_from_names() -> None:
    found = edges("Our whole delivery schedule depends on a single cargo van.")
    assert ("delivery schedule", "DEPENDS_ON", "cargo van", False) in found


@needs_parser
def test_a_finite_verb_after_until_ends_the_blocker_name() -> None:
    found = edges("Sanding the deck can't start until the wood stain dries.")
    assert ("sand the deck", "BLOCKED_BY", "wood stain", False) in found


# --- phrasings added to the lexicon ----------------------------------------------------------


@needs_parser
def test_working_around_a_problem_by_an_act_is_a_fix_by_that_act() -> None:
    found = edges("We worked around the upload timeout by splitting the files.")
    assert ("upload timeout", "SOLVED_BY", "split the files", False) in found


@needs_parser
def test_a_fronted_following_phrase_orders_the_steps() -> None:
    found = edges("Following the stock count, we will restock the shelves.")
    assert ("stock count", "PRECEDES", "restock the shelves", False) in found


def test_ahead_of_schedule_is_no_order_of_steps() -> None:
    assert not {e for e in edges("The bakery team is ahead of schedule.") if e[1] == "PRECEDES"}


@needs_parser
def test_falling_over_without_a_thing_is_a_dependency() -> None:
    found = edges("Without the print server, the ticket kiosk falls over.")
    assert ("ticket kiosk", "DEPENDS_ON", "print server", False) in found


# --- order denied, fronted clauses -------------------------------------------------------------


@needs_parser
def test_a_denied_necessity_denies_the_order() -> None:
    found = edges("We don't need to clean the gutters before painting the shed.")
    assert ("clean the gutters", "PRECEDES", "paint the shed", True) in found


@needs_parser
def test_a_subordinator_inside_a_clause_opens_no_fronted_phrasing() -> None:
    found = edges("You can sweep the floor before you mop the hall, the guide is just fussy.")
    assert not any(s == "guide" for s, _, _, _ in found)


# --- a step stated in the passive --------------------------------------------------------------


@needs_parser
def test_a_passive_step_is_the_act_done_to_its_subject() -> None:
    found = edges("Once the invoice is stamped, Pavel will file the receipts.")
    assert ("stamp the invoice", "PRECEDES", "file the receipts", False) in found


@needs_parser
def test_a_passive_of_an_event_or_a_person_names_no_act() -> None:
    held = edges("The rehearsal was held after the stage had been painted.")
    assert ("paint the stage", "PRECEDES", "rehearsal", False) in held
    moved = edges("After the audit, Farid was transferred to the depot.")
    assert not any(s.startswith("transfer") or t.startswith("transfer") for s, _, t, _ in moved)


@needs_parser
def test_a_get_passive_reads_as_the_be_passive() -> None:
    assert ("farah", "HAS_ROLE", "treasurer", False) in edges("Farah got elected treasurer.")
    assert not edges("I got to see the harbour show.")


# --- nominal dependency ------------------------------------------------------------------------


@needs_parser
def test_modifiers_before_a_relation_noun_are_inside_its_phrase() -> None:
    found = edges("The thumbnailer has a strict runtime dependency on libwebp.")
    assert ("thumbnailer", "DEPENDS_ON", "libwebp", False) in found


@needs_parser
def test_the_nominal_and_denied_dependency() -> None:
    assert ("uploader", "DEPENDS_ON", "token cache", False) in edges(
        "The uploader's reliance on the token cache slows every deploy."
    )
    assert ("uploader", "DEPENDS_ON", "token cache", True) in edges(
        "After the rewrite, the uploader is independent of the token cache."
    )


# --- a kind and its name -----------------------------------------------------------------------


@needs_parser
def test_a_kind_named_by_a_participle_stands_for_the_name() -> None:
    found = edges("Ilse has a tortoise called Humphrey.")
    assert ("ilse", "OWNS", "humphrey", False) in found
    assert ("humphrey", "IS_A", "tortoise", False) in found


@needs_parser
def test_an_appositive_name_that_closes_the_clause_stands_for_the_kind() -> None:
    found = edges("The ticket scanner relies on a message queue, Beanstalk.")
    assert ("ticket scanner", "DEPENDS_ON", "beanstalk", False) in found
    # a list of names is no lone appositive: each listed name is of the kind (not just the first)
    listed = edges("Ilse has two tortoises, Humphrey and Dot.")
    kinds = {(s, d) for s, r, d, _ in listed if r == "IS_A"}
    assert kinds == {("humphrey", "tortoise"), ("dot", "tortoise")}


@needs_parser
def test_a_role_taken_over_from_or_succeeding_someone() -> None:
    assert ("ravi", "HAS_ROLE", "treasurer", False) in edges(
        "Ravi took over from Ines as treasurer."
    )
    assert ("agnes", "HAS_ROLE", "site supervisor", False) in edges(
        "Agnes succeeded Tom as site supervisor."
    )


# --- jobs: tenure, staff, a job quit -----------------------------------------------------------


@needs_parser
def test_tenure_staff_and_a_quit_job_state_employment() -> None:
    assert ("omar", "WORKS_AT", "tellco", False) in edges(
        "Omar has been with Tellco for six years."
    )
    assert ("omar", "WORKS_AT", "tellco", False) in edges("Omar is on staff at Tellco.")
    assert ("omar", "WORKS_AT", "tellco", True) in edges("Omar quit his job at Tellco.")
    assert not edges("Omar has been at the airport for six hours.")


# --- homes: a past home, a home made, a room rented --------------------------------------------


@needs_parser
def test_a_past_home_a_home_made_and_a_rented_room() -> None:
    past = edges("Pilar used to live in Turin, but she moved to Genoa.")
    assert ("pilar", "LIVES_IN", "turin", True) in past
    assert ("pilar", "LIVES_IN", "genoa", False) in edges("Pilar has made Genoa her home.")
    assert ("pilar", "LIVES_IN", "genoa", False) in edges("Pilar rents a flat in Genoa.")


# --- preferences -------------------------------------------------------------------------------


@needs_parser
def test_a_favourite_after_a_possessive_and_a_nominal_preference() -> None:
    favourite = edges("Otto's favourite snack is salted almonds.")
    assert any(s == "otto" and r == "PREFERS" and "almond" in t for s, r, t, _ in favourite)
    assert ("otto", "PREFERS", "aisle seat", False) in edges(
        "Otto has a strong preference for aisle seats."
    )
    assert ("otto", "PREFERS", "dark chocolate", False) in edges(
        "Otto is partial to dark chocolate."
    )


# --- a cause stated as a thing with a quality -------------------------------------------------


@needs_parser
@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("The cake sank because the oven was too cold.", "cold oven"),
        ("Because the road was icy, the bus skidded.", "icy road"),
        ("The paint peeled because the wall was damp.", "damp wall"),
    ],
)
def test_a_copular_cause_is_named_with_its_quality(text: str, cause: str) -> None:
    assert any(s == cause and r == "CAUSES" for s, r, _, _ in edges(text))


@needs_parser
def test_a_status_participle_keeps_naming_the_thing() -> None:
    # "done" says the review happened: no quality of the review, and no cause named "done review"
    found = edges("The release slipped because the review was not done.")
    assert not any("done review" in (s, t) for s, _, t, _ in found)


# --- phrasings of blocking and fixing ----------------------------------------------------------


@needs_parser
def test_remaining_blocked_is_being_blocked() -> None:
    found = edges("The kitchen remodel remains blocked on the permit.")
    assert ("kitchen remodel", "BLOCKED_BY", "permit", False) in found


@needs_parser
def test_a_thing_that_cannot_act_until_a_condition_is_blocked_by_it() -> None:
    found = edges("The release can't ship until the audit finishes.")
    assert ("release", "BLOCKED_BY", "audit", False) in found


@needs_parser
def test_held_back_pending_names_what_it_waits_for() -> None:
    found = edges("The roof job is held back pending the survey.")
    assert ("roof job", "BLOCKED_BY", "survey", False) in found


@needs_parser
def test_what_did_not_help_with_a_problem_is_a_denied_fix() -> None:
    assert ("crash", "SOLVED_BY", "reinstall the app", True) in edges(
        "Reinstalling the app didn't help with the crashes."
    )
    assert ("lag", "SOLVED_BY", "restart the modem", True) in edges(
        "Restarting the modem did nothing for the lag."
    )


@needs_parser
def test_a_person_who_helps_with_a_thing_is_no_fix() -> None:
    assert not any(r == "SOLVED_BY" for _, r, _, _ in edges("Sara helped with the move."))


@needs_parser
def test_a_fix_in_note_style_drops_the_copula() -> None:
    found = edges("Slow builds fixed by caching the dependencies.")
    assert ("slow build", "SOLVED_BY", "cache the dependencies", False) in found


# --- a step acting on "it" acts on an earlier step's object -----------------------------------


@needs_parser
@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Wash the lettuce, then dry it.", ("wash the lettuce", "dry the lettuce")),
        ("Charge the drone before you fly it.", ("charge the drone", "fly the drone")),
        (
            "Calibrate the scale only after levelling it.",
            ("level the scale", "calibrate the scale"),
        ),
        (
            "Peel the potatoes and boil them, then mash them.",
            ("peel the potatoes", "mash the potatoes"),
        ),
    ],
)
def test_an_object_pronoun_in_a_step_names_the_earlier_object(
    text: str, edge: tuple[str, str]
) -> None:
    assert (edge[0], "PRECEDES", edge[1], False) in edges(text)


# --- a workplace named by a common noun -------------------------------------------------------


@needs_parser
def test_working_at_an_unnamed_establishment_is_employment() -> None:
    assert ("nora", "WORKS_AT", "bakery", False) in edges("Nora works at the bakery.")
    assert ("nora", "WORKS_AT", "clinic", True) in edges("Nora no longer works at the clinic.")


@needs_parser
@pytest.mark.parametrize(
    "text",
    [
        "Nora works at her desk.",
        "Nora works at the weekend.",
        "Nora works at a bakery run by Greggs.",  # the employer is the name, not "a bakery"
    ],
)
def test_working_at_a_desk_or_a_time_is_no_employer(text: str) -> None:
    assert not any(r == "WORKS_AT" for _, r, _, _ in edges(text))
