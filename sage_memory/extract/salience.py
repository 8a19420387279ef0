"""Write-time salience: how much a memory deserves a place in the graph, from 0 to 1.

Not everything an agent hears is worth remembering as structure: "Noted!", "haha yes" or
"hi, how are you?" are kept as memories (nothing is lost) but make no typed nodes or edges, and
``ExtractConfig.min_salience`` can store them archived, out of search. The score is computed
from general signals, not from any data set's phrases:

- **content words**: words that are neither stopwords nor small talk (more is richer);
- **named things**: capitalised words inside a sentence, numbers, code-like tokens;
- **facts extracted**: edges the extractor proposed for the memory;
- **small talk**: the memory is made only of greeting, thanks, acknowledgement and laughter
  words (the word lists live in ``data/salience.toml``), or is a bare question back;
- the extractor's own opinion (``GraphDelta.salience``), averaged in when given.

A leading speaker label ("Caroline: haha yes") is who said it, not what was said: it is left
out of the count (the retriever reads the same "Name: ..." label as the turn's author).

Pure functions, no I/O beyond reading the packaged word lists once.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from sage_memory.entities.names import SPEAKER_LABEL
from sage_memory.types import GraphDelta
from sage_memory.words import QUERY_STOPWORDS, word_tokens

#: Score of a memory made only of small talk (below every default gate but above 0: it is kept).
SMALL_TALK = 0.05
#: Score of a bare question back ("and you?"): a little more, it may start a topic.
BARE_QUESTION = 0.1
#: Weights of the signals in the score of any other memory; they sum to 1 with the floor.
_FLOOR = 0.15
_CONTENT, _NAMED, _FACTS = 0.35, 0.2, 0.3
#: How many of each signal saturate it.
_CONTENT_FULL, _NAMED_FULL, _FACTS_FULL = 6, 2, 2

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_TOKEN = re.compile(r"[^\s]+")
_CAPITALISED = re.compile(r"^[\"'(\[]*[A-Z][\w'.-]*")
_CODEISH = re.compile(r"\d|[_./:@#]\w|\w[A-Z]")


@dataclass(frozen=True, slots=True)
class Salience:
    """A memory's salience and what it was made of.

    Attributes:
        score: 0 (small talk) to 1 (dense with facts and names).
        small_talk: the memory holds no content word: it should make no nodes or edges.
        content_words: words that are neither stopwords nor small talk.
        named: capitalised words inside sentences, numbers and code-like tokens.
        facts: edges the extractor proposed.
    """

    score: float
    small_talk: bool
    content_words: int = 0
    named: int = 0
    facts: int = 0


@cache
def _lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """(small-talk words, bare-question words) from ``data/salience.toml``."""
    text = resources.files("sage_memory.extract").joinpath("data/salience.toml").read_text("utf-8")
    data = tomllib.loads(text)
    talk = frozenset(w for words in data["small_talk"].values() for w in words)
    return talk, frozenset(data["questions"]["words"])


def _named_tokens(text: str) -> int:
    """Capitalised words that do not open a sentence, numbers and code-like tokens."""
    count = 0
    for sentence in _SENTENCE_SPLIT.split(text.strip()):
        tokens = _TOKEN.findall(sentence)
        for i, token in enumerate(tokens):
            if _CODEISH.search(token) or (i > 0 and _CAPITALISED.match(token)):
                count += 1
    return count


def assess(text: str, delta: GraphDelta | None = None) -> Salience:
    """Score how much ``text`` deserves a place in the graph.

    Args:
        text: The memory's text.
        delta: What the extractor proposed for it, when extraction ran.

    Returns:
        The score and its signals.
    """
    talk, question_words = _lexicon()
    text = SPEAKER_LABEL.sub("", text, count=1)
    words = word_tokens(text)
    content = [w for w in words if w not in QUERY_STOPWORDS and w not in talk and len(w) > 1]
    facts = len(delta.edges) if delta is not None else 0
    if not content and not facts:
        bare_question = text.rstrip().endswith("?") and all(
            w in question_words or w in talk or w in QUERY_STOPWORDS for w in words
        )
        return Salience(BARE_QUESTION if bare_question else SMALL_TALK, small_talk=True)
    named = _named_tokens(text)
    score = (
        _FLOOR
        + _CONTENT * min(len(content), _CONTENT_FULL) / _CONTENT_FULL
        + _NAMED * min(named, _NAMED_FULL) / _NAMED_FULL
        + _FACTS * min(facts, _FACTS_FULL) / _FACTS_FULL
    )
    if delta is not None and delta.salience is not None:
        score = (score + delta.salience) / 2  # the extractor's own judgement counts half
    return Salience(round(min(max(score, 0.0), 1.0), 4), False, len(content), named, facts)


__all__ = ["BARE_QUESTION", "SMALL_TALK", "Salience", "assess"]
