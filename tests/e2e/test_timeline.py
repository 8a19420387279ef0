"""Changing facts are ordered by world time and weighed by confidence, whatever the add order.

Values of a single-valued relation (where someone lives, who they work for, what they prefer, a
task's status) arrive in random orders; afterwards the memory must agree with the true story:
the latest value is current and comes first in search, the history is in time order with
well-formed, back-to-back intervals, and ``search(as_of=t)`` holds the value valid at t.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sage_memory import SageMemory
from sage_memory.extract.base import ExtractionContext
from sage_memory.types import EdgeSpec, GraphDelta, Memory, NodeSpec

START = datetime(2025, 1, 1, tzinfo=UTC)
#: (relation, subject label, value label, sentence, question) per kind of changing fact.
KINDS = {
    "LIVES_IN": ("Person", "Place", "{s} lives in {v}.", "where does {s} live?"),
    "WORKS_AT": ("Person", "Organization", "{s} works at {v}.", "who does {s} work for?"),
    "PREFERS": ("Person", "Preference", "{s} prefers {v}.", "what does {s} prefer?"),
    "HAS_STATUS": ("Task", "Value", "{s} is {v}.", "what is the status of {s}?"),
}
VALUES = {
    "LIVES_IN": ["Lisbon", "Oslo", "Quito", "Hanoi", "Perth"],
    "WORKS_AT": ["Globex", "Initech", "Umbrella", "Hooli", "Vandelay"],
    "PREFERS": ["green tea", "espresso", "mate", "cocoa", "kombucha"],
    "HAS_STATUS": ["pending", "in progress", "blocked", "on hold", "done"],
}
SUBJECT = {"LIVES_IN": "Dana", "WORKS_AT": "Dana", "PREFERS": "Dana", "HAS_STATUS": "the audit"}


class ClaimExtractor:
    """Reads the test's one sentence shape exactly (the time logic, not extraction, is tested
    here); the confidence comes from the memory's metadata."""

    name = "claims"

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        for relation, (slabel, vlabel, pattern, _) in KINDS.items():
            rx = re.escape(pattern).replace(r"\{s\}", "(?P<s>.+?)").replace(r"\{v\}", "(?P<v>.+)")
            m = re.fullmatch(rx, memory.text)
            if m:
                conf = float(memory.metadata.get("confidence", 0.9))
                return GraphDelta(
                    nodes=(NodeSpec("s", m["s"], slabel), NodeSpec("v", m["v"], vlabel)),
                    edges=(EdgeSpec("s", "v", relation, fact=memory.text, confidence=conf),),
                )
        return GraphDelta()

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        return [self.extract(m, c) for m, c in items]


def _memory() -> SageMemory:
    return SageMemory(embedder="hashing", extractor=ClaimExtractor())


def _values_in_order(mem: SageMemory, relation: str) -> list[tuple[str, datetime, datetime | None]]:
    subject = SUBJECT[relation]
    sub = mem.explore(subject, user_id="u", hops=1, include_expired=True, relations=[relation])
    names = {n.id: n.name for n in sub.nodes}
    src = mem.find_node(subject, user_id="u").id
    rows = [
        (names[e.target_id], e.valid_from, e.valid_to)
        for e in sub.edges
        if e.relation == relation and e.source_id == src and not e.attributes.get("competing")
    ]
    return sorted(rows, key=lambda r: r[1])


def _first_value(mem: SageMemory, relation: str, limit: int = 10, **kw: object) -> str | None:
    question = KINDS[relation][3].format(s=SUBJECT[relation])
    res = mem.search(question, user_id="u", limit=limit, **kw)  # type: ignore[arg-type]
    for hit in res.memories:
        for v in VALUES[relation]:
            if hit.text.endswith(f" {v}."):
                return v
    return None


@st.composite
def histories(draw: st.DrawFn) -> tuple[str, list[tuple[str, datetime]], list[int]]:
    relation = draw(st.sampled_from(sorted(KINDS)))
    n = draw(st.integers(2, 5))
    values = draw(st.permutations(VALUES[relation]))[:n]
    gaps = draw(st.lists(st.integers(1, 200), min_size=n, max_size=n))
    times, t = [], START
    for g in gaps:
        t += timedelta(days=g)
        times.append(t)
    order = draw(st.permutations(range(n)))
    return relation, list(zip(values, times, strict=True)), list(order)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_add_order_gives_the_true_history(
    case: tuple[str, list[tuple[str, datetime]], list[int]],
) -> None:
    relation, story, order = case
    pattern = KINDS[relation][2]
    with _memory() as mem:
        for i in order:
            value, when = story[i]
            mem.add(pattern.format(s=SUBJECT[relation], v=value), user_id="u", timestamp=when)
        history = _values_in_order(mem, relation)
        # history in time order, back to back, every interval well formed, the last one open
        assert [v for v, _, _ in history] == [v for v, _ in story]
        for (_, start, end), (_, nxt, _) in itertools.pairwise(history):
            assert end is not None and start <= end == nxt
        assert history[-1][2] is None
        # the current value leads the search, and a search of one hit returns it even when
        # fusion alone picks another value (the graph brings the value that holds in)
        assert _first_value(mem, relation) == story[-1][0]
        assert _first_value(mem, relation, limit=1) == story[-1][0]
        # the context: the current value among the core facts, the former ones in the
        # history in time order
        question = KINDS[relation][3].format(s=SUBJECT[relation])
        context = mem.search(question, user_id="u").context
        core, _, past = context.partition("## History")
        assert f"{SUBJECT[relation]} {relation} {story[-1][0]}" in core
        told = [past.find(f"{relation} {v} ") for v, _ in story[:-1]]
        assert all(at >= 0 for at in told), context
        assert told == sorted(told)
        # as_of: the value valid at a moment inside each interval
        for value, when in story:
            at = when + timedelta(hours=12)
            assert _first_value(mem, relation, as_of=at) == value
            assert _first_value(mem, relation, limit=1, as_of=at) == value


def test_an_older_fact_learnt_later_becomes_history() -> None:
    with _memory() as mem:
        mem.add("Dana lives in Oslo.", user_id="u", timestamp=datetime(2026, 6, 1, tzinfo=UTC))
        late = mem.add(
            "Dana lives in Lisbon.", user_id="u", timestamp=datetime(2026, 3, 1, tzinfo=UTC)
        )
        assert _values_in_order(mem, "LIVES_IN") == [
            ("Lisbon", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC)),
            ("Oslo", datetime(2026, 6, 1, tzinfo=UTC), None),
        ]
        assert late.expired_edge_ids  # the late, older value is history from the start
        assert _first_value(mem, "LIVES_IN") == "Oslo"
        july = datetime(2026, 7, 1, tzinfo=UTC)
        assert _first_value(mem, "LIVES_IN", as_of=july) == "Oslo"
        april = datetime(2026, 4, 1, tzinfo=UTC)
        assert _first_value(mem, "LIVES_IN", as_of=april) == "Lisbon"


def test_a_value_between_two_others_shortens_the_earlier_one() -> None:
    with _memory() as mem:
        for city, month in (("Lisbon", 1), ("Perth", 9), ("Oslo", 5)):
            mem.add(
                f"Dana lives in {city}.",
                user_id="u",
                timestamp=datetime(2026, month, 1, tzinfo=UTC),
            )
        assert [(v, s.month, e and e.month) for v, s, e in _values_in_order(mem, "LIVES_IN")] == [
            ("Lisbon", 1, 5),
            ("Oslo", 5, 9),
            ("Perth", 9, None),
        ]


def test_a_much_weaker_claim_does_not_expire_a_strong_fact() -> None:
    with _memory() as mem:
        mem.add(
            "Dana works at Globex.",
            user_id="u",
            timestamp=datetime(2026, 1, 1, tzinfo=UTC),
            metadata={"confidence": 0.95},
        )
        weak = mem.add(
            "Dana works at Initech.",
            user_id="u",
            timestamp=datetime(2026, 5, 1, tzinfo=UTC),
            metadata={"confidence": 0.2},
        )
        assert weak.expired_edge_ids == ()
        # the strong fact stands, alone, as the current value
        assert _values_in_order(mem, "WORKS_AT") == [
            ("Globex", datetime(2026, 1, 1, tzinfo=UTC), None)
        ]
        sub = mem.explore("Dana", user_id="u", hops=2, include_expired=True)
        names = {n.id: n.name for n in sub.nodes}
        competing = [e for e in sub.edges if e.attributes.get("competing")]
        assert [(names[e.target_id], e.confidence) for e in competing] == [("Initech", 0.2)]
        links = [e for e in sub.edges if e.relation == "CONTRADICTS"]
        assert [(names[e.source_id], names[e.target_id]) for e in links] == [("Initech", "Globex")]
        # both claims reach the context, each with its confidence
        context = mem.search("who does Dana work for?", user_id="u").context
        assert "Globex" in context and "conf 0.95" in context
        assert "Initech" in context and "0.2" in context
        # and the contradiction waits for a person in the review queue; accepting it makes
        # the weaker claim current from its start, the old fact its history
        (item,) = [s for s in mem.review(user_id="u") if "Initech" in s.summary]
        mem.accept(item.id)
        assert _values_in_order(mem, "WORKS_AT") == [
            ("Globex", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 5, 1, tzinfo=UTC)),
            ("Initech", datetime(2026, 5, 1, tzinfo=UTC), None),
        ]


def test_a_claim_about_as_confident_replaces_the_old_value() -> None:
    with _memory() as mem:
        mem.add(
            "Dana works at Globex.",
            user_id="u",
            timestamp=datetime(2026, 1, 1, tzinfo=UTC),
            metadata={"confidence": 0.9},
        )
        mem.add(
            "Dana works at Initech.",
            user_id="u",
            timestamp=datetime(2026, 5, 1, tzinfo=UTC),
            metadata={"confidence": 0.7},
        )
        assert [v for v, _, end in _values_in_order(mem, "WORKS_AT") if end is None] == ["Initech"]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_rule_extractor_orders_moves_by_date(order: tuple[int, int]) -> None:
    story = [("Alice lives in Paris", 3), ("Alice moved to Berlin", 6)]
    with SageMemory(embedder="hashing") as mem:
        for i in order:
            text, month = story[i]
            mem.add(text, user_id="u", timestamp=datetime(2026, month, 1, tzinfo=UTC))
        assert mem.search("where does alice live?", user_id="u").memories[0].text == story[1][0]
        april = datetime(2026, 4, 1, tzinfo=UTC)
        res = mem.search("where does alice live?", user_id="u", as_of=april)
        assert res.memories[0].text == story[0][0]


class MetadataClaimExtractor:
    """Takes the one fact of a memory from its metadata (``subject``, ``relation``, ``value``),
    so a test can phrase the text however it likes."""

    name = "metadata-claims"

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        md = memory.metadata
        if "subject" not in md:
            return GraphDelta()
        return GraphDelta(
            nodes=(NodeSpec("s", md["subject"], "Person"), NodeSpec("v", md["value"], "Place")),
            edges=(EdgeSpec("s", "v", md["relation"], fact=memory.text),),
        )

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        return [self.extract(m, c) for m, c in items]


def test_the_value_that_holds_is_brought_in_when_search_found_only_an_older_one() -> None:
    # The older statement repeats the question's words; the newer one fewer of them. Fusion
    # alone ranks the older one first; the graph knows both are values of where Kofi lives
    # and brings in the one that holds (now, or at the asked time).
    old = "Where does Kofi live? Kofi lives in Accra, Kofi lives near the market in Accra."
    new = "Kofi packed the last boxes; where Kofi lives is Tamale from now on."
    with SageMemory(embedder="hashing", extractor=MetadataClaimExtractor()) as mem:
        for text, value, month in ((old, "Accra", 2), (new, "Tamale", 7)):
            mem.add(
                text,
                user_id="u",
                timestamp=datetime(2026, month, 1, tzinfo=UTC),
                metadata={"subject": "Kofi", "relation": "LIVES_IN", "value": value},
            )
        mem.add("Kofi likes long walks by the sea.", user_id="u")
        (top,) = mem.search("where does Kofi live?", user_id="u", limit=1).memories
        assert top.text == new
        assert "graph" in top.channels
        april = datetime(2026, 4, 1, tzinfo=UTC)
        (then,) = mem.search("where does Kofi live?", user_id="u", limit=1, as_of=april).memories
        assert then.text == old
        # a wider search keeps the older statement too, right after the current one
        texts = [h.text for h in mem.search("where does Kofi live?", user_id="u").memories]
        assert texts.index(new) < texts.index(old)


def test_another_slot_of_the_same_person_is_no_update_of_the_asked_one() -> None:
    # The latest memories about Farid read like his other notes, but the graph says they state
    # other slots (what he likes and prefers), so none takes the lead of where he lives.
    story = [
        ("Farid lives in Tunis", 3),
        ("Farid moved to Sfax", 6),
        ("Bilal lives in Rome", 6),
        ("Farid likes chess", 7),
    ]
    with SageMemory() as mem:
        for text, month in story:
            mem.add(text, user_id="u", timestamp=datetime(2026, month, 1, tzinfo=UTC))
        mem.add("Farid prefers mint tea", user_id="u")
        texts = [h.text for h in mem.search("where does farid live?", user_id="u").memories]
        assert texts[0] == "Farid moved to Sfax"
        assert texts.index("Farid moved to Sfax") < texts.index("Farid lives in Tunis")
