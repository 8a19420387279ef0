"""bench/structure.py --misses: each failed current-value question with its hits and why."""

from __future__ import annotations

from typing import Any

from tests.conftest import load_bench

TEXTS = {
    "old": "Ilse lives in Arnhem.",
    "job": "Ilse now works for the city archive.",
    "new": "Ilse has moved to Deventer.",
}
QUESTION: dict[str, Any] = {
    "type": "current_value",
    "question": "Where does Ilse live now?",
    "current": "Deventer",
    "former": ["Arnhem"],
    "evidence": ["new"],
}


def test_a_miss_names_the_rank_of_the_current_value_and_tags_each_hit() -> None:
    report = load_bench("structure.py").miss_report(QUESTION, ["job", "old", "new"], TEXTS)
    assert "rank 3, below a former value's" in report
    lines = report.splitlines()
    assert any(line.strip().startswith("2 OLD") for line in lines), report
    assert any(line.strip().startswith("3 CUR *new") for line in lines), report


def test_a_miss_outside_the_top_shows_the_memory_that_states_the_current_value() -> None:
    report = load_bench("structure.py").miss_report(QUESTION, ["job", "old"], TEXTS)
    assert "outside the top 10" in report
    assert "-- current stated by new" in report
