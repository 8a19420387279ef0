"""Current value first from the text: later statements of one slot before earlier ones."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from sage_memory.retrieve.current import current_first, historical, reference_time
from sage_memory.retrieve.query import analyze
from sage_memory.types import Memory, Scope

NOW = datetime(2026, 12, 1, tzinfo=UTC)
SCOPE = Scope(user_id="u")


def _memory(mid: str, text: str, month: int) -> Memory:
    when = datetime(2026, month, 1, tzinfo=UTC)
    return Memory(mid, text, SCOPE, when, when, when)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


# Axis 0: the slot (where the printer is kept); axis 1: the team's other business;
# axis 2: another team's notes.
QVEC = _unit(1.0, 0.2, 0.0)
MEMORIES = {
    "old": _memory("old", "Otter team: the printer sits in room 4.", 2),
    "mid": _memory("mid", "Otter team: printer moved to the attic.", 5),
    "new": _memory("new", "Otter team: the printer is in the basement now.", 9),
    "other": _memory("other", "Otter team: lunch is at noon.", 11),
    "twin": _memory("twin", "Badger team: the printer went to the garage.", 10),
}
VECTORS = {
    "old": _unit(1.0, 0.3, 0.0),
    "mid": _unit(1.0, 0.4, 0.0),
    "new": _unit(1.0, 0.35, 0.0),
    "other": _unit(0.1, 1.0, 0.0),
    "twin": _unit(1.0, 0.0, 0.3),
}
SCORES = {"old": 1.0, "twin": 0.95, "mid": 0.9, "new": 0.7, "other": 0.6}


def _order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])


def test_the_latest_statement_of_a_slot_takes_its_best_score() -> None:
    plan = analyze("Where is the Otter team's printer?", NOW)
    out = current_first(SCORES, MEMORIES, VECTORS, QVEC, plan, None)
    # the latest statement of the slot takes its best score; the question has no "now", so
    # the order comes from what the statements say: each that says the value changed ("now",
    # "moved to") ranks above those said before it; the twin team's note and the unrelated
    # note keep their scores
    assert _order(out) == ["new", "twin", "mid", "old", "other"]
    assert sorted(out.values()) == sorted(SCORES.values())


def test_a_reference_time_puts_the_value_of_that_time_first() -> None:
    plan = analyze("Where was the Otter team's printer?", NOW)
    june = datetime(2026, 6, 15, tzinfo=UTC)
    out = current_first(SCORES, MEMORIES, VECTORS, QVEC, plan, june)
    assert _order(out)[:2] == ["mid", "twin"]
    assert out["old"] > out["new"]  # said after the reference time: last of the slot


@pytest.mark.parametrize(
    "query",
    [
        "Where did the Otter team keep the printer?",
        "Where was the printer originally?",
        "Where did the printer used to be?",
        "Where was the printer before the move?",
    ],
)
def test_a_historical_question_keeps_the_fused_order(query: str) -> None:
    assert historical(analyze(query, NOW))


@pytest.mark.parametrize(
    "query", ["Where is the printer now?", "Who leads the team these days?", "What is my quota?"]
)
def test_a_present_question_asks_for_the_current_value(query: str) -> None:
    plan = analyze(query, NOW)
    assert not historical(plan)
    assert reference_time(plan, None, NOW) is None


def test_a_named_window_is_a_reference_time() -> None:
    plan = analyze("Where was the printer in June 2026?", NOW)
    assert not historical(plan)
    at = reference_time(plan, None, NOW)
    assert at is not None and at.month == 7 and at.day == 1
    assert reference_time(plan, datetime(2026, 3, 1, tzinfo=UTC), NOW) == datetime(
        2026, 3, 1, tzinfo=UTC
    )


def test_candidates_without_vectors_or_too_few_are_left_alone() -> None:
    plan = analyze("Where is the printer?", NOW)
    assert current_first({"old": 1.0}, MEMORIES, VECTORS, QVEC, plan, None) == {"old": 1.0}
    assert current_first(SCORES, MEMORIES, {}, QVEC, plan, None) == SCORES
