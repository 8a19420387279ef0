"""Facts a sentence states beside another: the alternative it rules out ("X, but not Y"), the
correction of a denied fact ("not X, just Y") and the state a change leaves ("moved from X to
Y") (sentences written for these tests, in our own words)."""

from __future__ import annotations

from tests.unit.test_structure_extractor import edges


def test_but_not_denies_the_alternative() -> None:
    found = edges("Priya is allergic to walnuts but not to almonds.")
    assert ("priya", "ALLERGIC_TO", "walnut", False) in found
    assert ("priya", "ALLERGIC_TO", "almond", True) in found


def test_a_repeated_preposition_and_a_comment_adverb_before_not() -> None:
    found = edges("Bram works for Philips, not for its parent.")
    assert ("bram", "WORKS_AT", "parent", True) in found
    found = edges("The shed is part of the allotment, oddly, not a garden.")
    assert ("shed", "PART_OF", "garden", True) in found


def test_a_denied_fact_corrected_by_just_or_but() -> None:
    found = edges("Our bakery doesn't need a liquor licence, just a food hygiene certificate.")
    assert ("bakery", "REQUIRES", "liquor licence", True) in found
    assert ("bakery", "REQUIRES", "food hygiene certificate", False) in found
    found = edges("Hugo doesn't own a van but a pickup.")
    assert ("hugo", "OWNS", "pickup", False) in found


def test_but_before_a_clause_names_no_alternative() -> None:
    found = edges("Hugo doesn't own a van, but he rents one.")
    assert not any(not neg for _, rel, _, neg in found if rel == "OWNS")


def test_a_change_from_one_state_to_another_denies_the_first() -> None:
    found = edges("Lena moved from Graz to Linz in May.")
    assert ("lena", "LIVES_IN", "linz", False) in found
    assert ("lena", "LIVES_IN", "graz", True) in found
    found = edges("The team switched from Trello to Asana.")
    assert ("team", "USES", "trello", True) in found
    found = edges("Omar took over from Jules as treasurer.")
    assert ("jules", "HAS_ROLE", "treasurer", True) in found


def test_a_denied_change_denies_nothing_of_the_first_state() -> None:
    found = edges("Lena didn't move from Graz to Linz.")
    assert not any(t == "graz" for _, _, t, _ in found)
