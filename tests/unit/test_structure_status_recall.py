"""Recall of the status family: status words of progress, of a task handed in, reopened or
next, status boards and dashes, begun and resumed acts, the later of two statuses (sentences
written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


def statuses(text: str) -> set[tuple[str, str]]:
    return {(s, t) for s, r, t, neg in edges(text) if r == "HAS_STATUS" and not neg}


# --- status words ------------------------------------------------------------------------------


@needs_parser
def test_half_done_is_in_progress_not_done() -> None:
    assert statuses("The loft insulation is half done.") == {("loft insulation", "in progress")}
    assert ("attic clearout", "in progress") in statuses("The attic clearout is halfway through.")


@needs_parser
def test_a_task_handed_in_is_done() -> None:
    assert ("tax form", "done") in statuses("The tax form was submitted on Monday.")
    assert ("expense claim", "done") in statuses("My expense claim is filed.")


@needs_parser
def test_reopened_and_rescheduled_are_pending() -> None:
    assert ("bug #42", "pending") in statuses("Bug #42 was reopened yesterday.")
    assert ("dentist visit", "pending") in statuses("The dentist visit has been rescheduled.")


@needs_parser
def test_next_is_pending_but_next_to_is_a_place() -> None:
    assert ("window", "pending") in statuses("The loft is done; the windows are next.")
    assert not statuses("The cafe is next to the bank.")
    assert not statuses("I'll do the dishes next.")  # a plan with a verb, no status note


@needs_parser
def test_a_to_do_list_holds_pending_tasks() -> None:
    assert ("loft insulation", "pending") in statuses(
        "The loft insulation is still on my to-do list."
    )


@needs_parser
def test_a_share_of_the_work_done_is_in_progress() -> None:
    assert ("bridge retrofit", "in progress") in statuses("The bridge retrofit is 80% done.")
    assert ("bridge retrofit", "done") in statuses("The bridge retrofit is 100% done.")


@needs_parser
def test_a_note_may_end_in_when_its_status_came_about() -> None:
    assert ("tax return", "done") in statuses("Tax return filed last night, finally.")
    assert ("loft insulation", "done") in statuses("Loft insulation done in March.")


@needs_parser
def test_the_later_of_two_statuses_is_the_current_one() -> None:
    assert statuses("The visa form has been submitted and is awaiting review.") == {
        ("visa form", "pending")
    }
    assert statuses("The bake sale was postponed and is now underway.") == {
        ("bake sale", "in progress")
    }


# --- status boards and notes --------------------------------------------------------------------


@needs_parser
def test_a_dash_of_any_length_sets_off_a_status() -> None:
    assert ("garden fence repair", "done") in statuses("Garden fence repair — done")
    assert ("garden fence repair", "done") in statuses("Garden fence repair – done")


@needs_parser
def test_a_board_column_headed_by_its_status() -> None:
    got = statuses("Done: the logo. In progress: the menu.")
    assert {("logo", "done"), ("menu", "in progress")} <= got
    assert ("strip the wallpaper", "done") in statuses(
        "To do: order the tiles. Done: strip the wallpaper."
    )


@needs_parser
def test_a_board_column_opens_its_sentence_and_is_no_code_comment() -> None:
    assert ("logo", "done") in statuses("Done: the logo.")
    assert not statuses("# TODO: refactor this later")
    assert not any(s == "ana" for s, _ in statuses("Resolved: Ana becomes the new treasurer."))
    assert ("login bug", "done") not in statuses(
        "Ticket #12 closed: the login bug was resolved by a patch."
    )


@needs_parser
def test_a_clause_or_a_verb_with_its_object_has_no_status() -> None:
    assert ("rota app", "in progress") in statuses("Rota app — in progress")
    assert statuses("The boiler permit is stuck — blocked on the drainage survey.") == {
        ("boiler permit", "blocked")
    }
    assert ("pr", "done") in statuses("The PR was merged this morning.")
    assert ("spanish course", "on hold") in statuses("We paused the Spanish course.")
    got = statuses("Piotr — finished the tile order, now on the grout.")
    assert ("tile order", "done") in got
    assert not any(s == "piotr" for s, _ in got)


@needs_parser
def test_the_word_status_is_no_task() -> None:
    assert not any(s == "status" for s, _ in statuses("Status: done."))


# --- acts begun or resumed ----------------------------------------------------------------------


@needs_parser
def test_resumed_work_is_in_progress() -> None:
    assert ("roof survey", "in progress") in statuses("The roof survey resumed on Monday.")
    assert ("roof survey", "in progress") in statuses("We resumed the roof survey.")


@needs_parser
def test_an_act_begun_is_in_progress_and_a_thing_started_is_not() -> None:
    assert ("repaint the hall", "in progress") in statuses("Maria started repainting the hall.")
    assert not statuses("I started the car.")
    assert not statuses("We'll start sanding the floors tomorrow.")


@needs_parser
def test_a_status_in_a_clause_of_several_word_subordinator_is_a_condition() -> None:
    # "as soon as", "in case", "as long as" open a time or a condition like "once" does: the
    # thing is not done yet (Quirk et al. 1985, 14.12)
    assert not statuses("The mural starts as soon as the scaffold is signed off.")
    assert not statuses("Keep the tarp handy in case the roof repair is delayed again.")
    assert not statuses("The bakery stays open as long as the oven is fixed.")
    assert ("scaffold", "done") in statuses("The scaffold is signed off, so the mural starts.")
