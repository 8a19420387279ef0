"""Phrase boundaries: where a noun phrase, a task (verb phrase) or a clause ends, and the
name each one takes.

:class:`PhraseReader` holds the lexicon's closed classes and the span readers that
:class:`.args.ArgReader` builds arguments with. Names follow docs/relations.md: lower case, no
leading article or possessive, no time phrase or quantity, a plural kind in the singular, a
task in the base form of its verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    NOMINAL,
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
    singular,
    verb_known,
    word_senses,
)

NP, TASK, CLAUSE, PRONOUN = "np", "task", "clause", "pronoun"
_PARTICLES = frozenset({"up", "out", "off", "back", "down", "over", "away", "in", "on", "through"})
_VP_PREPS = frozenset(
    {
        "to",
        "on",
        "for",
        "into",
        "onto",
        "with",
        "from",
        "in",
        "at",
        "via",
        "over",
        "about",
        "without",
        "through",
        "across",
        "of",
        "by",
    }
)
_MAX_NAME_TOKENS = 9


@dataclass(slots=True)
class Arg:
    """One argument: its token span, display name, kind and the evidence for its label."""

    start: int
    end: int
    name: str
    kind: str
    proper: bool = False
    code: str = ""  # the code kind of a lone code token ("error", "call", ...)
    possessor: str = ""  # "Ana" of "Ana's heart rate"
    head: str = ""  # lemma of the head word
    words: tuple[str, ...] = field(default_factory=tuple)  # lower-case surface words
    negated: bool = False  # a clause argument cut to its task or subject said "not"


def _join(span: list[Token], replace: dict[int, str] | None = None) -> str:
    """The tokens as written (their case and spacing), with some words replaced."""
    out: list[str] = []
    for j, t in enumerate(span):
        if j and t.start > span[j - 1].end:
            out.append(" ")
        text = t.text
        if t.start == 0 and t.pos not in (PROPN, CODE) and not t.text.isupper():
            text = text.lower()  # a capital that only opens the sentence
        out.append((replace or {}).get(j, text))
    return "".join(out).strip()


class PhraseReader:
    """Reads noun phrases, tasks and clauses out of token spans with the closed classes of one
    lexicon."""

    def __init__(self, lex: Lexicon) -> None:
        self.lex = lex
        self.time_words = lex.words("time_words")
        self.time_mods = lex.words("time_modifiers")
        self.discourse = lex.words("discourse")
        self.quantifiers = lex.words("quantifiers")
        self.partitives = lex.words("partitives")
        self.quantifying_adjectives = lex.words("quantifying_adjectives")
        # participles that say a step took place or has a status, not what was done to it
        # ("done", "paused", "was run"): the noun phrase is the step
        self.event_participles = frozenset(
            " ".join(phrase) for phrases in lex.status.values() for phrase in phrases
        ) | lex.words("event_participles")
        self.hedges = lex.words("hedges")
        self.label_nouns = lex.words("label_nouns")
        self.emphasizers = lex.words("emphasizers")
        self.interjections = lex.words("interjections")

    # --- spans -----------------------------------------------------------------------

    def is_time(self, toks: list[Token], i: int) -> int:
        """Length of a time phrase starting at ``i`` (0 when none): "last spring", "in May",
        "since January", "on Monday", "two weeks ago", "yesterday"."""
        n = len(toks)
        j = i
        if j < n and toks[j].lower in (
            "in",
            "on",
            "since",
            "during",
            "at",
            "by",
            "from",
            "until",
            "till",
            "before",
            "after",
            "around",
            "for",
        ):
            j += 1
        if j < n and toks[j].lower in ("the", "this", "that", "these", "those"):
            j += 1
        start_core = j
        while j < n and (toks[j].lower in self.time_mods or toks[j].pos == NUM):
            j += 1
        if j < n and toks[j].lower in self.time_words:
            if j == start_core and self._modifies_noun(toks, j):
                return 0  # "the night shift", "afternoon meetings": part of a name, no time
            j += 1
            if j < n and toks[j].lower == "ago":
                j += 1
            return j - i
        if j < n and toks[j].lower in ("ago",) and j > start_core:
            return j + 1 - i
        # "in 2024", "on 2026-05-01"
        if j == start_core + 1 and toks[start_core].pos == NUM and toks[i].pos == PREP:
            text = toks[start_core].lower
            if (text.isdigit() and 1900 <= int(text) <= 2100) or "-" in text:
                return j - i
        return 0

    def _modifies_noun(self, toks: list[Token], j: int) -> bool:
        """Whether the parse makes the word at ``j`` a modifier of a noun after it (a compound
        or adjective, with only noun-phrase words between): a time word that says which thing
        ("the Friday market") rather than when. False without a parse."""
        head = toks[j].head
        if toks[j].dep not in ("compound", "amod", "nmod") or not j < head < min(len(toks), j + 4):
            return False
        if toks[head].pos not in NOMINAL or toks[head].lower in self.time_words:
            return False
        return all(t.pos in NOMINAL or t.pos == ADJ or t.lower == "-" for t in toks[j + 1 : head])

    def _trim_end(self, toks: list[Token], s: int, e: int) -> int:
        while e > s and (
            toks[e - 1].lower in ("each", "both", "all") and e - 1 > s
        ):  # "the kids each have": a floating quantifier
            e -= 1
        while e > s and (
            toks[e - 1].pos in (AUX, MODAL, NEG, ADV, PUNCT, PART, SUB, CONJ)
            or toks[e - 1].lower in ("that", "which", "who", "it's", "no")
        ):
            e -= 1
        return e

    def _trim_start(self, toks: list[Token], s: int, e: int) -> int:
        # take what follows the last strong break: "Quick note - the server", "After X, Sam"
        for k in range(e - 1, s - 1, -1):
            if toks[k].lower in (",", ";", ":", "-", "–", "—", "(", ")", "!", "?"):
                if any(t.pos in (NOUN, PROPN, CODE, PRON, VERB) for t in toks[k + 1 : e]):
                    s = k + 1
                break
        changed = True
        while changed and s < e:
            changed = False
            t = toks[s]
            span = self.is_time(toks, s)
            if span and s + span < e:
                s += span
                changed = True
            elif (
                (t.lower in ("since", "as", "because", "while") and s + 1 < e)
                or t.pos in (PUNCT, CONJ, SUB)
                or (t.lower in self.discourse and s + 1 < e and t.pos not in (NOUN, PROPN, VERB))
            ):
                s += 1
                changed = True
            elif (
                t.pos in (PRON, PROPN)
                and s + 2 < e
                and toks[s + 1].lemma in ("say", "tell", "mention", "claim", "confirm")
                and toks[s + 1].pos == VERB
                and toks[s + 2].pos in (DET, POSS, PROPN, NOUN, PRON)
                and toks[s + 2].lower not in ("me", "us", "him", "her", "them")
            ):
                s += 2  # "Jonas said the form ...": the report, not the reporter
                changed = True
            elif (
                t.lower in ("i", "we")
                and s + 2 < e
                and toks[s + 1].lemma
                in (
                    "think",
                    "believe",
                    "guess",
                    "suppose",
                    "heard",
                    "hear",
                    "know",
                    "feel",
                    "read",
                    "learn",
                    "notice",
                    "find",
                    "see",
                    "say",
                    "mean",
                )
                and toks[s + 1].pos == VERB
            ):
                s += 2
                if s < e and toks[s].lower == "that":
                    s += 1
                changed = True
        return s

    # --- subject side ------------------------------------------------------------------

    def reduce_clause(self, toks: list[Token], arg: Arg, *, keep_task: bool | str) -> Arg:
        """A clause argument cut to what it is about: "until the visa comes through" ->
        the visa; with ``keep_task``, "until Jonas signs the lease" -> sign the lease
        (a person's action is a task); with ``keep_task="object"`` any doer's act on a direct
        object is the task ("until the bank approves the loan" -> approve the loan)."""
        if arg.kind != CLAUSE:
            return arg
        s, e = arg.start, arg.end
        k = s
        while k < e and toks[k].pos in (PUNCT, SUB, CONJ):
            k += 1
        if k < e and toks[k].pos == PRON:
            end = k + 1  # "you do not have to defrost it": the doer is no part of the task
            subject = None
        else:
            end = self._np_end(toks, k, e)
            if end <= k:
                return arg
            subject = self._np(toks, k, end)
        j = end
        negated = False
        while j < e and (
            toks[j].pos in (AUX, MODAL, NEG, ADV, PART)
            or (toks[j].lower in ("have", "need", "got") and j + 1 < e and toks[j + 1].pos == PART)
        ):
            negated = negated or toks[j].pos == NEG
            j += 1
        person = subject is not None and subject.proper and len(subject.words) <= 2
        if person and keep_task == "complement":
            return arg  # "after the holidays, Jonas moved": a person's life, not a plan's task
        if keep_task == "complement" and subject is not None and subject.name:
            passive = self._passive_task(toks, k, end, j, e)
            if passive is not None:
                return passive
        if j < e and toks[j].pos == VERB:
            vend = self._vp_end(toks, j, e)
            # an object or a prepositional phrase, not a bare particle ("cools down")
            complement = any(t.pos in NOMINAL | {PRON} for t in toks[j + 1 : vend])
            # "until the doctor removes the cast": what must happen is the act on its object
            direct = (
                j + 1 < vend
                and toks[j + 1].lower not in _PARTICLES
                and (toks[j + 1].pos in NOMINAL or toks[j + 1].pos in (DET, POSS))
            )
            if (
                subject is None
                or (keep_task == "complement" and complement)
                or (keep_task and person and complement)
                or (keep_task == "object" and direct)
            ):
                task = self._task(toks, j, max(vend, j + 1))
                # "you do not have to defrost it before ...": the order is denied; "stuck
                # because the visa hasn't come through": the block stands
                task.negated = negated and keep_task == "complement"
                return task
        if subject is None or not subject.name:
            return arg
        subject.negated = negated and keep_task == "complement"
        return subject

    def _passive_task(self, toks: list[Token], k: int, end: int, j: int, e: int) -> Arg | None:
        """ "once the contract is signed" -> sign the contract: a step stated in the passive
        is the act done to its subject (``[k, end)`` the subject, ``j`` the participle). Not
        a participle of an event or a status ("once the survey is done": the survey is the
        step), nor a person ("Jonas was transferred after ...": a life, not a plan's task)."""
        if j >= e or toks[j].pos != VERB or toks[j].tag != "VBN":
            return None
        if not any(toks[x].lemma in ("be", "get") for x in range(end, j)):
            return None
        v = j + 1
        while v < e and toks[v].lower in _PARTICLES and toks[v].pos in (ADV, PREP):
            v += 1  # "rolled out", "signed off"
        said = " ".join(t.lower for t in toks[j:v])
        if said in self.event_participles or toks[j].lemma in self.event_participles:
            return None
        named = end - k <= 2 and all(t.pos == PROPN for t in toks[k:end])
        if named or toks[end - 1].lemma in self.lex.words("person_nouns"):
            return None
        if v < e and toks[v].pos in NOMINAL | {DET, POSS}:
            return None  # "is given the keys": an object after it, no plain passive
        verb = " ".join([base_form(toks[j].lower), *(t.lower for t in toks[j + 1 : v])])
        subject = _join(toks[k:end])
        head = next((t.lemma for t in reversed(toks[k:end]) if t.pos in NOMINAL), "")
        words = tuple(verb.split()) + tuple(t.lower for t in toks[k:end])
        return Arg(k, v, f"{verb} {subject}", TASK, head=head, words=words)

    @staticmethod
    def _reduced_predicate(toks: list[Token], j: int, e: int) -> bool:
        """A verbless predicate at ``j``: "not" + participle, or "out of" + noun."""
        t, nxt = toks[j], toks[j + 1]
        if t.pos == NEG and nxt.pos == VERB:
            return True  # a negation right after a noun, no auxiliary: "migrations not run"
        return t.lower == "out" and nxt.lower == "of" and j + 2 < e and toks[j + 2].pos in NOMINAL

    def _partitive(self, toks: list[Token], j: int, e: int) -> bool:
        """A measure noun before "of" ("a drop of oil", "a pinch of salt"): a quantity of the
        thing the "of" phrase names, not a thing of its own; alone ("the drop in sales") it is
        a noun like any other."""
        return toks[j].lower in self.partitives and j + 1 < e and toks[j + 1].lower == "of"

    def _np_end(self, toks: list[Token], k: int, e: int, *, allow_of: bool = True) -> int:
        j = k
        while j < e and (
            toks[j].pos in (DET, POSS)
            or toks[j].lower in self.quantifiers
            or self._partitive(toks, j, e)
            or (
                toks[j].lower == "of"
                and j > k
                and (toks[j - 1].lower in self.quantifiers or self._partitive(toks, j - 1, e))
            )
        ):
            j += 1
        last_nominal = -1
        while j < e:
            t = toks[j]
            if self.is_time(toks, j) and (last_nominal >= 0 or toks[j - 1].pos == ADJ):
                break  # "the release last week", "her piano last month"
            if t.pos in NOMINAL or t.pos == ADJ or (t.pos == POSS and t.lower == "'s"):
                if t.pos in NOMINAL:
                    last_nominal = j
                j += 1
                continue
            if (
                t.tag == "POS"
                and last_nominal == j - 1
                and j + 1 < e
                and (toks[j + 1].pos in NOMINAL or toks[j + 1].pos == ADJ)
            ):
                j += 1  # "the growers' union": a plural's apostrophe, the phrase goes on
                continue
            # a participle modifying the next noun: "missing index", "signed letter"
            if (
                t.pos == VERB
                and t.inflected in ("ing", "ed")
                and j + 1 < e
                and (toks[j + 1].pos in (NOUN, PROPN, CODE))
            ):
                j += 1
                continue
            if (
                t.lower in ("-", "&")
                and last_nominal == j - 1
                and j + 1 < e
                and toks[j + 1].pos in NOMINAL
                and (t.lower == "-" or toks[j - 1].pos == PROPN)
            ):
                j += 1
                continue
            break
        if last_nominal < 0:
            return k
        end = last_nominal + 1
        # "head of marketing", "deposit of 500 euros": an "of" phrase is part of the name
        if allow_of and end + 1 < e and toks[end].lower == "of":
            inner = self._np_end(toks, end + 1, e, allow_of=False)
            if inner > end + 1 and self._of_names(toks, end - 1, end + 1, inner):
                end = inner
        # "a jump in returns": a noun of change names what changed with its "in" phrase
        elif (
            allow_of
            and end + 1 < e
            and toks[end].lower == "in"
            and toks[end - 1].lower in self.lex.words("change_heads")
        ):
            inner = self._np_end(toks, end + 1, e, allow_of=False)
            if inner > end + 1:
                end = inner
        return end

    def _of_names(self, toks: list[Token], head: int, s: int, e: int) -> bool:
        """Whether "<head> of <s:e>" names one thing ("proof of purchase", "head of sales",
        "a kind of virus") or is a thing and what it belongs to ("a choir of local
        singers", "clause 7 of the lease"): a bare singular noun after "of", or a head
        that names a role, a kind, a part or a cause, keeps the phrase whole."""
        keep = (
            self.lex.words("role_heads")
            | self.lex.words("kind_heads")
            | self.lex.words("part_heads")
            | self.lex.words("member_heads")
            | self.lex.words("cause_heads")
            | self.quantifiers
        )
        word = toks[head].lower
        if word in keep or singular(word) in keep or toks[head].pos == CODE:
            return True
        inner = toks[s:e]
        bare = all(t.pos in (NOUN, PROPN, NUM, CODE) for t in inner)
        plural = inner[-1].pos == NOUN and inner[-1].inflected == "s"
        return bare and not plural

    def _vp_end(self, toks: list[Token], k: int, e: int) -> int:
        """End of a task's verb phrase: verb, particle, object, one prepositional phrase."""
        j = k + 1
        if (
            j + 1 < e
            and toks[j].pos == VERB
            and toks[j].inflected == "ing"
            and toks[k].lemma
            in self.lex.words("catenative_verbs") | self.lex.words("inceptive_verbs")
        ):
            return self._vp_end(toks, j, e)  # "keep taking the tablets": one act, kept up
        while (
            j < e
            and (toks[j].lower in _PARTICLES and toks[j].pos in (PREP, ADV))
            and not (
                j + 1 < e
                and toks[j + 1].pos in (DET, POSS)
                and toks[j].lower in ("in", "on", "over")
            )
        ):
            j += 1
        while j < e and toks[j].pos == ADV and toks[j].lower not in ("then", "first", "also"):
            j += 1
        if j < e and toks[j].pos == PRON and toks[j].lower in ("it", "them", "this", "that"):
            j += 1
        elif j < e and toks[j].pos == NUM and j + 1 < e and toks[j + 1].lower in self.time_words:
            j += 2  # "walking 30 minutes a day"
            if (
                j + 1 < e
                and toks[j].lower in ("a", "per", "each", "every")
                and toks[j + 1].lower in self.time_words
            ):
                j += 2
            return j
        elif not self.is_time(toks, j) or toks[j].lower in ("every", "each"):
            # "bouldering these days": the time is no object; "walk every day": a routine's
            # frequency is part of the task
            j2 = self._np_end(toks, j, e)
            j = max(j, j2)
        if _object_particle(toks, k, j, e):
            j += 1  # "fold it up", "put the tools away": the particle after the object
        if j < e and toks[j].pos == ADJ and j + 1 >= e:
            j += 1  # "serve the bread warm"
        if j < e and toks[j].lower in _VP_PREPS and not self.is_time(toks, j):
            j2 = self._np_end(toks, j + 1, e)
            if j2 > j + 1:
                j = j2
            elif j + 1 < e and toks[j + 1].pos == VERB:
                pass
        while (
            j < e
            and toks[j].pos == ADV
            and toks[j].lower in ("daily", "weekly", "regularly", "automatically", "warm", "late")
        ):
            j += 1
        return j

    def _clause_end(self, toks: list[Token], k: int, e: int) -> int:
        j = k
        while j < e:
            t = toks[j]
            if t.lower in (",", ";", "."):
                break
            if t.pos == SUB and t.lower not in ("than",):
                break
            if t.pos == CONJ and j + 1 < e and toks[j + 1].pos in (PRON, DET, POSS, PREP):
                break
            if self.is_time(toks, j) and j > k:
                break
            j += 1
        return j

    # --- names -------------------------------------------------------------------------

    def _pronoun(self, toks: list[Token], k: int) -> Arg:
        t = toks[k]
        return Arg(k, k + 1, t.lower, PRONOUN, words=(t.lower,))

    def _np(self, toks: list[Token], s: int, e: int) -> Arg:
        """A noun phrase's name: no article, possessive, leading quantity; singular kind."""
        k, possessor = self._np_start(toks, s, e)
        while e > k and toks[e - 1].pos in (PUNCT, ADV, PREP, CONJ, DET):
            e -= 1
        k, e = phrase_extent(toks, k, e)
        k, e = self._bare_of_asides(toks, k, e)
        if (
            e - k >= 2
            and toks[k].pos in (NOUN, PROPN)
            and toks[k + 1].pos == CODE
            and toks[k].lower in self.label_nouns
        ):
            k += 1  # "user U123" -> U123, "task 'write tests'" -> write tests
        span = toks[k:e][:_MAX_NAME_TOKENS]
        if not span:
            return Arg(s, e, "", NP)
        if len(span) == 1 and span[0].pos == PRON and not possessor:
            # a lone pronoun left of a phrase ("she" of "She comes ... and lives in X", "us"
            # of "both of us") refers; it is no name of its own
            return self._pronoun(toks, k)
        words = [t.lower for t in span]
        proper = all(t.pos in (PROPN, CODE, NUM) or t.lower in ("-",) for t in span)
        # the head: the last nominal before an "of" phrase
        head_idx = len(span) - 1
        for j, t in enumerate(span):
            if t.lower == "of" and j > 0:
                head_idx = j - 1
                break
        head = span[head_idx]
        replace: dict[int, str] = {}
        if head.pos == NOUN and head.inflected == "s" and not head.capitalized:
            words[head_idx] = replace[head_idx] = singular(head.lower)
        elif len(head.text) > 2 and head.text[:-1].isupper() and head.text.endswith("s"):
            words[head_idx] = head.lower[:-1]  # "CVEs", "PRs": the plural of an acronym
            replace[head_idx] = head.text[:-1]
        code = span[0].inflected if len(span) == 1 and span[0].pos == CODE else ""
        if code == "quoted" and not any(c in words[0] for c in "()[]._"):
            words = [w.strip("'\"`") for w in words]
            replace[0] = span[0].text.strip("'\"`")
            code = ""
        name = _join(span, replace)
        return Arg(
            s,
            e,
            name,
            NP,
            proper=proper,
            code=code,
            possessor=possessor,
            head=head.lemma if head.pos != CODE else head.lower,
            words=tuple(words),
        )

    def _bare_of_asides(self, toks: list[Token], k: int, e: int) -> tuple[int, int]:
        """A name without what only comments on it: a chat interjection at either end ("a
        hybrid sport lol"), an emphasizing adjective first ("the whole pipeline", "a proper
        sourdough") and the examples after "such as" ("stone fruits such as peaches"). A kind
        named by a participle ("a sloop named Petrel") is read where the argument is shaped
        (``clauses.Matcher._named_kind``), which also keeps the kind."""
        for j in range(k + 1, e - 1):
            if toks[j].lower == "such" and toks[j + 1].lower == "as":
                e = j
                break
        while e - k > 1 and toks[k].lower in self.interjections:
            k += 1
        while e - k > 1 and toks[e - 1].lower in self.interjections:
            e -= 1
        if e - k > 1 and toks[k].lower in self.emphasizers and toks[k + 1].pos in (ADJ, *NOMINAL):
            k += 1
        return k, e

    def _np_start(self, toks: list[Token], s: int, e: int) -> tuple[int, str]:
        """Where a noun phrase's name starts (past articles, possessors, quantities) and the
        possessor it names ("Python's FastAPI" -> FastAPI, possessor Python)."""
        possessor = ""
        k = s
        for j in range(s, e):
            if toks[j].pos == POSS and toks[j].lower == "'s" and j + 1 < e:
                if _possessive_in_name(toks, j):
                    continue  # "St. Cuthbert's Hospice": one proper name, no possessor
                possessor = " ".join(t.text for t in toks[s:j])
                k = j + 1
        while k < e and (
            toks[k].pos in (DET, POSS, PUNCT)
            or toks[k].lower in self.quantifiers
            or self._partitive(toks, k, e)
            or toks[k].lower in self.hedges
        ):
            k += 1
        if k < e and toks[k].lower == "of" and k > s:
            k += 1
        while k < e and toks[k].pos in (DET, POSS):
            k += 1
        while (
            k + 1 < e
            and k > s
            and toks[k].lower in self.quantifying_adjectives
            and toks[k].pos != PROPN
            and toks[k - 1].pos in (DET, POSS, NUM)
        ):
            k += 1  # "our whole pipeline", "a single pump": how much of it, not which
        if k + 1 < e and toks[k].lower == "own" and k > s and toks[k - 1].pos == POSS:
            k += 1  # "their own room"
        # a leading cardinal ("two photos") is a quantity, not part of the name
        if (k + 1 < e and toks[k].pos == NUM and toks[k].lower.isalpha()) or (
            k + 1 < e
            and toks[k].pos == NUM
            and toks[k].lower.isdigit()
            and len(toks[k].lower) < 4
            and toks[k + 1].pos in (NOUN, ADJ)
            and toks[k + 1].inflected == "s"
        ):
            k += 1
        return k, possessor

    def _task(self, toks: list[Token], s: int, e: int) -> Arg:
        """A task's name: its verb phrase with the first verb in the base form."""
        if (
            e - s >= 3
            and toks[s].lemma in self.lex.words("inceptive_verbs")
            and toks[s + 1].pos == VERB
            and toks[s + 1].inflected == "ing"
        ):
            s += 1  # "start tiling the floor" names the tiling
        # "raise the limit to 8k": how far it moved is a quantity, no part of the name
        e = next(
            (k for k in range(s + 2, e) if toks[k].lower in _VP_PREPS and _measure(toks, k + 1, e)),
            e,
        )
        manner = e - s == 2 and toks[s + 1].pos == ADV and toks[s + 1].lower.endswith("ly")
        if not manner and not _object_particle(toks, s, e - 1, e):
            # "work remotely" keeps its manner adverb, "put them away" its particle
            e = self._trim_end(toks, s, e) if e - s > 1 else e
        while (
            e > s + 1
            and (
                toks[e - 1].pos in (PREP, CONJ, DET, POSS)
                or toks[e - 1].lower in self.interjections
            )
            and not _object_particle(toks, s, e - 1, e)
        ):
            e -= 1
        span = toks[s:e][:_MAX_NAME_TOKENS]
        if (
            len(span) == 2
            and span[0].lemma in ("run", "execute", "use", "call", "try", "type")
            and span[1].pos == CODE
        ):
            return Arg(s, e, span[1].text, NP, code=span[1].inflected, words=(span[1].lower,))
        words = [t.lower for t in span]
        replace: dict[int, str] = {}
        base = base_form(span[0].lower) if span and span[0].pos == VERB else ""
        if base and (verb_known(base) or span[0].inflected != "ing" or len(span) > 1):
            words[0] = replace[0] = base
        # else a lone gerund of an unknown verb stays as written ("bouldering", "overwatering"):
        # it names an activity, and a guessed base form ("boulder") is a word the text never
        # used; with an object it is a task, named by its verb ("reseating the connector")
        head = next(
            (t.lemma for t in reversed(span) if t.pos in NOMINAL), span[0].lemma if span else ""
        )
        return Arg(s, e, _join(span, replace), TASK, head=head, words=tuple(words))

    def _clause(self, toks: list[Token], s: int, e: int, *, drop_subject: bool = False) -> Arg:
        """A clause named by its words ("lockfile was out of date"), article dropped."""
        k = s
        if drop_subject and toks[k].pos == PRON:
            k += 1
        while k < e and toks[k].pos in (DET, POSS, PUNCT):
            k += 1
        e = self._trim_end(toks, k, e)
        span = toks[k:e][: _MAX_NAME_TOKENS + 2]
        words = tuple(t.lower for t in span)
        head = next((t.lemma for t in span if t.pos in NOMINAL), "")
        return Arg(s, e, _join(span), CLAUSE, head=head, words=words)


#: Dependents that never belong to a noun phrase's name: an appositive pronoun ("the fix
#: itself"), an interjection, a relative or adverbial clause, an adverb of the clause.
_DETACHED = frozenset({"intj", "relcl", "advcl", "punct", "mark"})
#: Adverbial dependents, detached only after the head ("the fix now"); before it they modify
#: the noun ("the science fair project").
_TRAILING = frozenset({"advmod", "npadvmod"})


def _object_particle(toks: list[Token], k: int, j: int, e: int) -> bool:
    """Whether ``toks[j]`` is the particle of the phrasal verb at ``k`` placed after its
    object ("hang it up", "turn the heat down"): a particle the parse tags as one (RP, not
    a preposition heading a phrase), or any after a pronoun, right after the object, and
    closing the phrase. A
    pronoun object must stand before the particle (Quirk et al. 16.4: "fold it up", never
    "fold up it"), so the split order is the only one a pronoun step has."""
    return (
        k + 1 < j < e
        and toks[j].lower in _PARTICLES
        and (toks[j].tag == "RP" or (toks[j - 1].pos == PRON and toks[j].pos in (PREP, ADV)))
        and toks[j - 1].pos in (PRON, NOUN, PROPN)
        and (j + 1 >= e or toks[j + 1].pos in (PUNCT, CONJ, ADV))
    )


def phrase_extent(toks: list[Token], s: int, e: int) -> tuple[int, int]:
    """The part of ``[s, e)`` that the parse says is one noun phrase: its head (the one word
    whose head lies outside the span) and the words that depend on it, less the dependents
    that name no part of it. The span is returned unchanged without a parse, or when the
    parse does not give one nominal head (a clause, a list, a tagging the rules read
    differently)."""
    if e - s < 2 or toks[s].head < 0:
        return s, e
    roots = [k for k in range(s, e) if not s <= toks[k].head < e or toks[k].head == k]
    if len(roots) != 1:
        return s, e
    root = roots[0]
    if toks[root].pos == PREP:  # "of our services": the object of a stray preposition
        objects = [k for k in range(s, e) if toks[k].head == root and toks[k].dep == "pobj"]
        if len(objects) != 1:
            return s, e
        root = objects[0]
    if toks[root].pos not in NOMINAL:
        return s, e
    keep = {root}
    for k in range(s, e):  # a word stays when its chain of heads reaches the root inside
        j, seen = k, 0
        while (
            j != root
            and s <= j < e
            and seen < e - s
            and toks[j].dep not in _DETACHED
            and not (toks[j].dep == "appos" and (toks[j].pos == PRON or toks[j - 1].pos == PUNCT))
            and not (toks[j].dep in _TRAILING and j > root and toks[j].pos not in NOMINAL)
        ):
            j, seen = toks[j].head, seen + 1
        if j == root:
            keep.add(k)
    lo = hi = root
    while lo - 1 in keep:
        lo -= 1
    while hi + 1 in keep:
        hi += 1
    return lo, hi + 1


def _possessive_in_name(toks: list[Token], j: int) -> bool:
    """Whether the possessive at ``j`` sits inside one proper name ("St. Cuthbert's Hospice",
    "the Fishermen's Choir"): a capitalised possessor before it and, after it, a capitalised
    dictionary noun that is not an acronym. "Zorvik's Qlint", "Ana's GPU": the word after is
    a name of its own (or an acronym), and the possessor is only its owner."""
    if j < 1 or j + 1 >= len(toks):
        return False
    owner, owned = toks[j - 1], toks[j + 1]
    return (
        owner.capitalized
        and owner.pos in (PROPN, NOUN)
        and owned.capitalized
        and not owned.text.isupper()
        and owned.pos in (PROPN, NOUN)
        and "NOUN" in word_senses(owned.lower)
    )


#: A number with its unit in one word ("4g", "200C", "12%", "600dpi").
_MEASURE = re.compile(r"^\d+(?:[.,]\d+)?(%|°?[a-z]{1,3})$")
#: A unit written apart ("2 m", "30 s", "1.5 kg", "12 %").
_UNIT = re.compile(r"^(%|°[cf]?|[a-z]{1,3})$")
#: Endings that make a number a clock time or an ordinal, not a measure ("5pm", "14th").
_NOT_UNITS = frozenset({"am", "pm", "st", "nd", "rd", "th"})


def _measure(toks: list[Token], k: int, e: int) -> bool:
    """Whether a number with a unit opens ``[k, e)`` ("to 4g", "by 2 m", "to 200C"): how far a
    setting was moved is a quantity, no part of the task's name (docs/relations.md); a bare
    number ("to 16") or a version ("to 1.26") is the value the task sets and stays."""
    if k >= e:
        return False
    found = _MEASURE.match(toks[k].lower)
    if found:
        return found.group(1) not in _NOT_UNITS
    if not toks[k].lower.replace(".", "", 1).isdigit() or k + 1 >= e:
        return False
    unit = toks[k + 1]
    return (
        unit.start - toks[k].end <= 1
        and bool(_UNIT.match(unit.lower))
        and unit.lower not in _NOT_UNITS
        and (unit.pos in NOMINAL or not unit.lower.isalpha())
    )


def _depends_on(toks: list[Token], k: int, head: int) -> bool:
    """Whether token ``k``'s chain of heads reaches ``head``."""
    for _ in range(len(toks)):
        if k == head:
            return True
        if toks[k].head == k or toks[k].head < 0:
            return False
        k = toks[k].head
    return False


_SUBJECTS = frozenset({"nsubj", "nsubjpass"})


def subject_extent(toks: list[Token], s: int, e: int) -> tuple[int, int]:
    """The subject inside a span before a relation's words, by the parse: the one word of the
    span that is the subject of a verb outside it, with the words that depend on it ("lol I
    use", "On this phone the tray is", "fwiw a tarte tatin is": what opens the span is not the
    subject). Unchanged without a parse or without exactly one such word."""
    if e - s < 2 or toks[s].head < 0:
        return s, e
    subjects = [
        k
        for k in range(s, e)
        if toks[k].dep in _SUBJECTS
        and not s <= toks[k].head < e
        and (toks[k].pos in NOMINAL or toks[k].pos == PRON)
    ]
    if len(subjects) != 1:
        return s, e
    head = subjects[0]
    lo, hi = head, head + 1
    while lo > s and _depends_on(toks, lo - 1, head):
        lo -= 1
    while hi < e and _depends_on(toks, hi, head):
        hi += 1
    while hi < e and toks[hi].pos in (NOUN, PROPN) and toks[hi - 1].pos in (NOUN, PROPN):
        hi += 1  # a compound the parse split ("QA sign-off has ..."): its nouns stay together
    return lo, hi
