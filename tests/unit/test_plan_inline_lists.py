"""Plans told as inline lists ("1) ... 2) ...", "(a) ... (b) ..."), phrasal verbs kept in a
step's name, and verbs a verbless step may borrow (sentences written for these tests, in our
own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from sage_memory.extract.text import split_sentences
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


def order(text: str) -> set[tuple[str, str]]:
    return {(s, t) for s, r, t, neg in edges(text) if r == "PRECEDES" and not neg}


def test_an_inline_numbered_list_is_one_sentence() -> None:
    pieces = [s.text for s in split_sentences("Jam day: 1. rinse the jars 2. boil the lids")]
    assert pieces == ["Jam day: 1. rinse the jars 2. boil the lids"]


def test_a_number_ending_a_sentence_still_ends_it() -> None:
    pieces = [s.text for s in split_sentences("The bus left at 9. then it rained.")]
    assert pieces == ["The bus left at 9.", "then it rained."]


@needs_parser
def test_an_inline_numbered_list_orders_its_steps() -> None:
    found = order("Jam day: 1) rinse the jars 2) boil the lids 3) fill the jars")
    assert ("rinse the jars", "boil the lids") in found
    assert ("boil the lids", "fill the jars") in found


@needs_parser
def test_an_inline_dotted_list_orders_its_steps() -> None:
    found = order("Jam day: 1. rinse the jars 2. boil the lids 3. fill the jars")
    assert ("rinse the jars", "boil the lids") in found
    assert ("boil the lids", "fill the jars") in found


@needs_parser
def test_an_inline_lettered_list_orders_its_steps() -> None:
    found = order("Kayak trip: (a) pump the tyres (b) strap the boat (c) drive to the lake")
    assert ("pump the tyres", "strap the boat") in found
    assert ("strap the boat", "drive to the lake") in found


@needs_parser
def test_a_number_that_starts_no_count_cuts_no_step() -> None:
    assert not order("Kayak trip: strap the boat on bay 2) then drive")


@needs_parser
def test_a_listed_step_keeps_the_verb_of_its_phrasal_verb() -> None:
    found = order("Server move:\n1. back up the volumes\n2. drain the nodes")
    assert ("back up the volumes", "drain the nodes") in found


@needs_parser
def test_a_step_of_a_phrasal_verb_alone_keeps_its_particle() -> None:
    found = order("First warm up, then stretch the calves.")
    assert ("warm up", "stretch the calves") in found


@needs_parser
def test_a_noun_modifier_lends_no_verb_to_a_verbless_step() -> None:
    names = {t for _, t in order("Pool night: swim test first, then the relay drill.")}
    assert "swim the relay drill" not in names


# --- "ahead of" and steps named by an ordinal ------------------------------------------------


@needs_parser
def test_a_postposed_ahead_of_orders_the_acts() -> None:
    found = order("We rinse the nets ahead of mending them.")
    assert ("rinse the nets", "mend the nets") in found or ("rinse the nets", "mend them") in found


@needs_parser
def test_ahead_of_schedule_orders_nothing() -> None:
    assert not order("The harbour wall repair is running ahead of schedule.")
    assert not order("We mended the nets ahead of time.")


@needs_parser
def test_an_ordinal_step_noun_opens_a_step() -> None:
    found = order("The first job is to clear the gutters. The next step is to patch the flashing.")
    assert ("clear the gutters", "patch the flashing") in found


@needs_parser
def test_the_last_step_named_closes_the_plan() -> None:
    found = order(
        "Start by sweeping the yard, then hose the steps, and the last step is to oil the gate."
    )
    assert ("hose the steps", "oil the gate") in found


@needs_parser
def test_putting_one_step_ahead_of_another_orders_them() -> None:
    found = order("Tomas has put the sail repair ahead of the mast inspection.")
    assert ("sail repair", "mast inspection") in found


@needs_parser
def test_after_that_points_back_and_reverses_no_order() -> None:
    found = order("The hedge trim comes first, and after that the lawn edging.")
    assert ("lawn edging", "hedge trim") not in found
    assert not any(t.startswith("hedge trim") and s == "lawn edging" for s, t in found)


@needs_parser
def test_waiting_until_after_orders_the_steps_and_names_no_waiting() -> None:
    found = order("Grouting waits until after the tiling.")
    assert ("tiling", "grout") in found or ("tiling", "grouting") in found
    assert not any("wait" in t for _, t in found)
