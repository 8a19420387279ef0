"""Mention links for the associative walk: names the best hits mention, and who else does.

The extractor types few of the names a text mentions (a passage names a director, a chat turn a
shop or a band, and no relation is extracted around them), so entity nodes alone leave most
memories unlinked. A mention link needs no typed fact: a memory that names "Tom Hanks" is
linked to every other memory of the scope that names him too.

Mentions are read from the text of the best dense and lexical hits at query time: proper-name
phrases (runs of capitalised words) that the query does not already say. Who else mentions them
comes from the scope's own lexical index: one BM25 query holding all the phrases, whose hits
are kept only when their text holds the phrase. The cost is that query and two bounded reads,
whatever the scope's size; everything is read through the search's scope.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sage_memory.retrieve.reader import GraphReader
from sage_memory.types import Scope
from sage_memory.words import QUERY_STOPWORDS, TEXT_CACHE, word_tokens

#: Seed memories whose mentions are read (the best of the walk's memory seeds).
MENTION_SEEDS = 6
#: Phrases looked up, best-seeded first (all in one lexical query).
MAX_MENTIONS = 8
#: Memories that lexical query may return.
MENTION_HITS = 20
#: A phrase held by more of those hits than this is too common to say anything specific.
MAX_HOLDERS = 12
#: How fast a phrase's weight falls with the number of memories naming it (see hop_scores).
HOLDER_POWER = 2.0

#: A capitalised word: a letter in upper case, then word characters, apostrophes, hyphens
#: (initials joined by dots: "J.R.R").
_CAP = r"[A-Z][\w'’\-]*(?:\.[A-Z][\w'’\-]*)*"
#: A proper-name phrase: capitalised words, optionally joined by a few lower-case particles
#: ("Bank of England", "Leonardo da Vinci").
_PHRASE = re.compile(rf"{_CAP}(?:\s+(?:(?:of|the|de|da|van|von|del|la|and|&)\s+)?{_CAP})*")
#: "Name: " at the start of a memory (a speaker or a title): a hub, not a mention.
_PREFIX = re.compile(r"^\s*[^:\n]{1,60}:\s")


@dataclass(slots=True)
class Mentions:
    """Mention links of one search: phrase key <-> memories that hold it."""

    of_memory: dict[str, list[str]] = field(default_factory=dict)
    holders: dict[str, list[str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.holders)


def body(text: str) -> str:
    """``text`` without its speaker or title prefix ("Mo: ...", "Email from Rhona, subject
    'update': ..."): who says or files a note is not what it is about."""
    return _PREFIX.sub("", text, count=1)


def title(text: str) -> str:
    """The speaker or title prefix of ``text`` without its colon ("Team Heron" of "Team
    Heron: ..."); empty when it has none (see :func:`body`)."""
    m = _PREFIX.match(text)
    return m.group(0).strip().removesuffix(":").strip() if m else ""


def phrases(text: str) -> list[str]:
    """The proper-name phrases of ``text`` (speaker or title prefix left out), in order.

    Leading stopwords are dropped ("The Beatles" -> "Beatles"); a phrase left with no word
    longer than two letters, or made of stopwords only ("I", "He", "Thanks"), is no name.
    """
    said = body(text)
    out: list[str] = []
    for m in _PHRASE.finditer(said):
        words = [w.rstrip("'’-") for w in m.group(0).split()]
        while words and words[0].casefold() in QUERY_STOPWORDS:
            words = words[1:]
        while words and words[-1].casefold() in QUERY_STOPWORDS:
            words = words[:-1]
        if not words:
            continue
        if len(words) == 1 and _sentence_start(said, m.start()):
            continue  # "Actually", "Every": capitalised because a sentence starts there
        if max(len(w) for w in words) < 3:
            continue
        out.append(" ".join(words))
    return out


#: Titles written with a full stop before a name ("Dr. Okonkwo", "Mrs. Pryce"): the stop
#: ends the abbreviation, not a sentence.
_TITLE_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(?:Dr|Mr|Mrs|Ms|Mx|Prof|Rev|Sr|Jr|St|Capt|Sgt|Col|Gen|Lt)\.$"
)


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    if before.endswith(".") and _TITLE_ABBREVIATION.search(before):
        return False
    return not before or before[-1] in ".!?\"'“(:;-\n"


def key(phrase: str) -> str:
    return " ".join(word_tokens(phrase))


def holds(text: str, phrase_key: str) -> bool:
    """Whether ``text`` names the phrase (as whole words, case-insensitively)."""
    return f" {phrase_key} " in _spaced(text)


@functools.lru_cache(maxsize=TEXT_CACHE)
def _spaced(text: str) -> str:
    """``text``'s words, lower-cased, each between spaces: what :func:`holds` looks in (kept
    per text: the hop reads the same memories from one search to the next)."""
    return f" {' '.join(word_tokens(text))} "


def mention_links(
    store: GraphReader,
    scope: Scope,
    query: str,
    seeds: Mapping[str, float],
) -> Mentions:
    """Mention links around the best memory ``seeds`` (memory id -> seed weight).

    Reads the seeds' texts, picks the proper-name phrases the query does not say (weighted by
    the seeds that mention them), runs one lexical query for all of them in ``scope``, and
    links each phrase to the memories whose text names it (at most :data:`MAX_HOLDERS`; a
    phrase named more widely is dropped).
    """
    out = Mentions()
    best = sorted(seeds, key=lambda m: -seeds[m])[:MENTION_SEEDS]
    if not best:
        return out
    asked = set(word_tokens(query))
    weight: dict[str, float] = {}
    shown: dict[str, str] = {}
    texts = {m.id: m.text for m in store.get_memories(scope, best)}
    for mid, text in texts.items():
        for p in dict.fromkeys(phrases(text)):
            k = key(p)
            if not k or set(k.split()) <= asked:
                continue
            weight[k] = weight.get(k, 0.0) + seeds[mid]
            shown.setdefault(k, p)
    chosen = sorted(weight, key=lambda k: (-weight[k], k))[:MAX_MENTIONS]
    if not chosen:
        return out
    hits = store.search_text(
        scope, " ".join(shown[k] for k in chosen), entity="memory", limit=MENTION_HITS
    )
    ids = list(dict.fromkeys([*best, *(i for i, _ in hits)]))
    # The seeds' texts are at hand: only the other holders are read.
    texts.update(
        (m.id, m.text) for m in store.get_memories(scope, [i for i in ids if i not in texts])
    )
    # Each text's words once, not once per phrase looked for in it.
    spaced = {i: _spaced(texts[i]) for i in ids if i in texts}
    for k in chosen:
        holders = [i for i in ids if i in spaced and f" {k} " in spaced[i]]
        if 2 <= len(holders) <= MAX_HOLDERS:
            out.holders[k] = holders
            for i in holders:
                out.of_memory.setdefault(i, []).append(k)
    return out


def hop_scores(
    mentions: Mentions, seeds: Mapping[str, float], *, power: float = HOLDER_POWER
) -> list[tuple[str, float]]:
    """Memories one mention away from the seeds, best first: each seed hands its share of the
    seed weight to the other memories naming a phrase it names, divided by (holders - 1) **
    ``power``, so a phrase that two memories share says far more than one a dozen share."""
    total = sum(v for v in seeds.values() if v > 0) or 1.0
    out: dict[str, float] = {}
    for holders in mentions.holders.values():
        spread = (len(holders) - 1) ** power
        for s in holders:
            weight = seeds.get(s, 0.0)
            if weight <= 0:
                continue
            for other in holders:
                if other != s:
                    out[other] = out.get(other, 0.0) + weight / total / spread
    # Equal scores keep the order the holders were found in (the seeds' rank, then the
    # lexical hits'), which the same texts reproduce; a random id would not.
    return sorted(out.items(), key=lambda kv: -kv[1])
