"""Enumerations: a count and a kind noun before a colon, then the list of what is counted
(sentences written for these tests, in our own words)."""

from __future__ import annotations

from tests.unit.test_structure_extractor import edges


def test_jobs_left_after_a_count_are_the_projects_tasks() -> None:
    found = edges("The bathroom refit has two jobs left: sand the floor and seal the bath.")
    assert ("bathroom refit", "CONTAINS_TASK", "sand the floor", False) in found
    assert ("bathroom refit", "CONTAINS_TASK", "seal the bath", False) in found


def test_things_a_project_covers_after_a_colon_are_its_tasks() -> None:
    found = edges(
        "The relaunch covers three things: redo the logo, test the forms and book the shoot."
    )
    tasks = {d for s, r, d, _ in found if s == "relaunch" and r == "CONTAINS_TASK"}
    assert {"redo the logo", "test the forms", "book the shoot"} <= tasks


def test_names_listed_after_a_counted_kind_are_each_of_that_kind() -> None:
    found = edges("Tomas has two ferrets, Biscuit and Waffle.")
    assert ("biscuit", "IS_A", "ferret", False) in found
    assert ("waffle", "IS_A", "ferret", False) in found
    owned = {d for s, r, d, _ in found if s == "tomas" and r == "OWNS"}
    assert owned == {"biscuit", "waffle"}  # the names, not the kind, are what he has


def test_the_items_after_a_counted_kind_and_a_colon_are_the_objects() -> None:
    found = edges("The scraper depends on three modules: lxml, tqdm and httpx.")
    targets = {d for s, r, d, _ in found if s == "scraper" and r == "DEPENDS_ON"}
    assert targets == {"lxml", "tqdm", "httpx"}  # the listed modules, not "module"
    owned = edges("Priya has two goats: Clover and Juniper.")
    assert ("clover", "IS_A", "goat", False) in owned
    assert ("priya", "OWNS", "juniper", False) in owned


def test_examples_after_a_plural_kind_and_like_are_of_that_kind() -> None:
    found = edges("Pulses like lentils and chickpeas are cheap protein.")
    assert ("lentil", "IS_A", "pulse", False) in found
    assert ("chickpea", "IS_A", "pulse", False) in found


def test_like_as_the_verb_of_liking_gives_no_kind() -> None:
    found = edges("My kids like pancakes and waffles on Sundays.")
    assert not {e for e in found if e[1] == "IS_A"}
    assert ("kid", "PREFERS", "pancake", False) in found


def test_one_of_a_counted_set_of_a_whole_is_part_of_it() -> None:
    found = edges("The north stand is one of the four stands of the stadium.")
    assert ("north stand", "PART_OF", "stadium", False) in found
    kin = edges("Lena is one of the two daughters of the baker.")
    assert not {e for e in kin if e[1] in ("PART_OF", "MEMBER_OF")}  # a person is no part


def test_a_likened_subject_shares_the_predicate_and_is_not_liked() -> None:
    found = edges("Rye, like spelt, is a grain.")
    assert ("spelt", "IS_A", "grain", False) in found
    assert ("rye", "IS_A", "grain", False) in found
    assert not {e for e in found if e[1] == "PREFERS"}


def test_a_list_announced_by_a_counted_heading_needs_no_and() -> None:
    found = edges(
        "The loft conversion has three tasks left: fit the window, sand the floor, paint the walls."
    )
    tasks = {d for s, r, d, _ in found if s == "loft conversion" and r == "CONTAINS_TASK"}
    assert tasks == {"fit the window", "sand the floor", "paint the walls"}
