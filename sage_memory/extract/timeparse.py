"""Resolve time expressions in English text to UTC datetimes, relative to an anchor.

Pure and dependency-free. The value of a mention is the start of the period it names, in
UTC: midnight of a day, the Monday of a week ("last week"), the first day of a month, the first
of January of a year. "N weeks ago" is the day seven times N days before the anchor
(granularity "week"); "N months ago" is the first day of that month.

Ambiguities are settled the way people usually mean them, and documented here:

* "last Monday" is the most recent Monday strictly before the anchor's day; "next Monday" the
  first one strictly after; "this Monday" the Monday of the anchor's week; a bare "on Monday"
  is the past one when the text is in the past tense, else the coming one.
* A month without a year ("March", "May 1st") is in the anchor's year, or the year before
  when that date is after the anchor and the text is in the past tense.
* When the text speaks of the future ("will", "starts", "is due", "plans to", ...), a month or a
  month-day without a year is the next one on or after the anchor's day: "starts school in
  September" said in December is next September.
* "May" is a month only with a day, a year, or a preposition before it ("in May"), never the
  modal verb.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

Granularity = Literal["day", "week", "month", "year"]

_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
_MONTH_ABBR = {m[:3]: n for m, n in _MONTHS.items()} | {"sept": 9}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "couple of": 2,
    "a couple of": 2,
    "few": 3,
    "a few": 3,
    "several": 3,
}

_MONTH_RE = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_NUM_RE = (
    r"(?:\d{1,3}|a couple of|couple of|a few|few|several|an?|"
    + "|".join(w for w in _NUMBER_WORDS if " " not in w and len(w) > 2)
    + ")"
)
_UNIT_RE = r"(?P<unit>day|week|month|year)s?"
_PREP = r"(?:(?:on|in|since|during|from|until|till|by|at|around|as of)\s+)?"

_ISO = re.compile(
    _PREP + r"\b(?P<y>\d{4})[-/](?P<m>\d{1,2})[-/](?P<d>\d{1,2})"
    r"(?:[T ](?P<H>\d{1,2}):(?P<M>\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b",
    re.IGNORECASE,
)
_MDY = re.compile(
    _PREP + r"\b(?P<mon>" + _MONTH_RE + r")\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b"
    r"(?:,?\s+(?P<y>\d{4})\b)?",
    re.IGNORECASE,
)
_DMY = re.compile(
    _PREP + r"\b(?:the\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>" + _MONTH_RE + r")"
    r"(?:,?\s+(?P<y>\d{4})\b)?(?!\w)",
    re.IGNORECASE,
)
_MY = re.compile(_PREP + r"\b(?P<mon>" + _MONTH_RE + r")\s+(?P<y>\d{4})\b", re.IGNORECASE)
_DAYWORD = re.compile(
    r"\b(?P<w>the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow"
    r"|this (?:morning|afternoon|evening))\b",
    re.IGNORECASE,
)
_WEEKDAY = re.compile(
    r"\b(?:(?P<rel>last|next|this|on|coming|past)\s+)?(?P<wd>monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday)s?\b",
    re.IGNORECASE,
)
_AGO = re.compile(r"\b(?P<n>" + _NUM_RE + r")\s+" + _UNIT_RE + r"\s+ago\b", re.IGNORECASE)
_IN_N = re.compile(
    r"\b(?:in\s+(?P<n>" + _NUM_RE + r")\s+" + _UNIT_RE + r"|(?P<n2>" + _NUM_RE + r")\s+"
    r"(?P<unit2>day|week|month|year)s?\s+from\s+now)\b",
    re.IGNORECASE,
)
_PERIOD = re.compile(
    r"\b(?P<rel>last|next|this|past|previous|coming)\s+(?P<unit>week|month|year)\b", re.IGNORECASE
)
_BARE_MONTH = re.compile(
    r"(?:\b(?P<rel>(?i:in|since|during|until|till|by|early|late|mid|last|next|this|of))[\s-]+)?"
    r"\b(?P<mon>January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\b(?!['’]\w)",
)
_YEAR = re.compile(r"\b(?:in|since|during|from|until|till|by|of)\s+(?P<y>(?:19|20)\d{2})\b(?!-)")

_PAST = re.compile(
    r"(?i)\b(?:was|were|did|had|ago|last|yesterday|went|moved|lived|left|got|came|met|saw|took"
    r"|made|said|told|found|ran|bought|ate|wrote|gave|sent|spent|felt|kept|lost|paid|sold"
    r"|thought|heard|flew|began|became|\w{3,}ed)\b"
)
_FUTURE = re.compile(r"\b(?:will|shall|next|tomorrow|going to|gonna|plan|upcoming)\b", re.I)
#: Words that put a bare date after the anchor: "starts school in September" said in December
#: is next September. Present-tense schedule verbs ("starts", "is due") speak of the future too.
_AHEAD = re.compile(
    r"(?i)(?:\w'll\b|\b(?:will|shall|going to|gonna|plans?|planning|plan to|upcoming|soon"
    r"|starts?|starting|begins?|beginning|is due|are due|due in|hopes? to|wants? to"
    r"|intends? to|expects? to|is getting|are getting|is moving|are moving|looking forward)\b)"
)


@dataclass(frozen=True, slots=True)
class TimeMention:
    """A time expression found in a text.

    Attributes:
        start: offset of the first character of the expression (a leading "on"/"in" included).
        end: offset just past it.
        text: the expression as written.
        value: the start of the period it names, UTC-aware.
        granularity: how precise ``value`` is.
    """

    start: int
    end: int
    text: str
    value: datetime
    granularity: Granularity


def _day(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def _add_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _number(word: str) -> int | None:
    word = word.lower().strip()
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _month_number(word: str) -> int | None:
    w = word.lower().rstrip(".")
    return _MONTHS.get(w) or _MONTH_ABBR.get(w)


def _shift(today: date, n: int, unit: str) -> tuple[date, Granularity]:
    if unit == "day":
        return today + timedelta(days=n), "day"
    if unit == "week":
        return today + timedelta(days=7 * n), "week"
    if unit == "month":
        return _add_months(today, n), "month"
    return date(today.year + n, 1, 1), "year"


def _past_or_current_year(
    month: int, day: int, today: date, past: bool, ahead: bool = False
) -> date:
    candidate = date(today.year, month, day)
    if past and candidate > today:
        candidate = date(today.year - 1, month, day)
    elif ahead and candidate < today:
        candidate = date(today.year + 1, month, day)
    return candidate


@dataclass(frozen=True, slots=True)
class _Reading:
    """What a mention is resolved against: the anchor's day and the tense of the text."""

    today: date
    past: bool
    ahead: bool


_Resolved = tuple[date | datetime, Granularity] | None


def _iso(m: re.Match[str], at: _Reading) -> _Resolved:
    try:
        hour, minute = int(m.group("H") or 0), int(m.group("M") or 0)
        y, mo, d = int(m.group("y")), int(m.group("m")), int(m.group("d"))
        return datetime(y, mo, d, hour, minute, tzinfo=UTC), "day"
    except ValueError:
        return None


def _month_day(m: re.Match[str], at: _Reading) -> _Resolved:
    month = _month_number(m.group("mon"))
    if month is None or (m.group("mon").lower() == "may" and not m.group("d")):
        return None
    try:
        day = int(m.group("d"))
        if m.group("y"):
            return date(int(m.group("y")), month, day), "day"
        return _past_or_current_year(month, day, at.today, at.past, at.ahead), "day"
    except ValueError:
        return None


def _month_year(m: re.Match[str], at: _Reading) -> _Resolved:
    month = _month_number(m.group("mon"))
    if month is not None and 1 <= int(m.group("y")) <= 9999:
        return date(int(m.group("y")), month, 1), "month"
    return None


def _day_word(m: re.Match[str], at: _Reading) -> _Resolved:
    word = m.group("w").lower()
    offset = {"yesterday": -1, "tomorrow": 1, "the day before yesterday": -2}.get(word, 0)
    offset = 2 if word == "the day after tomorrow" else offset
    return at.today + timedelta(days=offset), "day"


def _named_weekday(m: re.Match[str], at: _Reading) -> _Resolved:
    return _weekday(at.today, m.group("wd"), (m.group("rel") or "").lower(), at.past), "day"


def _ago(m: re.Match[str], at: _Reading) -> _Resolved:
    n = _number(m.group("n"))
    if n is not None and n < 10_000:
        return _shift(at.today, -n, m.group("unit").lower())
    return None


def _in_n(m: re.Match[str], at: _Reading) -> _Resolved:
    n = _number(m.group("n") or m.group("n2"))
    unit = (m.group("unit") or m.group("unit2")).lower()
    if n is not None and n < 10_000:
        return _shift(at.today, n, unit)
    return None


def _period(m: re.Match[str], at: _Reading) -> _Resolved:
    today = at.today
    rel, unit = m.group("rel").lower(), m.group("unit").lower()
    step = {"last": -1, "past": -1, "previous": -1, "next": 1, "coming": 1}.get(rel, 0)
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        return monday + timedelta(days=7 * step), "week"
    if unit == "month":
        return _add_months(date(today.year, today.month, 1), step), "month"
    return date(today.year + step, 1, 1), "year"


def _bare_month(m: re.Match[str], at: _Reading) -> _Resolved:
    rel = (m.group("rel") or "").lower()
    if m.group("mon") == "May" and not rel:
        return None  # "May I ..." is a modal verb
    month = _month_number(m.group("mon"))
    if month is None:
        return None
    today = at.today
    year = today.year
    if rel == "last":
        year -= 1 if month >= today.month else 0
    elif rel == "next":
        year += 1 if month <= today.month else 0
    elif at.past and month > today.month:
        year -= 1
    elif at.ahead and month < today.month:
        year += 1
    return date(year, month, 1), "month"


def _year(m: re.Match[str], at: _Reading) -> _Resolved:
    return date(int(m.group("y")), 1, 1), "year"


#: Each pattern with its resolver, the more specific first: a mention overlapping an earlier
#: one is dropped.
_RESOLVERS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], _Reading], _Resolved]], ...] = (
    (_ISO, _iso),
    (_MDY, _month_day),
    (_DMY, _month_day),
    (_MY, _month_year),
    (_DAYWORD, _day_word),
    (_WEEKDAY, _named_weekday),
    (_AGO, _ago),
    (_IN_N, _in_n),
    (_PERIOD, _period),
    (_BARE_MONTH, _bare_month),
    (_YEAR, _year),
)


def resolve_times(text: str, anchor: datetime) -> list[TimeMention]:
    """Find and resolve the time expressions of ``text``.

    Args:
        text: any text; odd input gives an empty list, never an error.
        anchor: "now" for relative expressions (the memory's timestamp); naive means UTC.

    Returns:
        Non-overlapping mentions in text order; more specific patterns win over overlaps.
    """
    if not text:
        return []
    anchor = anchor.replace(tzinfo=UTC) if anchor.tzinfo is None else anchor.astimezone(UTC)
    ahead = bool(_AHEAD.search(text))  # "is getting married": "-ed" alone is not the past
    past = bool(_PAST.search(text)) and not _FUTURE.search(text) and not ahead
    at = _Reading(anchor.date(), past, ahead)
    found: list[TimeMention] = []
    for pattern, resolve in _RESOLVERS:
        for m in pattern.finditer(text):
            resolved = resolve(m, at)
            if resolved is None or any(m.start() < t.end and t.start < m.end() for t in found):
                continue
            value, gran = resolved
            when = value if isinstance(value, datetime) else _day(value)
            found.append(TimeMention(m.start(), m.end(), m.group(), when, gran))
    return sorted(found, key=lambda t: t.start)


def _weekday(today: date, name: str, rel: str, past: bool) -> date:
    target = _WEEKDAYS.index(name.lower())
    delta = target - today.weekday()
    if rel in ("last", "past") or (rel in ("", "on") and past):
        return today + timedelta(days=delta - 7 if delta >= 0 else delta)
    if rel in ("next", "coming") or (rel in ("", "on") and not past):
        if delta == 0 and rel in ("", "on"):
            return today
        return today + timedelta(days=delta + 7 if delta <= 0 else delta)
    # "this Monday": the one in the anchor's week (Monday first)
    return today + timedelta(days=delta)
