"""Argument names that leave the predicate out: a subject shared by coordinated predicates, a
gerund subject of a finite verb and a note that opens with its modal (sentences written for
these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


@needs_parser
def test_a_shared_subject_stops_at_the_first_auxiliary() -> None:
    got = edges("The tax refund has been submitted and is awaiting approval.")
    assert ("tax refund", "HAS_STATUS", "pending", False) in got
    got = edges("The north tower was built in 1920 and is now part of the campus.")
    assert ("north tower", "PART_OF", "campus", False) in got


@needs_parser
def test_a_gerund_subject_is_named_without_its_predicate() -> None:
    assert ("sand the deck", "PRECEDES", "oil the deck", False) in edges(
        "Sanding the deck has to happen before you oil it."
    )
    assert ("rotate the logs", "PRECEDES", "backup", True) in edges(
        "Rotating the logs no longer happens before the backup."
    )


@needs_parser
def test_a_note_without_subject_is_named_after_its_modal() -> None:
    assert ("merge the branch", "BLOCKED_BY", "build server", False) in edges(
        "Can't merge the branch - waiting on the build servers to come back."
    )


@needs_parser
def test_a_kept_up_act_keeps_its_gerund_and_a_started_one_is_the_act() -> None:
    assert ("nurse", "RECOMMENDS", "keep taking the antibiotics", False) in edges(
        "The nurse advised me to keep taking the antibiotics."
    )
    assert ("sand the floor", "BLOCKED_BY", "glue", False) in edges(
        "Can't start sanding the floor until the glue dries."
    )
