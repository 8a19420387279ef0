"""Context packing: sections in order, the token budget (real MiniLM tokenizer), citations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory.embed import tokens
from sage_memory.retrieve import context as ctx
from sage_memory.types import Edge, EdgeHit, Memory, MemoryHit, Scope

T0 = datetime(2026, 3, 1, tzinfo=UTC)
U = Scope("u")


@pytest.fixture(scope="module")
def count() -> tokens.TokenCounter:
    counter = tokens.default_counter()
    assert isinstance(counter, tokens.WordPieceCounter), "the MiniLM tokenizer files are installed"
    return counter


def memory(text: str, mid: str = "1a2b3c4d5e6f") -> MemoryHit:
    return MemoryHit(Memory(mid, text, U, T0, T0, T0), 1.0)


def fact(**over: object) -> EdgeHit:
    e = Edge(
        "e1",
        U,
        "a",
        "b",
        "LIVES_IN",
        fact="Alice lives in Paris",
        confidence=0.85,
        valid_from=T0,
        memory_ids=("9f8e7d6c5b4a",),
    )
    e = Edge(**{**{f: getattr(e, f) for f in e.__dataclass_fields__}, **over})  # type: ignore[arg-type]
    return EdgeHit(e, 1.0, "Alice", "Paris")


def test_lines_cite_memories_and_validity() -> None:
    assert ctx.memory_line(memory("Caroline: hi")) == "- [2026-03-01] Caroline: hi [mem 1a2b3c4d]"
    line = ctx.fact_line(fact())
    assert line == (
        "- Alice LIVES_IN Paris (Alice lives in Paris) [since 2026-03-01; conf 0.85; mem 9f8e7d6c]"
    )
    ended = ctx.fact_line(fact(valid_to=datetime(2026, 6, 1, tzinfo=UTC)))
    assert "[2026-03-01 to 2026-06-01;" in ended
    assert "NOT LIVES_IN" in ctx.fact_line(fact(attributes={"negated": True}))


def test_pack_keeps_section_order_and_skips_empty_sections(count: tokens.TokenCounter) -> None:
    text = ctx.pack(
        [(ctx.CORE, ["- a fact"]), (ctx.NEXT, []), (ctx.BACKGROUND, ["- a memory"])], 2000, count
    )
    assert text == "## Core facts\n- a fact\n## Related background\n- a memory"


def test_pack_fits_the_budget_with_the_real_tokenizer(count: tokens.TokenCounter) -> None:
    lines = [ctx.memory_line(memory(f"Note {i}: " + "word " * 30, f"{i:012d}")) for i in range(60)]
    for budget in (50, 120, 400, 2000):
        text = ctx.pack([(ctx.BACKGROUND, lines), (ctx.HISTORY, ["- old"])], budget, count)
        assert count(text) <= budget
        assert text.startswith("## Related background")


def test_a_long_line_is_cut_but_keeps_its_citation(count: tokens.TokenCounter) -> None:
    long = ctx.memory_line(memory("Melanie: " + "pottery and painting " * 60))
    text = ctx.pack([(ctx.BACKGROUND, [long])], 80, count)
    assert count(text) <= 80
    assert "…" in text and text.endswith("[mem 1a2b3c4d]")


def test_counter_batches_and_matches_single_counts(count: tokens.TokenCounter) -> None:
    texts = ["hello world", "日本語のテキスト", "", "pd.read_csv('sales.csv')"] * 3
    assert tokens.count_all(count, texts) == [count(t) for t in texts]
    assert tokens.count_all(tokens.approx_tokens, ["abcd" * 10]) == [10]
