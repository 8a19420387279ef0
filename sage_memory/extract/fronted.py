"""The comma a writer left out after a fronted adverbial ("Before we paint the fence we'll sand
the boards", "After the audit the team signs off").

The lexicon writes its fronted phrasings with the comma that closes the fronted clause
("before {B} , {A}", "once {A} , {B}"), since without it the two arguments have no border.
Many writers leave that comma out. The dependency parse still knows where the fronted clause
ends: its words are the subtree of the main verb's dependent that holds the sentence's first
word. :func:`close_fronted` puts the comma back there, so the lexicon's one phrasing reads both
spellings. Only sentences that open with the first word of such a phrasing are touched, and
only when the parse says the clause is an adverbial of a main verb that follows it.
"""

from __future__ import annotations

from sage_memory.extract.lexicon import SLOT, WORD, Lexicon
from sage_memory.extract.word import Token

#: Arcs that attach a fronted adverbial (a clause, a prepositional or a noun phrase of time)
#: to the main verb.
_ADVERBIAL = frozenset({"advcl", "prep", "npadvmod", "mark"})


_OPENERS: dict[tuple[int, str], tuple[Lexicon, frozenset[str]]] = {}


def fronted_openers(lex: Lexicon, relation: str = "") -> frozenset[str]:
    """First words of the phrasings (of ``relation``, or of any) that open with a literal and
    close a fronted argument with a comma ("before {B} , {A}" -> "before"; "as soon as {A} ,
    {B}" -> "as")."""
    known = _OPENERS.get((id(lex), relation))
    if known is not None and known[0] is lex:
        return known[1]
    out: set[str] = set()
    for phrase in lex.phrases:
        els = phrase.elements
        if not els or els[0].kind != WORD or (relation and phrase.relation != relation):
            continue
        fronted = any(
            els[k].kind == SLOT and els[k + 1].kind == WORD and "," in els[k + 1].values
            for k in range(1, len(els) - 1)
        )
        if fronted:
            out.update(v.split("_")[0] for v in els[0].values)
    _OPENERS[(id(lex), relation)] = (lex, frozenset(out))
    return _OPENERS[(id(lex), relation)][1]


def _span(toks: list[Token], k: int) -> tuple[int, int]:
    """The first and last index of the subtree of ``toks[k]``."""
    lo = hi = k
    for i in range(len(toks)):
        j, seen = i, 0
        while j != k and 0 <= toks[j].head != j and seen < len(toks):
            j, seen = toks[j].head, seen + 1
        if j == k:
            lo, hi = min(lo, i), max(hi, i)
    return lo, hi


def close_fronted(toks: list[Token], lex: Lexicon) -> list[Token]:
    """``toks`` with a comma after a fronted adverbial that has none (the same list when the
    sentence opens with none, has its comma, or has no parse)."""
    openers = fronted_openers(lex)
    if len(toks) < 4 or (toks[0].lemma not in openers and toks[0].lower not in openers):
        return toks
    if any(t.head < 0 for t in toks):
        return toks  # no parse: the dictionary tagger knows no clause borders
    root = next((i for i, t in enumerate(toks) if t.head == i or t.dep == "ROOT"), -1)
    if root <= 0:
        return toks
    top, seen = 0, 0  # the root's dependent that holds the first word
    while toks[top].head != root and seen < len(toks):
        top, seen = toks[top].head, seen + 1
    if toks[top].head != root or toks[top].dep not in _ADVERBIAL:
        return toks
    lo, hi = _span(toks, top)
    if lo != 0 or hi + 1 >= root or hi < 2:
        return toks  # the main verb is not after the fronted part, or the part is one word
    if any(t.lower in (",", ";", ":", "—", "–", "-") for t in toks[: hi + 2]):
        return toks  # its comma (or another border) is there
    at = hi + 1
    if toks[at].pos in ("PREP", "PART", "CONJ", "SUB"):
        return toks  # a clause starts no other way: the parse cut a phrase in two
    if toks[hi].pos == "VERB" and toks[at].pos in ("NOUN", "PROPN", "ADJ"):
        return toks  # "To arrange catering X needs ...": a verb cut from its object
    comma = Token(",", ",", ",", "PUNCT", toks[hi].end, toks[hi].end, tag=",", dep="punct")
    comma.head = root + 1
    out = [
        Token(
            t.text,
            t.lower,
            t.lemma,
            t.pos,
            t.start,
            t.end,
            t.capitalized,
            t.inflected,
            t.tag,
            t.dep,
            t.head + 1 if t.head >= at else t.head,
        )
        for t in toks
    ]
    return [*out[:at], comma, *out[at:]]
