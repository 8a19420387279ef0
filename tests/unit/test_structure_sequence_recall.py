"""Recall of the order family (PRECEDES): a fronted clause without its comma, steps listed
before an order word, lists said to be in sequence (sentences written for these tests, in our
own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from sage_memory.extract.chunk import tokenize
from sage_memory.extract.fronted import close_fronted, fronted_openers
from sage_memory.extract.lexicon import default_lexicon, parse_lexicon
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")

PRECEDES = "PRECEDES"


def order(text: str) -> set[tuple[str, str]]:
    return {(s, t) for s, r, t, neg in edges(text) if r == PRECEDES and not neg}


# --- a fronted clause whose comma was left out ---------------------------------------------


def test_openers_come_from_the_fronted_phrasings_of_the_lexicon() -> None:
    lex = parse_lexicon(
        """
[[phrase]]
relation = "PRECEDES"
form = "active"
pattern = "whilst {A} , {B}"
from = "test"
[[phrase]]
relation = "PRECEDES"
form = "active"
pattern = "{A} beforehand {B}"
from = "test"
"""
    )
    assert fronted_openers(lex) == frozenset({"whilst"})
    assert {"before", "after", "once"} <= fronted_openers(default_lexicon())


@needs_parser
def test_a_fronted_before_clause_without_a_comma_orders_the_acts() -> None:
    found = order("Before we paint the railing we'll scrub the deck.")
    assert ("scrub the deck", "paint the railing") in found


@needs_parser
def test_a_fronted_after_phrase_without_a_comma_orders_the_acts() -> None:
    found = order("After the dress rehearsal we'll print the programmes.")
    assert ("dress rehearsal", "print the programmes") in found


@needs_parser
def test_a_fronted_gerund_clause_without_a_comma_orders_the_acts() -> None:
    found = order("After weighing the flour I kneaded the dough.")
    assert ("weigh the flour", "knead the dough") in found


@needs_parser
def test_the_comma_goes_where_the_fronted_clause_ends() -> None:
    toks = close_fronted(
        tokenize("Before we paint the railing we'll scrub the deck."), default_lexicon()
    )
    words = [t.lower for t in toks]
    assert words[:6] == ["before", "we", "paint", "the", "railing", ","]
    # the arcs still point at the same words
    assert all(toks[t.head].lower == "scrub" for t in toks if t.dep == "ROOT" and t.head >= 0)


@needs_parser
def test_a_sentence_with_its_comma_or_no_opener_is_left_as_it_is() -> None:
    lex = default_lexicon()
    for text in ("Before we paint the railing, we'll scrub the deck.", "We scrub the deck daily."):
        toks = tokenize(text)
        assert close_fronted(toks, lex) is toks


# --- steps listed before an order word -----------------------------------------------------


def test_steps_listed_with_commas_before_then_are_each_ordered() -> None:
    found = order("Weed the bed, rake the soil, then sow the carrots.")
    assert ("weed the bed", "rake the soil") in found
    assert ("rake the soil", "sow the carrots") in found


def test_a_heading_before_listed_steps_is_no_step() -> None:
    found = order("bike service - remove the chain, clean it, then refit it")
    assert ("remove the chain", "clean the chain") in found
    assert ("clean the chain", "refit the chain") in found


def test_a_step_that_lists_no_acts_is_not_split() -> None:
    found = order("First the walls, the ceiling and the doors, then the skirting.")
    assert all("," not in s and "," not in t for s, t in found)


# --- a list said to be in sequence ------------------------------------------------------------


def test_a_list_said_to_be_in_that_sequence_is_ordered() -> None:
    found = order(
        "Loom project: warp the loom, weave the body, and knot the fringe, in that sequence."
    )
    assert ("warp the loom", "weave the body") in found
    assert ("weave the body", "knot the fringe") in found


# --- a heading that names an order of steps -----------------------------------------------


def test_a_heading_that_names_steps_orders_its_list() -> None:
    found = order("Nightly steps: back up the database, rotate the logs, restart the worker.")
    assert ("back up the database", "rotate the logs") in found
    assert ("rotate the logs", "restart the worker") in found


def test_a_running_order_orders_its_noun_items_and_names_its_project() -> None:
    found = edges("Running order for the gala: speeches, dinner, auction, dancing.")
    assert ("speech", PRECEDES, "dinner", False) in found
    assert ("dinner", PRECEDES, "auction", False) in found
    assert ("gala", "CONTAINS_TASK", "dinner", False) in found


def test_a_plain_heading_does_not_order_its_list() -> None:
    assert not order("Order: two pizzas, a salad, garlic bread.")
    assert not order("Garden jobs: dig the beds, spread compost, plant the garlic.")


# --- a later step after a fronted clause, or in the next sentence --------------------------


def test_the_step_after_a_fronted_clause_is_the_act_after_its_comma() -> None:
    found = order("After we land, collect the bags, then find the shuttle.")
    assert ("collect the bags", "find the shuttle") in found


def test_a_sentence_opening_with_then_continues_the_step_before() -> None:
    found = order("After the survey, we pour the footings; then we frame the walls.")
    assert ("pour the footings", "frame the walls") in found


# --- arrows -----------------------------------------------------------------------------------


def test_a_chain_of_arrows_orders_its_steps_and_reads_no_cause() -> None:
    found = edges("ETL job: extract -> clean -> dedupe -> load to the warehouse")
    assert ("extract", PRECEDES, "clean", False) in found
    assert ("clean", PRECEDES, "dedupe", False) in found
    assert ("dedupe", PRECEDES, "load to the warehouse", False) in found
    assert not any(r == "CAUSES" for _, r, _, _ in found)


def test_one_arrow_alone_still_reads_leads_to() -> None:
    found = edges("Heavy rain -> flooding")
    assert ("heavy rain", "CAUSES", "flooding", False) in found
    assert not order("Heavy rain -> flooding")


# --- the project a heading names ----------------------------------------------------------


def test_a_heading_names_its_project_without_how_or_part_of() -> None:
    found = edges("Launch steps, strictly in order: back up the data, migrate, restart.")
    assert ("launch", "CONTAINS_TASK", "migrate", False) in found
    assert ("back up the data", PRECEDES, "migrate", False) in found
    found = edges("Part of the garden revamp: dig the pond, build a fence, move the shed.")
    assert ("garden revamp", "CONTAINS_TASK", "dig the pond", False) in found


def test_a_chain_of_arrows_between_events_is_left_to_the_cause_phrasing() -> None:
    assert not order("worn brake pad -> grinding noise -> failed inspection")


# --- a step that is a whole clause, "next up" ------------------------------------------------


def test_a_step_written_as_a_clause_is_named_by_its_act_not_its_subject() -> None:
    found = order("Mina drafted the brief yesterday. After that, she'll book the studio.")
    assert ("draft the brief", "book the studio") in found


def test_next_up_marks_the_later_step() -> None:
    found = order("today: filed the forms!! next up is paying the fee.")
    assert ("file the forms", "pay the fee") in found


def test_an_ordinal_of_a_noun_continues_no_plan() -> None:
    assert not order("The venue can only do Friday now. Last change, I swear.")
    assert not order("Our cat knocked the vase over again. Third time this week.")


def test_a_wanted_or_reported_step_is_named_by_its_act() -> None:
    found = order("Bakery relaunch: Ines wants to repaint the shopfront first. Then we restock.")
    assert ("repaint the shopfront", "restock") in found
    found = order("Shop refit: Omar says inventory first, then we repaint.")
    assert ("inventory", "repaint") in found


@needs_parser
def test_no_comma_is_put_between_a_verb_and_its_object() -> None:
    toks = tokenize("To book flights Maya needs her passport number.")
    assert close_fronted(toks, default_lexicon()) is toks
