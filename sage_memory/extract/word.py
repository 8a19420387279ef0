"""Words of a sentence: the reduced part-of-speech tag set, the token, and ``lemminflect``'s
dictionary (parts of speech, lemmas, singulars and verb forms; shipped with the package,
nothing downloaded). Shared by the tokenizer (:mod:`.chunk`) and the dictionary tagger
(:mod:`.tagger`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# Parts of speech used here (a reduced universal tag set).
DET, POSS, PRON, PREP, AUX, MODAL, NEG, CONJ, SUB = (
    "DET",
    "POSS",
    "PRON",
    "PREP",
    "AUX",
    "MODAL",
    "NEG",
    "CONJ",
    "SUB",
)
ADV, ADJ, NOUN, PROPN, VERB, NUM, PUNCT, CODE, PART = (
    "ADV",
    "ADJ",
    "NOUN",
    "PROPN",
    "VERB",
    "NUM",
    "PUNCT",
    "CODE",
    "PART",
)
NOMINAL = frozenset({NOUN, PROPN, CODE, NUM})


@dataclass(slots=True)
class Token:
    """One word (or code identifier, or punctuation mark) of a sentence."""

    text: str
    lower: str
    lemma: str
    pos: str
    start: int
    end: int
    capitalized: bool = False
    inflected: str = ""  # "s", "ed", "ing" when the word carries that ending
    tag: str = ""  # the parser's Penn tag ("" from the dictionary tagger)
    dep: str = ""  # the parser's label of the arc to the head ("nsubjpass", "dobj", ...)
    head: int = -1  # index of the head token in the sentence (-1: no parse)

    def __repr__(self) -> str:
        return f"{self.text}/{self.pos}"


@lru_cache(maxsize=50_000)
def word_senses(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's parts of speech and lemmas of a lower-case word ({} when unknown)."""
    from lemminflect import getAllLemmas

    found = getAllLemmas(word)
    return {pos: tuple(lemmas) for pos, lemmas in found.items()}


#: Prefixes that make a verb of a verb (Quirk et al., App. I.21-I.23): "retile", "unclog".
_VERB_PREFIXES = ("re", "un", "pre", "de", "dis", "mis", "over", "under", "out", "co")


@lru_cache(maxsize=20_000)
def base_form(verb: str) -> str:
    """The base form of a verb ("restarting" -> "restart", "ran" -> "run")."""
    low = verb.lower()
    lemmas = word_senses(low).get("VERB")
    if lemmas:
        return lemmas[0]
    # a verb the dictionary lacks that is a known one with a prefix ("re-tiling", "retiling",
    # "blind-baking"): the known verb's base form, so no letter is cut from its stem
    first, dash, last = low.rpartition("-")
    if dash and first and last and word_senses(last).get("VERB"):
        return f"{first}-{base_form(last)}"
    for prefix in _VERB_PREFIXES:
        rest = low[len(prefix) :]
        if low.startswith(prefix) and len(rest) > 3 and word_senses(rest).get("VERB"):
            return prefix + base_form(rest)
    from lemminflect import getLemma

    guessed = getLemma(low, upos="VERB", lemmatize_oov=True)
    return guessed[0] if guessed else low


@lru_cache(maxsize=20_000)
def singular(noun: str) -> str:
    """The singular of a common noun ("members" -> "member"); unchanged when not plural."""
    low = noun.lower()
    lemmas = word_senses(low).get("NOUN")
    if lemmas:
        return lemmas[0] if len(lemmas[0]) <= len(low) else low
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 3:
        return low[:-1]
    return low


@lru_cache(maxsize=5_000)
def is_superlative(word: str) -> bool:
    """Whether an adjective is a superlative form ("largest", "best"): its lemma differs."""
    low = word.lower()
    if not low.endswith("est") or len(low) < 5:
        return low in {"best", "worst"}
    lemmas = word_senses(low).get("ADJ", ())
    return bool(lemmas) and lemmas[0] != low


@lru_cache(maxsize=5_000)
def third_person(verb: str) -> str:
    """The third-person singular of a verb's base form ("work" -> "works")."""
    from lemminflect import getInflection

    forms = getInflection(verb.lower(), tag="VBZ")
    return forms[0] if forms else verb


@lru_cache(maxsize=5_000)
def verb_known(word: str) -> bool:
    """Whether lemminflect knows ``word`` as a verb lemma ("teach", "manage")."""
    return word.lower() in word_senses(word.lower()).get("VERB", ())


def _inflection(low: str) -> str:
    if low.endswith("ing") and len(low) > 4:
        return "ing"
    if low.endswith("ed") and len(low) > 3:
        return "ed"
    if low.endswith("s") and not low.endswith("ss") and len(low) > 2:
        return "s"
    return ""
