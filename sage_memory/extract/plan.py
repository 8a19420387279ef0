"""Plans: ordered task lists ("first X, then Y, finally Z"; numbered steps) and their project.

A plan is read across the sentences of one memory: sequence markers from the lexicon split it
into items, each item is named by its verb phrase (an item with no verb borrows the previous
item's verb: "build the API, and finally the frontend"), and consecutive items are chained with
PRECEDES. A project named by an intention ("I want to build X", "we're organizing X", "the X
project", "roadmap for X") holds every task of the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sage_memory.extract.args import ArgReader
from sage_memory.extract.fronted import fronted_openers
from sage_memory.extract.lexicon import Lexicon
from sage_memory.extract.phrase import _join
from sage_memory.extract.word import (
    ADV,
    AUX,
    CODE,
    DET,
    MODAL,
    NEG,
    NOMINAL,
    NOUN,
    PART,
    POSS,
    PRON,
    PROPN,
    VERB,
    Token,
    base_form,
    word_senses,
)

#: Verbs of saying and of wanting whose complement is the step ("Ana says X", "we plan to X").
_REPORTING = frozenset({"say", "tell", "insist", "reckon", "think", "suggest"})
_WANTING = frozenset({"want", "need", "plan", "hope", "intend", "try", "decide", "like", "have"})
#: Particles of phrasal verbs ("warm up", "sign off", "pack away").
_PARTICLES = frozenset({"up", "out", "off", "back", "down", "over", "away", "in", "on", "through"})
#: Marks that end a heading before the steps it heads ("Plan: ...", "Release 2 - ...").
_HEADING_ENDS = frozenset({":", "—", "–", "-"})
_LIST_ITEM = re.compile(r"(?i)^\s*(?:\d{1,2}[.)]|step\s*\d+\s*[:.)-]?|[-*•])\s+")


def _phrasal(toks: list[Token], k: int, e: int) -> bool:
    """A word the parse reads as an adverb or an adjective that is the verb of a phrasal
    verb, its particle after it ("back up the database", "warm up", "clean out the shed")."""
    return k + 1 < e and toks[k + 1].tag == "RP" and "VERB" in word_senses(toks[k].lower)


def _with_particle(name: str, toks: list[Token], k: int, e: int) -> str:
    """A step that is a phrasal verb alone keeps its particle ("warm up"), which the name of a
    verb phrase drops as a stray preposition."""
    t = toks[k + 1] if k + 1 < e else None
    if " " in name or t is None or t.tag != "RP" or t.lower not in _PARTICLES:
        return name
    return f"{name} {t.lower}"


def _capital_verb(t: Token) -> bool:
    """A step's opening compound verb that its capital made a name ("Pre-heat the
    oven", "Re-seal the jar"): the parse's base form, its last part a verb."""
    return (
        t.pos == PROPN
        and t.tag == "VB"
        and "-" in t.lower
        and "VERB" in word_senses(t.lower.rsplit("-", 1)[-1])
    )


#: Subject pronouns that open the clause after a fronted purpose phrase.
_SUBJECTS = frozenset({"i", "we", "you", "they", "he", "she"})


def _fronted_purpose(toks: list[Token], s: int, e: int) -> int:
    """Where the clause after a fronted purpose phrase begins ("For the bake sale, we'll
    bake scones": at "we"), or 0 when the span opens with none: "for" and a noun phrase
    with a determiner (and its own prepositional phrases), then a subject pronoun and a
    modal or a verb (a purpose adjunct, Quirk et al. 8.86)."""
    if s + 2 >= e or toks[s].lower != "for" or toks[s + 1].pos not in (DET, POSS):
        return 0
    k = s + 1
    while k < e and (
        toks[k].pos in NOMINAL | {DET, POSS, "ADJ", "NUM", "PREP"} or toks[k].lower == ","
    ):
        if toks[k].lower in _SUBJECTS:
            break
        k += 1
    if (
        k + 1 < e
        and toks[k].lower in _SUBJECTS
        and toks[k].pos == PRON
        and toks[k + 1].pos in (MODAL, AUX, VERB)
    ):
        return k
    return 0


def _count(toks: list[Token], i: int) -> tuple[int, int]:
    """(place in the count, length) of an item number at ``i``: "2." or "2)", "(2)", "b)" or
    "(b)"; (0, 0) when there is none."""
    k = i + 1 if toks[i].lower == "(" else i
    if (
        k + 1 >= len(toks)
        or toks[k + 1].lower not in (")", ".")
        or (k > i and toks[k + 1].lower != ")")
    ):
        return 0, 0
    word = toks[k].lower
    if word.isdigit() and len(word) <= 2:
        return int(word), k + 2 - i
    if len(word) == 1 and "a" <= word <= "h" and (k > i or toks[k + 1].lower == ")"):
        return ord(word) - ord("a") + 1, k + 2 - i
    return 0, 0


def enumerators(toks: list[Token]) -> list[tuple[int, int, str]]:
    """The numbers of an inline list ("Checklist: 1) sand the deck 2) oil it 3) ...", "(a)
    ... (b) ..."), as step cuts: the first is a "first" marker, the rest "next" ones. Only
    a run that counts up from one by one is a list: "route 66) closes" or a lone "b)" is
    none."""
    found = [(i, *_count(toks, i)) for i in range(len(toks))]
    marks = [(i, n) for i, place, n in found if place == 1] if found else []
    if not marks:
        return []
    start, n = marks[0]
    cuts = [(start, start + n, "first")]
    want = 2
    for i, place, length in found:
        if i >= cuts[-1][1] and place == want:
            cuts.append((i, i + length, "next"))
            want += 1
    return cuts if len(cuts) > 1 else []


@dataclass(slots=True)
class Plan:
    """Tasks in order (with the sentence each came from) and the project, when named."""

    project: str = ""
    project_sentence: str = ""
    tasks: list[tuple[str, str]] = field(default_factory=list)
    #: pairs of task indexes (earlier, later) the text puts in order
    order: list[tuple[int, int]] = field(default_factory=list)


def _phrases(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    return sorted((tuple(w.split()) for w in words), key=len, reverse=True)


class PlanReader:
    """Finds plans with the sequence vocabulary of a lexicon."""

    def __init__(self, lex: Lexicon, reader: ArgReader) -> None:
        self.reader = reader
        seq = lex.sequence
        self.first = _phrases(seq.get("first", ()))
        self.later = _phrases(seq.get("next", ()) + seq.get("last", ()))
        self.project_verbs = frozenset(seq.get("project_verbs", ()))
        self.intents = _phrases(seq.get("project_intents", ()))
        self.project_nouns = frozenset(seq.get("project_nouns", ()))
        self.time_words = lex.words("time_words")
        # words that open a fronted clause of order ("once X, do Y"): a step that opens with
        # one is the act after the clause's comma
        self.order_openers = fronted_openers(lex, "PRECEDES")
        self.list_nouns = frozenset(seq.get("list_nouns", ()))
        self.in_order = _phrases(seq.get("in_order", ()))
        self.procedure_nouns = frozenset(seq.get("procedure_nouns", ()))
        self.order_headings = _phrases(seq.get("order_headings", ()))
        self.arrows = _phrases(seq.get("arrows", ()))
        # words a heading's project name leaves out ("Release steps" -> "release")
        self.list_nouns = (
            self.list_nouns | {w for p in self.order_headings for w in p} | self.procedure_nouns
        )
        # The markers by their first word, each list in the order they are tried (the
        # "first" markers, then the later ones, longest first): a token is compared with
        # the markers it could start only. An empty marker would start anywhere.
        self._markers: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
        self._anywhere: list[tuple[int, str, tuple[str, ...]]] = []
        tried = [
            (k, w) for k, table in (("first", self.first), ("next", self.later)) for w in table
        ]
        for order, (kind, words) in enumerate(tried):
            if words:
                self._markers.setdefault(words[0], []).append((order, kind, words))
            else:
                self._anywhere.append((order, kind, words))

    def _marker(self, toks: list[Token], i: int) -> tuple[str, int]:
        """("first"|"next", length) of a sequence marker at ``i``, or ("", 0)."""
        candidates = self._markers.get(toks[i].lower, [])
        if self._anywhere:
            candidates = sorted(candidates + self._anywhere)
        for _, kind, words in candidates:
            n = len(words)
            if i + n <= len(toks) and all(toks[i + k].lower == w for k, w in enumerate(words)):
                return kind, n
        return "", 0

    def read(self, sentences: list[tuple[str, list[Token]]]) -> Plan:
        """The plan of a memory: its marked steps as tasks, in order, and their project;
        and the task lists under a heading ("Q3 migration: freeze schema, copy data"), in
        order only when the text says so."""
        plan = Plan()
        lists = [(text, toks, found) for text, toks in sentences if (found := self._list(toks))]
        for text, toks, (heading, spans, ordered) in lists:
            first = len(plan.tasks)
            for s, e in spans:
                name, _ = self._task(toks, s, e, "")
                plan.tasks.append((name, text))
            if ordered:
                plan.order.extend((k, k + 1) for k in range(first, len(plan.tasks) - 1))
            if heading and not plan.project:
                plan.project, plan.project_sentence = heading, text
        items: list[tuple[str, list[Token], int, int]] = []
        marked = False
        unmarked: tuple[str, list[Token]] | None = None  # the sentence before, if no step
        for text, toks in sentences:
            cuts = self._cuts(toks)
            listed = bool(_LIST_ITEM.match(text))
            if (not cuts and not listed) or any(toks is listed_toks for _, listed_toks, _ in lists):
                unmarked = (text, toks)
                continue
            if (
                unmarked is not None
                and cuts
                and cuts[0][0] == 0
                and cuts[0][2] == "next"
                and (cuts[0][1] >= len(toks) or toks[cuts[0][1]].pos not in NOMINAL | {"ADJ"})
            ):  # ("Third time lucky", "Last move": an ordinal of a noun, no later step)
                # "We pour the slab; then we frame the walls": a sentence that opens with a
                # later step continues the one before, which is the earlier step
                before, before_toks = unmarked
                items.extend(
                    (before, before_toks, a, b)
                    for a, b in self._listed_steps(before_toks, 0, len(before_toks))
                )
            unmarked = None
            marked = True
            items.extend(
                (text, toks, a, b)
                for s, e in self._steps(toks, cuts, listed=listed)
                for a, b in self._listed_steps(toks, s, e)
            )
        if not (marked and items) and not lists:
            return plan
        previous_verb = ""
        first = len(plan.tasks)
        for text, toks, s, e in items:
            # an arrow's step names itself ("fetch -> dedupe"): it borrows no verb
            borrow = "" if self.arrow_marks(toks) else previous_verb
            name, verb = self._task(toks, s, e, borrow)
            if name and (len(plan.tasks) == first or plan.tasks[-1][0] != name):
                plan.tasks.append((name, text))
                previous_verb = verb or previous_verb
        plan.order.extend((k, k + 1) for k in range(first, len(plan.tasks) - 1))
        if not plan.tasks:
            return plan
        if not plan.project:
            plan.project, plan.project_sentence = self._project(sentences)
        if len(plan.tasks) < 2 and not plan.project:
            plan.tasks, plan.order = [], []  # one marked step of no named project is no plan
        return plan

    def _list(self, toks: list[Token]) -> tuple[str, list[tuple[int, int]], bool] | None:
        """A task list under a heading: "HEADING: do A, do B and do C" with every item a verb
        phrase (two at least) -> (the project the heading names, the items, whether the text
        says they are in order); None when the sentence is not one."""
        colon = next((k for k, t in enumerate(toks) if t.lower == ":"), -1)
        if colon < 0:
            # "Release workflow — tag, build, publish": a dash ends a heading only when the
            # heading names an order or a procedure; else it is an aside
            colon = next((k for k, t in enumerate(toks) if t.lower in ("—", "–")), -1)
            if colon > 0 and not (
                self._names_order(toks[:colon]) or self._names_procedure(toks[:colon])
            ):
                return None
        if colon < 1:
            return None
        end = len(toks)
        while end > colon and toks[end - 1].pos == "PUNCT":
            end -= 1
        ordered = False
        # "A, B, C — in that order, every time": the list ends where it is said to be in
        # order, at the end or before a closing aside
        for at in range(end - 1, colon + 1, -1):
            words = next((w for w in self.in_order if self._at(toks, at, w, end)), ())
            if words and (
                at + len(words) == end or toks[at - 1].lower in (",", ";", "-", "—", "–")
            ):
                ordered, end = True, at
                while end > colon and toks[end - 1].lower in (",", ";", "-", "—", "–"):
                    end -= 1
                break
        spans: list[tuple[int, int]] = []
        start = colon + 1
        for k in range(colon + 1, end + 1):
            if (
                k == end
                or toks[k].lower in (",", ";")
                or (toks[k].lower == "and" and k > start and toks[k - 1].lower != ",")
            ):
                if k > start:
                    spans.append((start, k))
                start = k + 1
        spans = [(s, e) for s, e in spans if toks[s].lower != "and" or s + 1 < e]
        spans = [(s + 1 if toks[s].lower == "and" else s, e) for s, e in spans]
        # a heading that names an order of steps ("Steps:", "strictly in order:") orders its
        # list, and its items may name the steps with nouns ("backup, migration, warm-up")
        by_heading = self._names_order(toks[:colon])
        if len(spans) < 2 or not all(
            self._opens_with_verb(toks, s) or (by_heading and self._names_step(toks, s, e))
            for s, e in spans
        ):
            return None
        # a heading that names a procedure ("Release workflow:", "Start-up routine:") states
        # the order of a list of acts (every item a verb), as "Steps:" does
        by_procedure = self._names_procedure(toks[:colon])
        return self._heading(toks, colon), spans, ordered or by_heading or by_procedure

    @staticmethod
    def _at(toks: list[Token], at: int, words: tuple[str, ...], end: int) -> bool:
        n = len(words)
        return at + n <= end and all(toks[at + k].lower == w for k, w in enumerate(words))

    def _names_procedure(self, head: list[Token]) -> bool:
        """Whether a heading's noun phrase ends in a noun that names a procedure."""
        nouns = [t for t in head if t.pos in NOMINAL]
        return bool(nouns) and nouns[-1].lower in self.procedure_nouns

    def _names_order(self, head: list[Token]) -> bool:
        """Whether a heading names an order of steps ("Steps", "Running order", "in order")."""
        words = [t.lower for t in head]
        return any(
            words[k : k + len(p)] == list(p)
            for p in self.order_headings + self.in_order
            for k in range(len(words) - len(p) + 1)
        )

    @staticmethod
    def _names_step(toks: list[Token], s: int, e: int) -> bool:
        """A short item naming a step with a noun phrase ("cache warm-up", "the vows")."""
        return 0 < e - s <= 4 and any(t.pos in NOMINAL | {VERB} for t in toks[s:e])

    def _listed_steps(self, toks: list[Token], s: int, e: int) -> list[tuple[int, int]]:
        """A step that lists several acts ("pack the tent, load the car, then drive") is that
        many steps in the written order: split at its commas (and an "and" after one) when
        every piece opens with a verb in its base form; else the one step. A heading before a
        colon or a dash ("podcast ep 3 - record it, edit it, then ...") is no piece."""
        pieces: list[tuple[int, int]] = []
        start = next((k + 1 for k in range(e - 1, s, -1) if toks[k].lower in _HEADING_ENDS), s)
        for k in range(s, e + 1):
            if k == e or toks[k].lower in (",", ";"):
                a = start + 1 if start < k and toks[start].lower == "and" else start
                if a < k:
                    pieces.append((a, k))
                start = k + 1
        if pieces and (k := _fronted_purpose(toks, pieces[0][0], e)):
            # "For the fair, we'll bake scones, price them": the first act follows its subject
            while k < e and toks[k].pos in (PRON, MODAL, AUX, ADV):
                k += 1
            pieces = [(max(a, k), b) for a, b in pieces if b > k]
        if len(pieces) < 2 or not all(self._parsed_verb(toks, a) for a, _ in pieces):
            return [(s, e)]
        return pieces

    def _parsed_verb(self, toks: list[Token], k: int) -> bool:
        """A base-form verb by the parse when there is one ("move" in "Last move, promise"
        names a thing), else by the dictionary. A piece has no subject, so a present tense
        the parse gives its opening verb is the imperative ("stir it twice"), and a word
        that can be a verb is one before an object pronoun ("true it": no adjective or noun
        takes "it" as its object)."""
        t = toks[k]
        if not t.tag:
            return self._opens_with_verb(toks, k)
        if t.tag == "VB" or (t.tag == "VBP" and t.pos == VERB):
            return True
        return (
            k + 1 < len(toks)
            and toks[k + 1].lower in ("it", "them")
            and t.pos not in (PROPN, CODE)
            and "VERB" in word_senses(t.lower)
        )

    @staticmethod
    def _opens_with_verb(toks: list[Token], s: int) -> bool:
        """An item that opens with a verb in its base form ("freeze schema", "ship the
        books"); a name or a participle opens no task."""
        t = toks[s]
        if t.tag == "VB" and t.pos not in (PROPN, CODE):
            return True  # the parse's base form: "weed the bed" ends in "ed" yet is no participle
        if t.pos in (PROPN, CODE) or t.inflected in ("ing", "ed", "s"):
            return False
        return t.pos == VERB or "VERB" in word_senses(t.lower)

    def _heading(self, toks: list[Token], colon: int) -> str:
        """The project a list heading names: a name in brackets or quotes if it has one,
        else its noun phrase less list words ("notes", "subtasks") and time phrases."""
        head = toks[:colon]
        for opener, closer in (("(", ")"), ('"', '"'), ("“", "”")):
            at = next((k for k, t in enumerate(head) if t.lower == opener), -1)
            shut = next((k for k in range(at + 1, len(head)) if head[k].lower == closer), -1)
            if at >= 0 and shut > at + 1 and not all(t.pos == "NUM" for t in head[at + 1 : shut]):
                return " ".join(t.lower for t in head[at + 1 : shut])
            quoted = [t for t in head if t.text.startswith(opener) or t.text.endswith(closer)]
            if opener == '"' and len(quoted) == 2 and quoted[0] is not quoted[1]:
                at, shut = head.index(quoted[0]), head.index(quoted[1])  # quotes kept on words
                return " ".join(t.lower for t in head[at : shut + 1]).strip('"')
        # "Launch steps, strictly in order:": what follows a comma says how, not what
        cut = next(
            (k for k, t in enumerate(head) if t.lower in ("—", "–", "-", "(", ",")), len(head)
        )
        head = head[:cut]
        if len(head) > 2 and head[0].lower == "part" and head[1].lower == "of":
            head = head[2:]  # "Part of the garden revamp:": the revamp is the project
        if any(t.pos in (VERB, AUX, PRON) and t.lower not in self.list_nouns for t in head):
            return ""  # "I've put these on it:": a clause, no heading
        words = [t for t in head if t.lower not in ("the", "a", "an", "my", "our")]
        of = next((k for k, t in enumerate(words) if t.lower == "for"), -1)
        if of >= 0:
            before = [t for t in words[:of] if t.lower not in self.list_nouns]
            words = before if before else words[of + 1 :]
        words = [
            t for t in words if t.lower not in self.list_nouns and t.lower not in self.time_words
        ]
        while words and words[-1].lower in ("this", "next", "last", "for", "to"):
            words = words[:-1]
        # a possessive ending is written on its word ("Ana's garden", not "ana 's garden")
        return "".join(
            ("" if not k or t.lower.startswith("'") else " ") + t.lower for k, t in enumerate(words)
        )

    def arrow_marks(self, toks: list[Token]) -> list[tuple[int, int]]:
        """The arrows of a sentence that chains steps with two or more ("a -> b -> c"), as
        (start, end) token spans; [] for a sentence with fewer."""
        marks: list[tuple[int, int]] = []
        i = 0
        while i < len(toks):
            n = next(
                (
                    len(w)
                    for w in self.arrows
                    if all(i + k < len(toks) and toks[i + k].lower == x for k, x in enumerate(w))
                ),
                0,
            )
            if n:
                marks.append((i, i + n))
            i += n or 1
        if len(marks) < 2:
            return []
        first = next((k + 1 for k in range(marks[0][0] - 1, -1, -1) if toks[k].lower == ":"), 0)
        if first >= marks[0][0] or not self._parsed_verb(toks, first):
            return []  # "loose cap -> fault code -> failed test": events, not steps
        return marks

    def _cuts(self, toks: list[Token]) -> list[tuple[int, int, str]]:
        """The order markers of a sentence that start a step: (start, end, kind)."""
        cuts: list[tuple[int, int, str]] = [(i, j, "next") for i, j in self.arrow_marks(toks)]
        counted = enumerators(toks)
        cuts += counted
        # "3) first solo shift": an ordinal after an item's number is part of its name
        numbered = {j for _, j, _ in counted}
        for i in range(len(toks)):
            kind, n = self._marker(toks, i)
            if not kind:
                continue
            prev = toks[i - 1].lower if i > 0 else ""
            # "and only then", "only after that": a focusing adverb before the marker
            at_break = i == 0 or prev in (",", ";", ":", "and", "-", "–", ".", "then", "only")
            at_end = kind == "first" and (
                i + n == len(toks) or toks[i + n].lower in (",", "and", ";", ".")
            )
            if (at_break or at_end) and i not in numbered:
                cuts.append((i, i + n, kind))
        return sorted(cuts)

    @staticmethod
    def _steps(
        toks: list[Token], cuts: list[tuple[int, int, str]], *, listed: bool
    ) -> list[tuple[int, int]]:
        """The token spans between the markers, less a header before a leading "first"."""
        bounds: list[tuple[int, int]] = []
        start = 0
        for i, j, _ in cuts:
            if i > start:
                bounds.append((start, i))
            start = j
        bounds.append((start, len(toks)))
        # "My plan: first ..." -> the text before a leading "first" is a header
        header_cut = bool(
            cuts
            and cuts[0][0] > 0
            and cuts[0][2] == "first"
            and not listed
            and cuts[0][1] < len(toks)
            and cuts[0][0] + 1 != len(toks)
            and toks[cuts[0][1]].lower not in (",", "and", ";", ".")
        )  # (not "Venue first, then ...": there "first" follows its item)
        out = []
        for b, (s, e) in enumerate(bounds):
            header = toks[s:e]
            if (
                b == 0
                and header_cut
                and (any(t.lower == ":" for t in header) or not any(t.pos == VERB for t in header))
            ):
                continue
            out.append((s, e))
        return out

    def _task(self, toks: list[Token], s: int, e: int, previous_verb: str) -> tuple[str, str]:
        """The task an item names, and its verb (for items that have none)."""
        for j in range(e - 1, s - 1, -1):  # "Roadmap for the app: set up auth" -> the task
            if toks[j].lower == ":" and j + 1 < e:
                s = j + 1
                break
        if s + 1 < e and toks[s].lower == "step" and toks[s + 1].pos == "NUM":
            s += 2
        if s + 1 < e and toks[s].pos == "NUM" and toks[s + 1].lower in (".", ")"):
            s += 2
        while s < e and toks[s].lower in (",", ":", ";", "-", ".", "and", "to", "do", ")"):
            s += 1
        if s < e and toks[s].lower in self.order_openers:
            # "After we land, collect the bags, then ...": the step is the act after the
            # clause, which a phrasing of the lexicon orders itself
            comma = next((k for k in range(s + 1, e) if toks[k].lower == ","), -1)
            if 0 < comma < e - 1:
                s = comma + 1
        s = _fronted_purpose(toks, s, e) or s
        s = self._past_subject(toks, s, e)
        while e > s and toks[e - 1].lower in (",", ".", ";", "!", "first", "and", "then"):
            e -= 1
        k = s
        while k < e and (
            (toks[k].pos in (PRON, MODAL, AUX, ADV, NEG, PART) and not _phrasal(toks, k, e))
            or toks[k].lower
            in (
                "need",
                "want",
                "have",
                "got",
                "gotta",
                "going",
                "let",
                "'s",
                "should",
                "please",
                "must",
            )
        ):
            k += 1
        # a word the parse read as a noun ("swim test", "dry cleaning ticket") names its step
        # as a verb here, but is no verb a later verbless step may borrow
        parsed = k < e and (toks[k].pos == VERB or not toks[k].tag)
        if (
            k < e
            and toks[k].pos != VERB
            and "VERB" in word_senses(toks[k].lower)
            and (toks[k].pos not in (PROPN, CODE))
        ) or (k < e and _capital_verb(toks[k])):
            toks[k].pos, toks[k].lemma = (
                VERB,
                base_form(toks[k].lower),
            )  # an item opens with its verb
        if k < e and toks[k].pos == VERB:
            end = self.reader._vp_end(toks, k, e)
            arg = self.reader._task(toks, k, end)
            return _with_particle(arg.name, toks, k, e), base_form(toks[k].lower) if parsed else ""
        if (k < e and toks[k].pos in NOMINAL | {CODE}) or (k < e and toks[k].lower in ("the", "a")):
            end = self.reader._np_end(toks, k, e)
            words = _join(toks[k:end])
            if words and previous_verb:
                return f"{previous_verb} {words}", ""
            if words and any(t.pos in (NOUN, PROPN) for t in toks[k:end]):
                arg = self.reader._np(toks, k, end)
                return arg.name, ""
        return "", ""

    @staticmethod
    def _past_subject(toks: list[Token], s: int, e: int) -> int:
        """Where the act of a step that is a clause begins: past its subject ("the crew
        restocks the van" -> "restocks the van"; "Ana sketched the plan" -> "sketched ...").
        A step named by its subject ("the frontend comes last", "the review is next") keeps
        it: there the verb only places the step."""
        k = s
        while k < e and toks[k].pos in (DET, POSS, "ADJ", NOUN, PROPN):
            k += 1
        if k == s or k >= e or not any(t.pos in (NOUN, PROPN) for t in toks[s:k]):
            return s
        v = k
        while v < e and toks[v].pos in (MODAL, AUX, ADV, NEG) and toks[v].lemma != "be":
            v += 1
        if v >= e or toks[v].pos != VERB or toks[v].tag not in ("VBZ", "VBD", "VBP", "VB"):
            return s
        if toks[v].lemma in ("come", "go", "follow", "happen", "be", "start", "begin", "end"):
            return s
        if toks[v].lemma in _REPORTING and v + 1 < e:
            return v + 1  # "Mia says stocktake first": the step is what is said
        if toks[v].lemma in _WANTING and v + 2 < e and toks[v + 1].lower == "to":
            return v + 2  # "Tess wants to hire staff": the step is the wanted act
        return k

    def _project(self, sentences: list[tuple[str, list[Token]]]) -> tuple[str, str]:
        for text, toks in sentences:
            if _fronted_purpose(toks, 0, len(toks)):
                # "For the bake sale we'll bake scones, then ...": what the acts are for
                name = self._np_name(toks, 1)
                if name:
                    return name, text
            for i, t in enumerate(toks):
                # "the mobile app project", "our Q3 roadmap"
                if t.lemma in ("project",) and i > 0 and toks[i - 1].pos in NOMINAL | {CODE}:
                    k = i
                    while k > 0 and toks[k - 1].pos in NOMINAL | {CODE} | {"ADJ"}:
                        k -= 1
                    return " ".join(x.lower for x in toks[k:i]), text
                # "roadmap for the recipe app", "plan for X"
                if (
                    t.lemma in self.project_nouns
                    and i + 1 < len(toks)
                    and toks[i + 1].lower == "for"
                ):
                    name = self._np_name(toks, i + 2)
                    if name:
                        return name, text
                # "want to build X", "planning to renovate X"
                for words in self.intents:
                    n = len(words)
                    if all(
                        i + k < len(toks) and toks[i + k].lower == w for k, w in enumerate(words)
                    ):
                        j = i + n
                        verb = toks[j].lemma if j < len(toks) else ""
                        if verb in self.project_verbs:
                            name = self._np_name(toks, j + 1)
                            if name:
                                return name, text
                # "we're making a podcast", "are organizing a hackathon"
                if (
                    t.pos == VERB
                    and t.inflected == "ing"
                    and t.lemma in self.project_verbs
                    and i > 0
                    and toks[i - 1].pos == AUX
                ):
                    name = self._np_name(toks, i + 1)
                    if name:
                        return name, text
        return "", ""

    def _np_name(self, toks: list[Token], k: int) -> str:
        end = self.reader._np_end(toks, k, len(toks), allow_of=False)
        if end <= k:
            return ""
        arg = self.reader._np(toks, k, end)
        if not arg.name or arg.head in self.time_words:
            return ""
        return arg.name
