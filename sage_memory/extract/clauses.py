"""Matching lexicon phrasings against a tagged sentence.

Each phrasing is tried at every place its first literal word occurs; literal words must follow
in order, with adverbs, modals and the auxiliaries "do"/"have" skipped between them, and slots
take the spans in between. Overlapping matches are settled by specificity: more literal words
win, a loose ("weak") phrasing only counts where nothing stronger matched, and a match found
inside another match's argument is not asserted ("once the migration is done, ..." does not
state that the migration is done).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace

from sage_memory.extract.args import ArgReader
from sage_memory.extract.hidden_verb import clause_subject
from sage_memory.extract.lexicon import OPTIONAL, POS, SLOT, WORD, Element, Lexicon, Phrase
from sage_memory.extract.phrase import CLAUSE, NP, PRONOUN, TASK, Arg
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
    PREP,
    PROPN,
    PUNCT,
    SUB,
    VERB,
    Token,
    base_form,
    verb_known,
)

#: Families whose arguments may be whole clauses ("the build failed because the disk was full").
CLAUSE_RELATIONS = frozenset({"CAUSES", "SOLVED_BY", "PRECEDES", "BLOCKED_BY", "DEPENDS_ON"})
#: Words after which a clause is subordinate: what follows them is not asserted on its own.
_SUBORDINATE = frozenset(
    {
        "once",
        "after",
        "before",
        "when",
        "whenever",
        "if",
        "until",
        "till",
        "unless",
        "soon",
        "prior",
    }
)
#: Particles a phrasal verb may carry between its verb and its preposition.
_PARTICLES = frozenset({"down", "back", "over", "away", "up", "out", "around", "along"})
#: Relations whose clause arguments name the thing the clause is about.
_REDUCED = frozenset({"BLOCKED_BY", "DEPENDS_ON", "REQUIRES", "PRECEDES"})
_DETERMINERS = frozenset({"a", "an", "the", "new"})
#: Subordinators that open the fronted phrasings of the lexicon ("once {A} , {B}").
_FRONTED_OPENERS = frozenset(
    {"before", "after", "once", "following", "prior", "ahead", "as", "until", "till", "til"}
)
#: Relations whose noun-phrase arguments may hide a clause's verb (:mod:`.hidden_verb`).
_HIDDEN_CLAUSE = frozenset({"BLOCKED_BY", "DEPENDS_ON", "PRECEDES"})
#: Copular verbs that ascribe a quality to their subject (Quirk et al. 1985, 16.22).
_COPULAR = frozenset({"be", "get", "go", "turn", "become", "grow", "come"})
#: Relations whose arguments are read as tasks when they start with a verb.
_NO_TASK = frozenset({"LIVES_IN", "WORKS_AT", "HAS_ROLE", "MEMBER_OF", "IS_A"})


@dataclass(slots=True)
class Match:
    """One phrasing found in a sentence, with its arguments per slot."""

    phrase: Phrase
    literals: frozenset[int]
    slots: dict[str, list[Arg]]
    spans: dict[str, tuple[int, int]]
    negated: bool
    status: str = ""
    extent: tuple[int, int] = (0, 0)
    notes: list[str] = field(default_factory=list)
    #: (name, kind) of arguments given as a kind and its name ("a sailboat named Gull")
    named_kinds: list[tuple[Arg, Arg]] = field(default_factory=list)


class Matcher:
    """Finds the phrasings of a :class:`Lexicon` in tagged sentences."""

    def __init__(self, lex: Lexicon) -> None:
        self.lex = lex
        self.reader = ArgReader(lex)
        self._status = sorted(
            ((words, value) for value, phrases in lex.status.items() for words in phrases),
            key=lambda item: -len(item[0]),
        )
        # The status phrases by their first word, each with its rank in ``_status``: a token
        # is tried only against the phrases its word or lemma can open (trying every phrase
        # at every token was about a tenth of the extractor's time, bench/throughput.py).
        self._status_by_first: dict[str, list[tuple[int, tuple[str, ...], str]]] = {}
        for rank, (words, value) in enumerate(self._status):
            self._status_by_first.setdefault(words[0], []).append((rank, words, value))

    # --- literal matching ----------------------------------------------------------------

    def _status_at(self, toks: list[Token], i: int) -> tuple[int, str] | None:
        t = toks[i]
        if t.pos == NUM and i + 2 < len(toks) and toks[i + 1].lower in ("%", "percent"):
            # "80% done": a share of the work done is work under way; all of it, done
            found = self._status_at(toks, i + 2)
            if found and found[1] == "done":
                with contextlib.suppress(ValueError):
                    return found[0], "done" if float(t.lower) >= 100 else "in progress"
        tried = self._status_by_first.get(t.lower, [])
        if t.lemma != t.lower and t.inflected != "ing":  # the first word may be the lemma
            tried = sorted([*tried, *self._status_by_first.get(t.lemma, ())])
        for _, words, value in tried:  # in the order of ``_status``: the longest first
            if i + len(words) <= len(toks) and all(
                toks[i + k].lower == w
                or (toks[i + k].lemma == w and toks[i + k].inflected != "ing")
                for k, w in enumerate(words)
            ):  # "living" is no "live", "stopping" no "stopped"
                return i + len(words), value
        return None

    def status_at(self, toks: list[Token], i: int) -> str:
        """The status value of the status phrase starting at token ``i`` ("" when none)."""
        found = self._status_at(toks, i)
        return found[1] if found else ""

    def _word_at(self, el: Element, toks: list[Token], i: int) -> int | None:
        """End of the literal ``el`` at ``i`` (None when it does not match there)."""
        if i >= len(toks):
            return None
        t = toks[i]
        if el.kind == POS:
            want = next(iter(el.values))
            if want == "verb":
                return i + 1 if t.pos == VERB else None
            if want == "noun":
                return i + 1 if t.pos in (NOUN, PROPN) else None
            found = self._status_at(toks, i)
            return found[0] if found else None
        if t.pos == "ADJ" and i > 0 and toks[i - 1].pos == "POSS" and verb_known(t.lower):
            return None  # "their own room": an adjective, not the verb "own" (but "her
            # favourite X" is the adjective the phrasing names)
        if t.pos == "ADJ" and t.inflected in ("ed", "ing") and base_form(t.lower) in el.values:
            return i + 1  # "it's blocked on": a participle read as an adjective
        if "be" in el.values and t.lemma == "get" and _participle_follows(toks, i + 1):
            return i + 1  # "got elected", "gets held up": the get-passive is a passive
        if t.lemma in el.values or t.lower in el.values:
            if (
                t.pos == AUX
                and t.lemma == "have"
                and i + 1 < len(toks)
                and (toks[i + 1].pos in (VERB, AUX))
            ):
                return None  # "we've finished": an auxiliary, not possession
            if (
                t.lemma in ("have", "get")
                and i + 2 < len(toks)
                and toks[i + 1].lower == "to"
                and toks[i + 2].pos in (VERB, AUX)
            ):
                return None  # "we have to rip out", "I've got to go": necessity, not possession
            return i + 1
        for alt in el.values:  # a word sequence ("go_ahead", "get_rid_of")
            if "_" not in alt:
                continue
            words = alt.split("_")
            if i + len(words) <= len(toks) and all(
                toks[i + k].lemma == w or toks[i + k].lower == w for k, w in enumerate(words)
            ):
                return i + len(words)
        return None

    def _skippable(self, t: Token, prev_lemma: str) -> bool:
        if t.lower in self.lex.words("time_words") and prev_lemma:
            return True  # "works nights at"
        return self._skippable_word(t, prev_lemma)

    @staticmethod
    def _skippable_word(t: Token, prev_lemma: str) -> bool:
        if t.pos in (ADV, MODAL) and t.lower not in ("not", "never"):
            return True
        if t.lower in _PARTICLES and t.pos in (ADV, "PREP") and prev_lemma:
            return True  # a verb's particle: "moved back to", "sits back on"
        if t.pos == "ADJ" and prev_lemma in _DETERMINERS:
            return True  # an adjective inside a literal noun phrase: "a part-time job"
        if t.lower in ("both", "all", "each") and prev_lemma == "be":
            return True  # "are both on the team"
        if t.pos == AUX and (t.lemma in ("do", "have") or t.lemma == prev_lemma):
            return True
        return t.pos == NEG

    def _literal(
        self, el: Element, toks: list[Token], i: int, prev_lemma: str, used: list[int]
    ) -> int | None:
        """Match ``el`` at ``i``, skipping adverbs, modals, do/have and negation before it."""
        j = i
        nouns = False  # a noun skipped as a modifier: the literal must then be the head noun
        while j < len(toks):
            end = self._word_at(el, toks, j)
            if end is not None and not (nouns and toks[end - 1].pos != NOUN):
                used.extend(range(j, end))
                return end
            # "a hard runtime dependency on": nouns that modify the literal noun after a
            # determiner are inside its noun phrase
            modifier = prev_lemma in _DETERMINERS and toks[j].pos in (NOUN, "ADJ")
            if not (modifier or self._skippable(toks[j], prev_lemma)) or j - i >= 3:
                return None
            nouns = nouns or toks[j].pos == NOUN
            j += 1
        return None

    def _run(
        self,
        els: tuple[Element, ...],
        ei: int,
        toks: list[Token],
        i: int,
        open_slot: tuple[str, int] | None,
        spans: dict[str, tuple[int, int]],
        used: list[int],
        prev_lemma: str,
        status: list[str],
    ) -> bool:
        """Backtracking match of ``els[ei:]`` from token ``i``; fills spans and used."""
        n = len(toks)
        if ei == len(els):
            if open_slot is not None:
                if open_slot[1] >= n:
                    return False
                spans[open_slot[0]] = (open_slot[1], n)
            return True
        el = els[ei]
        if el.kind == SLOT and ei + 1 < len(els) and els[ei + 1].kind == SLOT:
            # "{A} give {S} {B}": two objects in a row; the first ends where the indirect
            # object does ("gave me a headache", "gives the cake a metallic taste")
            k = _indirect_object_end(toks, i)
            if k is None:
                return False
            spans[el.slot] = (i, k)
            return self._run(els, ei + 1, toks, k, None, spans, used, "", status)
        if el.kind == SLOT:
            return self._run(els, ei + 1, toks, i, (el.slot, i), spans, used, "", status)
        if open_slot is not None:
            return self._run_after_slot(
                els, ei, toks, i, open_slot, spans, used, prev_lemma, status
            )
        mark = len(used)
        end = self._literal(el, toks, i, prev_lemma, used)
        if end is not None:
            if el.kind == POS and "status" in el.values:
                found = self._status_at(toks, used[mark])
                status.append(found[1] if found else "")
            if self._run(els, ei + 1, toks, end, None, spans, used, toks[end - 1].lemma, status):
                return True
            del used[mark:]
        if el.kind == OPTIONAL:
            return self._run(els, ei + 1, toks, i, None, spans, used, prev_lemma, status)
        return False

    def _run_after_slot(
        self,
        els: tuple[Element, ...],
        ei: int,
        toks: list[Token],
        i: int,
        open_slot: tuple[str, int],
        spans: dict[str, tuple[int, int]],
        used: list[int],
        prev_lemma: str,
        status: list[str],
    ) -> bool:
        """The literal ``els[ei]`` after an open slot, which takes at least one token: each
        later place for it in turn (an optional literal: with it, then without it)."""
        el = els[ei]
        optional = el.kind == OPTIONAL
        for j in range(open_slot[1] + 1, len(toks)):
            end = self._word_at(el, toks, j)
            if end is not None and self._close_slot(
                els, ei, toks, (j, end), open_slot, spans, used, status, record=not optional
            ):
                return True
        if optional:
            return self._run(els, ei + 1, toks, i, open_slot, spans, used, prev_lemma, status)
        return False

    def _close_slot(
        self,
        els: tuple[Element, ...],
        ei: int,
        toks: list[Token],
        at: tuple[int, int],
        open_slot: tuple[str, int],
        spans: dict[str, tuple[int, int]],
        used: list[int],
        status: list[str],
        *,
        record: bool,
    ) -> bool:
        """Try the open slot ending where the literal at ``at`` starts; undo on failure."""
        (j, end), (name, start), el = at, open_slot, els[ei]
        mark, saved = len(used), dict(spans)
        spans[name] = (start, j)
        used.extend(range(j, end))
        if record and el.kind == POS and "status" in el.values:
            found = self._status_at(toks, j)
            status.append(found[1] if found else "")
        if self._run(els, ei + 1, toks, end, None, spans, used, toks[j].lemma, status):
            return True
        del used[mark:]
        spans.clear()
        spans.update(saved)
        return False

    # --- finding matches -----------------------------------------------------------------

    def raw_matches(self, toks: list[Token]) -> list[Match]:
        """Every phrasing found, before arguments are read or overlaps settled."""
        out: list[Match] = []
        firsts: dict[int, list[Phrase]] = {}
        for i, t in enumerate(toks):
            keys = {t.lemma, t.lower}
            if t.lemma == "get" and _participle_follows(toks, i + 1):
                keys.add("be")  # a get-passive opens the phrasings of the be-passive
            if t.pos == VERB:
                keys.add("<verb>")
            if t.pos in (NOUN, PROPN):
                keys.add("<noun>")
            if self._status_at(toks, i):
                keys.add("<status>")
            for key in keys:
                for phrase in self.lex.by_first_word.get(key, ()):
                    firsts.setdefault(i, []).append(phrase)
        for i, phrases in firsts.items():
            for phrase in phrases:
                m = self._anchored(phrase, toks, i)
                if m is not None:
                    out.append(m)
        return out

    def _anchored(self, phrase: Phrase, toks: list[Token], i: int) -> Match | None:
        els = phrase.elements
        first = next(k for k, e in enumerate(els) if e.kind in (WORD, POS))
        before = els[:first]
        spans: dict[str, tuple[int, int]] = {}
        lead_slots = [e for e in before if e.kind == SLOT]
        if len(lead_slots) > 1:
            return None
        if lead_slots:
            if i == 0:
                return None
            spans[lead_slots[0].slot] = (0, i)
        elif any(e.kind == OPTIONAL for e in before):
            pass
        if not lead_slots and i > 0 and not self._clause_opening(els[first], toks, i):
            return None
        used: list[int] = []
        status: list[str] = []
        if not self._run(els, first, toks, i, None, spans, used, "", status):
            return None
        lo = min([i, *(s for s, _ in spans.values())])
        hi = max([max(used) + 1 if used else i + 1, *(e for _, e in spans.values())])
        return Match(
            phrase, frozenset(used), {}, spans, False, status[0] if status else "", (lo, hi)
        )

    def _clause_opening(self, el: Element, toks: list[Token], i: int) -> bool:
        """Whether a phrasing that opens with a subordinator ("before {B} , {A}") may start at
        ``i``: only where a clause starts (after a break, a conjunction or discourse words),
        not inside one ("you can X before you Y, the manual says" is no fronted clause)."""
        if el.kind != WORD or not el.values & _FRONTED_OPENERS:
            return True
        k = i - 1
        while k >= 0 and (
            toks[k].pos in (CONJ, ADV) or toks[k].lower in self.lex.words("discourse")
        ):
            k -= 1
        return k < 0 or toks[k].pos == PUNCT

    def _doer_to_act(self, toks: list[Token], arg: Arg, e: int) -> Arg:
        """ "Mum books the flights first", "I'll water the plants after ...": what comes in an
        order is the act (the verb phrase), not the one who does it."""
        people = self.lex.words("person_nouns") | self.lex.words("role_heads")
        j = _doer_of(toks, arg, e, people)
        if j is None and arg.kind == CLAUSE:
            j = _named_doer_of_clause(toks, arg, e)
        if j is None:
            return arg
        task = self.reader._task(toks, j, max(self.reader._vp_end(toks, j, e), j + 1))
        return task if task.name else arg

    def _named_in_apposition(self, toks: list[Token], args: list[Arg], e: int) -> list[Arg]:
        """ "joined a housing charity, Tidewater": a common noun phrase with a proper name in
        apposition after it, closing the argument, is that named thing (the appositive
        identifies it, Quirk et al. 17.65); the description is only what kind it is."""
        last = args[-1] if args else None
        if last is None or last.kind != NP or last.proper or last.end + 1 >= e:
            return args
        j = last.end
        if toks[j].lower != ",":
            return args
        k = j + 1
        while k < e and (toks[k].pos in (PROPN, CODE) or (k > j + 1 and toks[k].pos == NUM)):
            k += 1
        closes = k == e or toks[k].lower in (",", ".", ";", "!", ")")
        if k == j + 1 or k - j - 1 > 4 or not closes:
            return args
        named = self.reader._np(toks, j + 1, k)
        return [*args[:-1], named] if named.name else args

    def _counted_names(self, m: Match, toks: list[Token], args: list[Arg]) -> list[Arg]:
        """ "two cats, Miso and Tofu", "both vans: Big Red and Old Blue": a counted plural
        noun phrase with the list of proper names it counts in apposition after it stands for
        those named things, each of that kind (appositives of naming, Quirk et al. 17.65-17.80,
        with a coordinated appositive)."""
        if len(args) < 3:
            return args
        kind, names = args[0], args[1:]
        if not _counted_kind(toks, kind) or toks[kind.end].lower not in (",", ":"):
            return args
        if not all(n.kind == NP and n.proper for n in names):
            # "three packages: numpy, scipy and pandas": after a colon the list is what is
            # counted even when its items are no names
            return names if toks[kind.end].lower == ":" else args
        if kind.words[-1:] and kind.words[-1] not in self.lex.words("person_nouns"):
            m.named_kinds.extend((n, kind) for n in names)  # (kin are no kind of thing)
        return names

    def _likened(self, toks: list[Token], args: list[Arg], e: int) -> list[Arg]:
        """ "Gouda, like Edam, is a Dutch cheese": a parenthetical "like Y" after the subject
        says the predicate holds of Y as well (a comparison clause reduced to its subject,
        Quirk et al. 15.51); Y is a second subject."""
        if len(args) != 1 or args[0].kind != NP:
            return []
        j = args[0].end
        if j + 3 >= e or toks[j].lower != "," or toks[j + 1].lower != "like":
            return []
        if toks[j + 1].pos != PREP:
            return []
        close = next((k for k in range(j + 2, e) if toks[k].lower == ","), None)
        if close is None or close + 1 != e or close - j - 2 > 4:
            return []
        likened = self.reader._np(toks, j + 2, close)
        return [likened] if likened.name else []

    def _short_items(self, toks: list[Token], s: int, e: int) -> list[Arg]:
        """The items of a list of short names ("react, zustand and date-fns") read each as a
        noun phrase: names of things the tagger may take for verbs; none when an item is
        longer than a name or opens with a determiner (then it is no list of names)."""
        items: list[Arg] = []
        start = s
        for k in range(s, e + 1):
            if k < e and toks[k].lower not in (",", "and", "or", ".", ";", "!"):
                continue
            if k > start:
                if k - start > 3 or toks[start].pos == "DET":
                    return []
                item = self.reader._np(toks, start, k)
                if not item.name:
                    return []
                items.append(item)
            start = k + 1
        return items

    def _passive_step(self, toks: list[Token], arg: Arg, e: int) -> Arg:
        """ "once the contract is signed": the step is the act done to the noun phrase the
        argument was cut to (sign the contract), when a passive follows it."""
        if arg.kind != NP:
            return arg
        j = arg.end
        while j < e and toks[j].pos in (AUX, MODAL, ADV, NEG, PART):
            j += 1
        task = self.reader._passive_task(toks, arg.start, arg.end, j, e)
        return task if task is not None else arg

    def _named_kind(self, m: Match, toks: list[Token], arg: Arg) -> Arg:
        """ "a sailboat named Gull", "a housing charity, Homestead.": a common noun phrase
        followed by the proper name it is called by (a naming participle, or an appositive
        name that closes the clause) stands for the named thing, which is of that kind
        (Quirk et al. 1985, 17.65-17.80: appositives of naming)."""
        if arg.kind != NP or arg.proper or arg.code:
            return arg
        k = next(
            (
                k
                for k in range(arg.start + 1, arg.end - 1)
                if toks[k].lower in ("named", "called") and toks[k].tag == "VBN"
            ),
            None,
        )
        if k is not None:
            kind_end, name_start, name_end = k, k + 1, _name_end(toks, k + 1)
            if name_end != arg.end:
                return arg
        elif arg.end + 1 < len(toks) and toks[arg.end].lower == ",":
            kind_end, name_start, name_end = arg.end, arg.end + 1, _name_end(toks, arg.end + 1)
            if name_end < len(toks) and toks[name_end].lower not in (".", "!", ";"):
                return arg  # "two dogs, Rex and Bo", "a cat, Miso, and ...": no lone name
        else:
            return arg
        if name_end <= name_start or name_end - name_start > 4:
            return arg
        kind = self.reader._np(toks, arg.start, kind_end)
        name = self.reader._np(toks, name_start, name_end)
        if not kind.name or not name.name or not name.proper:
            return arg
        if kind.words[-1:] and kind.words[-1] not in self.lex.words("person_nouns"):
            m.named_kinds.append((name, kind))  # (a daughter is kin, not a kind of thing)
        return name

    def _shape(
        self, rel: str, toks: list[Token], args: list[Arg], span: tuple[int, int], *, lead: bool
    ) -> list[Arg]:
        """The arguments of one slot read for what ``rel`` relates: acts, not doers, in an
        order; a clause cut to what it is about for blocking, dependency and order."""
        s, e = span
        if rel == "PRECEDES":
            args = [self._passive_step(toks, a, e) for a in args]
            args = [self._doer_to_act(toks, a, e) for a in args]
            if lead and _denied_necessity(toks, s, min(a.start for a in args)):
                for a in args:  # "we don't need to X before Y": the order is denied
                    a.negated = True
        if rel == "CAUSES":
            args = [self._described(toks, a, e) for a in args]
        if rel in _HIDDEN_CLAUSE:
            args = [clause_subject(self.reader, toks, a) for a in args]
        if rel in _REDUCED:
            keep: bool | str = (
                "complement"
                if rel == "PRECEDES"
                else "object"
                if rel == "BLOCKED_BY"
                else rel != "DEPENDS_ON"
            )
            args = [self.reader.reduce_clause(toks, a, keep_task=keep) for a in args]
        return args

    def _described(self, toks: list[Token], arg: Arg, e: int) -> Arg:
        """A cause or effect stated as a thing with a quality ("because the oven was too
        cold", "the bread came out flat") is that thing with the quality: "cold oven".
        A copular clause with a predicative adjective ascribes the quality to its subject
        (Quirk et al. 1985, 16.22, copular verbs 'be, get, go, turn, become, come out');
        the noun phrase with the adjective before it names the same state. Participles
        of an event or a status ("once the survey is done") keep naming the thing."""
        if arg.kind != NP or arg.code:
            return arg
        k = arg.end
        if k >= e or toks[k].lemma not in _COPULAR:
            return arg
        k += 1
        if k < e and toks[k].lower == "out" and toks[k - 1].lemma == "come":
            k += 1
        elif toks[k - 1].lemma == "come":
            return arg  # "come" is copular only with "out" ("came out dense")
        while k < e and toks[k].pos == ADV and toks[k].lower not in ("not", "never"):
            k += 1
        if not (k < e and toks[k].pos == ADJ and not toks[k].tag.startswith("VB")):
            return arg
        if toks[k].lower in self.lex.words("event_participles"):
            return arg
        if k + 1 < e and toks[k + 1].pos not in (PUNCT, CONJ, SUB):
            return arg  # "too small for the load": the quality has its own complement
        quality = toks[k].lemma if toks[k].tag in ("JJR", "JJS") else toks[k].lower
        return replace(
            arg,
            name=f"{quality} {arg.name}",
            words=(quality, *arg.words),
            end=k + 1,
        )

    def read_arguments(self, m: Match, toks: list[Token]) -> bool:
        """Fill ``m.slots`` from its spans; False when a needed argument is missing."""
        rel = m.phrase.relation
        clause_ok = rel in CLAUSE_RELATIONS
        task_ok = rel not in _NO_TASK
        order = sorted(m.spans.items(), key=lambda kv: kv[1][0])
        used_slots = {end for edge in m.phrase.edges for end in (edge[0], edge[2])}
        last = max((e for _, (_, e) in order), default=0)
        # the words of each clause argument after the phrasing before it is cut to its task
        # or subject: a negation there is the clause's own ("stuck because the visa hasn't
        # come"), which the cut argument carries where it matters (``Arg.negated``)
        clause_words: set[int] = set()
        for name, (s, e) in order:
            inner = s > 0 and e < last
            if inner and any(
                toks[k].pos == VERB
                and toks[k].inflected in ("s", "ed")
                and toks[k - 1].lower in ("and", "or", "but")
                for k in range(s + 1, e)
            ):
                return False  # "requires X and uses Y to Z": a slot spans no second predicate
            if inner and any(
                toks[k].lower == "," and toks[k + 1].lower in ("which", "who", "whom", "whose")
                for k in range(s, e - 1)
            ):
                return False  # "needs X, which I have to dig out": the next literal is the
                # relative clause's, not the phrasing's
            spare = name == "X" and "X" not in used_slots
            if spare and not any(f.startswith("former=") for f in m.phrase.flags):
                continue
            lead = s == 0 and not any(k < s for k in m.literals)
            if lead:
                args = self.reader.before(toks, s, e, clause_ok=clause_ok)
                args = [*args, *self._likened(toks, args, e)]
            else:
                # "is not a bear": the negation is the clause's, not part of the argument
                while s < e - 1 and toks[s].pos == NEG and toks[s + 1].pos not in (VERB, AUX):
                    s += 1  # (but "hasn't lived": the verb's own negation stays with it)
                s = _past_measure(toks, s, e)
                args = self.reader.after(toks, s, e, clause_ok=clause_ok, task_ok=task_ok)
            if not args and spare:
                continue  # the state a change left (see ``former``) is read when it can be
            if not args:
                return False
            args = self._named_in_apposition(toks, args, e)
            last_arg = args[-1]
            if _counted_kind(toks, last_arg) and toks[last_arg.end].lower == ":":
                # "depends on three packages: A, B and C": the list after the colon is read
                # on (the reader stops at the colon) and stands for the counted kind
                # (short items are names of the kind, even those the tagger took for verbs)
                listed = self._short_items(toks, last_arg.end + 1, e) or self.reader.after(
                    toks, last_arg.end + 1, e, clause_ok=clause_ok, task_ok=task_ok
                )
                if len(listed) >= 2:
                    args = [*args, *listed]
            args = self._counted_names(m, toks, args)
            if "tool_target" in m.phrase.flags and args[0].kind == NP:
                # "with a pump and fix the tyre": a coordinated predicate, not a second tool
                args = args[: next((k for k, a in enumerate(args) if a.kind != NP), len(args))]
            if not lead:  # (a leading clause's "not" may deny the relation: "X isn't what
                # blocks Y")
                clause_words.update(
                    k for a in args if a.kind == CLAUSE for k in range(a.start, a.end)
                )
            m.slots[name] = [
                self._named_kind(m, toks, a)
                for a in self._shape(rel, toks, args, (s, e), lead=lead)
            ]
        lo = min(m.literals) if m.literals else 0
        hi = max(m.literals) + 1 if m.literals else 0
        first_arg_end = min(
            (a.end for args in m.slots.values() for a in args if a.end <= lo), default=lo
        )
        last_arg_start = max(
            (a.start for args in m.slots.values() for a in args if a.start >= hi), default=hi
        )
        inside = {k for args in m.slots.values() for a in args for k in range(a.start, a.end)}
        inside |= clause_words
        negated = any(
            toks[k].pos == NEG
            for k in range(first_arg_end, last_arg_start)
            if k not in m.literals and k not in inside
        )
        # "anymore" / "no longer" deny the clause they stand in, not the whole sentence
        c_lo, c_hi = clause_bounds(toks, (lo, hi))
        lowered = [t.lower for t in toks[c_lo:c_hi]]
        # ... and only say when a phrasing's own denial holds ("isn't into jazz anymore"):
        # they never undo it
        if not m.phrase.negated and (
            "anymore" in lowered
            or any(
                lowered[k] == "no" and lowered[k + 1] == "longer" for k in range(len(lowered) - 1)
            )
        ):
            negated = True
        negated = negated or any(a.negated for args in m.slots.values() for a in args)
        if "neither" in (t.lower for t in toks[m.extent[0] : m.extent[1]]):
            negated = True  # "neither X nor Y helped"
        m.negated = negated != m.phrase.negated
        return True


#: Degree words before a number ("at least 3", "up to 10", "about 20").
_DEGREE_WORDS = (
    ("at", "least"),
    ("at", "most"),
    ("up", "to"),
    ("more", "than"),
    ("less", "than"),
    ("no", "more", "than"),
    ("about",),
    ("around",),
    ("roughly",),
    ("approximately",),
    ("nearly",),
    ("almost",),
    ("over",),
)


#: Object pronouns that stand as an indirect object ("gave me a headache").
_OBJECT_PRONOUNS = frozenset({"me", "him", "her", "us", "them", "you", "it"})


def _indirect_object_end(toks: list[Token], i: int) -> int | None:
    """End of the indirect object that opens at ``i`` of a double-object verb ("gave *me* a
    headache", "gives *the cake* a metallic taste", "gave *Tom* insomnia"; Quirk et al. 10.7):
    an object pronoun, the noun phrase the parser marks as the dative, or a run of proper names
    with a second noun phrase after it. None when the two objects cannot be told apart."""
    n = len(toks)
    if i >= n:
        return None
    if toks[i].lower in _OBJECT_PRONOUNS and i + 1 < n and toks[i + 1].pos != PUNCT:
        return i + 1
    for k in range(i, min(i + 5, n)):
        if toks[k].dep == "dative":
            return k + 1
        if toks[k].pos not in (DET, NOUN, PROPN, ADJ):
            break
    k = i
    while k < n and toks[k].pos == PROPN:
        k += 1
    if k > i and k < n and toks[k].pos in (NOUN, ADJ, DET) and toks[k].lower != "'s":
        return k
    return None


def _past_measure(toks: list[Token], s: int, e: int) -> int:
    """Where the thing measured starts in a measure phrase ("at least 16 GB of video memory",
    "two months of payslips"): a number, one unit noun and "of" (the partitive construction,
    Quirk et al. 5.9) say how much of the argument, not what it is. ``s`` when there is none."""
    j = s
    for words in _DEGREE_WORDS:
        if all(j + i < e and toks[j + i].lower == w for i, w in enumerate(words)):
            j += len(words)
            break
    if j < e and toks[j].pos == NUM:
        k = j + 1
        if k + 2 < e and toks[k].pos in (NOUN, PROPN) and toks[k + 1].lower == "of":
            return k + 2
    return s


def _counted_kind(toks: list[Token], arg: Arg) -> bool:
    """A common plural noun phrase opened by a count ("two cats", "both vans") that a list
    may follow."""
    if arg.kind != NP or arg.proper or arg.code or arg.end >= len(toks):
        return False
    counted = toks[arg.start].pos == NUM or toks[arg.start].lower == "both"
    return counted and toks[arg.end - 1].tag == "NNS"


def _name_end(toks: list[Token], j: int) -> int:
    """End of the proper name that starts at ``j`` (capitalised words, "The Lantern Men")."""
    k = j
    while k < len(toks) and (toks[k].pos == PROPN or (k > j and toks[k].text[:1].isupper())):
        k += 1
    if k == j and j + 1 < len(toks) and toks[j].lower == "the" and toks[j + 1].pos == PROPN:
        return _name_end(toks, j + 1)
    return k


def _participle_follows(toks: list[Token], j: int) -> bool:
    """A past participle at ``j``, past adverbs ("got quietly moved", "gets held up")."""
    while j < len(toks) and toks[j].pos == ADV and toks[j].lower not in _PARTICLES:
        j += 1
    return j < len(toks) and toks[j].tag == "VBN"


def _doer_of(toks: list[Token], arg: Arg, e: int, people: frozenset[str]) -> int | None:
    """Where the verb phrase of ``arg``'s clause starts when ``arg`` is only its doer (a pronoun,
    a short name or a person noun right before auxiliaries and a verb); None otherwise."""
    if arg.kind not in (PRONOUN, NP) or arg.end - arg.start > 3:
        return None
    named = all(toks[k].pos == PROPN for k in range(arg.start, arg.end))
    if arg.kind == NP and not named and (not arg.words or arg.words[-1] not in people):
        return None
    j = arg.end
    while j < e and toks[j].pos in (AUX, MODAL, ADV, NEG, PART):
        j += 1
    return j if j < e and toks[j].pos == VERB else None


def _named_doer_of_clause(toks: list[Token], arg: Arg, e: int) -> int | None:
    """Where the verb phrase starts in a clause that opens with a person's name and goes on
    with a verb and its object ("Hana will order the timber"): the act is the verb phrase.
    None when the verb has no object after it ("Jonas moved" is an event, no task)."""
    j = arg.start
    while j < min(arg.start + 3, e) and toks[j].pos == PROPN:
        j += 1
    if j == arg.start:
        return None
    while j < e and toks[j].pos in (AUX, MODAL, ADV, NEG):
        j += 1
    if j + 1 >= e or toks[j].pos != VERB:
        return None
    nxt = toks[j + 1]
    return j if nxt.pos in (NOUN, PROPN, "DET", "POSS", NUM) else None


def _denied_necessity(toks: list[Token], s: int, e: int) -> bool:
    """A denied necessity ("don't need to", "do not have to", "needn't") in ``[s, e)``: what
    follows it need not be done (first, or at all)."""
    words = toks[s:e]
    return any(t.pos == NEG for t in words) and any(
        t.lemma in ("need", "have", "got")
        and ((k + 1 < len(words) and words[k + 1].lower == "to") or t.lower == "need")
        for k, t in enumerate(words)
    )


def clause_bounds(toks: list[Token], extent: tuple[int, int]) -> tuple[int, int]:
    """The span of the clause around ``extent``: out to the nearest , ; : or sentence end."""
    stops = (",", ";", ":", ".", "!", "?", "—", "-")
    lo, hi = extent
    while lo > 0 and toks[lo - 1].lower not in stops:
        lo -= 1
    while hi < len(toks) and toks[hi].lower not in stops:
        hi += 1
    return lo, hi


def settle(matches: list[Match], toks: list[Token] | None = None) -> list[Match]:
    """Keep the most specific non-overlapping matches (see the module docstring)."""

    def subject_noun_literals(m: Match) -> int:
        """Literal words that are nouns right before a verb: the subject, not the relation
        ("Gutter repairs need ...": "repairs" is no verb of fixing)."""
        if toks is None:
            return 0
        return sum(
            1
            for k in m.literals
            if toks[k].pos == NOUN and k + 1 < len(toks) and toks[k + 1].pos in (VERB, MODAL)
        )

    ranked = sorted(
        matches,
        key=lambda m: (
            subject_noun_literals(m) > 0,
            m.phrase.weak,
            "copula" in m.phrase.flags,
            -m.phrase.literal_count,
            -(m.extent[1] - m.extent[0]),
            m.extent[0],
        ),
    )
    kept: list[Match] = []
    taken: set[int] = set()
    inside: list[tuple[int, int]] = []
    for m in ranked:
        if m.literals & taken:
            continue
        lo, hi = min(m.literals), max(m.literals) + 1
        if any(s <= lo and hi <= e for s, e in inside):
            continue  # stated inside another fact's argument: not asserted
        kept.append(m)
        taken |= m.literals
        for args in m.slots.values():
            for a in args:
                lead = toks[a.start - 1].lower if toks is not None and a.start > 0 else ""
                if m.phrase.relation == "PRECEDES" and lead not in _SUBORDINATE:
                    continue  # the main clause of "after X, Y" is asserted
                if m.phrase.relation == "CAUSES" and a.kind == CLAUSE:
                    continue  # "X, so Y" / "Y because X" asserts both X and Y
                if a.kind in (CLAUSE, TASK) or a.end - a.start > 1:
                    inside.append((a.start, a.end))
    kept.sort(key=lambda m: m.extent[0])
    return kept
