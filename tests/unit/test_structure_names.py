"""Node names and labels of the structure extractor: the names a sentence mentions outside any
fact it states, their labels from position and preposition, and a kin or role noun in close
apposition to a name (sentences written for these tests, in our own words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory import SageMemory
from sage_memory.entities.resolution import (
    GUESSED_LABEL,
    label_guessed,
    mention_only,
    merged_label,
)
from sage_memory.extract import syntax
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.structure import StructureExtractor
from sage_memory.types import GraphDelta, Memory, Scope

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's English model absent")


def extract(text: str) -> GraphDelta:
    memory = Memory(
        id="t",
        text=text,
        scope=Scope(agent_id="t"),
        timestamp=NOW,
        created_at=NOW,
        updated_at=NOW,
    )
    delta = StructureExtractor().extract(memory, ExtractionContext())
    assert delta.error is None
    return delta


def nodes(text: str) -> dict[str, str]:
    """Lower-case node name -> label."""
    return {n.name.lower(): n.label for n in extract(text).nodes}


def edges(text: str) -> set[tuple[str, str, str]]:
    delta = extract(text)
    names = {n.key: n.name.lower() for n in delta.nodes}
    return {(names[e.source], e.relation, names[e.target]) for e in delta.edges}


@needs_parser
def test_names_a_sentence_mentions_are_nodes_without_a_fact() -> None:
    # no relation of the schema is stated, yet the sentence names two things
    found = nodes("Rasmus rowed past the fishing boats near Trondheim.")
    assert set(found) == {"rasmus", "trondheim"}  # a common noun outside a fact is left alone


@needs_parser
def test_a_mentioned_name_is_labelled_by_its_words_or_a_marked_guess() -> None:
    delta = extract("Halvard renders the animations through Houdini for Brightwater Labs.")
    found = {n.name.lower(): n for n in delta.nodes}
    # the words say it: an organization's head noun; no guess
    assert found["brightwater labs"].label == "Organization"
    assert not label_guessed(found["brightwater labs"].attributes)
    # the position only suggests it ("through": an instrument); marked as a guess
    assert found["houdini"].label == "Tool" and label_guessed(found["houdini"].attributes)
    assert found["halvard"].label == "Person" and label_guessed(found["halvard"].attributes)


@needs_parser
def test_a_guessed_label_keeps_no_two_nodes_of_one_name_apart() -> None:
    mem = SageMemory(None, embedder="hashing", clock=lambda: NOW)
    try:
        mem.add("Odile flew to Marlow last week.", user_id="u")  # Marlow: a place, guessed
        mem.add("Trevor works at Marlow.", user_id="u")  # Marlow: an organization, by a fact
        node = mem.find_node("Marlow", user_id="u")
        assert node.label == "Organization"  # the fact's label replaced the guess
        assert not label_guessed(node.attributes)
        assert len(node.memory_ids) == 2  # one node for both mentions
    finally:
        mem.close()


@needs_parser
def test_a_mentioned_name_is_marked_mention_only_until_a_fact_names_it() -> None:
    found = {n.name.lower(): n for n in extract("Odile flew to Marlow last week.").nodes}
    assert mention_only(found["marlow"].attributes)
    mem = SageMemory(None, embedder="hashing", clock=lambda: NOW)
    try:
        mem.add("Odile flew to Marlow last week.", user_id="u")
        assert mention_only(mem.find_node("Marlow", user_id="u").attributes)
        mem.add("Trevor works at Marlow.", user_id="u")  # a fact about it: no longer a mention
        assert not mention_only(mem.find_node("Marlow", user_id="u").attributes)
    finally:
        mem.close()


@needs_parser
def test_a_quantity_and_its_unit_is_no_mentioned_name() -> None:
    assert "gb" not in nodes("Wilhelmina copied 40 GB onto the archive drive.")


@needs_parser
def test_a_date_is_no_mentioned_thing() -> None:
    found = nodes("Odile sailed around Gotland in August.")
    assert "august" not in found
    assert "gotland" in found


@needs_parser
def test_a_question_mentions_nothing() -> None:
    assert nodes("Did Leontine ever visit Ghent?") == {}


@needs_parser
def test_a_mentioned_name_inside_a_fact_name_is_that_node() -> None:
    # the fact's own ends stay; the mention adds no second node for the same name
    found = nodes("Grete moved to Tartu.")
    assert set(found) == {"grete", "tartu"}
    assert found["tartu"] == "Place"  # the fact's label stands


def test_a_kin_noun_before_a_name_leaves_the_name() -> None:
    assert ("joaquim", "LIVES_IN", "coimbra") in edges("My cousin Joaquim lives in Coimbra.")


def test_a_role_noun_before_a_name_leaves_the_name() -> None:
    found = edges("Our treasurer Teodora works at Quillfield.")
    assert ("teodora", "WORKS_AT", "quillfield") in found


def test_a_common_noun_before_a_name_stays_in_the_name() -> None:
    # "Route 9", "Lake Bled": not a person's relation to a name, one name
    found = edges("Ilse lives near Lake Bled.")
    assert any(t == "lake bled" for _, _, t in found)


def test_a_quantity_adjective_is_no_part_of_a_name() -> None:
    found = edges("The whole greenhouse depends on a single rain barrel.")
    assert ("greenhouse", "DEPENDS_ON", "rain barrel") in found


def test_a_fact_label_beats_a_guess_and_a_guess_beats_no_kind() -> None:
    guess = {GUESSED_LABEL: True}
    assert merged_label("Place", guess, "Organization", {}) == ("Organization", False)
    assert merged_label("Organization", {}, "Place", guess) == ("Organization", False)
    assert merged_label("Entity", {}, "Person", guess) == ("Person", True)
    assert merged_label("Person", guess, "Entity", {}) == ("Person", True)


@needs_parser
def test_an_adverb_before_a_mentioned_name_is_no_part_of_it() -> None:
    found = nodes("Priya writes for several papers, chiefly Harbor Weekly.")
    assert "harbor weekly" in found
    assert not any(n.startswith("chiefly") for n in found)


@needs_parser
def test_a_number_after_a_mentioned_name_is_part_of_it() -> None:
    assert "terminal 4" in nodes("The ferry leaves from Terminal 4 at noon.")


@needs_parser
def test_an_ampersand_joins_the_parts_of_one_mentioned_name() -> None:
    found = nodes("Jonas trains at Stone & Rope every week.")
    assert "stone & rope" in found
    assert "rope" not in found and "stone" not in found


@needs_parser
def test_a_possessive_inside_an_institution_name_keeps_one_name() -> None:
    found = nodes("Ravi studied at King's College in Lagos.")
    assert "king college" in {name.replace("'s", "") for name in found}
    assert "king" not in found and "college" not in found
