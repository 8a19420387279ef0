"""Reading queries: time windows, tense, names, phrases and structure questions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory.retrieve.query import analyze, structure_intent, time_window

NOW = datetime(2026, 7, 15, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "grain"),
    [
        ("What did Nate make on 9 November, 2022?", datetime(2022, 11, 9, tzinfo=UTC), "day"),
        ("what happened on October 25, 2022", datetime(2022, 10, 25, tzinfo=UTC), "day"),
        ("book he finished on 8th December, 2023", datetime(2023, 12, 8, tzinfo=UTC), "day"),
        ("notes from 2024-02-29", datetime(2024, 2, 29, tzinfo=UTC), "day"),
        ("what did Tim learn in August 2023?", datetime(2023, 8, 1, tzinfo=UTC), "month"),
        ("the charity event in 2024", datetime(2024, 1, 1, tzinfo=UTC), "year"),
        ("what did we discuss yesterday", datetime(2026, 7, 14, tzinfo=UTC), "day"),
        ("anything from last month?", datetime(2026, 6, 1, tzinfo=UTC), "month"),
    ],
)
def test_time_windows(query: str, start: datetime, grain: str) -> None:
    window = time_window(query.casefold(), NOW)
    assert window is not None
    assert (window.start, window.grain) == (start, grain)
    assert window.start < window.end


def test_a_month_without_a_year_is_the_latest_one_and_matches_any_year() -> None:
    april = time_window("where did alice live in april?", NOW)
    assert april is not None and april.any_year
    assert april.start == datetime(2026, 4, 1, tzinfo=UTC)
    assert april.contains(datetime(2019, 4, 20, tzinfo=UTC))
    assert not april.contains(datetime(2026, 5, 1, tzinfo=UTC))
    # A month still ahead this year means last year's.
    december = time_window("in december", NOW)
    assert december is not None and december.start.year == 2025


def test_no_window_without_a_date_may_the_verb_and_bad_days() -> None:
    assert time_window("where does alice live?", NOW) is None
    assert time_window("by may i ask something", NOW) is None
    # An impossible day falls back to its month.
    feb = time_window("an invalid 31 february, 2023 date", NOW)
    assert feb is not None and (feb.grain, feb.start.month) == ("month", 2)


def test_window_overlap_with_open_ends() -> None:
    w = time_window("in march 2026", NOW)
    assert w is not None
    assert w.overlaps(None, None)
    assert w.overlaps(datetime(2026, 1, 1, tzinfo=UTC), None)
    assert not w.overlaps(None, datetime(2026, 3, 1, tzinfo=UTC))
    assert not w.overlaps(datetime(2026, 4, 1, tzinfo=UTC), None)


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("What should I do next on my blog's backend?", "next"),
        ("what's next for the launch", "next"),
        ("What comes after the database design?", "after"),
        ("what do I need for the backend?", "requires"),
        ("which prerequisites does the deploy have", "requires"),
        ("what comes before the frontend?", "before"),
        ("how is pandas related to the sales report?", "path"),
        ("where does alice live?", None),
        # A chain: a word asking for the whole chain and a word naming the relation.
        ("Which things block the release, directly or indirectly?", "blockers"),
        ("what is stopping the deploy, all the way down?", "blockers"),
        ("What kinds of thing is a flat white, at every level?", "kinds"),
        ("Which broader categories does a kestrel belong to?", "kinds"),
        ("What was the underlying reason the build broke?", "causes"),
        ("What set off the chain of events that ended in the outage?", "causes"),
        ("What ultimately delayed the migration?", "blockers"),  # causes tried when empty
        ("Why did Caroline go to the park?", None),  # one step, not a chain
        # Everything earlier in a plan.
        ("What must we finish before the launch?", "before"),
        ("Before we can ship, which steps are left?", "before"),
        ("Where did Ana live before Berlin?", None),
    ],
)
def test_structure_intents(query: str, kind: str | None) -> None:
    assert structure_intent(query.casefold()) == kind


def test_plan_reads_names_tense_problems_and_phrases() -> None:
    plan = analyze("Where did Caroline's friend Mel go in June?", NOW)
    assert plan.names == ("caroline", "mel")  # "Where" and "June" are not names
    assert plan.past
    assert plan.window is not None and plan.window.grain == "month"
    assert "Caroline's friend" in plan.phrases
    assert "Caroline" in plan.phrases  # possessive stripped for lookup
    assert not any(p.casefold() in ("where", "did", "where did") for p in plan.phrases)
    assert not analyze("where does Alice live?", NOW).past
    assert analyze("DatabaseError: relation 'x' does not exist", NOW).problem
    assert not analyze("what is my favourite colour?", NOW).problem


def test_quoted_titles_are_names() -> None:
    plan = analyze('When did she read "Nothing is Impossible"?', NOW)
    assert "nothing is impossible" in plan.names
