"""Clauses the tagger read as one noun phrase.

The small English tagger often reads the verb of a short clause after a noun compound as one
more noun: "relies on the pension fund staying solvent". As an argument of blocking, dependency
or order such a clause is about its subject (the pension fund), so the name ends before the
verb. (A finite verb closing an "until" clause, "until the frost warning lifts", is set right
by the tagger: ``chunk._clause_final_verbs``.)
"""

from __future__ import annotations

from sage_memory.extract.phrase import NP, Arg, PhraseReader
from sage_memory.extract.word import NOUN, PREP, PROPN, SUB, Token, word_senses

#: Parser arcs of a word that modifies the noun after it (none: no parse, so no evidence).
_MODIFIER_ARCS = frozenset({"amod", "compound", "nmod", ""})


def _verb_only(word: str) -> bool:
    """A word the dictionary knows as a verb form and never as a noun ("staying")."""
    found = word_senses(word)
    return "VERB" in found and "NOUN" not in found


def _hidden_verb(toks: list[Token], arg: Arg) -> int | None:
    """Index of the clause verb hidden in ``arg``'s noun phrase, None when there is none."""
    for k in range(arg.start + 1, arg.end):
        t, prev = toks[k], toks[k - 1]
        if prev.pos not in (NOUN, PROPN) or k - 1 < arg.start:
            continue
        # a gerund clause: "the pump running 24/7", "the security scan finishing"; not a
        # modifier of the next noun ("the core charting library")
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        modifier = nxt is not None and nxt.pos in (NOUN, PROPN) and t.dep in _MODIFIER_ARCS
        if t.lower.endswith("ing") and not modifier and (t.tag == "VBG" or _verb_only(t.lower)):
            return k
    return None


def clause_subject(reader: PhraseReader, toks: list[Token], arg: Arg) -> Arg:
    """``arg`` cut to the subject of the clause hidden in it (``arg`` itself when none): only
    an argument that follows a preposition or subordinator ("until", "on", ...)."""
    lead = toks[arg.start - 1] if arg.start > 0 else None
    lead_pos = lead.pos if lead is not None else ""
    if arg.kind != NP or lead_pos not in (PREP, SUB):
        return arg  # a subject ("the wine tasting doesn't ...") is read as written
    k = _hidden_verb(toks, arg)
    if k is None:
        return arg
    subject = reader._np(toks, arg.start, k)
    return subject if subject.name else arg
