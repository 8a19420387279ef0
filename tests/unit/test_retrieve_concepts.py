"""Concept links (retrieve/concepts.py) on real stores: from the best hit, the walk steps to its
topic words and on to the named person's other memories holding them.

A question names a person and a topic; the best hit is that person's turn about the topic. The
other turn of theirs that answers it shares no word with the question, only a topic word with
the first one; another person's turn with the same word is never reached.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.retrieve.concepts import concept_scores, concept_words
from sage_memory.retrieve.query import analyze
from sage_memory.types import Scope

T0 = datetime(2025, 3, 1, 9, tzinfo=UTC)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
QUERY = "What is the favourite hobby of Ilse?"
FIRST = "Ilse: My newest hobby is glassblowing, twice a week at the studio."
# Shares no word with QUERY besides the speaker: only "glassblowing" leads here from FIRST.
SECOND = "Ilse: The glassblowing kiln cracked, so the blue vases have to wait."
OTHER = "Tomas: I tried glassblowing once and burnt my thumb on the pipe."


def test_concept_words_leave_out_speaker_names_and_short_words() -> None:
    words = concept_words("Ilse: Wow, the glassblowing kiln cracked at the studio!", {"ilse"})
    assert words == ["glassblowing", "kiln", "cracked", "studio"]


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", clock=lambda: NOW)
    yield m
    m.close()


def chat(mem: SageMemory, user: str) -> dict[str, str]:
    hour = timedelta(hours=1)
    filler = [
        {"text": f"Ilse: The lunch {i} is the soup of the day.", "timestamp": T0 + i * hour}
        for i in range(12)
    ]
    filler += [
        {"text": f"Tomas: Train {i} ran late this morning.", "timestamp": T0 + (20 + i) * hour}
        for i in range(12)
    ]
    mem.add_many(filler, user_id=user, infer=False)
    ids = {}
    # Days apart: no turn lends another its score as a neighbour.
    for i, (name, text) in enumerate((("first", FIRST), ("second", SECOND), ("other", OTHER))):
        when = T0 + (2 + i) * 24 * hour
        ids[name] = mem.add(text, user_id=user, infer=False, timestamp=when).memory_id
    return ids


def _scores(mem: SageMemory, user: str, **changes: object) -> dict[str, float]:
    weights = dataclasses.replace(mem.retriever.weights, **changes)  # type: ignore[arg-type]
    res = mem.retriever.search(
        QUERY, Scope(user), limit=30, as_of=None, context_tokens=2000, now=NOW, weights=weights
    )
    return {h.id: h.score for h in res.memories}


def test_concepts_reach_the_named_persons_turn_on_the_same_topic(mem: SageMemory) -> None:
    ids = chat(mem, "u")
    plan = analyze(QUERY, NOW)
    scores = concept_scores(mem.store, Scope("u"), plan, {ids["first"]: 1.0})
    assert scores[ids["second"]] == pytest.approx(1.0)
    assert ids["other"] not in scores  # another person's turn: the speaker filters the topic
    assert ids["first"] not in scores  # the seed does not lend to itself
    # Without a named person the topic alone links.
    plain = analyze("Which hobbies involve a kiln or a studio?", NOW)
    assert ids["other"] in concept_scores(mem.store, Scope("u"), plain, {ids["first"]: 1.0})


def test_search_lifts_the_turn_through_its_concept(mem: SageMemory) -> None:
    ids = chat(mem, "u")
    on = _scores(mem, "u")
    assert max(on, key=on.__getitem__) == ids["first"]
    # The graph channel carries the concept link: off, or without concepts, the turn scores
    # only what its own words and vector give it.
    assert on[ids["second"]] > _scores(mem, "u", concept=0.0)[ids["second"]]
    assert on[ids["second"]] > _scores(mem, "u", graph=0.0, entity=0.0)[ids["second"]]
    hits = mem.search(QUERY, user_id="u", limit=30).memories
    hit = next(h for h in hits if h.id == ids["second"])
    assert "associative walk" in hit.why


def test_concepts_stay_in_the_scope(mem: SageMemory) -> None:
    mine = chat(mem, "u")
    theirs = chat(mem, "v")  # the same texts for another user
    scores = concept_scores(mem.store, Scope("u"), analyze(QUERY, NOW), {mine["first"]: 1.0})
    assert mine["second"] in scores and not scores.keys() & set(theirs.values())
