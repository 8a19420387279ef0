"""Write-time salience: small talk scores low and makes no graph; facts score high; the gates."""

from __future__ import annotations

import pytest

from sage_memory import SageMemory
from sage_memory.config import ExtractConfig, SageConfig
from sage_memory.errors import ConfigError
from sage_memory.extract.salience import SMALL_TALK, assess
from sage_memory.types import EdgeSpec, GraphDelta, NodeSpec


@pytest.mark.parametrize("text", ["Noted!", "haha yes", "Hi, how are you?", "ok thanks 👍", "lol"])
def test_small_talk_is_flagged_and_scores_near_zero(text: str) -> None:
    found = assess(text)
    assert found.small_talk
    assert found.score <= 0.1


def test_the_score_spans_the_range_and_grows_with_content_names_and_facts() -> None:
    delta = GraphDelta(
        nodes=(NodeSpec("a", "Dana"), NodeSpec("b", "Lisbon", "Place")),
        edges=(EdgeSpec("a", "b", "LIVES_IN"),),
    )
    rich = assess(
        "Last spring my sister Dana moved from Porto to Lisbon for a job at Feedzai.", delta
    )
    plain = assess("I cooked dinner.")
    assert SMALL_TALK < plain.score < rich.score
    assert rich.score >= 0.7 and not rich.small_talk
    assert rich.named >= 3 and rich.facts == 1


def test_a_greeting_with_a_name_is_not_small_talk() -> None:
    assert not assess("Hi Priyanka!").small_talk


def test_small_talk_is_stored_but_makes_no_nodes() -> None:
    with SageMemory(embedder="hashing") as mem:
        r = mem.add("Noted!", user_id="u")
        assert r.node_ids == () and r.edge_ids == ()
        stored = mem.get(r.memory_id, user_id="u")
        assert stored.text == "Noted!" and stored.salience <= 0.1
        assert [h.memory.id for h in mem.search("noted", user_id="u").memories] == [r.memory_id]


def test_min_salience_keeps_small_talk_out_of_search_but_not_out_of_get_all() -> None:
    config = SageConfig(embedder="hashing", extract=ExtractConfig(min_salience={"knowledge": 0.2}))
    with SageMemory(config=config) as mem:
        quiet = mem.add("haha yes", user_id="u")
        loud = mem.add("Haha, the Lisbon trip was great.", user_id="u")
        found = [h.memory.id for h in mem.search("haha", user_id="u").memories]
        assert found == [loud.memory_id]
        every = [m.id for m in mem.get_all(user_id="u", include_archived=True)]
        assert quiet.memory_id in every
        assert mem.get(quiet.memory_id, user_id="u").archived


def test_min_salience_is_checked() -> None:
    with pytest.raises(ConfigError, match="unknown kind"):
        SageConfig(extract=ExtractConfig(min_salience={"chat": 0.2}))
    with pytest.raises(ConfigError, match="min_salience"):
        SageConfig(extract=ExtractConfig(min_salience={"knowledge": 2.0}))


def test_a_speaker_label_is_not_content() -> None:
    assert assess("Caroline: haha yes!").small_talk
    assert not assess("Caroline: I adopted a dog named Pixel.").small_talk
