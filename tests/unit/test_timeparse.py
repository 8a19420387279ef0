"""Time expressions resolved against an anchor (Monday 15 June 2026, 12:00 UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sage_memory.extract.timeparse import resolve_times

ANCHOR = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)  # a Monday


def one(text: str, anchor: datetime = ANCHOR) -> tuple[str, str, str]:
    """(matched text, ISO date, granularity) of the single mention in ``text``."""
    found = resolve_times(text, anchor)
    assert len(found) == 1, found
    m = found[0]
    return m.text, m.value.date().isoformat(), m.granularity


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went there today", ("today", "2026-06-15", "day")),
        ("yesterday it rained", ("yesterday", "2026-06-14", "day")),
        ("see you tomorrow", ("tomorrow", "2026-06-16", "day")),
        ("the day before yesterday", ("the day before yesterday", "2026-06-13", "day")),
        ("last Monday", ("last Monday", "2026-06-08", "day")),
        ("next Monday", ("next Monday", "2026-06-22", "day")),
        ("last Saturday we hiked", ("last Saturday", "2026-06-13", "day")),
        ("next friday", ("next friday", "2026-06-19", "day")),
        ("this Wednesday", ("this Wednesday", "2026-06-17", "day")),
        ("on Friday I fixed it", ("on Friday", "2026-06-12", "day")),
        ("on Friday we will ship", ("on Friday", "2026-06-19", "day")),
        ("2 days ago", ("2 days ago", "2026-06-13", "day")),
        ("two days ago", ("two days ago", "2026-06-13", "day")),
        ("a couple of days ago", ("a couple of days ago", "2026-06-13", "day")),
        ("3 weeks ago", ("3 weeks ago", "2026-05-25", "week")),
        ("a month ago", ("a month ago", "2026-05-01", "month")),
        ("two years ago", ("two years ago", "2024-01-01", "year")),
        ("last week", ("last week", "2026-06-08", "week")),
        ("next week", ("next week", "2026-06-22", "week")),
        ("last month", ("last month", "2026-05-01", "month")),
        ("next month", ("next month", "2026-07-01", "month")),
        ("last year", ("last year", "2025-01-01", "year")),
        ("in 5 days", ("in 5 days", "2026-06-20", "day")),
        ("in two weeks", ("in two weeks", "2026-06-29", "week")),
        ("three days from now", ("three days from now", "2026-06-18", "day")),
        ("on 2026-05-01 U123 asked", ("on 2026-05-01", "2026-05-01", "day")),
        ("2026/05/01", ("2026/05/01", "2026-05-01", "day")),
        ("May 1st 2026", ("May 1st 2026", "2026-05-01", "day")),
        ("May 1, 2026", ("May 1, 2026", "2026-05-01", "day")),
        ("on 1 May", ("on 1 May", "2026-05-01", "day")),
        ("the 3rd of July, 2025", ("the 3rd of July, 2025", "2025-07-03", "day")),
        ("Sept 9", ("Sept 9", "2026-09-09", "day")),
        ("March 2024", ("March 2024", "2024-03-01", "month")),
        ("In March Alice lived in Paris", ("In March", "2026-03-01", "month")),
        ("since 2019", ("since 2019", "2019-01-01", "year")),
    ],
)
def test_expressions(text: str, expected: tuple[str, str, str]) -> None:
    assert one(text) == expected


def test_a_month_in_the_future_means_last_year_in_past_tense_only() -> None:
    assert one("we visited in August")[1] == "2025-08-01"
    assert one("I will visit in August")[1] == "2026-08-01"
    assert one("we met on 3 December")[1] == "2025-12-03"
    assert one("last March")[1] == "2026-03-01"  # the most recent March
    assert one("last August")[1] == "2025-08-01"


def test_may_the_verb_is_not_a_month() -> None:
    assert resolve_times("May I help you? You may go.", ANCHOR) == []
    assert one("in May")[1] == "2026-05-01"


def test_iso_time_of_day_is_kept() -> None:
    found = resolve_times("deployed at 2026-05-01T14:30:00Z", ANCHOR)
    assert found[0].value == datetime(2026, 5, 1, 14, 30, tzinfo=UTC)


def test_impossible_dates_and_plain_numbers_are_ignored() -> None:
    assert resolve_times("2026-02-30, version 3.11, 42 apples, port 8080", ANCHOR) == []


def test_naive_and_foreign_anchors_are_read_as_utc() -> None:
    naive = datetime(2026, 6, 15, 12, 0)
    assert one("yesterday", naive)[1] == "2026-06-14"
    tokyo = datetime(2026, 6, 16, 1, 0, tzinfo=timezone(timedelta(hours=9)))  # 15 June in UTC
    assert one("yesterday", tokyo)[1] == "2026-06-14"


def test_several_mentions_in_order_without_overlap() -> None:
    found = resolve_times("Moved on 2026-03-01, then last week and two days ago.", ANCHOR)
    assert [m.text for m in found] == ["on 2026-03-01", "last week", "two days ago"]
    assert all(m.value.tzinfo is UTC for m in found)


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_never_raises_and_spans_are_consistent(text: str) -> None:
    found = resolve_times(text, ANCHOR)
    last_end = 0
    for m in found:
        assert text[m.start : m.end] == m.text
        assert m.start >= last_end
        assert m.value.utcoffset() == timedelta(0)
        assert m.granularity in ("day", "week", "month", "year")
        last_end = m.end


@given(
    st.lists(
        st.sampled_from(
            ["yesterday", "in 3 days", "last week", "May 2nd", "2026-01-31", "ago", "next", "9999"]
        ),
        max_size=8,
    ),
    st.datetimes(min_value=datetime(1, 3, 1), max_value=datetime(9998, 10, 1)),
)
@settings(max_examples=200, deadline=None)
def test_any_anchor_in_range_works(words: list[str], anchor: datetime) -> None:
    resolve_times(" ".join(words), anchor)


# Issue 12, point 10: a bare month or month-day in a text about the future is the next one.
DECEMBER = datetime(2026, 12, 10, 15, tzinfo=UTC)
FORWARD = [
    ("She starts school in September", "2027-09-01"),
    ("We will visit Rome in March", "2027-03-01"),
    ("The report is due on March 3", "2027-03-03"),
    ("I'll fly to Oslo in February", "2027-02-01"),
    ("He plans to move to Lisbon in June", "2027-06-01"),
    ("The course begins in January", "2027-01-01"),
    ("We're going to Tokyo in December", "2026-12-01"),  # this month is still this month
    ("My sister is getting married on December 20", "2026-12-20"),
    # past tense keeps the old reading
    ("She started school in September", "2026-09-01"),
    ("We visited Rome in March", "2026-03-01"),
    ("I lived in Oslo in February", "2026-02-01"),
]


@pytest.mark.parametrize(("text", "expected"), FORWARD)
def test_future_texts_resolve_bare_dates_forward(text: str, expected: str) -> None:
    [mention] = resolve_times(text, DECEMBER)
    assert mention.value.date().isoformat() == expected
