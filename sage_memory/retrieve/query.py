"""Reading a query before searching: names, a time window, tense, and structure questions.

Pure functions over the query text and "now"; no I/O. The retriever uses the result to weight
its channels (a question naming a month favours memories of that month, a question about the
past stops demoting expired facts, "what should I do next" asks the graph for the plan).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sage_memory.words import QUERY_STOPWORDS

Grain = Literal["day", "week", "month", "year"]
Structure = Literal["next", "after", "before", "requires", "path", "blockers", "kinds", "causes"]

MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTHS = {m: i + 1 for i, m in enumerate(MONTH_NAMES)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}}){_ORD},?\s*(\d{{4}})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b")
_MONTH_ONLY = re.compile(rf"\b(?:in|during|since|until|by|of|last|this)\s+({_MONTH})\b")
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d\d)\b")
_RELATIVE = re.compile(r"\b(yesterday|today|last (?:week|month|year)|this (?:week|month|year))\b")

_PAST = re.compile(
    r"\b(did|was|were|had|used to|previous(?:ly)?|former(?:ly)?|earlier|in the past|back then"
    r"|originally|at first|at the time|history|ago|before|old|until)\b"
)
#: A question that wants a relation followed to its end, not one step of it: "ultimately",
#: "directly or not", "the whole chain", "every level", "root", "all the way up".
_CHAIN = re.compile(
    r"\b(ultimate(ly)?|indirect(ly)?|transitive(ly)?|upstream|in turn|all the way|root"
    r"|underlying|deepest|bottom|original(ly)?|first place"
    r"|direct(ly)?,? (or|and) (not|indirect(ly)?|further|upstream)"
    r"|chain|(every|each|all the) (link|level|step)s?"
    r"|(step|level|link) by (step|level|link)|further (back|down|up|along)"
    r"|from (the )?(narrowest|most specific|specific)"
    r"|(narrowest|specific) .{0,20}\b(broadest|general)"
    r"|ancestors?|taxonom\w+|hierarch\w+|broader)\b"
)
#: Which relation a chain question follows, by the words it uses for it (a closed list of
#: relation words, not of any domain's nouns): causes named outright, then holding up /
#: standing in the way (blockers), kinds and categories (a taxonomy), then what lay behind or
#: led to something (causes again). The first family named wins; the answer tries the others
#: when its chain is empty.
_CHAIN_FAMILY: tuple[tuple[Structure, re.Pattern[str]], ...] = (
    ("causes", re.compile(r"\b(caus\w*|root|reasons?|why|trigger\w*|blame\w*|origin\w*)\b")),
    (
        "blockers",
        re.compile(
            r"\b(block\w*|hold(s|ing)? up|held up|holdup|hold-up|in the way|stand(s|ing)? between"
            r"|stop(s|ping|ped)?|keep(s|ing)? .{0,40}\bfrom|kept .{0,40}\bfrom|delay\w*|stall\w*"
            r"|obstacles?|imped\w+|prevent\w*|wait(s|ing)? (on|for)|stuck|gat(e|ed|ing))\b"
        ),
    ),
    (
        "kinds",
        re.compile(
            r"\b(kinds?|types?|sorts?|categor\w+|class(es|ed|ified|ification)?|genres?"
            r"|falls? (under|into)|fell (under|into)|belongs? to|sits? (under|in|within)"
            r"|taxonom\w+|hierarch\w+|ancestors?|broader|(at|of) (every|each) level"
            r"|level by level|every level)\b"
        ),
    ),
    (
        "causes",
        re.compile(
            r"\b(behind|led to|lead(s|ing)? to|started|set off|kicked off|sparked|bottom of"
            r"|resulted in|chain of events|explain\w*|came from)\b"
        ),
    ),
)
#: "What must we finish before X", "before X, what has to be done", "which steps come
#: before X": everything earlier in the plan.
_BEFORE_PLAN = re.compile(
    r"\b(what|which|everything|anything)\b.{0,80}\b(must|ha(s|ve|d) to|needs?|needed"
    r"|should|got to|steps?|tasks?|jobs?|things?|comes?|came|happens?|get through|finish\w*"
    r"|complet\w+|done)\b.{0,80}\bbefore\b"
    r"|\bbefore\b.{0,80}\b(what|which)\b.{0,40}\b(must|ha(s|ve) to|needs?|steps?|tasks?"
    r"|jobs?|done|doing)\b"
)
_STRUCTURE: tuple[tuple[Structure, re.Pattern[str]], ...] = (
    (
        "path",
        re.compile(
            r"\b(how (is|are|does|do) .+ (related|connected|linked) to|path (from|between)"
            r"|connection between|relationship between)\b"
        ),
    ),
    (
        "requires",
        re.compile(
            r"\b(what (do|does|will|would|did) (i|we|you|it|they) need|what is needed"
            r"|what'?s needed|requirements?|require[sd]?|prerequisites?|depends? on"
            r"|dependencies)\b"
        ),
    ),
    (
        "before",
        re.compile(
            r"\b(what (comes|happens|goes|is|do i do|should i do) (before|first)|before (i|we) can"
            r"|blocked by|what blocks|blocking)\b"
        ),
    ),
    ("before", _BEFORE_PLAN),
    (
        "after",
        re.compile(
            r"\b(what (comes|happens|follows|goes) (after|next)|after (that|this|finishing"
            r"|completing|i finish|we finish)|followed by)\b"
        ),
    ),
    (
        "next",
        re.compile(
            r"\b(next|what now|what remains|what'?s left|left to do|to do now|should i do"
            r"|should we do|where (was|were) (i|we)|pick up where|continue with)\b"
        ),
    ),
)
# Capitalised at the start of a question without being names.
_PROBLEM = re.compile(
    r"\b\w*(Error|Exception)\b|Traceback|\b(error|exception|fail(s|ed|ing|ure)?|broken"
    r"|crash(es|ed|ing)?|bug|doesn'?t work|not working|does not exist|how (do|can) (i|we) fix)\b",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        """what when where who whom which why how did does do is are was were would could should
        can will has have had i you we they he she it my our the a an in on at if and or but
        tell give show list find please""",
    )
)
_NAME = re.compile(r"[A-Z][\w'’.-]*")
_QUOTED = re.compile(r"[\"“”'‘’]([^\"“”'‘’]{2,80})[\"“”'‘’]")
_WORD = re.compile(r"[\w.+#()'’-]+")


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A span of world time the query names: [start, end) in UTC.

    ``any_year`` marks a month named without a year ("in June"): memories of that month in any
    year match it, while facts are judged at the latest such month not after "now".
    """

    start: datetime
    end: datetime
    grain: Grain
    any_year: bool = False

    def contains(self, when: datetime) -> bool:
        if self.any_year:
            return when.month == self.start.month
        return self.start <= when < self.end

    def overlaps(self, start: datetime | None, end: datetime | None) -> bool:
        """True when [start, end) (open ends allowed) meets the window."""
        return (start is None or start < self.end) and (end is None or end > self.start)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What the retriever reads from a query."""

    text: str
    names: tuple[str, ...] = ()  # lower-cased proper names and quoted phrases
    phrases: tuple[str, ...] = ()  # word n-grams, for exact name and alias lookup
    window: TimeWindow | None = None
    past: bool = False
    structure: Structure | None = None
    problem: bool = False  # an error message or a question about something broken


def analyze(query: str, now: datetime) -> QueryPlan:
    """Read ``query`` (asked at ``now``) into a :class:`QueryPlan`."""
    lowered = query.casefold()
    return QueryPlan(
        text=query,
        names=_names(query),
        phrases=_phrases(query),
        window=time_window(lowered, now),
        past=bool(_PAST.search(lowered)),
        structure=structure_intent(lowered),
        problem=bool(_PROBLEM.search(query)),
    )


def structure_intent(lowered: str) -> Structure | None:
    """The structure question a (lower-cased) query asks, if any.

    A chain question (a relation followed to its end) is told by two things together: a word
    that asks for the whole chain and a word naming the relation (blockers, kinds, causes).
    """
    if _CHAIN.search(lowered):
        for kind, pattern in _CHAIN_FAMILY:
            if pattern.search(lowered):
                return kind
    for kind, pattern in _STRUCTURE:
        if pattern.search(lowered):
            return kind
    return None


def _names(query: str) -> tuple[str, ...]:
    found: list[str] = [m.group(1).casefold() for m in _QUOTED.finditer(query)]
    for m in _NAME.finditer(query):
        word = re.sub(r"['’]s$", "", m.group(0)).strip(".'’").casefold()
        if word and word not in _QUESTION_WORDS and word not in MONTH_NAMES:
            found.append(word)
    return tuple(dict.fromkeys(found))


def _phrases(query: str, longest: int = 4, limit: int = 60) -> tuple[str, ...]:
    words = [w.strip(".,'’-") for w in _WORD.findall(query)]
    words = [w for w in words if w]
    out: list[str] = []
    for n in range(min(longest, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if all(_filler(w) for w in gram):
                continue  # "what is", "that": naming nothing
            out.append(" ".join(gram))
    stripped = [re.sub(r"['’]s$", "", p) for p in out]
    return tuple(dict.fromkeys([*out, *stripped]))[:limit]


def _filler(word: str) -> bool:
    low = re.sub(r"['’]s$", "", word.casefold())
    return low in _QUESTION_WORDS or low in QUERY_STOPWORDS or len(low) < 2


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _day(year: int, month: int, day: int) -> TimeWindow | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return TimeWindow(start, start + timedelta(days=1), "day")


def time_window(lowered: str, now: datetime) -> TimeWindow | None:
    """The most specific span of time a lower-cased query names, relative to ``now``."""
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        m = pattern.search(lowered)
        if m:
            day, month, year = (m[1], m[2], m[3]) if order == "dmy" else (m[2], m[1], m[3])
            found = _day(int(year), _MONTHS[month], int(day))
            if found:
                return found
    m = _ISO_DATE.search(lowered)
    if m:
        found = _day(int(m[1]), int(m[2]), int(m[3]))
        if found:
            return found
    m = _MONTH_YEAR.search(lowered)
    if m:
        return TimeWindow(*_month_span(int(m[2]), _MONTHS[m[1]]), "month")
    m = _MONTH_ONLY.search(lowered)
    if m and not (m[1] == "may" and re.search(r"\bmay (i|we|you|he|she|they|it)\b", lowered)):
        month = _MONTHS[m[1]]
        year = now.year if month <= now.month else now.year - 1
        return TimeWindow(*_month_span(year, month), "month", any_year=True)
    m = _YEAR.search(lowered)
    if m:
        year = int(m[1])
        return TimeWindow(
            datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), "year"
        )
    m = _RELATIVE.search(lowered)
    if m:
        return _relative(m[1], now)
    return None


def _relative(phrase: str, now: datetime) -> TimeWindow:
    today = datetime(now.year, now.month, now.day, tzinfo=UTC)
    if phrase == "today":
        return TimeWindow(today, today + timedelta(days=1), "day")
    if phrase == "yesterday":
        return TimeWindow(today - timedelta(days=1), today, "day")
    which, unit = phrase.split()
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        start = monday if which == "this" else monday - timedelta(days=7)
        return TimeWindow(start, start + timedelta(days=7), "week")
    if unit == "month":
        year, month = now.year, now.month
        if which == "last":
            year, month = (year, month - 1) if month > 1 else (year - 1, 12)
        return TimeWindow(*_month_span(year, month), "month")
    year = now.year if which == "this" else now.year - 1
    return TimeWindow(
        datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), "year"
    )
