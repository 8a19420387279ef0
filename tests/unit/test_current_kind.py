"""Which statement of a slot may lead it, by the kind of value the slot takes (sentences
written for these tests)."""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory.retrieve.current import current_first
from sage_memory.retrieve.query import analyze
from sage_memory.types import Memory
from tests.unit.test_current_change import NOW, SCOPE, _order, _unit


def _memory(mid: str, text: str, month: int) -> Memory:
    when = datetime(2026, month, 1, tzinfo=UTC)
    return Memory(mid, text, SCOPE, when, when, when)


def _lead(texts: dict[str, tuple[str, int]], query: str, at: datetime | None = None) -> str:
    # One group by closeness: the first memory is the best match, the others close to it.
    docs = {k: _memory(k, text, month) for k, (text, month) in texts.items()}
    shapes = [(1.0, 0.3, 0.1), (1.0, 0.35, 0.0), (1.0, 0.25, 0.2), (1.0, 0.3, 0.2)]
    vectors = {k: _unit(*shapes[n]) for n, k in enumerate(docs)}
    scores = {k: 1.0 - 0.1 * n for n, k in enumerate(docs)}
    plan = analyze(query, NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.3, 0.1), plan, at)
    return _order(out)[0]


def test_a_later_note_naming_no_status_does_not_lead_a_status() -> None:
    # The last note holds the slot's words but states what the task needs, not where it stands.
    texts = {
        "first": ("Harbour kiln: the glaze order is pending.", 1),
        "moved": ("Harbour kiln: the glaze order is in progress.", 2),
        "needs": ("Harbour kiln: the glaze order needs a pallet truck first.", 3),
    }
    assert _lead(texts, "What is the status of the glaze order at Harbour kiln now?") == "moved"


def test_a_later_note_naming_no_figure_does_not_lead_a_figure() -> None:
    # Two statements of the target give figures; a later note of the same log, on another
    # matter, names none.
    texts = {
        "first": ("Dora's swim log: target time is 31:00 for the mile.", 1),
        "revised": ("Dora's swim log: the coach set my target time at 29:30.", 2),
        "other": ("Dora's swim log: switching pools, the coach is off to Leeds.", 3),
    }
    assert _lead(texts, "What is Dora's target time now?") == "revised"


def test_status_values_of_other_tasks_make_no_kind() -> None:
    # Two notes give statuses of the team's tasks without a word of the slot asked: the slot
    # (the client contact) is no status, and its update still leads.
    texts = {
        "first": ("Wren engagement: client contact is Omar Said.", 1),
        "status": ("Wren engagement is in progress.", 2),
        "update": ("Wren: client contact changed to Lena Ruiz.", 3),
        "pending": ("Wren status pending.", 1),
    }
    assert _lead(texts, "Who is the Wren client contact now?") == "update"
