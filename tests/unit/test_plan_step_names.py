"""Step names of phrasal verbs whose particle follows the object, pronoun steps named by an
earlier object, unmarked pieces of a listed run, and lists ordered by a heading that names a
procedure (sentences written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


def order(text: str) -> set[tuple[str, str]]:
    return {(s, t) for s, r, t, neg in edges(text) if r == "PRECEDES" and not neg}


@needs_parser
def test_a_particle_after_a_pronoun_object_stays_in_the_step() -> None:
    found = order("Wash the mugs, then put them away.")
    assert ("wash the mugs", "put the mugs away") in found


@needs_parser
def test_a_particle_after_a_noun_object_stays_in_the_step() -> None:
    found = order("First print the invoice out, then post the letter.")
    assert ("print the invoice out", "post the letter") in found


@needs_parser
def test_a_particle_is_no_object_of_the_next_pronoun_step() -> None:
    found = order("Tap the drum, then drain the oil off, then filter it.")
    assert ("drain the oil off", "filter the oil") in found


@needs_parser
def test_a_piece_tagged_present_tense_is_an_imperative_step() -> None:
    found = order("Soak the beans overnight, drain them, then simmer the pot.")
    assert ("soak the beans", "drain the beans") in found
    assert ("drain the beans", "simmer the pot") in found


@needs_parser
def test_a_capitalised_compound_verb_opens_a_step() -> None:
    found = order("Dry-fit the joints, then glue the frame.")
    assert ("dry-fit the joints", "glue the frame") in found


@needs_parser
def test_a_pronoun_step_takes_the_object_of_the_clause_before() -> None:
    found = order("We sand the hull once the tide is out; varnishing comes after we've dried it.")
    assert ("dry the hull", "varnishing") in found


@needs_parser
def test_a_list_said_in_order_before_an_aside_is_ordered() -> None:
    found = order("bread: knead the dough, shape the loaf, bake it - in that order, no shortcuts.")
    assert ("knead the dough", "shape the loaf") in found
    assert ("shape the loaf", "bake the loaf") in found


@needs_parser
def test_a_procedure_heading_orders_its_acts() -> None:
    found = order("Deploy process: tag the release, build the image, push the image.")
    assert ("tag the release", "build the image") in found
    assert ("build the image", "push the image") in found


@needs_parser
def test_a_procedure_heading_after_a_dash_orders_its_acts() -> None:
    found = order("Release workflow — tag the commit, build the wheel, publish the wheel.")
    assert ("tag the commit", "build the wheel") in found


@needs_parser
def test_a_plain_task_list_or_a_list_of_things_is_in_no_order() -> None:
    assert not order("Saturday: buy the paint, fix the gate, call the plumber.")
    assert not order("Camping kit — tent, stove, two mats.")
    assert not order("Cleaning process: sponges, bleach and gloves.")


def projects(text: str) -> set[tuple[str, str]]:
    return {(s, t) for s, r, t, neg in edges(text) if r == "CONTAINS_TASK" and not neg}


@needs_parser
def test_a_fronted_purpose_names_the_project_of_the_steps() -> None:
    text = "For the bake sale, I'll bake the scones, then price them, then set up the stall."
    assert ("bake the scones", "price the scones") in order(text)
    assert ("bake sale", "bake the scones") in projects(text)
    assert ("bake sale", "set up the stall") in projects(text)


@needs_parser
def test_a_fronted_purpose_without_a_plan_names_no_project() -> None:
    assert not projects("For the bake sale we'll need two tables.")
