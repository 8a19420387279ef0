"""The dictionary tagger: parts of speech and lemmas without a parser.

Closed-class words (determiners, prepositions, pronouns, auxiliaries, conjunctions, time words)
come from the lexicon file; open-class words get their candidate parts of speech and lemmas
from ``lemminflect``'s dictionary (:mod:`.word`), and a few context rules pick one ("needs"
after a noun is a verb, after "the" a noun). It is the fallback when spaCy's pipeline is not
installed; :func:`.chunk.tag_parsed` reuses its closed-class pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from sage_memory.extract.lexicon import Lexicon
from sage_memory.extract.word import (
    ADJ,
    ADV,
    AUX,
    CODE,
    CONJ,
    DET,
    MODAL,
    NEG,
    NOUN,
    NUM,
    PART,
    POSS,
    PREP,
    PRON,
    PROPN,
    PUNCT,
    SUB,
    VERB,
    Token,
    base_form,
    word_senses,
)

_CONTRACTIONS = {"'ll": "will", "'re": "be", "'m": "be", "'ve": "have", "'d": "would"}
_IRREGULAR_AUX = {"ca": "can", "wo": "will", "'s": "be", "’s": "be"}
_BE = frozenset({"am", "is", "are", "was", "were", "be", "been", "being", "'m", "'re"})
_HAVE = frozenset({"have", "has", "had", "having", "'ve"})
_DO = frozenset({"do", "does", "did", "doing"})


def _closed_pos(tok: Token, lex: Lexicon) -> str:
    low = tok.lower
    if not any(c.isalnum() for c in low) and low != "n't":
        return PUNCT
    if low in ("n't", "not", "never", "cannot"):
        return NEG
    if low in _BE or low in _HAVE or low in _DO or low == "'s":
        return AUX
    if (low in lex.words("modals") - {"need"} and not (low == "may" and tok.capitalized)) or (
        low in ("ca", "wo", "'ll", "'d")
    ):
        return MODAL
    if low in lex.words("possessives") and low != "her":
        return POSS
    if low in ("to",):
        return PART
    if low in lex.words("determiners"):
        return DET
    if low in lex.words("pronouns"):
        return PRON
    if low in ("and", "or", "&", "nor", "plus"):
        return CONJ
    if low in (
        "because",
        "although",
        "though",
        "while",
        "whereas",
        "unless",
        "if",
        "once",
        "whenever",
        "so",
        "but",
        "until",
        "till",
        "than",
        "whether",
    ):
        return SUB
    if low in lex.words("prepositions"):
        return PREP
    if low.replace(".", "").replace(",", "").isdigit():
        return NUM
    return ""


_NUMBER_WORDS = frozenset(
    [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "hundred",
        "thousand",
        "million",
        "dozen",
    ]
)


def _tag(tokens: list[Token], lex: Lexicon) -> None:
    """Assign POS and lemma: closed classes first, then open-class words in context, then
    the repairs that need the whole sentence tagged (each pass a function, in order)."""
    _tag_closed(tokens, lex)
    for i, tok in enumerate(tokens):
        if not tok.pos:
            _tag_open_word(tokens, i, lex)
    for repair in _REPAIRS:
        repair(tokens, lex)


def _tag_closed(tokens: list[Token], lex: Lexicon) -> None:
    """Closed classes (auxiliaries, modals, negation, numbers) and compound prepositions."""
    for tok in tokens:
        if tok.pos == CODE:
            continue
        tok.pos = _closed_pos(tok, lex)
        if tok.pos == AUX:
            tok.lemma = (
                "be"
                if tok.lower in _BE or tok.lower == "'s"
                else "have"
                if tok.lower in _HAVE
                else "do"
            )
        elif tok.pos == MODAL:
            tok.lemma = _IRREGULAR_AUX.get(tok.lower, _CONTRACTIONS.get(tok.lower, tok.lower))
        elif tok.pos == NEG:
            tok.lemma = "not"
        elif tok.lower in _NUMBER_WORDS:
            tok.pos = NUM
    for i, tok in enumerate(tokens):
        # "due to", "prior to", "thanks to": a compound preposition, not an infinitive
        if tok.lower == "to" and i > 0 and tokens[i - 1].lower in _TO_PREPOSITIONS:
            tok.pos = tokens[i - 1].pos = PREP
        # "Appendix A", "Plan B": a capital letter after a word is a label, not an article
        if tok.text == "A" and i > 0 and tokens[i - 1].pos not in (PUNCT, CONJ, SUB):
            tok.pos, tok.lemma = PROPN, "a"
        # "sold her piano": "her" before a noun phrase is a possessive, not the object
        if tok.lower == "her" and i + 1 < len(tokens) and _opens_noun_phrase(tokens[i + 1]):
            tok.pos = POSS


def _opens_noun_phrase(tok: Token) -> bool:
    """An untagged word that can open a noun phrase (a noun, an adjective, a name)."""
    if tok.pos:
        return tok.pos in (NUM, CODE)
    cands = word_senses(tok.lower)
    return not cands or tok.capitalized or "NOUN" in cands or "ADJ" in cands


def _tag_open_word(tokens: list[Token], i: int, lex: Lexicon) -> None:
    """Part of speech and lemma of the open-class word at ``i``, from its context."""
    tok = tokens[i]
    relation_verbs = lex.verbs
    prev = tokens[i - 1] if i > 0 else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    cands = word_senses(tok.lower)
    if tok.lower == "longer" and prev is not None and prev.lower == "no":
        prev.pos = tok.pos = ADV  # "no longer lives": a negating adverb, not "no" + adjective
        return
    if tok.lower in lex.words("adverbs") and not (prev is not None and prev.pos == DET):
        tok.pos = ADV
        return
    if (
        i == 0
        and tok.text[:1].isupper()
        and set(cands) == {"NOUN"}
        and tok.inflected != "s"
        and nxt is not None
        and (nxt.pos in (AUX, MODAL, NEG) or (not nxt.pos and "NOUN" not in word_senses(nxt.lower)))
    ):
        tok.pos, tok.lemma = PROPN, tok.lower  # "Tom can't ...": a name opens the sentence
        return
    if tok.capitalized and (not cands or "PROPN" in cands or not _common(tok, cands, prev)):
        tok.pos, tok.lemma = PROPN, tok.lower
        return
    if not cands:
        if tok.lower[:1].isdigit():
            tok.pos = NUM
        elif tok.inflected == "ing" or (tok.inflected == "ed" and prev and prev.pos == AUX):
            tok.pos, tok.lemma = VERB, base_form(tok.lower)
        elif tok.lower.endswith("ly"):
            tok.pos = ADV
        elif i == 0 and tokens[0].text[:1].isupper() and len(tokens) > 1:
            tok.pos = PROPN
        else:
            tok.pos = NOUN
        return
    tok.pos = _choose(tok, tokens[i - 2] if i > 1 else None, cands, prev, nxt, i, relation_verbs)
    key = {VERB: "VERB", NOUN: "NOUN", ADJ: "ADJ", ADV: "ADV"}.get(tok.pos, "")
    lemmas = cands.get(key) or cands.get("VERB") or cands.get("NOUN") or (tok.lower,)
    tok.lemma = lemmas[0] if tok.pos != ADJ else tok.lower
    if tok.pos == NOUN and len(lemmas[0]) > len(tok.lower):
        tok.lemma = tok.lower


def _repair_names(tokens: list[Token], lex: Lexicon) -> None:
    """Capitalised opening words that are names, and an opening noun before its verb."""
    # a capitalised common noun opening the sentence right before a verb is a name ("Bob hates")
    second = tokens[1] if len(tokens) > 1 else None
    if (
        second is not None
        and tokens[0].pos in (NOUN, VERB)
        and tokens[0].text[:1].isupper()
        and tokens[0].inflected not in ("s", "ing")
        and (
            second.pos in (AUX, MODAL, NEG)
            or (second.pos == VERB and second.inflected in ("s", "ed"))
            or second.lower in ("now", "no", "never", "just", "still", "also", "really", "left")
        )
    ):
        tokens[0].pos, tokens[0].lemma = PROPN, tokens[0].lower
    # "Project Osprey is ...", "Team Heron shipped ...": a capitalised opening word before a
    # name, both before the verb, is the first word of a title-case name (not an imperative
    # "Call Bob", which a verb of the name's own does not follow)
    if (
        len(tokens) > 2
        and tokens[0].pos in (NOUN, VERB)
        and tokens[0].text[:1].isupper()
        and tokens[1].pos == PROPN
        and tokens[1].text[:1].isupper()
        and (
            tokens[2].pos in (AUX, MODAL, NEG)
            or (tokens[2].pos == VERB and tokens[2].inflected in ("s", "ed"))
        )
    ):
        tokens[0].pos, tokens[0].lemma = PROPN, tokens[0].lower
    # "Rust on the gate comes from ...": an opening word is the subject's noun, not an
    # imperative, when a third-person verb follows it in the same clause. (This path has no
    # arcs; the parse path's repairs of an opening word are in _nominal_verbs.)
    first = tokens[0] if tokens else None
    if (
        first is not None
        and first.pos == VERB
        and first.inflected == ""
        and "NOUN" in word_senses(first.lower)
    ):
        for k in range(1, min(len(tokens), 8)):
            t = tokens[k]
            if t.pos == PUNCT or t.lower in ("that", "which", "who", "and", "or"):
                break
            if t.pos == VERB and t.inflected == "s" and tokens[k - 1].pos in (NOUN, PROPN):
                first.pos, first.lemma = NOUN, first.lower
                break


def _repair_second_verbs(tokens: list[Token], lex: Lexicon) -> None:
    """ "requires Python and uses pip": a second verb of the same subject after "and"."""
    for i in range(2, len(tokens)):
        tok, prev = tokens[i], tokens[i - 1]
        if (
            tok.pos == NOUN
            and prev.lower in ("and", "or", "but")
            and tok.inflected in ("s", "ed")
            and "VERB" in word_senses(tok.lower)
            and any(t.pos == VERB and t.inflected == tok.inflected for t in tokens[: i - 1])
        ):
            tok.pos, tok.lemma = VERB, base_form(tok.lower)
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and nxt.pos == VERB and "NOUN" in word_senses(nxt.lower):
                nxt.pos, nxt.lemma = NOUN, nxt.lower


def _repair_quantifiers(tokens: list[Token], lex: Lexicon) -> None:
    """ "Lin and I both like ...": a floating quantifier before the verb."""
    for i in range(1, len(tokens) - 1):
        tok, nxt = tokens[i], tokens[i + 1]
        if (
            tok.lower in ("both", "all", "each")
            and tokens[i - 1].pos in (PRON, PROPN, NOUN)
            and nxt.pos in (NOUN, VERB)
            and "VERB" in word_senses(nxt.lower)
            and nxt.inflected != "ing"
        ):
            tok.pos = ADV
            nxt.pos, nxt.lemma = VERB, base_form(nxt.lower)


def _repair_possessive_s(tokens: list[Token], lex: Lexicon) -> None:
    """ "'s" after a noun and before a noun phrase is a possessive, not "is"."""
    for i, tok in enumerate(tokens):
        if tok.lower == "'s" and i > 0 and tokens[i - 1].pos in (PROPN, NOUN, CODE):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            after = tokens[i + 2] if i + 2 < len(tokens) else None
            if nxt is not None and nxt.pos in (NOUN, ADJ, PROPN, CODE) and nxt.inflected != "ing":
                tok.pos, tok.lemma = POSS, "'s"
            elif (
                nxt is not None
                and nxt.inflected == "ing"
                and after is not None
                and after.pos == NOUN
            ):
                # "her grandmother's sewing machine": a gerund modifier of the possessed noun
                tok.pos, tok.lemma = POSS, "'s"
                nxt.pos, nxt.lemma = NOUN, nxt.lower


#: The passes after tagging, in order.
_REPAIRS = (_repair_names, _repair_second_verbs, _repair_quantifiers, _repair_possessive_s)


#: Words after which "to" is part of a compound preposition ("due to fog").
_TO_PREPOSITIONS = frozenset({"due", "prior", "thanks", "according", "owing", "next", "close"})
#: Verbs that take "of" right after them ("consists of"): before "of" they stay verbs.
_VERBS_OF = frozenset(
    {"consist", "think", "approve", "smell", "dream", "hear", "speak", "know", "tire", "die"}
)


#: Adverbial particles of phrasal verbs ("comes back", "sets up"): never a verb themselves.
_PARTICLES = frozenset({"up", "out", "off", "back", "down", "over", "away", "through", "in", "on"})


def _finite_only(tok: Token) -> bool:
    """An untagged word that can only be a finite verb ("approves", "signed"): the word
    before it is its subject ("until finance approves ..."), not an imperative."""
    if tok.pos:
        return False
    cands = word_senses(tok.lower)
    return set(cands) == {"VERB"} and tok.inflected in ("s", "ed")


def _common(tok: Token, cands: dict[str, tuple[str, ...]], prev: Token | None) -> bool:
    """A capitalised word is read as a common word only at a sentence start or after a title
    colon; elsewhere a capital marks a name ("Rust", "Grace")."""
    return prev is None or prev.lower in (":", "-", '"', "(", "•", "*")


@dataclass(slots=True)
class _Context:
    """What the choice of an ambiguous word's part of speech looks at."""

    tok: Token
    prev_prev: Token | None
    cands: dict[str, tuple[str, ...]]
    prev: Token | None
    nxt: Token | None
    i: int
    relation_verbs: frozenset[str]
    has: set[str]
    p: str
    nxt_nominal: bool


def _choose(
    tok: Token,
    prev_prev: Token | None,
    cands: dict[str, tuple[str, ...]],
    prev: Token | None,
    nxt: Token | None,
    i: int,
    relation_verbs: frozenset[str],
) -> str:
    """The part of speech of an open-class word lemminflect knows, by its neighbours; each
    rule family is a function that answers or passes (None) to the next."""
    has = {p for p in cands if p in ("NOUN", "VERB", "ADJ", "ADV")}
    if len(has) == 1:
        return _choose_single(tok, prev_prev, cands, prev, nxt, next(iter(has)))
    if not has:
        return NOUN
    c = _Context(
        tok,
        prev_prev,
        cands,
        prev,
        nxt,
        i,
        relation_verbs,
        has,
        prev.pos if prev is not None else "",
        nxt is not None
        and (nxt.pos in (NOUN, PROPN, CODE) or (not nxt.pos and "NOUN" in word_senses(nxt.lower))),
    )
    for rule in (_after_function_word, _after_noun, _after_verb_or_start):
        found = rule(c)
        if found is not None:
            return found
    if "ADJ" in has and c.nxt_nominal:
        return ADJ
    return NOUN if "NOUN" in has else (VERB if "VERB" in has else ADJ)


def _choose_single(
    tok: Token,
    prev_prev: Token | None,
    cands: dict[str, tuple[str, ...]],
    prev: Token | None,
    nxt: Token | None,
    only: str,
) -> str:
    """A word with one open class, except where its position says a noun or an adjective."""
    if only == "ADJ" and tok.inflected in ("ing", "ed") and "VERB" not in cands:
        return ADJ
    if only != "VERB" or prev is None:
        return {"NOUN": NOUN, "VERB": VERB, "ADJ": ADJ, "ADV": ADV}[only]
    if tok.inflected in ("ing", "ed") and prev.pos in (DET, POSS, ADJ, NUM):
        return ADJ  # "the staging server", "a misconfigured proxy"
    if prev.pos in (DET, POSS):
        return NOUN  # "a bake sale": a verb used as a noun modifier
    if (
        tok.inflected == ""
        and prev.pos in (NOUN, ADJ)
        and nxt is not None
        and (nxt.pos in (AUX, MODAL, NEG) or _finite_only(nxt))
    ):
        return NOUN  # "the garage rebuild is ...": the head of the subject
    if (
        tok.inflected == "ing"
        and prev.pos in (NOUN, PROPN)
        and prev_prev is not None
        and prev_prev.pos in (DET, POSS)
        and nxt is not None
        and not nxt.pos
        and "NOUN" in word_senses(nxt.lower)
        and nxt.inflected != "s"
    ):
        return NOUN  # "the Q4 onboarding project": a gerund inside a noun phrase
    return VERB


def _after_function_word(c: _Context) -> str | None:
    """After a modal, pronoun, number, determiner, adjective, preposition or auxiliary."""
    tok, has, p, nxt = c.tok, c.has, c.p, c.nxt
    if "VERB" in has and p in (MODAL, PART, NEG, PRON) and tok.inflected != "s":
        return VERB
    if "VERB" in has and p == PRON and tok.inflected in ("s", "ed"):
        return VERB
    if (
        p == NUM
        and "VERB" in has
        and tok.inflected in ("ed", "s")
        and not c.nxt_nominal
        and nxt is not None
        and nxt.pos in (PREP, DET, ADV, PART)
    ):
        return VERB  # "bumping numpy to 2.0 worked around ...": the verb after a number
    if (
        p in (DET, POSS)
        and not c.nxt_nominal
        and (nxt is None or nxt.pos in (PUNCT, PREP, AUX))
        and ("NOUN" in has or tok.inflected == "ing")
    ):
        return NOUN  # "stopped the humming.": the head of its noun phrase
    if p in (DET, POSS, ADJ, NUM, PREP) or (c.prev is not None and c.prev.lower == "'s"):
        if "ADJ" in has and c.nxt_nominal:
            return ADJ
        if tok.inflected == "ing" and "VERB" in has and p == PREP:
            return VERB  # "by running", "after lowering"
        return NOUN if "NOUN" in has else (ADJ if "ADJ" in has else VERB)
    if p == AUX:
        if "VERB" in has and tok.inflected in ("ing", "ed"):
            return VERB
        if "ADJ" in has:
            return ADJ
        return VERB if "VERB" in has else NOUN
    return None


def _after_noun(c: _Context) -> str | None:
    """After a noun, a name or code: the head of a compound, or the verb of the subject."""
    if c.p not in (NOUN, PROPN, CODE):
        return None
    tok, has, nxt = c.tok, c.has, c.nxt
    two_back = c.prev_prev.pos if c.prev_prev is not None else ""
    if (
        "NOUN" in has
        and nxt is not None
        and nxt.lower == "of"
        and two_back in (DET, POSS)
        and base_form(tok.lower) not in _VERBS_OF
    ):
        return NOUN  # "the Meta options of ...": a compound noun's head before "of"
    at_end = nxt is None or nxt.pos == PUNCT or nxt.lower in (",", ".", "!", ";")
    before_aux = nxt is not None and nxt.pos in (AUX, MODAL)
    if "NOUN" in has and (at_end or before_aux or two_back in (PREP, PART, VERB)):
        return NOUN  # "the tax return.", "write product pages", "to team lead"
    if "NOUN" in has and tok.inflected == "" and two_back in (DET, POSS):
        return NOUN  # "a part-time job at", "the cron job runs": inside a noun phrase
    if (
        "VERB" in has
        and (
            tok.inflected in ("s", "ed")
            or tok.lemma in c.relation_verbs
            or base_form(tok.lower) in c.relation_verbs
        )
        and not _plural_subject(c)
    ):
        return VERB
    return NOUN if "NOUN" in has else VERB


def _plural_subject(c: _Context) -> bool:
    """ "the api keys expire": a plural noun before the clause's verb, not a verb itself."""
    nxt = c.nxt
    return (
        c.tok.inflected == "s"
        and nxt is not None
        and nxt.lower not in _PARTICLES
        and (
            nxt.pos in (VERB, AUX, MODAL, NEG)
            or (
                not nxt.pos
                and "VERB" in word_senses(nxt.lower)
                and (nxt.lower in c.relation_verbs or base_form(nxt.lower) in c.relation_verbs)
            )
        )
    )


def _after_verb_or_start(c: _Context) -> str | None:
    """After a verb or an adverb, or opening a clause: gerunds, imperatives and verbs."""
    tok, has, p, nxt, prev = c.tok, c.has, c.p, c.nxt, c.prev
    if (
        p == VERB
        and c.i == 1
        and prev is not None
        and prev.inflected == "ing"
        and "VERB" in has
        and tok.inflected == "s"
    ):
        return VERB  # "Testing comes after ...": a gerund subject and its verb
    if (
        p == VERB
        and tok.inflected == "ing"
        and "VERB" in has
        and nxt is not None
        and (nxt.pos in (DET, POSS, PREP, PROPN) or nxt.lower in ("back", "up", "out", "off"))
    ):
        return VERB  # "advised walking more", "started using Ansible"
    if p == ADV and "VERB" in has and tok.inflected in ("s", "ed") and c.i > 1:
        return VERB  # "Bruno no longer lives", "she really hated"
    if c.i == 0 or p in (PUNCT, CONJ, SUB, ADV):
        # an imperative or a gerund subject ("install docker", "restarting the router")
        if (
            "VERB" in has
            and tok.inflected in ("", "ing")
            and not (tok.inflected == "" and nxt is not None and nxt.pos == VERB)
            and not (tok.inflected == "" and nxt is not None and _finite_only(nxt))
        ):
            return VERB
        if "ADJ" in has and c.nxt_nominal:
            return ADJ
        return NOUN if "NOUN" in has else VERB
    return None


#: Penn Treebank tags of open-class and leftover words, in this module's tag set.
