"""Verb-phrase ellipsis, task lists under a heading, lists said to be in order, necessity
"have to", and the recovery / trigger / driver phrasings of the lexicon (sentences written for
these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


# --- verb-phrase ellipsis -------------------------------------------------------------------


@needs_parser
def test_an_elliptic_clause_denies_the_fact_of_its_own_subject() -> None:
    found = edges("The billing worker relies on the cache service, but the web tier does not.")
    assert ("billing worker", "DEPENDS_ON", "cache service", False) in found
    assert ("web tier", "DEPENDS_ON", "cache service", True) in found


@needs_parser
def test_an_elliptic_clause_after_a_semicolon_restates_the_fact() -> None:
    found = edges("The bolt is part of the hinge; the washer is too.")
    assert ("washer", "PART_OF", "hinge", False) in found


@needs_parser
def test_inverted_so_restates_a_class() -> None:
    found = edges("Almonds are seeds; so are pistachios.")
    assert ("pistachio", "IS_A", "seed", False) in found


@needs_parser
def test_an_elliptic_clause_affirms_what_the_fact_denied() -> None:
    found = edges("Restarting the app did not fix the freeze; clearing the disk did.")
    assert ("freeze", "SOLVED_BY", "clear the disk", False) in found


@needs_parser
def test_a_pronoun_subject_restates_nothing() -> None:
    found = edges("The kiosk needs a power cable. It does.")
    assert {e for e in found if e[1] == "REQUIRES"} == {("kiosk", "REQUIRES", "power cable", False)}


# --- task lists -----------------------------------------------------------------------------


@needs_parser
def test_a_heading_with_a_list_of_verb_phrases_holds_the_tasks_unordered() -> None:
    found = edges("Garage cleanup notes: sort the tools, sweep the floor, fix the shelf.")
    assert ("garage cleanup", "CONTAINS_TASK", "sweep the floor", False) in found
    assert ("garage cleanup", "CONTAINS_TASK", "fix the shelf", False) in found
    assert not any(e[1] == "PRECEDES" for e in found)


@needs_parser
def test_a_bracketed_name_in_the_heading_is_the_project() -> None:
    found = edges("TKT-88 (Pantry refit) - subtasks: measure the alcove, order the boards.")
    assert ("pantry refit", "CONTAINS_TASK", "measure the alcove", False) in found


@needs_parser
def test_a_list_of_nouns_is_no_task_list() -> None:
    found = edges("Shopping: apples, bread, milk.")
    assert not any(e[1] == "CONTAINS_TASK" for e in found)


@needs_parser
def test_a_list_said_to_be_in_order_is_a_sequence() -> None:
    found = edges(
        "The move includes packing the books, loading the van and cleaning the flat, in that order."
    )
    order = {(e[0], e[2]) for e in found if e[1] == "PRECEDES"}
    assert ("pack the books", "load the van") in order
    assert ("load the van", "clean the flat") in order


@needs_parser
def test_a_list_not_said_to_be_in_order_is_no_sequence() -> None:
    found = edges("The move includes packing the books, loading the van and cleaning the flat.")
    assert not any(e[1] == "PRECEDES" for e in found)


# --- necessity is not possession ------------------------------------------------------------


@needs_parser
def test_have_to_is_no_ownership() -> None:
    found = edges("I still have to repaint the fence and mend the gate.")
    assert not any(e[1] == "OWNS" for e in found)


# --- lexicon phrasings ----------------------------------------------------------------------


@needs_parser
def test_a_problem_that_eased_after_an_act_is_solved_by_it() -> None:
    found = edges("My wrist pain eased once I raised the keyboard tray.")
    assert any(e[0] == "wrist pain" and e[1] == "SOLVED_BY" for e in found)


@needs_parser
def test_a_symptom_from_a_trigger_is_an_allergy() -> None:
    assert ("bruno", "ALLERGIC_TO", "peach", False) in edges("Bruno gets hives from peaches.")


@needs_parser
def test_a_driver_of_an_effect_causes_it() -> None:
    found = edges("Inflation drives wage demands.")
    assert any(e[:2] == ("inflation", "CAUSES") and e[2].startswith("wage demand") for e in found)


# --- orders are of acts ---------------------------------------------------------------------


@needs_parser
def test_the_one_who_advises_an_order_is_no_step_of_it() -> None:
    found = edges("Our instructor suggested we check the ropes before the descent.")
    assert not any(e[1] == "PRECEDES" and e[0] == "instructor" for e in found)


@needs_parser
def test_a_recurring_occasion_is_no_step() -> None:
    found = edges("The trainer told Omar to stretch after every match.")
    assert not any(e[1] == "PRECEDES" for e in found)


@needs_parser
def test_a_clock_time_is_no_step() -> None:
    found = edges("Water the seedlings before 8am.")
    assert not any(e[1] == "PRECEDES" for e in found)


@needs_parser
def test_a_problem_that_got_better_after_an_act_is_solved_by_it() -> None:
    found = edges("The squeaking got much better after we oiled the door.")
    assert any(e[0] == "squeaking" and e[1] == "SOLVED_BY" for e in found)
    assert not any(e[1] == "PRECEDES" for e in found)


# --- possibility is no assertion ------------------------------------------------------------


@needs_parser
def test_a_fact_said_only_to_be_possible_is_not_stated() -> None:
    assert not any(e[1] == "REQUIRES" for e in edges("The kiosk might need a second screen."))


@needs_parser
def test_an_untested_fix_is_not_stated() -> None:
    found = edges("In theory a new fuse should fix the flicker, but nobody has tried it.")
    assert not any(e[1] == "SOLVED_BY" for e in found)
