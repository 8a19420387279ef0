"""The relation lexicon: phrasings of each relation family, loaded from ``data/lexicon.toml``.

The lexicon is data, not code: a phrasing is a lemma pattern with argument slots
(``"{A} be hold up by {B}"``) plus where it came from. This module only parses that file into
frozen structures the matcher (:mod:`.clauses`) walks; it knows no English itself.

Pattern elements (see the file's header for the full grammar):

* ``{A}`` ``{B}`` ``{C}`` argument slots, ``{X}`` an unused filler, ``{S}`` a doer that is not
  an argument;
* ``word`` or ``w1|w2`` a literal lemma (one of several);
* ``(w1|w2)`` an optional literal;
* ``<verb>``, ``<noun>``, ``<status>`` a part of speech or a status phrase.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

#: Slot names a pattern may use; A and B are the edge's ends unless ``edges`` says otherwise.
SLOTS = frozenset({"A", "B", "C", "X", "S"})
#: Element kinds.
SLOT, WORD, OPTIONAL, POS = "slot", "word", "optional", "pos"
_POS_ELEMENTS = frozenset({"verb", "noun", "status"})


class LexiconError(ValueError):
    """The lexicon file is malformed; the message names the entry and the rule."""


@dataclass(frozen=True, slots=True)
class Element:
    """One element of a pattern: a slot, a literal (set of lemmas), an optional one or a POS."""

    kind: str
    values: frozenset[str] = frozenset()
    slot: str = ""


@dataclass(frozen=True, slots=True)
class Phrase:
    """One way of saying a relation.

    Attributes:
        relation: the relation the phrasing states (``BLOCKED_BY``).
        form: active, passive, nominal, negated, conditional or casual.
        elements: the compiled pattern.
        edges: (source slot, relation, target slot or ``=value``) triples it proposes.
        negated: the phrasing itself denies the relation ("left Amazon").
        weak: a loose phrasing, used only when no stronger phrasing matched the clause.
        flags: named constraints on the arguments (``org_only``, ``person_source``, ...).
        source: where the phrasing came from (a dictionary, docs/relations.md, derived).
        pattern: the pattern as written, for messages and tests.
    """

    relation: str
    form: str
    elements: tuple[Element, ...]
    edges: tuple[tuple[str, str, str], ...]
    negated: bool = False
    weak: bool = False
    flags: frozenset[str] = frozenset()
    source: str = ""
    pattern: str = ""

    @property
    def literal_count(self) -> int:
        """How many literal words the pattern needs: more means a more specific phrasing."""
        # a part-of-speech element ("<verb>") is less specific than a word
        return sum(2 if e.kind == WORD else 1 if e.kind == POS else 0 for e in self.elements)


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Closed-class word lists, status and sequence vocabularies, and the phrasings."""

    closed: dict[str, frozenset[str]]
    status: dict[str, tuple[tuple[str, ...], ...]]
    sequence: dict[str, tuple[str, ...]]
    phrases: tuple[Phrase, ...]
    by_first_word: dict[str, tuple[Phrase, ...]] = field(default_factory=dict)
    #: Informal spellings and their standard forms ("til" -> "until"), read before tagging so
    #: the parser and the phrasings see the words they know.
    spelling: dict[str, str] = field(default_factory=dict)
    #: Every literal lemma of every pattern, gathered once: the tagger asks for it at each
    #: open-class word, and gathering it there was the largest cost in a profile of add_many.
    verbs: frozenset[str] = field(init=False, default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "verbs", _pattern_lemmas(self.phrases))

    def words(self, name: str) -> frozenset[str]:
        """A closed-class list by name (empty when the file has none of that name)."""
        return self.closed.get(name, frozenset())

    def respell(self, text: str) -> str:
        """``text`` with each informal spelling of :attr:`spelling` (a whole word, any case)
        replaced by its standard form ("cant go til noon" -> "can't go until noon")."""
        if not self.spelling:
            return text
        return _spelling_pattern(tuple(self.spelling)).sub(
            lambda m: self.spelling[m.group(0).lower()], text
        )


@lru_cache(maxsize=8)
def _spelling_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for all informal spellings, longest first ("w/o" before "w/")."""
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w'/])(?:{alternatives})(?![\w'/])", re.IGNORECASE)


def _pattern_lemmas(phrases: tuple[Phrase, ...]) -> frozenset[str]:
    """Every literal lemma of ``phrases``: words the tagger should read as verbs when they
    could be either ("needs", "uses")."""
    out: set[str] = set()
    for phrase in phrases:
        for e in phrase.elements:
            if e.kind in (WORD, OPTIONAL):
                out |= {w for v in e.values for w in v.split("_")}
    return frozenset(out)


def compile_pattern(pattern: str) -> tuple[Element, ...]:
    """The elements of one pattern string; raises :class:`LexiconError` on a bad element."""
    out: list[Element] = []
    for raw in pattern.split():
        if raw.startswith("{") and raw.endswith("}"):
            name = raw[1:-1]
            if name not in SLOTS:
                raise LexiconError(
                    f"unknown slot {raw!r} in {pattern!r}: use one of {sorted(SLOTS)}"
                )
            out.append(Element(SLOT, slot=name))
        elif raw.startswith("<") and raw.endswith(">"):
            name = raw[1:-1]
            if name not in _POS_ELEMENTS:
                raise LexiconError(f"unknown element {raw!r} in {pattern!r}")
            out.append(Element(POS, frozenset({name})))
        elif raw.startswith("(") and raw.endswith(")"):
            out.append(Element(OPTIONAL, frozenset(raw[1:-1].split("|"))))
        else:
            out.append(Element(WORD, frozenset(raw.split("|"))))
    if not any(e.kind in (WORD, POS) for e in out):
        raise LexiconError(f"pattern {pattern!r} has no literal word: it would match anything")
    return tuple(out)


def _phrase(entry: dict[str, Any]) -> Phrase:
    for key in ("relation", "form", "pattern", "from"):
        if key not in entry:
            raise LexiconError(f"phrase {entry!r} lacks {key!r}: every entry says what and whence")
    relation = str(entry["relation"])
    elements = compile_pattern(str(entry["pattern"]))
    # a status pattern's target is the status value it matched ("=*")
    has_status = any(e.kind == POS and "status" in e.values for e in elements)
    default = [["A", relation, "=*" if has_status else "B"]]
    raw_edges = entry.get("edges") or default
    edges = tuple((str(s), str(r), str(t)) for s, r, t in raw_edges)
    used = {e.slot for e in elements if e.kind == SLOT}
    for s, _, t in edges:
        for end in (s, t):
            if not end.startswith("=") and end not in used:
                raise LexiconError(f"edge end {end!r} is not a slot of {entry['pattern']!r}")
    known = {"relation", "form", "pattern", "from", "edges", "negated", "weak"}
    flags = frozenset(k for k, v in entry.items() if k not in known and v is True)
    flags |= frozenset(
        f"{k}={v}" for k, v in entry.items() if k not in known and isinstance(v, str)
    )
    return Phrase(
        relation,
        str(entry["form"]),
        elements,
        edges,
        bool(entry.get("negated")),
        bool(entry.get("weak")),
        flags,
        str(entry["from"]),
        str(entry["pattern"]),
    )


def _first_words(phrase: Phrase) -> frozenset[str]:
    """Lemmas that can start the pattern's first required literal run (for indexing)."""
    for e in phrase.elements:
        if e.kind == WORD:
            return frozenset(v.split("_")[0] for v in e.values)
        if e.kind == POS:
            return frozenset({f"<{next(iter(e.values))}>"})
    return frozenset()


def parse_lexicon(text: str) -> Lexicon:
    """A :class:`Lexicon` from TOML text (the packaged file or a test's own)."""
    data = tomllib.loads(text)
    closed = {k: frozenset(str(w).lower() for w in v) for k, v in data.get("closed", {}).items()}
    status = {
        value: tuple(tuple(p.lower().split()) for p in phrases)
        for value, phrases in data.get("status", {}).items()
    }
    sequence = {k: tuple(str(w).lower() for w in v) for k, v in data.get("sequence", {}).items()}
    phrases = tuple(_phrase(e) for e in data.get("phrase", []))
    index: dict[str, list[Phrase]] = {}
    for phrase in phrases:
        for word in _first_words(phrase):
            index.setdefault(word, []).append(phrase)
    by_first = {w: tuple(ps) for w, ps in index.items()}
    spelling = {str(k).lower(): str(v) for k, v in data.get("spelling", {}).items()}
    return Lexicon(closed, status, sequence, phrases, by_first, spelling)


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    """The packaged lexicon (parsed once per process)."""
    text = resources.files("sage_memory.extract").joinpath("data/lexicon.toml").read_text("utf-8")
    return parse_lexicon(text)
