"""Names a memory only mentions: nodes for the extractor's output, links kept apart from the
provenance of facts (sentences written for these tests, in our own words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory import SageMemory
from sage_memory.extract import syntax
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.structure import StructureExtractor
from sage_memory.retrieve.seeds import LinkedNode
from sage_memory.retrieve.subjects import other_subject_penalty
from sage_memory.types import GraphDelta, Memory, Scope

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's English model absent")


def extract(text: str) -> GraphDelta:
    memory = Memory(
        id="t", text=text, scope=Scope(agent_id="t"), timestamp=NOW, created_at=NOW, updated_at=NOW
    )
    delta = StructureExtractor().extract(memory, ExtractionContext())
    assert delta.error is None
    return delta


def mentions(text: str) -> dict[str, bool]:
    """Lower-case node name -> whether the delta marks it a mention."""
    return {n.name.lower(): n.mention for n in extract(text).nodes}


@pytest.fixture
def mem() -> SageMemory:
    m = SageMemory(None, embedder="hashing", clock=lambda: NOW)
    yield m
    m.close()


@needs_parser
def test_names_outside_any_fact_are_mention_nodes() -> None:
    # no relation of the schema is stated, yet the sentence names two things
    assert mentions("Rasmus rowed past the fishing boats near Trondheim.") == {
        "rasmus": True,
        "trondheim": True,
    }


@needs_parser
def test_the_parties_of_a_fact_are_not_mentions() -> None:
    found = mentions("Grete moved to Tartu. She met Joakim there.")
    assert found["grete"] is False and found["tartu"] is False
    assert found.get("joakim") is True


@needs_parser
def test_a_question_mentions_nothing() -> None:
    assert mentions("Did Leontine ever visit Ghent?") == {}


@needs_parser
def test_a_name_in_an_if_clause_is_no_mention() -> None:
    assert "valparaíso" not in mentions("If Oksana had moved to Valparaíso, she'd surf daily.")


@needs_parser
def test_a_word_capitalised_by_its_place_is_no_mention() -> None:
    # the first word of a sentence and a word in capitals are words, not names
    found = mentions("[SOLVED] Wi-Fi drops on Ubuntu 24.04, disabling power saving fixed it.")
    assert "solved" not in found
    assert found["ubuntu 24.04"] is True
    # the first word after a speaker's label opens what is said (the turn mentions its speaker)
    found = mentions("Ines: Yep, we went camping with Tomasz last summer.")
    assert found == {"tomasz": True, "ines": True}
    assert mentions("Ines: Cool, you and Tomasz should come!") == {"ines": True}


@needs_parser
def test_a_mention_is_a_link_of_the_memory_not_provenance(mem: SageMemory) -> None:
    stated = mem.add("Ottilie lives in Bergen.", user_id="u")
    said = mem.add("Wow, Ottilie took the ferry past Stavanger!", user_id="u")
    ottilie = mem.find_node("Ottilie", user_id="u")
    # the second memory names her, the first states a fact about her
    assert ottilie.memory_ids == (stated.memory_id,)
    assert said.memory_id in ottilie.mention_ids
    stavanger = mem.find_node("Stavanger", user_id="u")
    assert stavanger.memory_ids == () and stavanger.mention_ids == (said.memory_id,)
    assert stavanger.only_mentioned()
    # the walk's memory -> entity read lists only what the memory states facts about
    assert mem.store.memory_nodes(Scope(user_id="u"), [said.memory_id]) == {}


@needs_parser
def test_a_fact_takes_over_a_mention_only_node(mem: SageMemory) -> None:
    said = mem.add("Odile sailed past Marlow last week.", user_id="u")
    held = mem.find_node("Marlow", user_id="u")
    assert held.only_mentioned()
    stated = mem.add("Trevor works at Marlow.", user_id="u")
    node = mem.find_node("Marlow", user_id="u")
    assert node.id == held.id  # one node of the name, not a second one
    assert node.memory_ids == (stated.memory_id,) and node.mention_ids == (said.memory_id,)
    assert node.label == "Organization"  # the fact's label, not the mention's guess
    assert not node.only_mentioned()


@needs_parser
def test_deleting_the_only_mentioning_memory_removes_the_node(mem: SageMemory) -> None:
    kept = mem.add("Ottilie lives in Bergen.", user_id="u")
    said = mem.add("Wow, Ottilie rowed past Stavanger!", user_id="u")
    mem.delete(said.memory_id)
    with pytest.raises(Exception, match="no node"):
        mem.find_node("Stavanger", user_id="u")
    ottilie = mem.find_node("Ottilie", user_id="u")
    assert ottilie.memory_ids == (kept.memory_id,) and ottilie.mention_ids == ()


def test_hailing_someone_does_not_make_a_turn_about_them() -> None:
    """Maria's turn that hails John ("Wow, John!") is not about John: a question about Maria
    does not take it for another subject's memory, since a mention is no provenance."""
    from sage_memory.types import Node

    scope = Scope(user_id="u").partition
    turn = Memory("m1", "Wow, John! I adopted a puppy.", scope, NOW, NOW, NOW)
    john = Node("j", scope, "John", "Person", memory_ids=("m0",), mention_ids=("m1",))
    maria = Node("a", scope, "Maria", "Person", memory_ids=("m2",))
    linked = [LinkedNode(maria, 1.0, "named 'Maria'")]
    query = "what pet did Maria adopt?"

    def penalty(nodes: list[Node]) -> dict[str, float]:
        # What a memory supports is its provenance: the nodes listing it in memory_ids.
        supports = {"m1": [n.id for n in nodes if "m1" in n.memory_ids]}
        return other_subject_penalty(query, linked, nodes, {"m1": turn}, ["m1"], supports)

    assert penalty([john, maria]) == {}
    # the same link as provenance would have cost the turn the other-subject penalty
    stated = Node("j", scope, "John", "Person", memory_ids=("m0", "m1"))
    assert penalty([stated, maria])


def test_a_merge_keeps_both_nodes_mentions_apart_from_their_provenance() -> None:
    from sage_memory.evolve.duplicates import merged_node
    from sage_memory.types import Node

    scope = Scope(user_id="u").partition
    keep = Node("k", scope, "Ottilie", "Person", memory_ids=("m1",), mention_ids=("m2",))
    drop = Node("d", scope, "Otti", "Person", memory_ids=("m2",), mention_ids=("m3",))
    merged = merged_node(keep, drop, NOW)
    assert merged.memory_ids == ("m1", "m2") and merged.mention_ids == ("m3",)
