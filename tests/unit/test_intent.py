"""Structure questions told by meaning when no pattern of the query reader holds their words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory.embed.hashing import HashingEmbedder
from sage_memory.embed.minilm import default_embedder
from sage_memory.retrieve.intent import IntentReader
from sage_memory.retrieve.query import analyze

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def reader() -> IntentReader:
    return IntentReader(default_embedder())


def _kind(reader: IntentReader, question: str) -> str | None:
    plan = analyze(question, NOW)
    return reader.read(plan, default_embedder().embed_query(question)).structure


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Name every obstacle in the way of the kiln rebuild, knock-on ones as well.", "blockers"),
        ("Which jobs come earlier in the schedule than glazing the greenhouse?", "before"),
        ("Going up level by level, what groups does a kayak fall into?", "kinds"),
        ("What lay at the very start of the chain that ended in the harvest failing?", "causes"),
        # The direction of an order is not always in the vector: the plan both ways.
        ("What must happen ahead of the roof tiling?", "next"),
    ],
)
def test_structure_question_in_words_no_pattern_holds(
    reader: IntentReader, question: str, kind: str
) -> None:
    assert _kind(reader, question) == kind


@pytest.mark.parametrize(
    "question",
    [
        "What did Nadia cook for the picnic on Sunday?",
        "Where is Tobias living these days?",
        "How did the choir concert go?",
        "Which film did Priya and Sam watch together?",
    ],
)
def test_ordinary_questions_ask_for_no_structure(reader: IntentReader, question: str) -> None:
    assert _kind(reader, question) is None


def test_words_that_tell_a_kind_keep_it(reader: IntentReader) -> None:
    question = "What do we need for the fence repair?"
    plan = analyze(question, NOW)
    assert plan.structure == "requires"
    assert reader.read(plan, default_embedder().embed_query(question)) is plan


def test_another_embedders_width_reads_nothing() -> None:
    # Prototypes embedded by one model say nothing of another model's vector.
    reader = IntentReader(HashingEmbedder(dim=64))
    plan = analyze("which chores precede the painting?", NOW)
    assert reader.read(plan, default_embedder().embed_query(plan.text)).structure is None
