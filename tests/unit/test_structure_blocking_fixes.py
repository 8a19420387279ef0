"""Blocking and fixing phrasings (sentences written for these tests, in our own words): a paused
task with its release, 'pending' as a preposition, and the fix told by its means."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


# --- blocking -------------------------------------------------------------------------------


@needs_parser
def test_paused_until_gives_the_blocker_and_the_status_on_hold() -> None:
    found = edges("The kiln firing is paused until the new thermocouple arrives.")
    assert ("kiln firing", "HAS_STATUS", "on hold", False) in found
    assert any(s == "kiln firing" and r == "BLOCKED_BY" for s, r, _, _ in found)
    found = edges("Harvest suspended pending the tractor repair.")
    assert ("harvest", "HAS_STATUS", "on hold", False) in found
    assert ("harvest", "BLOCKED_BY", "tractor repair", False) in found


@needs_parser
def test_postponed_until_gives_the_blocker_without_a_status() -> None:
    found = edges("The recital was postponed until the new piano arrives.")
    assert any(s == "recital" and r == "BLOCKED_BY" for s, r, _, _ in found)
    assert not any(r == "HAS_STATUS" for _, r, _, _ in found)


@needs_parser
def test_pending_before_a_noun_phrase_names_the_blocker() -> None:
    found = edges("The loan renewal is pending the credit check.")
    assert ("loan renewal", "BLOCKED_BY", "credit check", False) in found
    assert ("loan renewal", "HAS_STATUS", "pending", False) not in found
    # a bare "pending" is still the status
    assert ("loan renewal", "HAS_STATUS", "pending", False) in edges("The loan renewal is pending.")


@needs_parser
def test_held_or_grounded_pending_names_the_blocker() -> None:
    assert ("launch", "BLOCKED_BY", "safety audit", False) in edges(
        "The launch is held pending the safety audit."
    )
    assert ("glider", "BLOCKED_BY", "wing inspection", False) in edges(
        "The glider is grounded pending the wing inspection."
    )


@needs_parser
def test_a_blocker_told_by_what_has_not_happened_is_no_denial() -> None:
    found = edges("The boat refit is stuck because the yard hasn't approved the quote.")
    assert ("boat refit", "BLOCKED_BY", "approve the quote", False) in found
    assert ("boat refit", "BLOCKED_BY", "approve the quote", True) not in found
    # a denial before the phrasing still denies it
    assert ("migration", "BLOCKED_BY", "outage", True) in edges(
        "The outage isn't what is blocking the migration."
    )


@needs_parser
def test_a_task_that_has_stalled_names_its_blocker_and_status() -> None:
    found = edges("The boat refit has stalled because the new mast hasn't arrived.")
    assert ("boat refit", "BLOCKED_BY", "new mast", False) in found
    assert ("boat refit", "HAS_STATUS", "blocked", False) in found
    found = edges("The survey is paused because of the flooding.")
    assert ("survey", "BLOCKED_BY", "flooding", False) in found
    assert ("survey", "HAS_STATUS", "on hold", False) in found


@needs_parser
def test_an_engine_that_stalled_is_a_cause_not_a_blocked_task() -> None:
    found = edges("The car stalled because the battery was flat.")
    assert not any(r in ("BLOCKED_BY", "HAS_STATUS") for _, r, _, _ in found)


@needs_parser
def test_a_reason_after_a_dash_or_colon_is_the_blocker() -> None:
    found = edges("Boat launch stalled — the trailer still hasn't been repaired.")
    assert ("boat launch", "BLOCKED_BY", "trailer", False) in found
    assert ("boat launch", "HAS_STATUS", "blocked", False) in found
    found = edges("The kiln repair is held up: the firebricks are still at the depot.")
    assert ("kiln repair", "BLOCKED_BY", "firebrick", False) in found
    assert not any(s == "firebrick" and r == "BLOCKED_BY" for s, r, _, _ in found)


@needs_parser
def test_a_second_predicate_after_the_dash_keeps_its_own_blocker() -> None:
    found = edges("The visa renewal is stuck — blocked by the background check.")
    assert ("visa renewal", "BLOCKED_BY", "background check", False) in found
    assert not any(t.startswith("block") for _, r, t, _ in found if r == "BLOCKED_BY")


# --- fixes ----------------------------------------------------------------------------------


@needs_parser
def test_a_problem_rescued_by_an_act_is_solved_by_it() -> None:
    assert ("burnt risotto", "SOLVED_BY", "stir in fresh stock", False) in edges(
        "The burnt risotto was rescued by stirring in fresh stock."
    )
    # a rescue by a doer is no fix
    assert not any(r == "SOLVED_BY" for _, r, _, _ in edges("The hikers were rescued by the crew."))


@needs_parser
def test_worked_around_and_brought_under_control_in_the_passive() -> None:
    assert ("login timeout", "SOLVED_BY", "clear the cache", False) in edges(
        "The login timeout is worked around by clearing the cache."
    )
    assert ("mildew", "SOLVED_BY", "sulphur spray", False) in edges(
        "The mildew was brought under control with a sulphur spray."
    )
    assert ("scratch", "SOLVED_BY", "fine sandpaper", False) in edges(
        "The scratches were dealt with using fine sandpaper."
    )
    # "treated with" is handling, not a fix
    assert not any(r == "SOLVED_BY" for _, r, _, _ in edges("The deck was treated with oil."))


@needs_parser
def test_a_fix_without_its_doer_and_got_round() -> None:
    assert ("flaky export test", "SOLVED_BY", "pin the timezone", False) in edges(
        "Fixed the flaky export test by pinning the timezone."
    )
    assert ("upload limit", "SOLVED_BY", "zip the files", False) in edges(
        "We got round the upload limit by zipping the files."
    )


@needs_parser
def test_an_echoed_fix_after_a_denied_one_keeps_its_own_polarity() -> None:
    found = edges("Rebooting did nothing for the stutter, but updating the driver did.")
    assert ("stutter", "SOLVED_BY", "update the driver", False) in found
    assert ("stutter", "SOLVED_BY", "rebooting", True) in found
    found = edges("Rebooting did nothing for the stutter, and updating the driver didn't either.")
    assert ("stutter", "SOLVED_BY", "update the driver", True) in found
    # the same for any phrasing denied by its own words
    assert ("tom", "PREFERS", "opera", False) in edges("Sam isn't a fan of opera, but Tom is.")
    # a denial in the verb's sense is echoed with it
    assert ("tom", "PREFERS", "jazz", True) in edges("Mia used to love jazz, and Tom did too.")
