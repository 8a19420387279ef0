"""A chat turn's leading speaker label ("Name: text") is who speaks: the first person of the
turn is that speaker, the turn mentions the speaker's node, and a heading or log word before a
colon is no speaker (sentences written for these tests, in our own words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory import SageMemory
from sage_memory.extract import syntax
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.lexicon import default_lexicon
from sage_memory.extract.named import speaker_label
from sage_memory.extract.structure import StructureExtractor
from sage_memory.types import GraphDelta, Memory, Scope

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's English model absent")


def extract(text: str) -> GraphDelta:
    memory = Memory(
        id="t", text=text, scope=Scope(user_id="u"), timestamp=NOW, created_at=NOW, updated_at=NOW
    )
    delta = StructureExtractor().extract(memory, ExtractionContext())
    assert delta.error is None
    return delta


def facts(delta: GraphDelta) -> set[tuple[str, str, str]]:
    names = {n.key: n.name for n in delta.nodes}
    return {(names[e.source], e.relation, names[e.target]) for e in delta.edges}


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Odile: we drove up to the lake.", "Odile"),
        ("Tomasz Wr: I fixed the fence.", "Tomasz Wr"),
        ("Anne-Marie: my brother paints.", "Anne-Marie"),
        # headings, log words, notes, counters and teams are not speakers
        ("Note: the printer is out of toner.", ""),
        ("TODO: call the plumber.", ""),
        ("Error: disk full on the backup host.", ""),
        ("Step 2: unscrew the lid.", ""),
        ("Update: the launch moved to May.", ""),
        ("Team Falcon: we shipped the importer.", ""),
        ("Q3 roadmap: migrate the queue.", ""),
        ("Warning: the bridge is closed.", ""),
    ],
)
def test_a_speaker_label_is_decided_by_form(text: str, speaker: str) -> None:
    found, rest = speaker_label(text, default_lexicon())
    assert found == speaker
    assert rest == (text.split(": ", 1)[1] if speaker else text)


@needs_parser
def test_the_first_person_of_a_turn_is_its_speaker() -> None:
    delta = extract("Odile: I work at Brennwald Logistics.")
    assert ("Odile", "WORKS_AT", "Brennwald Logistics") in facts(delta)
    assert all(n.name != "u" for n in delta.nodes)  # not the scope's user
    # "we" holds the speaker and others: it keeps standing for the user the memory is about
    delta = extract("Odile: we work at Brennwald Logistics.")
    assert ("u", "WORKS_AT", "Brennwald Logistics") in facts(delta)


@needs_parser
def test_a_heading_keeps_the_first_person_with_the_user() -> None:
    delta = extract("Note: I work at Brennwald Logistics.")
    assert ("u", "WORKS_AT", "Brennwald Logistics") in facts(delta)


@needs_parser
def test_a_turn_mentions_its_speaker_even_without_a_fact() -> None:
    nodes = {n.name: n for n in extract("Odile: I drove up to the lake, so calm.").nodes}
    assert nodes["Odile"].label == "Person" and nodes["Odile"].mention
    # a speaker who only says "we" may be a team or a firm: its kind is left open
    nodes = {n.name: n for n in extract("Brennwald: we drove up to the lake, so calm.").nodes}
    assert nodes["Brennwald"].label == "Entity" and nodes["Brennwald"].mention


@needs_parser
def test_a_turn_that_drops_its_subject_keeps_the_speaker_as_it() -> None:
    delta = extract("Odile: started a weekend job at the Kestrel Bakery.")
    assert ("Odile", "WORKS_AT", "Kestrel Bakery") in facts(delta)


@needs_parser
def test_a_greeting_or_a_lower_case_word_is_no_part_of_a_name() -> None:
    names = {n.name for n in extract("Odile: That is so brave Ferdi, well done.").nodes}
    assert "Ferdi" in names and not any(" " in n for n in names if n.endswith("Ferdi"))


@needs_parser
def test_a_speakers_turns_meet_in_one_person_node() -> None:
    mem = SageMemory(None, embedder="hashing", clock=lambda: NOW)
    try:
        mem.add_many(
            [
                {"text": "Odile: I work at Brennwald Logistics."},
                {"text": "Ferdi: How is the new job going?"},
                {"text": "Odile: we drove up to the lake on Sunday, so calm."},
                {"text": "Odile: my sister Ines lives in Porto."},
            ],
            user_id="u",
            infer=True,
        )
        graph = mem.graph(user_id="u")
        odile = [n for n in graph.nodes if n.name.lower() == "odile"]
        assert len(odile) == 1 and odile[0].label == "Person"
        assert len(set(odile[0].memory_ids) | set(odile[0].mention_ids)) == 3
    finally:
        mem.close()
