"""Reading a changing fact in text: does the query ask for the present value, and does a
statement say that its value changed?

Current value first (:mod:`.current`) reorders the statements of one slot by time. When the
graph holds the slot (a single-valued relation), its values are known to change and their
world time orders them. Statements joined by their words alone are another matter: passages
about one topic ("the river's length", "the band's first album") are not versions of one
value, and ordering them by when they were stored moves memories for a question that asks
about no change. So a group joined by words is put in time order only when

- the query asks for the present ("now", "these days", "at the moment", ...) or names a
  time (``as_of``, "in May 2026"): it asks which of several values holds; or
- the later statement says its value changed, in the sentence that states the slot asked
  ("the quota is now 1,200", "the call moved to Friday", "coverage went up to 80%"): a
  change told in passing, with no typed fact behind it.

The cues are English grammar, not a list fitted to any data: present-time adverbs (now,
currently, nowadays, these days), adverbs of recent change (recently, lately, anymore, no
longer, instead), the adjectives of a replaced value (new, updated, revised, latest), the
change-of-state verbs of a value (change, switch, move, reschedule, postpone, update, revise,
adjust, increase, decrease, raise and its colloquial bump, lower, grow, rise, drop, fall, reduce,
extend, shorten, expand, improve, reach, replace: Levin 1993, "verbs of change of state" and
"calibratable change of state" classes), the "from X to Y" frame of a change, the adverbials
that date a change from a moment on ("from now on", "from today", "going forward") and the phrasal
verbs of succession in a role ("take over", "hand over", "step in", "step down").

Where a thing is changes too, and a note telling it often names neither the person nor the slot
asked ("the stall moves to the Cuthwin Exchange from June", "we've relocated to Oxlade!",
"the quiz is now at the Tolland Arms"): a verb of moving something to another place (Levin 1993,
11.2 "slide verbs" and 51.3.1's "move" class: move, relocate, transfer, shift, decamp) or the
adverb "now", followed within a few words by a capitalised name (:func:`relocates`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from collections.abc import Set as AbstractSet

from sage_memory.retrieve.mentions import phrases
from sage_memory.words import QUERY_STOPWORDS, word_tokens

#: The query asks for the value that holds at present.
_NOW_ASKED = re.compile(
    r"\b(now|nowadays|currently|current|these days|today|at the moment|at present"
    r"|presently|latest|still|anymore|any more|right now|as it stands)\b"
)

#: A statement says its value changed (see the module docstring for the classes).
_CHANGE = re.compile(
    r"\b(now|currently|nowadays|these days|recently|lately|anymore|any more|no longer|instead"
    r"|new|newly|updated?|updating|revised?|revising|latest"
    r"|chang(?:e|es|ed|ing)|switch(?:es|ed|ing)?|mov(?:e|es|ed|ing)|reschedul\w*|postpon\w*"
    r"|push(?:ed)? back|brought forward|adjust\w*|increas\w*|decreas\w*"
    r"|rais(?:e|es|ed|ing)|bump(?:s|ed|ing)?|lower(?:s|ed|ing)|gr(?:ew|own)|ris(?:e|es|en|ing)|rose"
    r"|dropp(?:ed|ing)|fell|fallen|reduc\w*|extend\w*|shorten\w*|expand\w*|improv\w*"
    r"|reach(?:es|ed|ing)?|replac\w*|went (?:up|down)|gone (?:up|down)"
    r"|from \S+(?: \S+)? to"
    r"|from (?:now|here|today|then) on|from today|going forward|as of (?:now|today)"
    r"|tak(?:e|es|en|ing) over|took over|hand(?:s|ed|ing)? over"
    r"|step(?:s|ped|ping)? (?:in|down|up|back|aside))\b"
)
#: A change of place: a verb of moving something elsewhere, or "now", then within three
#: lower-case words (a preposition, an article, "again") a capitalised name, in one sentence
#: ("moves to the Cuthwin Exchange", "relocating again, Oxlade this time", "is now at the
#: Tolland Arms"). The name is the new place.
_RELOCATED = re.compile(
    r"\b(?i:mov(?:e|es|ed|ing)|relocat(?:e|es|ed|ing)|transfer(?:s|red|ring)?"
    r"|shift(?:s|ed|ing)?|decamp(?:s|ed|ing)?|now)\b"
    r"(?:[^\S\n]*[,;\u2013-]?[^\S\n]+[a-z][\w'\u2019-]*){0,3}[^\S\n]*[,;\u2013-]?[^\S\n]+[A-Z][a-z]"
)
#: Words between a change cue and the slot's word for the cue to be about the slot.
NEAR = 6
#: Where a sentence ends: a full stop, question or exclamation mark before a space, or a
#: line break (a chat message's list items and code lines are their own sentences).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
#: A word and what stands just before it (a capital after a colon or a full stop starts a
#: sentence; it names nothing).
_WORD = re.compile(r"[\w'-]+")
_WORD_AFTER = re.compile(r"([^\w\s]?)\s*\b([A-Za-z][\w&'-]*)")


def without_now(text: str) -> str:
    """``text`` (lower-cased) without the words that ask for the present ("at present",
    "these days"): they ask when, not which slot."""
    return _NOW_ASKED.sub(" ", text.casefold())


def asks_now(text: str) -> bool:
    """Whether the query asks for the value that holds at present ("where is she now?")."""
    return bool(_NOW_ASKED.search(text.casefold()))


def marks_change(sentence: str) -> bool:
    """Whether ``sentence`` says a value changed ("the quota is now 1,200 a day")."""
    return bool(_CHANGE.search(sentence.casefold()))


def relocates(text: str) -> bool:
    """Whether ``text`` says something moved to a place it names ("we've moved to Mill
    Yard", "the stall moves to the Cuthwin Exchange"); see the module docstring."""
    return bool(_RELOCATED.search(text))


def changes_slot(
    sentence: str,
    stems: Callable[[str], AbstractSet[str]],
    asked: AbstractSet[str],
    reach: int = NEAR,
) -> bool:
    """Whether ``sentence`` says the asked slot changed: a change cue within ``reach`` words
    of one of the ``asked`` words ("the new sprint deadline", "coverage, which has recently
    improved to 78%"). A long message has new things and improvements of its own; a cue far
    from the slot's words is about them."""
    low = sentence.casefold()
    words = [(m.start(), m.end()) for m in _WORD.finditer(low)]
    slot = [k for k, (a, b) in enumerate(words) if stems(low[a:b]) & asked]
    if not slot:
        return False
    for m in _CHANGE.finditer(low):
        at = next((k for k, (a, b) in enumerate(words) if b > m.start()), len(words))
        if any(abs(at - k) <= reach for k in slot):
            return True
    return False


def slot_sentence(
    text: str, stems: Callable[[str], AbstractSet[str]], asked: AbstractSet[str], need: int
) -> tuple[str, AbstractSet[str]] | None:
    """The sentence of ``text`` holding the most of the ``asked`` words (``stems`` reads a
    text's words), with the asked words it holds; None when no sentence holds ``need`` of
    them. A long message states the asked slot in one of its sentences; the rest is about
    other things."""
    best: tuple[str, AbstractSet[str]] | None = None
    if need < 1:
        return None  # the query asks no slot words: nothing to find a sentence by
    for sentence in _SENTENCE_END.split(text):
        held = stems(sentence) & asked
        if len(held) >= need and (best is None or len(held) > len(best[1])):
            best = (sentence, held)
    return best


def statement_span(
    sentence: str, stems: Callable[[str], AbstractSet[str]], asked: AbstractSet[str]
) -> str:
    """The part of ``sentence`` from its first asked word or change cue to its last: the words
    that state the value and its change ("commits merged into the main branch, which has now
    reached 165"), without the rest of a long sentence about other things."""
    marks = [m.span() for m in _CHANGE.finditer(sentence.casefold())]
    marks += [m.span() for m in _WORD.finditer(sentence) if stems(m.group()) & asked]
    if not marks:
        return ""
    return sentence[min(a for a, _ in marks) : max(b for _, b in marks)]


def value_words(text: str, asked: Collection[str]) -> frozenset[str]:
    """The words of the proper names ``text`` says besides the ``asked`` ones (the query's
    names and words): the values a statement gives ("the printing is done by Halden
    Press", "Ines Bauer confirmed as editor"), lower-cased, each word on its own (a later note says
    "Ines" for "Ines Bauer")."""
    return frozenset(
        w
        for p in phrases(text)
        for w in word_tokens(p)
        if len(w) > 2 and w not in QUERY_STOPWORDS and w not in asked
    )


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see ``_SENTENCE_END``), blank ones left out."""
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def retold_value(text: str, values: Collection[str], reach: int | None = None) -> str | None:
    """The sentences of ``text`` that name one of ``values`` (capitalised, as a name is) and
    say a change, in that sentence or one beside it (those sentences, joined); None when no
    sentence does. "Halden Press missed the date, so we switched to Inkwise" retells "the
    printing is done by Halden Press"; "the Tallis rota was a mess, so we're on Rotafy now"
    retells "the shifts are planned in Tallis". A later note that names the value an earlier
    one gave, with a change, tells what became of it, even when it holds none of the query's
    words. With ``reach``, the change must be said in the sentence naming the value, at
    most that many words from it (a name said often, as a subject's, needs the closer tie)."""
    if not values:
        return None
    named = {w.casefold() for w in values}

    def held(word: str) -> set[str]:
        return {_bare(word)} & named

    told = sentences(text)
    for k, sentence in enumerate(told):
        said = {m.group() for m in _WORD.finditer(sentence) if m.group()[0].isupper()}
        if not {_bare(w.casefold()) for w in said} & named:
            continue
        if reach is not None:
            if changes_slot(sentence, held, named, reach):
                return sentence
            continue
        around = told[max(0, k - 1) : k + 2]
        if any(marks_change(s) for s in around):
            return " ".join(around)
    return None


def _bare(word: str) -> str:
    """A word without its possessive ending ("Tallis's" -> "Tallis")."""
    return word.removesuffix("'s").removesuffix("’s")


def names_nothing(sentence: str) -> bool:
    """Whether ``sentence`` names no one and nothing: no capitalised word but its first and
    "I". A value told in passing ("the count has now reached 40") often leaves out the name
    of what it counts; a twin team's note names its own team."""
    for k, (before, word) in enumerate(_WORD_AFTER.findall(sentence)):
        starts = k == 0 or before in {":", ".", "!", "?", '"', "("}
        if word[0].isupper() and not starts and word != "I" and not word.startswith("I'"):
            return False
    return True
