"""The one-name associative hop: mention links from the best hits (retrieve/mentions.py) and
their promotion into the fused ranking (fusion.promote), on real stores.

A question names one memory; the memory it leads to shares no word with the question, only a
name with the first one. Word and vector channels rank it among near-misses; the hop lifts it
right after the best hits. A name many memories share lifts nothing, and another scope's
memories naming the same thing are never read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.retrieve.fusion import promote
from sage_memory.retrieve.mentions import Mentions, hop_scores, mention_links, phrases
from sage_memory.types import Scope

T0 = datetime(2025, 5, 1, 9, tzinfo=UTC)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
QUERY = "Which harbour town hosted the kite regatta in the end?"
FIRST = "The kite regatta moved in the end to the harbour of Vellmar Point after the storms."
# Shares no content word with QUERY: only the name "Vellmar Point" leads here from FIRST.
SECOND = "Vellmar Point: a fishing village of nine hundred people, ferries twice daily."


def test_phrases_are_proper_names_not_sentence_starts_or_speakers() -> None:
    text = "Caroline: Thanks! We met Tom Hanks at the Bank of England. Actually it rained."
    assert phrases(text) == ["Tom Hanks", "Bank of England"]
    assert phrases("I think The Rolling Stones played in Oslo.") == ["Rolling Stones", "Oslo"]


def test_hop_prefers_a_name_few_memories_share() -> None:
    m = Mentions(holders={"rare": ["s", "a"], "common": ["s", "b", "c", "d", "e"]})
    ranked = dict(hop_scores(m, {"s": 1.0}))
    assert ranked["a"] == pytest.approx(1.0)
    assert ranked["b"] == pytest.approx(1 / 16)  # (5 - 1) ** 2
    assert "s" not in ranked  # a seed does not lend to itself


def test_promote_keeps_the_head_and_lists_scores_in_order() -> None:
    scores = {"a": 1.0, "b": 0.9, "c": 0.8, "d": 0.7, "e": 0.1}
    order = promote(["a", "b", "c", "d", "e"], scores, ["e", "a"], keep=2, take=2)
    assert order == ["a", "b", "e", "c", "d"]
    assert [scores[i] for i in order] == sorted(scores.values(), reverse=True)
    assert scores["e"] < scores["b"]
    same = {"a": 1.0, "b": 0.5}
    assert promote(["a", "b"], same, [], keep=2, take=2) == ["a", "b"]
    assert promote(["a", "b"], same, ["b"], keep=2, take=0) == ["a", "b"]


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", clock=lambda: NOW)
    yield m
    m.close()


def town(mem: SageMemory, user: str) -> dict[str, str]:
    day = timedelta(days=1)
    filler = [
        {
            "text": f"Harbour dues for boat {i} went up again in the end of the season.",
            "timestamp": T0 + i * day,
        }
        for i in range(15)
    ]
    filler += [
        {
            "text": f"Notes on the kite club meeting number {i}: snacks and a raffle.",
            "timestamp": T0 + (20 + i) * day,
        }
        for i in range(10)
    ]
    mem.add_many(filler, user_id=user, infer=False)
    first = mem.add(FIRST, user_id=user, infer=False, timestamp=T0 + 40 * day)
    second = mem.add(SECOND, user_id=user, infer=False, timestamp=T0 + 90 * day)
    return {"first": first.memory_id, "second": second.memory_id}


def _search(mem: SageMemory, user: str, **changes: object) -> list[str]:
    weights = dataclasses.replace(mem.retriever.weights, **changes)  # type: ignore[arg-type]
    res = mem.retriever.search(
        QUERY, Scope(user), limit=4, as_of=None, context_tokens=2000, now=NOW, weights=weights
    )
    return [h.id for h in res.memories]


def test_the_hop_lifts_the_memory_one_name_away(mem: SageMemory) -> None:
    ids = town(mem, "u")
    on = _search(mem, "u")
    assert on[0] == ids["first"]
    assert ids["second"] in on
    hit = mem.search(QUERY, user_id="u", limit=4).memories
    assert "associative hop" in next(h.why for h in hit if h.id == ids["second"])
    # The same search without the hop (or without the graph channel) leaves it out.
    assert ids["second"] not in _search(mem, "u", assoc_take=0)
    assert ids["second"] not in _search(mem, "u", graph=0.0, entity=0.0)


def test_links_stay_in_the_scope(mem: SageMemory) -> None:
    mine = town(mem, "u")
    theirs = town(mem, "v")  # the same texts for another user
    found = set(_search(mem, "u"))
    assert mine["second"] in found and not found & set(theirs.values())
    links = mention_links(mem.store, Scope("u"), QUERY, {mine["first"]: 1.0})
    held = {m for holders in links.holders.values() for m in holders}
    assert mine["second"] in held and not held & set(theirs.values())
