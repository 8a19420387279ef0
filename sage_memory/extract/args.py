"""Arguments of a relation: the noun phrase, task (verb phrase) or clause a slot stands for.

A lexicon pattern cuts a sentence into literal words and slot spans; this module finds the real
argument inside a span. A span after the relation words starts with its argument ("... is
blocked by *the legal review* since Monday"); a span before them ends with it ("Yesterday
*the release* was held up by ..."). Names follow docs/relations.md: lower case, no leading
article or possessive, no time phrase or quantity, a plural kind in the singular, a task in the
base form of its verb. Where each phrase ends and how it is named is :mod:`.phrase`.
"""

from __future__ import annotations

from sage_memory.extract.phrase import (
    TASK,
    Arg,
    PhraseReader,
    _depends_on,
    subject_extent,
)
from sage_memory.extract.word import (
    ADJ,
    ADV,
    AUX,
    CODE,
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
    VERB,
    Token,
)


class ArgReader(PhraseReader):
    """Reads arguments out of token spans with the closed classes of one lexicon."""

    def before(self, toks: list[Token], s: int, e: int, *, clause_ok: bool) -> list[Arg]:
        """The argument that ends the span ``[s, e)`` (the subject side of a pattern)."""
        # "Rui, our neighbour, is ...": the subject is the name before the appositive
        if e - s >= 4 and toks[e - 1].lower == "," and toks[s].pos in (PROPN, NOUN):
            first = next((k for k in range(s + 1, e - 1) if toks[k].lower == ","), -1)
            if first > s and not any(t.pos in (VERB, AUX) for t in toks[s:e]):
                e = first
        # "The Novaks rent a room in Bonn but work ...": the subject of the first verb
        if e - s >= 3 and toks[e - 1].lower in ("but", "and"):
            verbs = [k for k in range(s, e) if toks[k].pos == VERB]
            if verbs and verbs[0] > s:
                # the first predicate opens at its auxiliary ("the form has been sent and is
                # ..."; "Kim is a nurse, and is ..."): the subject ends before it
                first = next(
                    (k for k in range(s + 1, verbs[0]) if toks[k].pos in (AUX, MODAL)), verbs[0]
                )
                end = self._trim_end(toks, s, first)
                start = self._trim_start(toks, s, end)
                subject = self._coordinated_nps(toks, start, end) if start < end else []
                if subject:
                    return subject
        antecedent = self._relative_antecedent(toks, s, e)
        if antecedent is not None:
            return [antecedent]
        span = self._subject_span(toks, s, e)
        if span is None:
            return []
        s, e = subject_extent(toks, *span)
        if e - s == 1 and toks[s].pos in (PRON, POSS):
            return [self._pronoun(toks, s)]
        # a possessor only: "Ana's" before "favourite"
        if toks[e - 1].pos == POSS and e - s >= 2:
            return [self._np(toks, s, e - 1)]
        task = self._doer_task(toks, s, e)
        if task is not None:
            return [task]
        return self._verbal_subject(toks, s, e, clause_ok=clause_ok)

    def _relative_antecedent(self, toks: list[Token], s: int, e: int) -> Arg | None:
        """ "the review, which in turn waits on ...": the subject of a relative clause that
        ends the span is the noun phrase the clause hangs on (from the parse; None without)."""
        k = e - 1
        while k > s and toks[k].pos != PUNCT and toks[k].lower not in ("which", "that", "who"):
            k -= 1
        t = toks[k]
        if t.lower not in ("which", "that", "who") or t.dep not in ("nsubj", "nsubjpass"):
            return None
        s = k
        verb = t.head
        if not 0 <= verb < len(toks) or toks[verb].dep != "relcl":
            return None
        noun = toks[verb].head
        if not 0 <= noun < s or toks[noun].pos not in NOMINAL:
            return None
        lo = noun
        while lo > 0 and _depends_on(toks, lo - 1, noun):
            lo -= 1
        arg = self._np(toks, lo, noun + 1)
        return arg if arg.name else None

    def _subject_span(self, toks: list[Token], s: int, e: int) -> tuple[int, int] | None:
        """The subject span less edges, a closing time phrase, a fronted phrase and the doer
        after a purpose phrase (None when nothing is left)."""
        e = self._trim_end(toks, s, e)
        s = self._trim_start(toks, s, e)
        if s >= e:
            return None
        # drop a time phrase that ends the span ("the release last week")
        for k in range(s + 1, e):
            if self.is_time(toks, k) >= e - k:
                e = k
                break
        e = self._trim_end(toks, s, e)
        if s >= e:
            return None
        # "For the garden we ...", "For now Bob ...": a fronted phrase
        if toks[s].pos == PREP and toks[s].lower not in ("of",):
            for k in range(s + 1, e):
                if toks[k].pos == PRON and toks[k].lower not in ("it", "this", "that"):
                    s = k
                    break
                if toks[k].pos == PROPN and k > s + 1 and toks[k - 1].pos == NOUN:
                    s = k
                    break
        # "To open an account you ...": the doer after a purpose phrase is no part of it
        if (
            toks[e - 1].pos == PRON
            and e - s >= 3
            and toks[e - 1].lower in ("you", "we", "i", "they")
        ) and (toks[s].pos == PART or toks[s].pos == VERB):
            e -= 1
        return s, e

    def _doer_task(self, toks: list[Token], s: int, e: int) -> Arg | None:
        """ "we should write tests", "I'll tackle the invoices": a pronoun doer and its modals
        are not part of the task."""
        if toks[s].pos != PRON or toks[s].lower in ("it", "this", "that"):
            return None
        k = s + 1
        while k < e and (
            toks[k].pos in (MODAL, AUX, ADV, NEG, PART)
            or toks[k].lower in ("need", "want", "have", "got", "going")
        ):
            k += 1
        # a verb after "to" the tagger called a noun ("you don't have to reindex")
        verb = toks[k].pos == VERB or (toks[k].tag == "VB" and toks[k - 1].lower == "to")
        if k < e and verb and k > s + 1:
            return self._task(toks, k, e)
        return None

    def _verbal_subject(self, toks: list[Token], s: int, e: int, *, clause_ok: bool) -> list[Arg]:
        """A subject span with verbs in it: a task, a clause or the noun phrase it names."""
        verbs = [k for k in range(s, e) if toks[k].pos == VERB]
        finite = [
            k
            for k in verbs
            if k > s and toks[k - 1].pos in (NOUN, PROPN, CODE, PRON, AUX, MODAL, NEG, ADV)
        ]
        if toks[s].pos == VERB or (toks[s].pos == PART and s + 1 < e and toks[s + 1].pos == VERB):
            # a gerund subject of a finite predicate ("sanding the deck has to happen
            # first"): the task is the gerund's phrase, the predicate is no part of it
            end = e
            if toks[s].inflected == "ing":
                vend = self._vp_end(toks, s, e)
                if s + 1 < vend < e and (
                    toks[vend].pos in (AUX, MODAL, NEG)
                    or toks[vend].lower in ("no", "never")
                    or (toks[vend].pos == VERB and toks[vend].tag in ("VBZ", "VBD", "VBP"))
                ):
                    end = vend
            return [self._task(toks, s + (toks[s].pos == PART), end)]
        # a note without its subject ("can't book the hall yet, ..."): the modal and
        # its negation open the clause, the task is the verb phrase after them
        k = s
        while k < e and toks[k].pos in (MODAL, NEG, ADV) and toks[k].lower not in ("then",):
            k += 1
        if s < k < e and toks[k].pos == VERB and any(toks[m].pos == MODAL for m in range(s, k)):
            return [self._task(toks, k, e)]
        if finite:
            if clause_ok:
                return [self._clause(toks, s, e)]
            # "we think the api" handled above; otherwise the noun phrase after the last verb
            k = finite[-1] + 1
            while k < e and toks[k].pos not in (NOUN, PROPN, CODE, PRON, ADJ, DET, POSS, NUM):
                k += 1
            return self._coordinated_nps(toks, k, e) if k < e else []
        # "X is a Y" before a reduced relative ("... is a recipe website built with Flask"):
        # Y is X, so the argument is the subject, not the whole copular clause
        copula = next((k for k in range(s + 1, e) if toks[k].pos == AUX), None)
        if (
            copula is not None
            and toks[copula].lemma == "be"
            and copula + 1 < e
            and toks[copula + 1].pos in (DET, POSS)
            and toks[s].pos in (NOUN, PROPN, CODE, DET, ADJ)
        ):
            return self._coordinated_nps(toks, s, copula)
        if any(toks[k].pos == AUX for k in range(s, e)) and clause_ok:
            return [self._clause(toks, s, e)]
        return self._coordinated_nps(toks, s, e)

    def _coordinated_nps(self, toks: list[Token], s: int, e: int) -> list[Arg]:
        """A subject list "the cart service and the auth service" -> two arguments."""
        # a subject's place or setting is not part of its name: "admission at the gallery"
        for k in range(s + 1, e - 1):
            if (
                toks[k].pos == PREP
                and toks[k].lower in ("at", "on", "in", "under", "near", "inside", "from")
                and toks[k - 1].pos in (NOUN, PROPN)
                and not any(toks[m].lower in ("and", "or", ",") for m in range(k, e))
            ):
                e = k
                break
        parts: list[tuple[int, int]] = []
        start = s
        for k in range(s, e):
            if toks[k].lower in ("and", "or", ",", "&", "nor"):
                if k > start:
                    parts.append((start, k))
                start = k + 1
        if start < e:
            parts.append((start, e))
        single = [p for p in parts if any(toks[k].pos in NOMINAL | {VERB} for k in range(*p))]
        if len(single) > 1 and all(e2 - s2 <= 4 for s2, e2 in single):
            return [a for s2, e2 in single if (a := self._np(toks, s2, e2)).name]
        arg = self._np(toks, s, e)
        return [arg] if arg.name else []

    # --- object side -------------------------------------------------------------------

    def after(
        self, toks: list[Token], s: int, e: int, *, clause_ok: bool, task_ok: bool = True
    ) -> list[Arg]:
        """The arguments that start the span ``[s, e)``, with coordinated ones."""
        out: list[Arg] = []
        k = s
        while k < e and toks[k].pos in (PUNCT,) and toks[k].lower not in ('"',):
            k += 1
        # "three tasks left: A, B, C": a list a plural heading announces with a colon needs
        # no conjunction before its last item
        announced = (
            k >= 2
            and toks[k - 1].lower == ":"
            and any(toks[j].tag == "NNS" for j in range(max(k - 3, 0), k - 1))
        )
        while k < e and toks[k].pos == ADV and toks[k].lower not in ("not",):
            k += 1
        while k < e and len(out) < 8:
            arg = self._one_after(toks, k, e, clause_ok=clause_ok, task_ok=task_ok)
            if arg is None or not arg.name:
                break
            out.append(arg)
            k = arg.end
            nxt = self._coordination(toks, k, e, arg, announced=announced)
            if nxt is None:
                break
            k = nxt
        return out

    def _coordination(
        self, toks: list[Token], k: int, e: int, prev: Arg, *, announced: bool = False
    ) -> int | None:
        """Where the next coordinated argument starts, or None when the list ends."""
        j = _past_aside(toks, k, e)
        comma = j < e and toks[j].lower == ","
        if comma:
            j += 1
        conj = j < e and toks[j].lower in ("and", "or", "&", "plus", "nor")
        if conj:
            j += 1
        if j == k or j >= e:
            return None
        if (
            comma
            and not conj
            and not announced
            and not any(toks[m].lower in ("and", "or", "&", "nor") for m in range(j, e))
        ):
            return None  # "a TV, by choice", "the API, fyi": an aside, not a list item
        if conj and j + 1 < e and _repeated_preposition(toks, j, prev):
            j += 1  # "by X or by Y", "allergic to wool and to dust"
        if prev.kind == TASK and toks[j].pos == PART:
            j += 1
        t = toks[j]
        if t.pos in (PRON,) or t.lower in ("then", "so", "but", "also"):
            return None
        if prev.kind != TASK and _parsed_conjunct(toks, j, e, prev):
            return j  # the parse joins the item to the previous one ("X and an approved Y")
        # a new clause, not a list item: "and the api needs ...", "and she hates ..."
        for m in range(j, min(e, j + 6)):
            if toks[m].pos in (AUX, MODAL) or (toks[m].pos == VERB and m > j and prev.kind != TASK):
                if prev.kind == TASK and toks[j].pos == VERB:
                    break
                return None
            if toks[m].lower in (",", "and", "or"):
                break
        if prev.kind == TASK and t.pos != VERB:
            return None if t.pos not in (NOUN, PROPN, CODE, DET, ADJ, NUM) else j
        if prev.kind != TASK and t.pos == VERB and t.inflected in ("s", "ed"):
            return None  # "dislikes email and prefers calls": a second predicate
        return j

    def _one_after(
        self, toks: list[Token], k: int, e: int, *, clause_ok: bool, task_ok: bool
    ) -> Arg | None:
        if k >= e or self.is_time(toks, k):
            return None
        verbal = self._verbal_after(toks, k, e, clause_ok=clause_ok, task_ok=task_ok)
        if verbal is not None:
            return verbal
        end = self._np_end(toks, k, e)
        if end <= k:
            return None
        named = self._named(toks, k, end, e)
        if named is not None:
            return named
        if clause_ok:
            clause = self._clause_after_noun(toks, k, end, e)
            if clause is not None:
                return clause
        return self._np(toks, k, end)

    def _verbal_after(
        self, toks: list[Token], k: int, e: int, *, clause_ok: bool, task_ok: bool
    ) -> Arg | None:
        """A task ("to call the bank", "we need to call ...") or a pronoun (with its clause)
        at ``k``; None when the argument there is a noun phrase."""
        t = toks[k]
        if t.pos == PART and k + 1 < e and toks[k + 1].pos == VERB and task_ok:
            return self._task(toks, k + 1, self._vp_end(toks, k + 1, e))
        if t.pos == VERB and task_ok:
            return self._task(toks, k, self._vp_end(toks, k, e))
        if t.pos != PRON or t.lower == "that":
            return None
        if t.lower not in ("it", "this"):
            j = k + 1
            while (j < e and toks[j].pos in (MODAL, AUX, ADV, NEG, PART)) or (
                j < e
                and toks[j].lower in ("need", "want", "have", "going", "got")
                and j + 1 < e
                and toks[j + 1].pos in (PART, VERB)
            ):
                j += 1
            if j < e and j > k + 1 and toks[j].pos == VERB and task_ok:
                return self._task(toks, j, self._vp_end(toks, j, e))
        arg = self._pronoun(toks, k)
        if clause_ok:
            end = self._clause_end(toks, k + 1, e)
            if end > k + 1 and toks[k + 1].pos in (VERB, AUX, MODAL):
                return self._clause(toks, k, end, drop_subject=True)
        return arg

    def _clause_after_noun(self, toks: list[Token], k: int, end: int, e: int) -> Arg | None:
        """A noun phrase ``[k, end)`` with its own predicate after it, read as one clause."""
        if end + 1 < e and self._reduced_predicate(toks, end, e):
            # "migrations not run", "models out of sync with the database": a noun and a
            # verbless predicate name one state
            cend = self._clause_end(toks, end, e)
            stop = next(
                (m for m in range(end, cend) if toks[m].lower in ("or", "and", "nor")), cend
            )
            return self._clause(toks, k, stop)
        if end < e and toks[end].pos in (AUX, VERB, MODAL, NEG):
            cend = self._clause_end(toks, end, e)
            rest = toks[end + 1 : cend]
            if (
                toks[end].lemma == "be"
                and len(rest) <= 2
                and all(
                    x.pos in (ADJ, VERB, ADV) or x.lower in ("in", "place", "over") for x in rest
                )
            ):
                return self._np(toks, k, end)  # "once the migration is done": the migration
            if cend > end:
                return self._clause(toks, k, cend)
        return None

    def _named(self, toks: list[Token], k: int, end: int, e: int) -> Arg | None:
        """ "a folk trio called Blue Owls": the name, with the describing noun as its head."""
        if not (
            end + 1 < e
            and toks[end].lower in ("called", "named")
            and toks[end + 1].pos in (PROPN, CODE)
        ):
            return None
        j = end + 1
        while j < e and toks[j].pos in (PROPN, CODE, NUM):
            j += 1
        arg = self._np(toks, end + 1, j)
        described = self._np(toks, k, end)
        arg.head = described.head
        arg.possessor = described.name  # kept for the label: "band" says Organization
        return arg


def _past_aside(toks: list[Token], j: int, e: int) -> int:
    """Past a bracketed aside between two list items ("X (Django) or Y")."""
    if j < e and toks[j].lower == "(":
        close = next((m for m in range(j, min(e, j + 8)) if toks[m].lower == ")"), -1)
        return close + 1 if close > 0 else j
    return j


def _repeated_preposition(toks: list[Token], j: int, prev: Arg) -> bool:
    """A list item after a conjunction opened by its own preposition: "by running X or by
    checking Y", or the preposition before the previous item said again ("allergic to
    shellfish and to latex"), where no verb follows ("and to call the bank" is a new task)."""
    if toks[j].lower in ("by", "with", "via"):
        return True
    return (
        prev.start > 0
        and toks[j].lower == toks[prev.start - 1].lower
        and toks[j].pos in (PREP, PART)
        and toks[j + 1].pos != VERB
    )


def _parsed_conjunct(toks: list[Token], j: int, e: int, prev: Arg) -> bool:
    """The parse reads the words from ``j`` as a noun conjoined to the previous argument: a
    noun of the next few words is a ``conj`` of a word inside ``prev``, with no verb of its own
    (a participle modifying the noun, "an approved budget line", is no predicate)."""
    for m in range(j, min(e, j + 6)):
        t = toks[m]
        verb = t.pos == VERB or t.tag.startswith("VB")  # the tagger's or the parser's verb
        if t.pos in (AUX, MODAL) or (verb and t.dep not in ("amod", "compound")):
            return False
        if t.pos in (NOUN, PROPN) and t.dep == "conj" and prev.start <= t.head < prev.end:
            return True
        if t.lower in (",", "and", "or"):
            return False
    return False
