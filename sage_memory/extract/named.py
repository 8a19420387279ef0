"""Named things a sentence is about, found without a relation: the proper names and code
identifiers it puts in an argument position.

A sentence that states something ("Rahel took over the Lagos office in March") is about the
names its clauses take as subject, object, prepositional object, apposition or possessor, even
when no phrasing of the relation lexicon matched it. The structure extractor keeps these as
nodes of their own, so the memory is linked to the entities it mentions (the graph walk of
recall reaches it through them) and a fact the lexicon missed still names its parties.

Only names count, not common nouns ("the report", "a delay"): a proper name or an identifier
names one thing wherever it stands, a common noun often does not. The arguments come from the
dependency parse; without a parse (the dictionary tagger) nothing is proposed, since a capital
alone does not tell a name in an argument position from one in a heading or a greeting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sage_memory.entities.names import SPEAKER_LABEL
from sage_memory.extract.lexicon import Lexicon
from sage_memory.extract.phrase import Arg, PhraseReader
from sage_memory.extract.word import (
    ADV,
    CODE,
    DET,
    NUM,
    POSS,
    PROPN,
    PUNCT,
    Token,
    word_senses,
)

#: Dependency labels of the argument positions a name is taken from (spaCy's English labels):
#: subjects, objects, the object of a preposition, the complement of a copula, an apposition,
#: a possessor, a conjunct of any of these.
_ARGUMENT_DEPS = frozenset(
    {"nsubj", "nsubjpass", "dobj", "dative", "pobj", "attr", "oprd", "appos", "poss", "conj"}
)
#: Positions where a bare name is the doer or the holder of something: a person, as a guess
#: ("Rahel signed", "Rahel's bike", "our vet, Ames").
_AGENT_DEPS = frozenset({"nsubj", "nsubjpass", "poss", "appos", "attr", "dative"})
#: The label a preposition's sense suggests for a name it takes as object: a location ("moved
#: to Porto", "a flat in Lyon", "back from Oslo"), an affiliation ("a nurse at Ridgeway", "works
#: for Ocado", "published by Verso"), an instrument or platform ("built with Gradle", "runs on
#: Kubernetes", "edited via Vim").
_PREPOSITION_LABELS = {
    "in": "Place",
    "to": "Place",
    "from": "Place",
    "near": "Place",
    "at": "Organization",
    "for": "Organization",
    "by": "Organization",
    "with": "Tool",
    "using": "Tool",
    "via": "Tool",
    "on": "Tool",
    "through": "Tool",
}
#: The longest name taken (a longer capitalised run is a title or a heading).
_MAX_WORDS = 4
#: Dependents before a name that are never part of it: an adverb ("mostly Harbor Weekly"), a
#: coordinator or punctuation of a list, a negation, a number that counts or dates it ("2024
#: Marlow Studios"), a preposition.
_NOT_IN_NAME = frozenset({"advmod", "cc", "punct", "preconj", "neg", "nummod", "prep", "npadvmod"})


@dataclass(frozen=True, slots=True)
class Named:
    """One name a sentence mentions, its label, and whether the label is a guess from the
    name's position rather than from its own words."""

    name: str
    label: str
    guessed: bool = False
    at: int = -1  # the index of the name's head word in the sentence


def named_things(toks: list[Token], reader: PhraseReader) -> list[Named]:
    """The proper names and identifiers ``toks`` puts in an argument position, in order."""
    if not toks or toks[0].head < 0:
        return []
    out: list[Named] = []
    for k, t in enumerate(toks):
        if t.pos not in (PROPN, CODE) or t.dep not in _ARGUMENT_DEPS:
            continue
        if t.dep == "conj" and toks[t.head].pos not in (PROPN, CODE):
            continue  # a name joined to a common noun or a verb: its position is unknown
        if t.dep == "conj" and _ampersand(toks, k - 1):
            continue  # "Stone & Rope": one firm's name, taken whole at its first word
        if t.dep == "poss" and _named_institution(toks, t.head, reader):
            continue  # "King's College": the possessor is part of the institution's name
        if t.pos == PROPN and not any(c.isupper() for c in t.text):
            continue  # a name is written with a capital; the tagger's guess on lower case is not
        if k and toks[k - 1].pos == NUM:
            continue  # "24 GB", "3 PRs": a quantity and its unit
        lo = _left_edge(toks, k)
        while lo < k and _lower_word(toks[lo]):
            lo += 1  # "so great Jon", "congrats Sam": a name opens with a capital
        if t.lower in reader.time_words or reader.is_time(toks, lo) or reader.is_time(toks, k):
            continue  # "in September", "on Friday": a date, not a thing
        arg = reader._np(toks, lo, _right_edge(toks, k))
        if len(arg.words) > _MAX_WORDS or sum(c.isalpha() for c in arg.name) < 2:
            continue  # a heading's run of capitals, an initial, a number
        if len(arg.words) == 1 and _capital_of_position(toks, k):
            continue  # "Rollout to EU customers paused", "[SOLVED] ...": a word, not a name
        if _named_institution(toks, k, reader) and (owned := _possessive_name(toks, lo, k)):
            head = "Place" if t.lower in reader.lex.words("place_heads") else "Organization"
            out.append(Named(owned, head, at=k))
            continue
        label = _label(arg, k, toks, reader)
        if label:
            out.append(Named(arg.name, label, at=k))
        else:
            guess = _position_label(k, toks, len(arg.words))
            out.append(Named(arg.name, guess, guessed=True, at=k))
    return out


def _lower_word(t: Token) -> bool:
    """A word in lower case other than an article: it opens no proper name."""
    return t.text.isalpha() and t.text.islower() and t.pos != DET


def _capital_of_position(toks: list[Token], k: int) -> bool:
    """Whether the word at ``k`` is an English dictionary word capitalised only by where it
    stands: the first word of the sentence or of what follows a short label ("Mel: Awesome,
    ..."), or a word in capitals ("SOLVED"). A name that is also a word ("Rose", "Bill") is
    lost there; a common word taken for a name is worse, since the tagger calls many
    capitalised words proper nouns."""
    t = toks[k]
    start = 0
    label = next((j for j, tok in enumerate(toks[:k]) if tok.text == ":"), -1)
    if 0 < label <= _MAX_WORDS:
        start = label + 1  # "Speaker: ...", "Update: ...": the text starts after the label
    first = not any(c.isalnum() for tok in toks[start:k] for c in tok.text)
    shouted = t.text.isupper() and len(t.text) > 3
    return (first or shouted) and bool(word_senses(t.lower))


def _named_institution(toks: list[Token], k: int, reader: PhraseReader) -> bool:
    """Whether ``k`` is the capitalised head noun of an organization's or a place's name
    ("College", "Hospital", "Square") that a proper-name possessor opens ("King's College",
    "St. Columba's Hospital"): the possessive is then part of one name, not an owner."""
    if not 0 <= k < len(toks):
        return False
    t = toks[k]
    lex = reader.lex
    if t.pos != PROPN or t.lower not in lex.words("org_heads") | lex.words("place_heads"):
        return False
    return any(d.dep == "poss" and d.pos == PROPN and d.head == k for d in toks[:k])


def _possessive_name(toks: list[Token], lo: int, k: int) -> str:
    """The words ``lo``..``k`` as one name, the possessive clitic kept on its word ("St.
    Columba's Hospital"); "" when something other than names and the clitic stands there."""
    out = ""
    for t in toks[lo : k + 1]:
        if t.pos == POSS and t.lower in ("'s", "’s", "'"):
            out += t.text
        elif t.pos == PROPN:
            out += f" {t.text}" if out else t.text
        elif not out and t.pos == DET:
            continue  # "the": an article before the name
        else:
            return ""
    return out


def _left_edge(toks: list[Token], k: int) -> int:
    """The first word of the phrase headed by ``k``: the words right before it whose chain of
    heads reaches it ("the Lagos office" -> "the"; "New York" -> "New")."""
    lo = k
    while lo > 0 and _reaches(toks, lo - 1, k) and _may_open(toks[lo - 1]):
        lo -= 1
    return lo


def _may_open(tok: Token) -> bool:
    """Whether a dependent before a name may be part of its phrase (:data:`_NOT_IN_NAME`)."""
    if tok.text == "&":
        return True  # "Stone & Rope Climbing"
    if tok.dep in _NOT_IN_NAME or tok.pos in (ADV, NUM):
        return False
    return tok.pos != PUNCT or tok.text in ("-", ".")


def _right_edge(toks: list[Token], k: int) -> int:
    """The end of the name headed by ``k``: a number it takes right after it is part of it
    ("Terminal 4", "Route 9"), and so is a name joined by an ampersand ("Stone & Rope", a
    firm's name: an ampersand joins the parts of one name, "and" joins two things)."""
    end = k + 1
    if end < len(toks) and toks[end].pos == NUM and toks[end].head == k:
        return end + 1
    while (
        end + 1 < len(toks)
        and _ampersand(toks, end)
        and toks[end + 1].pos == PROPN
        and toks[end + 1].head in (k, end + 1, end + 2)
    ):
        end += 2
        while end < len(toks) and toks[end].pos == PROPN and toks[end - 1].head == end:
            end += 1  # "Salt & Ash Group": the conjunct's own compound words
    return end


def _ampersand(toks: list[Token], j: int) -> bool:
    return 0 <= j < len(toks) and toks[j].text == "&"


def _reaches(toks: list[Token], j: int, k: int) -> bool:
    for _ in range(len(toks)):
        if j == k:
            return True
        if toks[j].head == j or toks[j].head < 0 or toks[j].head > k:
            return False
        j = toks[j].head
    return False


def _label(arg: Arg, k: int, toks: list[Token], reader: PhraseReader) -> str:
    """The label a name's own words give it (docs/relations.md): a title, an organization's
    or a place's head noun, a code identifier ("" when they give none)."""
    lex = reader.lex
    words = arg.words
    head = words[-1] if words else ""
    if toks[k].pos == CODE or arg.code:
        return "Error" if arg.code == "error" else "Tool"
    titles = {w.rstrip(".") for w in lex.words("titles")}
    if words and words[0].rstrip(".") in titles:
        return "Person"
    if head in lex.words("org_heads"):
        return "Organization"
    if head in lex.words("place_heads"):
        return "Place"
    return ""


def _position_label(k: int, toks: list[Token], size: int) -> str:
    """The label the position of the name at ``k`` suggests, a guess ("in Kestrel": a town?
    a project?) that the graph lets any fact's label replace; a conjunct ("Ida and Tom")
    takes its first conjunct's position."""
    for _ in range(len(toks)):
        if toks[k].dep != "conj" or toks[k].head == k:
            break
        k = toks[k].head
    tok = toks[k]
    if tok.dep == "pobj":
        return _PREPOSITION_LABELS.get(toks[tok.head].lower, "Entity")
    if tok.dep in _AGENT_DEPS and size <= 2:
        return "Person"
    return "Entity"


#: A word of a speaker's name: capitalised, then lower case ("Jon", "O'Neil", "Anne-Marie");
#: capitals ("TODO", "FYI"), digits ("Q3") and one letter are not names.
_NAME_WORD = re.compile(r"^[A-Z][a-z]+(?:['-][A-Z]?[a-z]+)*$")


def speaker_label(text: str, lex: Lexicon) -> tuple[str, str]:
    """(speaker, the text after the label) of a chat turn written "Name: text"; ("", text)
    when the text opens with no such label. Decided by form: one to three name words, none an
    English dictionary word nor a word of the lexicon's discourse, list and log classes, so
    "Note:", "Update:", "Error:", "Team Atlas:" or "Step 2:" are headings, not speakers (a name
    that is also a word, "Rose:", is lost there: precision first)."""
    m = SPEAKER_LABEL.match(text)
    if not m:
        return "", text
    words = m.group(1).split()
    closed = (
        lex.words("discourse")
        | lex.words("interjections")
        | lex.words("log_levels")
        | lex.words("list_nouns")
        | lex.words("project_nouns")
    )
    for w in words:
        if not _NAME_WORD.match(w) or w.lower() in closed or word_senses(w.lower()):
            return "", text
    return " ".join(words), text[m.end() :]
