"""Tokens of a sentence with lemmas and parts of speech.

With spaCy's pipeline installed the parser's tags and dependency arcs are used
(:func:`tag_parsed`); without it the dictionary tagger of :mod:`.tagger` reads the words
(classes and lemmas from ``lemminflect``, :mod:`.word`). Code identifiers,
quoted terms and ids are found first and kept as single tokens, so ``pd.read_csv`` or
``DatabaseError: relation 'x' does not exist`` is one word of the sentence.
"""

from __future__ import annotations

import re

from sage_memory.extract import syntax
from sage_memory.extract.lexicon import Lexicon, default_lexicon
from sage_memory.extract.tagger import _NUMBER_WORDS, _closed_pos, _tag, _tag_closed
from sage_memory.extract.text import find_code_mentions, find_quoted, find_user_ids
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
    VERB,
    Token,
    _inflection,
    base_form,
    singular,
    word_senses,
)

_WORD = re.compile(
    r"(?:Dr|Mr|Mrs|Ms|Prof|St)\.(?=\s+[A-Z])|[A-Za-z0-9\u00C0-\u024F](?:[\w\u00C0-\u024F+#]|[.'’-](?=[\w\u00C0-\u024F]))*[+#]*"
    r"|n[’']t\b|[’']\w+|[^\w\s]"
)
_SPLIT_NT = re.compile(r"(?i)^(\w+?)(n[’']t)$")
_CANT = {"can't": ("ca", "n't"), "won't": ("wo", "n't"), "cannot": ("can", "not")}


def _protected_spans(text: str) -> list[tuple[int, int, str]]:
    """Code identifiers, quoted terms and ids: kept as one token each."""
    spans = [(m.start, m.end, m.kind) for m in find_code_mentions(text)]
    spans += [(m.start, m.end, "quoted") for m in find_quoted(text)]
    spans += [(m.start, m.end, "userid") for m in find_user_ids(text)]
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out: list[tuple[int, int, str]] = []
    for span in spans:
        if not out or span[0] >= out[-1][1]:
            out.append(span)
    return out


def _raw_tokens(text: str) -> list[tuple[str, int, int, str]]:
    """(surface, start, end, kind) with code spans whole and contractions split."""
    out: list[tuple[str, int, int, str]] = []
    pos = 0
    for start, end, kind in [*_protected_spans(text), (len(text), len(text), "")]:
        for m in _WORD.finditer(text, pos, start):
            word = m.group()
            low = word.lower().replace("’", "'")
            if low in _CANT:
                first, second = _CANT[low]
                cut = m.start() + len(first)
                out += [(word[: len(first)], m.start(), cut, ""), (second, cut, m.end(), "")]
                continue
            nt = _SPLIT_NT.match(word)
            if nt and nt.group(1).lower() not in ("", "ca", "wo"):
                cut = m.start() + len(nt.group(1))
                out += [(nt.group(1), m.start(), cut, ""), ("n't", cut, m.end(), "")]
                continue
            if "'" in low[1:] and not low.startswith("'"):
                stem, _, tail = word.replace("’", "'").partition("'")
                if tail.lower() in ("s", "ll", "re", "m", "ve", "d"):
                    cut = m.start() + len(stem)
                    out += [(stem, m.start(), cut, ""), ("'" + tail, cut, m.end(), "")]
                    continue
            out.append((word, m.start(), m.end(), ""))
        if kind:
            out.append((text[start:end], start, end, kind))
        pos = end
    return out


def tokenize(text: str, lexicon: Lexicon | None = None) -> list[Token]:
    """Tokens of one sentence, each with a lemma and a part of speech (and, when spaCy's
    pipeline is installed, its Penn tag and dependency arc: :mod:`.syntax`)."""
    lex = lexicon or default_lexicon()
    tokens = _untagged(text)
    parsed = syntax.parse(sentence_words(tokens))
    if parsed is not None and len(parsed) == len(tokens):
        tag_parsed(tokens, parsed, lex)
    else:
        _tag(tokens, lex)
    return tokens


def _untagged(text: str) -> list[Token]:
    tokens: list[Token] = []
    for i, (word, start, end, kind) in enumerate(_raw_tokens(text)):
        low = word.lower().replace("’", "'")
        cap = word[:1].isupper()
        if kind:
            # a quoted plain phrase is still words ("'write unit tests'"); code stays code
            tokens.append(Token(word, low, low, CODE, start, end, cap, kind))
            continue
        tokens.append(Token(word, low, low, "", start, end, cap and i > 0, _inflection(low)))
    return tokens


def sentence_words(tokens: list[Token]) -> syntax.Words:
    """The words the parser reads for these tokens (the key of its cache)."""
    return syntax.as_words(
        (t.text, k + 1 < len(tokens) and tokens[k + 1].start > t.end) for k, t in enumerate(tokens)
    )


def prime(texts: list[str]) -> None:
    """Parse many sentences in one batch of the parser (nothing when it is not installed)."""
    if syntax.available():
        syntax.prime([sentence_words(_untagged(t)) for t in texts])


_PENN = {
    "NN": NOUN,
    "NNS": NOUN,
    "NNP": PROPN,
    "NNPS": PROPN,
    "FW": NOUN,
    "VB": VERB,
    "VBD": VERB,
    "VBG": VERB,
    "VBN": VERB,
    "VBP": VERB,
    "VBZ": VERB,
    "JJ": ADJ,
    "JJR": ADJ,
    "JJS": ADJ,
    "AFX": ADJ,
    "RB": ADV,
    "RBR": ADV,
    "RBS": ADV,
    "WRB": ADV,
    "RP": ADV,
    "EX": ADV,
    "UH": ADV,
    "CD": NUM,
    "MD": MODAL,
    "DT": DET,
    "PDT": DET,
    "WDT": DET,
    "PRP": PRON,
    "WP": PRON,
    "PRP$": POSS,
    "WP$": POSS,
    "IN": PREP,
    "TO": PART,
    "CC": CONJ,
    "POS": POSS,
}
_UPOS = {VERB: "VERB", NOUN: "NOUN", ADJ: "ADJ", ADV: "ADV"}
#: Dependency labels of a verb that heads a clause (not an auxiliary, not a preposition).
_CLAUSE_HEADS = frozenset({"ROOT", "xcomp", "ccomp", "advcl", "conj", "pcomp", "acl", "relcl"})
_DO_FORMS = frozenset({"do", "does", "did"})


def _predicative(parsed: tuple[syntax.Parsed, ...], k: int) -> bool:
    """The adjective at ``k`` stands alone as a predicate: no noun or adjective follows it,
    so a clitic "'s" before it is "is" ("Ines's allergic to wool", "Ana's happy"), where
    before "old car" it is a possessive. An adjective heads a noun phrase only from before
    its noun (Quirk et al. 1985, 7.3, attributive and predicative adjectives)."""
    if k >= len(parsed) or not parsed[k].tag.startswith("JJ"):
        return False
    after = parsed[k + 1].tag if k + 1 < len(parsed) else ""
    return not after.startswith(("NN", "JJ", "CD", "VBG", "HYPH"))


def tag_parsed(tokens: list[Token], parsed: tuple[syntax.Parsed, ...], lex: Lexicon) -> None:
    """Parts of speech and lemmas from the parser's tags, arcs kept on each token.

    Closed classes keep the lexicon's reading (the matcher's phrasings are written against
    it); the words the lexicon leaves open, and the few closed words whose class depends on
    the sentence ("her" possessive or object, "'s" possessive or "is"), take the parser's.
    """
    _tag_closed(tokens, lex)
    for k, (tok, p) in enumerate(zip(tokens, parsed, strict=True)):
        tok.tag, tok.dep, tok.head = p.tag, p.dep, p.head
        if tok.pos == CODE:
            continue
        if tok.lower == "her" and p.tag in ("PRP$", "PRP"):
            tok.pos = POSS if p.tag == "PRP$" else PRON
        elif tok.lower in ("'s", "’s") and p.tag in ("POS", "VBZ"):
            nxt = tokens[k + 1].lower if k + 1 < len(tokens) else ""
            # "Roisin's a member": before an article the clitic is "is", whatever the tag
            after = parsed[k + 1].tag if k + 1 < len(parsed) else ""
            possessive = (
                p.tag == "POS"
                and nxt not in lex.words("determiners")
                and after.startswith(("NN", "JJ", "CD", "VBG", "VBN"))
                and not _predicative(parsed, k + 1)
            )
            tok.pos, tok.lemma = (POSS, "'s") if possessive else (AUX, "be")
        elif tok.lower == "using" and p.tag == "VBG" and p.dep in _CLAUSE_HEADS:
            tok.pos, tok.lemma = VERB, "use"  # "we're using X", "stopped using X": the verb
        elif tok.pos == AUX and tok.lower in _DO_FORMS and p.dep in _CLAUSE_HEADS:
            tok.pos = VERB  # "I do my budgeting in X": the main verb "do", no auxiliary
        if tok.pos:
            continue
        pos = _PENN.get(p.tag, PUNCT if not any(c.isalnum() for c in tok.lower) else NOUN)
        if tok.lower in lex.words("adverbs") and not (k and tokens[k - 1].pos == DET):
            pos = ADV  # the lexicon's adverbs ("yesterday", "still"), as the matcher reads them
        if pos == VERB and p.tag in ("VBG", "VBN") and p.dep == "amod":
            pos = ADJ  # "the staging server", "a misconfigured proxy": a modifier
        elif pos == VERB and p.dep == "compound":
            pos = NOUN  # "the onboarding project"
        if tok.lower in _NUMBER_WORDS:
            pos = NUM
        tok.pos = _agree(tok, pos, p, first=k == 0, prev=tokens[k - 1] if k else None)
    _nominal_verbs(tokens)
    _clause_final_verbs(tokens, lex)
    _bare_infinitives(tokens)
    for tok, p in zip(tokens, parsed, strict=True):
        if tok.pos not in (CODE, AUX, MODAL, NEG, POSS, PUNCT) and not _closed_pos(tok, lex):
            tok.lemma = _lemma(tok, tok.pos, p.lemma)


def _agree(tok: Token, pos: str, p: syntax.Parsed, *, first: bool, prev: Token | None) -> str:
    """The parser's part of speech, checked against the dictionary where the small model is
    weak: rare words and names. A word the dictionary does not know is a noun (a verb only
    with a verb's ending); a capital inside a sentence marks a name, and a capitalised opening
    word the dictionary does not know is a name too ("Theo is ..."); a word the dictionary
    knows, tagged in a class it does not have, takes one it has ("have gluten")."""
    cands = word_senses(tok.lower)
    if pos == PROPN and first and tok.inflected == "ing" and (not cands or "VERB" in cands):
        return VERB  # "Rebooting did not fix it": a gerund opening the sentence
    if not cands and pos in (VERB, ADJ, ADV):
        if pos == VERB and tok.inflected in ("ing", "ed"):
            pass  # "dockerized", "rebooting": an unknown word with a verb's ending
        elif pos != VERB and (p.dep == "amod" or tok.lower.endswith("ly")):
            pass  # "sous chef", "weirdly": a modifier the model placed as one
        else:
            pos = NOUN  # "uses kafka", "Raj joined": the name of a thing or a person
    elif pos == ADJ and p.dep in ("dobj", "nsubj", "nsubjpass", "pobj") and "NOUN" in cands:
        pos = NOUN  # "own a flat": an adjective's spelling in a noun's place
    elif pos == VERB and p.tag != "VBG" and p.dep in _SUBJECT_OBJECT and "NOUN" in cands:
        pos = NOUN  # "the logo redesign is on hold": a verb's spelling as a subject
    elif pos != NOUN and (key := _UPOS.get(pos)) is not None and cands and key not in cands:
        # the dictionary knows the word, but not in this class ("have gluten", "is lactose
        # intolerant"): one of its own classes, a noun first; a noun the dictionary knows
        # only as a verb stays a noun ("the remodel"): verbs make nouns freely
        for other, ours in (("NOUN", NOUN), ("ADJ", ADJ), ("VERB", VERB)):
            if other in cands:
                pos = ours
                break
    if first and pos == VERB and p.tag == "VBG" and p.dep in ("csubj", "csubjpass"):
        return VERB  # "Resealing the bath fixed it": a gerund clause as subject, no name
    named = tok.capitalized and (prev is None or prev.lower not in (":", "-", '"', "(", "•", "*"))
    if pos in (NOUN, ADJ, VERB, ADV) and tok.text[:1].isupper() and (named or not cands):
        return PROPN
    return pos


_SUBJECT_OBJECT = frozenset({"nsubj", "nsubjpass", "dobj", "pobj"})
#: Conjunctions that open a clause of time or condition (Quirk et al. 15.25); "until" and
#: "once" take a clause far more often than a noun phrase that is no time.
_SUBORDINATORS = frozenset({"until", "till", "til", "once", "unless"})
#: What may follow an intransitive verb closing its clause: a particle ("weighs in").
_PARTICLES_AFTER = frozenset({"in", "off", "out", "up", "through", "over", "down", "and"})


def _clause_final_verbs(tokens: list[Token], lex: Lexicon) -> None:
    """ "until the screed cures": a clause opened by "until" / "once" / "unless" needs a
    finite verb; when the parse has none and its last word, after a singular noun, is a
    plural noun the dictionary also knows as a verb, that word is the verb (the small model
    reads "screed cures" as a compound). A time noun stays one ("until the school holidays")."""
    times = lex.words("time_words") | lex.words("period_nouns")
    for k, t in enumerate(tokens):
        if t.lower not in _SUBORDINATORS:
            continue
        j = k + 1
        while j < len(tokens) and tokens[j].pos in (DET, POSS, ADJ, NOUN, PROPN):
            j += 1
        last = j - 1
        if last < k + 2:
            continue
        end, prev = tokens[last], tokens[last - 1]
        after = tokens[j] if j < len(tokens) else None
        if (
            end.pos == NOUN
            and end.inflected == "s"
            and end.lower not in times
            and "VERB" in word_senses(end.lower)
            and prev.pos in (NOUN, PROPN)
            and prev.inflected != "s"
            and (after is None or after.pos == PUNCT or after.lower in _PARTICLES_AFTER)
        ):
            end.pos = VERB


#: Verbs that take an object and a bare infinitive ("made the pipes burst", "let the dough
#: rise"): Quirk et al. 1985, 16.52 (causative and perception verbs).
_BARE_INFINITIVE_HEADS = frozenset({"make", "let", "help", "see", "watch", "hear"})


def _bare_infinitives(tokens: list[Token]) -> None:
    """ "The frost made the pipes burst": the word after a causative verb's object is its bare
    infinitive when the parse makes it the causative's clausal complement, even where the
    small model tags it a noun ("pipes burst" as a compound). Only a word the dictionary also
    knows as a verb, after an object noun, turns."""
    for k, tok in enumerate(tokens):
        if tok.pos != VERB or base_form(tok.lower) not in _BARE_INFINITIVE_HEADS:
            continue
        for j in range(k + 2, min(k + 7, len(tokens))):
            t = tokens[j]
            if t.head == k and t.dep == "ccomp":
                if (
                    t.pos == NOUN
                    and tokens[j - 1].pos in (NOUN, PROPN)
                    and (t.tag == "VB" or "VERB" in word_senses(t.lower))
                ):
                    t.pos = VERB
                break
            if t.pos not in (DET, POSS, ADJ, NOUN, PROPN, NUM):
                break


_NOMINAL_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "conj", "appos"})


def _nominal_verbs(tokens: list[Token]) -> None:
    """Where the parse and the word disagree on noun or verb, in the few shapes the small
    model gets wrong on chat: a gerund with an article is a noun ("the swelling"); a verb form
    right after an object is a compound's head ("prefers async updates"); a sentence whose
    root is a plural noun after a name has that word as its verb ("Amira volunteers with")."""
    children: dict[int, set[str]] = {}
    for k, t in enumerate(tokens):
        if t.head != k:
            children.setdefault(t.head, set()).add(t.dep)
    for k, t in enumerate(tokens):
        deps = children.get(k, set())
        cands = word_senses(t.lower)
        prev = tokens[k - 1] if k else None
        if t.lower == "longer" and prev is not None and prev.lower == "no":
            prev.pos = t.pos = ADV  # "no longer": a negating adverb
        elif t.pos == VERB and t.tag == "VBG" and "NOUN" in cands:
            at_end = all(x.pos == PUNCT for x in tokens[k + 1 :])
            if (
                (t.dep in _NOMINAL_DEPS and deps & {"det", "poss", "amod", "compound"})
                or (t.dep == "acl" and t.head == k - 1 and not deps & {"dobj", "nsubj"})
                or (at_end and prev is not None and prev.pos == NOUN and not deps - {"punct"})
            ):
                t.pos = NOUN  # "the swelling", "the ankle swelling", "... the server running."
        elif (
            k == 0
            and t.inflected == "ing"
            and "VERB" in cands
            and t.dep in ("amod", "compound")
            and 0 < t.head < len(tokens)
            and tokens[t.head].tag == "NNS"
            and tokens[tokens[t.head].head].tag == "VBZ"
        ):
            # "Running migrations depends on ...": a plural noun cannot be the subject of
            # "depends"; the gerund is, with the noun as its object
            t.pos, t.lemma = VERB, base_form(t.lower)
        elif (
            t.pos == VERB
            and t.tag == "VBZ"
            and t.dep != "ROOT"
            and "NOUN" in cands
            and prev is not None
            and prev.dep in ("dobj", "pobj", "amod", "compound")
            and prev.pos in (NOUN, ADJ)
            and "nsubj" not in deps
        ):
            t.pos = NOUN
        elif (
            t.pos == NOUN
            and t.inflected == "s"
            and "VERB" in cands
            and prev is not None
            and prev.pos in (PROPN, PRON)
            and not any(x.pos in (VERB, AUX, MODAL) and x.dep != "conj" for x in tokens)
        ):
            t.pos = VERB  # a sentence with no verb but this one ("Amira volunteers with")
    first = tokens[0] if tokens else None
    if (
        first is not None
        and len(tokens) > 1
        and first.pos in (NOUN, VERB, ADJ)
        and first.text[:1].isupper()
        and first.dep == "compound"
        and 0 < first.head < len(tokens)
        and tokens[first.head].pos == PROPN
        and all(t.pos == PROPN for t in tokens[1 : first.head + 1])
    ):
        first.pos, first.lemma = PROPN, first.lower  # "Project Osprey is ...": a title-case name
    elif (
        first is not None
        and first.pos == NOUN
        and first.dep == "ROOT"
        and first.inflected == ""
        and "VERB" in word_senses(first.lower)
    ):
        first.pos = VERB  # "Hand in the report once ...": an imperative read as a noun
    elif (
        first is not None
        and len(tokens) > 1
        and first.pos == NOUN
        and first.tag == "NN"
        and first.text[:1].isupper()
        and first.inflected not in ("s", "ing")
        and first.dep in ("nsubj", "nsubjpass")
        and tokens[1].pos in (AUX, MODAL, NEG)
        and "VERB" in word_senses(first.lower)
    ):
        first.pos = PROPN  # "Grace was promoted": a name that is also a word


def _lemma(tok: Token, pos: str, parser_lemma: str) -> str:
    """A word's lemma: lemminflect's for its part of speech (the same dictionary as the
    names' singular and base forms), the parser's when lemminflect does not know the word."""
    if pos in (PROPN, ADJ, NUM):
        return tok.lower
    upos = _UPOS.get(pos)
    if upos is None:
        return parser_lemma or tok.lower
    lemmas = word_senses(tok.lower).get(upos)
    if lemmas:
        if pos == NOUN and len(lemmas[0]) > len(tok.lower):
            return tok.lower
        return lemmas[0]
    if pos == VERB:
        return parser_lemma or base_form(tok.lower)
    return tok.lower if pos != NOUN else singular(tok.lower)
