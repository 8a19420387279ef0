"""A change told in text: which questions reorder statements by time, and which later
statements may lead.

A question without "now" or a date may still ask for a value that changed ("what is the
build's memory limit?"); the later statement wins there only when it says the value changed
("was raised to 4 GB"), in the sentence that states the asked slot. Passages on one topic that
say no change keep the order fusion gave them, and so do statements of the same moment (a
batch of documents stored at once has no order in time).
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from sage_memory.retrieve.change import (
    asks_now,
    marks_change,
    names_nothing,
    slot_sentence,
    statement_span,
)
from sage_memory.retrieve.current import _stems, current_first
from sage_memory.retrieve.query import analyze
from sage_memory.types import Memory, Scope

NOW = datetime(2026, 12, 1, tzinfo=UTC)
SCOPE = Scope(user_id="u")


def _memory(mid: str, text: str, day: int) -> Memory:
    when = datetime(2026, 3, day, tzinfo=UTC)
    return Memory(mid, text, SCOPE, when, when, when)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])


def test_present_time_questions_and_change_cues_are_read() -> None:
    assert asks_now("Which runner image do we build on these days?")
    assert asks_now("who hosts the podcast at the moment")
    assert not asks_now("What is the memory limit of the build job?")
    assert marks_change("the memory limit was raised to 4 GB")
    assert marks_change("we moved the retro to Thursdays")
    assert marks_change("coverage went from 61% to 70%")
    assert not marks_change("the memory limit of the build job is 2 GB")


def test_the_slot_sentence_and_its_span_leave_the_rest_of_a_long_message_out() -> None:
    text = (
        "user: I am setting up the Dockerfile for the parser. Also, the memory limit of the "
        "build job, which has now grown to 4 GB, should be enough. Kubernetes is next."
    )
    asked = _stems("memory limit build job")
    found = slot_sentence(text, _stems, asked, 2)
    assert found is not None
    sentence, held = found
    assert sentence.startswith("Also, the memory limit")
    assert held >= _stems("memory") | _stems("limit")
    span = statement_span(sentence, _stems, asked)
    assert span.startswith("memory limit") and "grown" in span
    # the sentence names nothing but its first word; the whole message names Kubernetes
    assert names_nothing(span)
    assert not names_nothing(text)


# Axis 0: the build job's memory limit; axis 1: the parser work the later message is mostly
# about; axis 2: anything else.
LIMIT = {
    "first": _memory("first", "user: The memory limit of the build job is 2 GB for now.", 2),
    "reply": _memory(
        "reply", "assistant: With a 2 GB memory limit on the build job, cache the wheels.", 3
    ),
    "raised": _memory(
        "raised",
        "user: I am rewriting the tokenizer of the parser and want faster tests. The memory "
        "limit of the build job was raised to 4 GB yesterday. How do I split the suite?",
        20,
    ),
    "other": _memory("other", "user: lint runs before the tests.", 21),
}
LIMIT_VECTORS = {
    "first": _unit(1.0, 0.1, 0.0),
    "reply": _unit(1.0, 0.2, 0.1),
    "raised": _unit(0.5, 1.0, 0.0),  # the whole message is far from the question
    "other": _unit(0.0, 0.2, 1.0),
}
LIMIT_SCORES = {"first": 1.0, "reply": 0.9, "raised": 0.6, "other": 0.5}
LIMIT_QUERY = _unit(1.0, 0.0, 0.0)


def test_a_later_message_that_says_the_value_changed_leads_the_statement_it_updates() -> None:
    plan = analyze("What is the memory limit of the build job?", NOW)
    out = current_first(LIMIT_SCORES, LIMIT, LIMIT_VECTORS, LIMIT_QUERY, plan, None)
    order = _order(out)
    assert order.index("raised") < order.index("first")
    assert out["other"] == LIMIT_SCORES["other"]


def test_without_a_change_cue_a_later_statement_keeps_its_place() -> None:
    # The same story, but the later message states the limit without saying it changed: a
    # question without "now" does not reorder statements joined by words alone.
    plain = dict(LIMIT)
    plain["raised"] = _memory(
        "raised",
        "user: I am rewriting the tokenizer of the parser and want faster tests. The memory "
        "limit of the build job is 4 GB. How do I split the suite?",
        20,
    )
    plan = analyze("What is the memory limit of the build job?", NOW)
    out = current_first(LIMIT_SCORES, plain, LIMIT_VECTORS, LIMIT_QUERY, plan, None)
    assert _order(out) == _order(LIMIT_SCORES)


def test_passages_of_one_moment_keep_the_fused_order() -> None:
    # Reference passages stored in one batch share one timestamp: even a question asking
    # for the present has no time order to apply between them.
    when = datetime(2026, 5, 1, tzinfo=UTC)
    docs = {
        i: Memory(i, text, SCOPE, when, when, when)
        for i, text in {
            "a": "Lake Vostok: the lake's depth is now put at 900 metres by a newer survey.",
            "b": "Lake Vostok: the lake's depth was first estimated at 500 metres.",
            "c": "Lake Vostok: the lake's depth makes it one of the deepest under ice.",
        }.items()
    }
    vectors = {"a": _unit(1.0, 0.2), "b": _unit(1.0, 0.1), "c": _unit(1.0, 0.3)}
    scores = {"b": 1.0, "c": 0.9, "a": 0.8}
    for question in ("What is the depth of Lake Vostok?", "How deep is Lake Vostok now?"):
        plan = analyze(question, NOW)
        out = current_first(scores, docs, vectors, _unit(1.0, 0.0), plan, None)
        assert _order(out) == ["b", "c", "a"]


def test_a_later_reply_repeating_the_old_value_stays_where_it_was() -> None:
    # The update leads the statement it supersedes; a reply said after the first statement
    # but before the update is superseded too; nothing said after the update moves.
    late = dict(LIMIT)
    late["echo"] = _memory(
        "echo", "assistant: a 2 GB memory limit on the build job is tight for the suite.", 25
    )
    vectors = {**LIMIT_VECTORS, "echo": _unit(1.0, 0.15, 0.05)}
    scores = {"echo": 1.1, **LIMIT_SCORES}
    plan = analyze("What is the memory limit of the build job?", NOW)
    out = current_first(scores, late, vectors, LIMIT_QUERY, plan, None)
    order = _order(out)
    assert order[0] == "echo"
    assert order.index("raised") < order.index("first") < order.index("reply")
