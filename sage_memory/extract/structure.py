"""The structure extractor: general phrase structure plus a relation lexicon kept as data.

For each sentence of a memory it

1. tags words with lemmas and parts of speech (:mod:`.chunk`; code identifiers stay whole);
2. drops what states no fact: questions, licence and docstring boilerplate, hypotheticals the
   speaker rejects;
3. finds the phrasings of the lexicon (:mod:`.lexicon`, ``data/lexicon.toml``) and reads their
   arguments as noun phrases, tasks or clauses (:mod:`.clauses`, :mod:`.args`);
4. resolves pronouns to earlier names (:mod:`.coref`) and short names to tasks it already knows
   ("the backend" -> "build the backend api"), in this memory or among nearby nodes;
5. reads plans across the memory into tasks with PRECEDES and CONTAINS_TASK (:mod:`.plan`).

Agent action logs ("The user asked ... I loaded it with pandas.read_csv ...") are still read by
the pattern extractor of :mod:`.rules`, which this extractor calls for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import display_key as name_key
from sage_memory.entities.names import display_name, merge_aliases, strip_private
from sage_memory.entities.resolution import DEFAULT_LABEL
from sage_memory.extract.argtypes import (
    MARGIN,
    is_condition,
    is_instrument,
    is_occupation,
    is_type,
    type_scores,
)
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.chunk import prime, tokenize
from sage_memory.extract.clauses import Match, Matcher, settle
from sage_memory.extract.coref import Antecedents
from sage_memory.extract.fields import listed_allergies
from sage_memory.extract.fronted import close_fronted
from sage_memory.extract.lexicon import POS, Lexicon, default_lexicon
from sage_memory.extract.machine import log_record, opens_code
from sage_memory.extract.named import Named, named_things, speaker_label
from sage_memory.extract.phrase import CLAUSE, NP, PRONOUN, TASK, Arg, _depends_on
from sage_memory.extract.plan import PlanReader
from sage_memory.extract.text import split_sentences
from sage_memory.extract.timeparse import resolve_times
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
    POSS,
    PREP,
    PRON,
    PROPN,
    PUNCT,
    VERB,
    Token,
    base_form,
    is_superlative,
    third_person,
    verb_known,
    word_senses,
)
from sage_memory.types import EdgeSpec, GraphDelta, Memory, MemoryKind, Node, NodeSpec, as_utc

MAX_CHARS = 20_000
_MAX_SENTENCE = 600
_PERSON_RELATIONS = frozenset(
    {"LIVES_IN", "WORKS_AT", "HAS_ROLE", "PREFERS", "DISLIKES", "ALLERGIC_TO", "MEMBER_OF"}
)
#: Relations whose loose phrasings still make an edge: their source must be a person (and the
#: target a place, a group...), which keeps a loose phrasing honest.
_WEAK_OK = frozenset({"LIVES_IN", "OWNS", "PREFERS", "DISLIKES", "ALLERGIC_TO", "MEMBER_OF"})
#: Particles a phrasal verb may place after its object ("boil the sap down", "put it away").
_SPLIT_PARTICLES = frozenset({"up", "out", "off", "back", "down", "over", "away"})
#: Words that open a clause stating a condition or a time, not a fact of its own.
_SUBORDINATORS = frozenset(
    {"once", "when", "whenever", "before", "after", "until", "till", "if", "unless", "being"}
)
#: Subordinators of more than one word, or a participle, that open a condition or a time in
#: the same way ("picks up as soon as the schema is signed off": the schema is not signed off
#: yet). Quirk et al. 1985, 14.12, complex subordinators of time and condition; "now that"
#: states its clause as a fact and is left out.
_COMPLEX_SUBORDINATORS = (
    ("as", "soon", "as"),
    ("as", "long", "as"),
    ("so", "long", "as"),
    ("in", "case"),
    ("by", "the", "time"),
    ("provided",),
    ("providing",),
)
#: Families whose lexicon has passive phrasings of their own ("be caused by", "be blocked by").
#: Words that deny a phrasing by themselves ("did nothing for", "never helped").
_DENYING_WORDS = frozenset({"not", "n't", "never", "nothing", "no", "none", "nobody"})
#: Punctuation that breaks a clause off what came before ("blocked — the order is late").
_BREAKS = frozenset({"—", "–", "-", "--", ":", ";"})
_VOICED = frozenset({"BLOCKED_BY", "CAUSES", "SOLVED_BY", "DEPENDS_ON", "REQUIRES", "PRECEDES"})
#: Relations whose ends may be events named by a clause's subject and verb (:meth:`_event`).
_EVENT_ENDS = frozenset({"CAUSES", "SOLVED_BY"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
_AUX_DEPS = frozenset({"aux", "auxpass"})  # "got pushed": "got" is no AUX to the tagger
#: A verb's dependents that make its clause more than an event of its subject: an object, a
#: complement, a negation, a second predicate.
_NOT_AN_EVENT = frozenset(
    {"dobj", "dative", "attr", "acomp", "oprd", "ccomp", "xcomp", "neg", "conj", "csubj"}
)
_TASKISH = frozenset({"HAS_STATUS", "USES", "REQUIRES", "DEPENDS_ON", "BLOCKED_BY", "PRECEDES"})
#: Ends of an edge that name an act, a thing or an event, never a person (docs/relations.md: a
#: problem is solved by a change, a cause brings its effect about, an order is of tasks): "the
#: landlord fixed the boiler" or "Mum sorts out the hotel" name who acted, not the fix or a step.
_NO_PERSON_ENDS: dict[str, tuple[bool, bool]] = {
    "SOLVED_BY": (False, True),
    "CAUSES": (True, False),
    "PRECEDES": (True, True),
}
#: (source label, target label) a relation gives to names without stronger evidence.
_ROLES: dict[str, tuple[str, str]] = {
    "PRECEDES": ("Task", "Task"),
    "BLOCKED_BY": ("Task", "Task"),
    "DEPENDS_ON": ("Task", "Resource"),
    "REQUIRES": ("Task", "Resource"),
    "USES": ("Entity", "Tool"),
    "IS_A": ("Concept", "Concept"),
    "PART_OF": ("Entity", "Entity"),
    "CAUSES": ("Concept", "Event"),
    "SOLVED_BY": ("Error", "Task"),
    "PREFERS": ("Person", "Preference"),
    "DISLIKES": ("Person", "Preference"),
    "ALLERGIC_TO": ("Person", "Preference"),
    "RECOMMENDS": ("Person", "Task"),
    "LIVES_IN": ("Person", "Place"),
    "WORKS_AT": ("Person", "Organization"),
    "HAS_ROLE": ("Person", "Concept"),
    "HAS_STATUS": ("Task", "Value"),
    "OWNS": ("Person", "Entity"),
    "MEMBER_OF": ("Person", "Organization"),
    "CONTAINS_TASK": ("Project", "Task"),
    "RELATED_TO": ("Tool", "Concept"),
}
#: A clock time written as one word ("7am", "10:30pm").
_CLOCK = re.compile(r"^\d{1,2}(?::\d{2})?(?:am|pm|h)$")
#: Tokens that end a clause.
_CLAUSE_STOPS = frozenset({",", ";", ".", "!", "?", "—", "-"})
#: words of a time phrase besides its time words and numbers ("on the 12th", "as of last night")
_TIME_GLUE = frozenset(
    [
        "on",
        "at",
        "in",
        "to",
        "till",
        "until",
        "for",
        "as",
        "of",
        "last",
        "this",
        "next",
        "the",
        "early",
        "late",
        "around",
        "about",
        "by",
    ]
)
#: Restrictive focusing adverbs that give what holds after a denial ("not X, just Y").
_CORRECTIONS = frozenset({"just", "only", "merely", "simply", "rather", "instead"})
_FOCUS_STOPS = _CORRECTIONS | {"not", "never", "n't"}
#: Words that may open an elliptic clause ("; but the gearbox is", ", whereas UDP isn't").
_ELLIPSIS_OPENERS = frozenset({"and", "but", "whereas", "while", "though", "although", "yet"})
#: Words that may close one ("the gearbox is too", "nor does X either").
_ELLIPSIS_CODAS = frozenset(
    {"too", "also", "either", "though", "anymore", "now", "as", "well", "any", "more", "still"}
)


def _auxiliary(t: Token) -> bool:
    """An auxiliary or the pro-verb "do" that stands for an elided verb phrase."""
    return t.pos in (AUX, MODAL) or t.lemma in ("do", "be", "have")


#: Relations whose arguments are never tasks (as in :mod:`.clauses`).
_NO_TASK_RELATIONS = frozenset({"LIVES_IN", "WORKS_AT", "HAS_ROLE", "MEMBER_OF", "IS_A"})
_LABEL_RANK = {
    "Person": 9,
    "Place": 8,
    "Organization": 8,
    "Project": 7,
    "Error": 7,
    "Event": 6,
    "Task": 6,
    "Tool": 5,
    "Resource": 5,
    "Preference": 4,
    "Value": 3,
    "Concept": 2,
    "Entity": 1,
}
_ACTION_LOG = re.compile(
    r"(?i)(?:^|[.;!?]\s+)(?:the\s+)?(?:user|customer|client)\s+(?:asked|wanted|requested|needed)"
    r"|(?:^|[,;.]\s*|\band\s+|\bthen\s+)(?:i|we)\s+(?:then\s+|also\s+|first\s+)?(?:loaded|called"
    r"|queried|fetched|ran|invoked|executed|plotted|summed|computed|parsed|issued|looked\s+up)\b"
    r"|^asked\s+to\b"
)


@dataclass(slots=True)
class _Node:
    name: str
    label: str
    aliases: set[str] = field(default_factory=set)
    attributes: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.8
    standalone: bool = False
    mention: bool = False  # a name the memory mentions outside any fact read from it
    evidenced: bool = True  # False: the label is only a relation slot's default


class StructureExtractor:
    """Offline extractor built on phrase structure and a relation lexicon (no model, no network).

    Args:
        config: aliases and single-valued relations are read from it; defaults when None.
        lexicon: a lexicon to use instead of the packaged one (tests, domain vocabularies).
    """

    name = "structure"

    def __init__(self, config: ExtractConfig | None = None, lexicon: Lexicon | None = None) -> None:
        self.config = config if config is not None else ExtractConfig()
        self.aliases = merge_aliases(self.config.aliases)
        self.lexicon = lexicon or default_lexicon()
        self.matcher = Matcher(self.lexicon)
        self.plans = PlanReader(self.lexicon, self.matcher.reader)
        self._log_reader: Any = None

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        """Propose nodes and edges for one memory; never raises (see ``GraphDelta.error``)."""
        try:
            text = strip_private(memory.text or "")[:MAX_CHARS]
            if memory.kind == "experience" or _ACTION_LOG.search(text):
                return self._action_log(memory, context)
            return _Reading(self, memory, context, text).run()
        except Exception as exc:  # the port's contract: odd text must never raise
            return GraphDelta(
                error=f"structure extractor failed: {type(exc).__name__}: {exc}"[:500]
            )

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        """:meth:`extract` for each item, in order; their sentences are parsed first in one
        batch of the parser (:func:`.chunk.prime`)."""
        # a batch that fails is parsed again, one memory at a time, by extract()
        with contextlib.suppress(Exception):
            prime(
                [
                    piece
                    for memory, _ in items
                    for piece in _pieces(strip_private(memory.text or "")[:MAX_CHARS])
                ]
            )
        return [self.extract(memory, context) for memory, context in items]

    def _action_log(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        if self._log_reader is None:
            from sage_memory.extract.rules import PatternExtractor

            self._log_reader = PatternExtractor(self.config)
        delta: GraphDelta = self._log_reader.extract(memory, context)
        return delta


def _pieces(text: str) -> list[str]:
    """The sentences of a text, each cut to pieces of at most ``_MAX_SENTENCE`` characters."""
    return [
        seg.text[start : start + _MAX_SENTENCE]
        for seg in split_sentences(text)
        for start in range(0, len(seg.text), _MAX_SENTENCE)
    ]


#: The first person singular: its speaker is one person.
_SINGULAR = frozenset({"i", "me", "my", "mine", "myself"})


def _passive_act(toks: list[Token], literals: frozenset[int]) -> bool:
    """A participle of the phrasing that the parse reads as a passive with its instrument
    or agent ("was done with a sander", "was finished by the contractor")."""
    for k in literals:
        if toks[k].tag != "VBN":
            continue
        deps = {(t.dep, t.lower) for t in toks if t.head == k}
        if any(d == "auxpass" for d, _ in deps) and any(
            d in ("agent", "prep") and w in ("with", "by", "using", "via") for d, w in deps
        ):
            return True
    return False


@lru_cache(maxsize=4096)
def _content(name: str) -> frozenset[str]:
    """Lemmas of the content words of a name (for matching "the backend" to a task)."""
    lex = default_lexicon()
    stop = lex.words("determiners") | lex.words("possessives") | lex.words("prepositions")
    out = set()
    for t in tokenize(name):
        if t.pos in (PUNCT,) or t.lower in stop or t.pos in (AUX, MODAL):
            continue
        out.add(t.lemma)
    return frozenset(out)


def _ends_subordinator(toks: list[Token], k: int) -> bool:
    """Whether the words up to ``toks[k]`` are a subordinator of several words ("as soon
    as", "in case"; :data:`_COMPLEX_SUBORDINATORS`)."""
    for words in _COMPLEX_SUBORDINATORS:
        lo = k - len(words) + 1
        if lo >= 0 and tuple(t.lower for t in toks[lo : k + 1]) == words:
            return True
    return False


class _Reading:
    """The nodes and edges of one memory, built sentence by sentence."""

    def __init__(
        self, ex: StructureExtractor, memory: Memory, context: ExtractionContext, text: str
    ) -> None:
        self.ex, self.memory, self.text = ex, memory, text
        self.context = context
        self.lex = ex.lexicon
        #: "Jon: I lost my job": the turn's speaker, who its first person is. The label stays
        #: in the parsed text: "Rafael: got a job at X" reads it as the subject of a turn that
        #: drops its own, and "Northgate: frame the walls, then ..." as a task list's heading.
        self.speaker = speaker_label(text, self.lex)[0]
        self.anchor = as_utc(memory.timestamp)
        self.nodes: dict[str, _Node] = {}
        self.edges: dict[tuple[str, str, str, bool], EdgeSpec] = {}
        self.coref = Antecedents(user=self._user_name(), speaker=self.speaker)
        self.known_tasks: list[str] = [
            n.name for n in list(context.nearby_nodes)[:500] if n.label in ("Task", "Step")
        ]
        self.event_time: datetime | None = None
        self.sentences: list[tuple[str, list[Token]]] = []
        self.named: list[Named] = []  # names the sentences put in an argument position
        #: the last sentence read and the facts it stated (an elliptic clause restates them)
        self.facts: tuple[list[Token], list[Match]] = ([], [])
        #: the facts of the sentence before, for a step's "it" that refers back across a break
        self.facts_before: tuple[list[Token], list[Match]] = ([], [])
        # where in the current sentence each status edge was said (see _latest_status)
        self.status_at: dict[tuple[str, str, str, bool], int] = {}

    def _user_name(self) -> str:
        meta = self.memory.metadata if isinstance(self.memory.metadata, dict) else {}
        for key in ("user_name", "speaker", "name"):
            value = meta.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return self.memory.scope.user_id or "user"

    def _speaker_label(self) -> str:
        """A speaker who says "I" is a person; one who only says "we" ("Northgate: we frame
        the walls") may be a team or a firm, so its kind is left open."""
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", self.text)}
        return "Person" if words & _SINGULAR else "Entity"

    # --- driver -------------------------------------------------------------------------

    def run(self) -> GraphDelta:
        if not self.text.strip():
            return GraphDelta(kind=self.memory.kind, salience=0.1)
        for piece in _pieces(self.text):
            toks = close_fronted(tokenize(self.lex.respell(piece), self.lex), self.lex)
            self.sentences.append((piece, toks))
        self._plan()  # first, so later sentences can name a planned task by a short name
        previous: tuple[str, list[Token]] | None = None
        in_code = False  # past a code definition or a docstring opening: its documentation
        for sentence, toks in self.sentences:
            in_code = in_code or opens_code(sentence, self.lex)
            if in_code or log_record(sentence, self.lex):
                previous = None
                continue
            self._sentence(sentence, toks)
            if previous is not None:
                self._corrected_cause(previous, (sentence, toks))
                answered = self._answered(previous[1], toks)
                if answered:
                    self._sentence(f"{previous[0]} {sentence}", tokenize(answered, self.lex))
            previous = (sentence, toks)
        self._listed_allergies()
        self._add_named()
        if self.speaker and (key := self._node(self.speaker, self._speaker_label())):
            # the memory mentions who said it, even when no fact about them was read
            self.nodes[key].mention = True
        return self._delta()

    def _answered(self, question: list[Token], answer: list[Token]) -> str:
        """ "Where does Sam work? Acme." states that Sam works in Acme: a wh-question and the
        bare noun phrase that answers it, read as the statement they make together ("" when
        the pair is not one)."""
        q = _drop_prompt(question)
        a = _drop_prompt(answer)
        if len(q) < 3 or q[-1].lower != "?" or q[0].lower not in self.lex.words("question_words"):
            return ""
        cut = next((k for k, t in enumerate(a) if t.pos == PUNCT), len(a))
        reply = a[:cut]
        if not 1 <= len(reply) <= 4 or any(
            t.pos in (AUX, MODAL) or (t.pos == VERB and not t.capitalized) for t in reply
        ):
            return ""  # an answer is a bare noun phrase ("Acme.", "Green tea.")
        wh, aux, rest = q[0].lower, q[1].lower, q[2:-1]
        reader = self.ex.matcher.reader
        rest = rest[: next((k for k in range(len(rest)) if reader.is_time(rest, k)), len(rest))]
        while rest and rest[-1].pos == "DET":
            rest = rest[:-1]  # "these" of "these days"
        answer_text = " ".join(t.text for t in reply)
        if aux in ("'s", "is", "are", "was", "were"):  # "where's Abebe?": where they live
            subject = " ".join(t.text for t in rest)
            return f"{subject} lives in {answer_text}" if wh == "where" and subject else ""
        if aux not in ("do", "does", "did"):
            return ""
        verb = len(rest) - 1
        while verb > 0 and rest[verb].pos == PREP:
            verb -= 1  # "who does Mia work for": the verb before its preposition
        if verb < 1 or not verb_known(base_form(rest[verb].lower)):
            return ""
        subject = " ".join(t.text for t in rest[:verb])
        tail = "".join(" " + t.text for t in rest[verb + 1 :])
        place = " in" if wh == "where" and not tail else ""
        return f"{subject} {third_person(base_form(rest[verb].lower))}{tail}{place} {answer_text}"

    def _states_nothing(self, sentence: str, toks: list[Token]) -> bool:
        """Questions, boilerplate and rejected hypotheticals assert no fact."""
        words = [t.lower for t in toks]
        if not words:
            return True
        if sentence.rstrip().endswith("?"):
            return True
        first = toks[0]
        if (
            first.lower in self.lex.words("question_words")
            and len(toks) > 2
            and (toks[1].pos in (AUX, MODAL))
        ):
            return True
        if first.pos in (AUX, MODAL) and len(toks) > 2 and toks[1].pos in ("PRON", "DET", PROPN):
            return True  # "does the api need redis" without a question mark
        if (
            len(toks) > 2
            and first.lower == "this"
            and toks[1].lower in self.lex.words("code_units")
        ):
            return True  # "This function is a helper": a docstring about its own unit
        boiler = self.lex.words("boilerplate")
        if sum(w in boiler for w in words) >= 2 or (
            sum(1 for t in toks if t.text.isupper() and len(t.text) > 2) >= 5
        ):
            return True
        joined = " ".join(words)
        return bool(
            re.search(
                r"\b(?:decided against|decided not to|changed (?:my|our) mind|ruled out|no way)\b"
                r"|\b(?:would|could|might) have\b|\bwere to\b|\bif only\b|\bwhat if\b"
                r"|\b(?:wonder|wondering|unsure|not sure) (?:whether|if)\b",
                joined,
            )
        )

    def _sentence(self, sentence: str, toks: list[Token]) -> None:
        if self._states_nothing(sentence, toks):
            self._topic_question(sentence, toks)
            return
        times = resolve_times(sentence, self.anchor)
        when = times[0].value if times else None
        if self.event_time is None and when is not None:
            self.event_time = when
        # a name that opens a sentence before its verb is a person pronouns may refer to
        if len(toks) > 1 and toks[0].pos == PROPN and toks[1].pos in (VERB, AUX, MODAL, "NEG"):
            self.coref.saw_person(toks[0].lower)
        self._subject_antecedent(toks)
        previous, self.facts = self.facts, (toks, [])
        self.facts_before = previous
        restated = [e for m in previous[1] if (e := self._elide(m, previous[0], toks, 0))]
        for m in restated:  # "The blade is part of the rotor; the gearbox is too."
            self._apply(m, previous[0], sentence, when)
        if restated:
            return
        raw = self.ex.matcher.raw_matches(toks)
        readable = [
            m
            for m in raw
            if self.ex.matcher.read_arguments(m, toks)
            and self._reattach(m, toks)
            and self._fits(m, toks)
        ]
        kept = settle(readable, toks)
        if self.ex.plans.arrow_marks(toks):
            # "fetch -> parse -> load": a chain of steps, which the plan orders; no arrow of
            # it reads "leads to"
            arrows = {t for i, j in self.ex.plans.arrow_marks(toks) for t in range(i, j)}
            kept = [m for m in kept if not (set(m.literals) & arrows)]
        hypothetical = self._hypothetical_spans(toks)
        requests = self._request_spans(toks)
        self.status_at = {}
        for m in kept:
            if self._inside(m, hypothetical) or self._order_over_fact(m, kept, toks):
                continue
            if self._inside(m, requests):
                continue  # "please X before Y": asks the reader, states no order
            if hypothetical and any(
                toks[k].pos == MODAL and toks[k].lemma in ("would", "might", "could")
                for k in range(m.extent[0], min(m.literals))
            ):
                continue  # "if X, we might move to Y": the consequent of a condition
            self._apply(m, toks, sentence, when)
            self.facts[1].append(m)
            self._listed_in_order(m, toks, sentence, when)
            for other in self._alternatives(m, toks):
                self._apply(other, toks, sentence, when)
            former = self._former(m)
            if former is not None:
                self._apply(former, toks, sentence, when)
            elided = self._elided_subject(m, toks)
            if elided is not None and self._fits(elided, toks):
                self._apply(elided, toks, sentence, when)
        self._latest_status()
        if not readable:
            self._code_statement(toks, sentence)
        reader = self.ex.matcher.reader
        # a name inside an "if ..." clause is in a world the sentence does not assert
        self.named.extend(
            n
            for n in named_things(toks, reader)
            if not any(s <= n.at < e for s, e, _ in hypothetical)
        )

    def _subject_antecedent(self, toks: list[Token]) -> None:
        """ "The pantry refit can't go ahead; it's waiting on a quote": a common noun phrase
        that opens a sentence as the subject of its verb is a thing a later "it" may refer
        to, though no phrasing states a fact about it (when no thing was named before)."""
        if self.coref.things:
            return  # a thing named as an argument before is the likelier referent
        k = next((j for j, t in enumerate(toks) if t.pos in (VERB, AUX, MODAL)), 0)
        if k == 0 or any(t.pos in (PUNCT, "SUB", "PRON") for t in toks[:k]):
            return
        args = self.ex.matcher.reader.before(toks, 0, k, clause_ok=False)
        if (
            len(args) == 1
            and args[0].kind == NP
            and not args[0].proper
            and not self._person_like(args[0])
        ):
            self.coref.saw_thing(args[0].name)

    def _topic_question(self, sentence: str, toks: list[Token]) -> None:
        """ "Rust on the bike chain? A rag with oil gets rid of it.": a verbless question
        names the topic that the next sentence's "it" stands for (a topic fragment), though
        it states nothing itself."""
        body = [t for t in toks if t.pos != PUNCT]
        if (
            not sentence.rstrip().endswith("?")
            or not body
            or any(t.pos in (VERB, AUX, MODAL) for t in body)
            or body[0].lower in self.lex.words("question_words")
        ):
            return  # (a verb first is an imperative: "Remember the form?")
        end = next((k for k, t in enumerate(toks) if t.pos == PUNCT), len(toks))
        args = self.ex.matcher.reader.after(toks, 0, end, clause_ok=False)
        if len(args) == 1 and args[0].kind == NP and not args[0].proper:
            self.coref.saw_thing(args[0].name)

    def _alternatives(self, m: Match, toks: list[Token]) -> list[Match]:
        """The alternative a fact rules out (:meth:`_contrast`) and the cause that holds
        after a denied one (:meth:`_actual_cause`)."""
        return [x for x in (self._contrast(m, toks), self._actual_cause(m, toks)) if x]

    def _contrast(self, m: Match, toks: list[Token]) -> Match | None:
        """ "a seed, not a grain", "in R, not Python", "likes jazz but not opera", "part of
        the EU but not of NATO": the alternative a fact rules out is the same fact denied (a
        match of its own, the target replaced, the polarity flipped). A denied fact corrected
        by a focusing adverb ("doesn't need a visa, just a passport") or by "but" states the
        correction: "just", "only" and "but" after a negation introduce what does hold
        (Quirk et al. 1985, 8.116 restrictive focusing; 13.41 "not X but Y")."""
        if len(m.phrase.edges) != 1 or m.phrase.edges[0][2].startswith("="):
            return None
        slot = m.phrase.edges[0][2]
        if m.phrase.relation == "CAUSES":
            # "caused by frost, not by the settlement", "is from a failing driver, not the
            # photocell": the alternative stands beside the end said last, which in a passive
            # or an inverse phrasing is the cause
            slot = max(
                (e for e in (m.phrase.edges[0][0], slot) if m.slots.get(e)),
                key=lambda e: max(x.end for x in m.slots[e]),
                default=slot,
            )
        targets = m.slots.get(slot, [])
        if not targets:
            return None
        k = max(x.end for x in targets)
        while k < len(toks) and toks[k].pos == ADV and toks[k].lower not in _FOCUS_STOPS:
            k += 1  # "with a scale now, not cups"
        if k + 2 < len(toks) and (toks[k].lower, toks[k + 1].pos, toks[k + 2].lower) == (
            ",",
            ADV,
            ",",
        ):
            k += 2  # "part of the allotment, oddly, not a garden": a comment adverb between
        j = k + 1 if k < len(toks) and toks[k].lower == "," else k
        joined = j < len(toks) and toks[j].lower == "but"
        j += joined
        if j == k or j + 1 >= len(toks):
            return None
        if m.negated:
            if not (joined or toks[j].lower in _CORRECTIONS):
                return None
            j += toks[j].lower in _CORRECTIONS
        elif toks[j].lower in ("not", "never"):
            j += 1
        else:
            return None
        # "allergic to latex, not to nickel": the preposition of the target said again
        head = toks[targets[0].start - 1].lower if targets[0].start > 0 else ""
        if j < len(toks) and toks[j].lower == head and head in self.lex.words("prepositions"):
            j += 1
        end = next((i for i in range(j, len(toks)) if toks[i].pos == PUNCT), len(toks))
        if j >= end:
            return None
        alt = self.ex.matcher.reader.after(toks, j, end, clause_ok=False)
        if not alt or any(x.kind != targets[0].kind for x in alt):
            return None
        if (joined or m.negated) and alt[-1].end < end:
            return None  # "..., but we moved on": a clause of its own, no bare alternative
        slots = dict(m.slots)
        slots[slot] = alt
        return dataclasses.replace(m, slots=slots, negated=not m.negated)

    def _listed_allergies(self) -> None:
        """ "Patient: Ana Ruiz. Allergies: penicillin, latex.": each item of a record's allergy
        field is a thing its subject is allergic to (:mod:`.fields`)."""
        for who, item in listed_allergies(self.text, self.lex):
            source = self._node(who, "Person")
            target = self._node(item, "Entity")
            self._edge(source, "ALLERGIC_TO", target, 0.85, self.text, None)

    def _corrected_cause(
        self, previous: tuple[str, list[Token]], current: tuple[str, list[Token]]
    ) -> None:
        """ "The rash wasn't caused by the detergent; it was the wool sweater": the sentence
        splitter cuts at the semicolon, so a denied cause and the correction after it are read
        again as one sentence, and only the correction (:meth:`_actual_cause`) is kept."""
        (before, b_toks), (sentence, toks) = previous, current
        if not any(t.pos == NEG for t in b_toks) or not toks:
            return
        opens_cleft = len(toks) > 2 and toks[0].lower in ("it", "that") and toks[1].lemma == "be"
        body = [t for t in toks if t.pos != PUNCT]
        tail = [t.lower for t in body[-2:]]
        elided = any(t.lemma == "do" for t in body[-2:]) and tail[-1] in (
            "it",
            "that",
            "this",
            *[t.lower for t in body[-1:] if t.lemma == "do"],
        )
        if not (opens_cleft or elided):
            return
        joined = tokenize(self.lex.respell(f"{before.rstrip(' ;.')} ; {sentence}"), self.lex)
        raw = self.ex.matcher.raw_matches(joined)
        readable = [m for m in raw if self.ex.matcher.read_arguments(m, joined)]
        for m in settle(readable, joined):
            actual = self._actual_cause(m, joined)
            if actual is not None:
                self._apply(actual, joined, sentence, None)

    def _actual_cause(self, m: Match, toks: list[Token]) -> Match | None:
        """ "The rash wasn't caused by the detergent; it was the wool sweater", "stress doesn't
        cause ulcers, H. pylori does": a denied cause followed by the one that holds, in a
        cleft ("it was Y") or with the verb elided to "do" ("Y did (it)"): the same effect with
        that cause (Quirk et al. 1985, 18.26 cleft sentences; 12.21 pro-form "do")."""
        if m.phrase.relation != "CAUSES" or not m.negated or m.phrase.edges[0][:1] != ("A",):
            return None
        ends = [x.end for xs in m.slots.values() for x in xs]
        if not ends or not m.slots.get("A"):
            return None
        k = max(ends)
        while k < len(toks) and toks[k].pos == ADV:
            k += 1
        if k >= len(toks) or toks[k].lower not in (",", ";", "-", "—", "–", ":"):
            return None
        j = k + 1
        if j < len(toks) and toks[j].lower == "but":
            j += 1
        end = next((i for i in range(j, len(toks)) if toks[i].pos == PUNCT), len(toks))
        if j + 2 < end and toks[j].lower in ("it", "that") and toks[j + 1].lemma == "be":
            if toks[j + 2].pos == NEG:
                return None  # "it wasn't the ..." denies again
            alt = self.ex.matcher.reader.after(toks, j + 2, end, clause_ok=False)
        else:
            did = next((i for i in range(j + 1, end) if toks[i].lemma == "do"), None)
            rest = toks[did + 1 : end] if did is not None else []
            if did is None or any(t.lower not in ("it", "that", "this") for t in rest):
                return None
            alt = self.ex.matcher.reader.after(toks, j, did, clause_ok=False)
            if alt and alt[-1].end != did:
                return None
        if not alt or any(x.kind not in (NP, TASK) for x in alt):
            return None
        return dataclasses.replace(m, slots={**m.slots, "A": alt}, negated=False)

    @staticmethod
    def _former(m: Match) -> Match | None:
        """ "moved from Leeds to York", "switched from Jira to Linear", "took over from Ana as
        chair": a change of state names the state left after "from" ({X}), which holds no
        more. The phrasing's ``former`` flag says which end {X} stood in before the change;
        the same fact with {X} there is denied (Fillmore 1971, the source of a change)."""
        slot = next((f[7:] for f in m.phrase.flags if f.startswith("former=")), "")
        if not slot or m.negated or not m.slots.get("X") or not m.slots.get(slot):
            return None
        return dataclasses.replace(m, slots={**m.slots, slot: m.slots["X"]}, negated=True)

    def _elided_subject(self, m: Match, toks: list[Token]) -> Match | None:
        """ "X relies on Y, but Z does not", "TCP is a Y, whereas UDP isn't": a clause of only
        a subject and an auxiliary after the fact (verb-phrase ellipsis, Quirk et al. 12.21)
        states the same fact of its own subject, with its own polarity."""
        if not m.literals:
            return None
        hi = max([max(m.literals) + 1, *(a.end for args in m.slots.values() for a in args)])
        if hi >= len(toks) or toks[hi].lower not in (",", "—", "-"):
            return None
        return self._elide(m, toks, toks, hi + 1)

    def _elide(self, m: Match, toks: list[Token], clause: list[Token], c: int) -> Match | None:
        """``m`` (read from ``toks``) stated again of the subject of the elliptic clause that
        starts at ``clause[c]`` ("the gearbox is too", "so are lentils", "rolling back the
        release did"): the subject replaced, the polarity the clause's own. None when the
        clause is not one of a subject and an auxiliary only."""
        lead = [name for name, (s, _) in m.spans.items() if m.literals and s < min(m.literals)]
        if len(lead) != 1 or lead[0] not in m.slots:
            return None
        end = next(
            (j for j in range(c, len(clause)) if clause[j].lower in _CLAUSE_STOPS), len(clause)
        )
        words = [t.lower for t in clause[c:end]]
        while c < end and clause[c].lower in _ELLIPSIS_OPENERS:
            c += 1
        if c >= end:
            return None
        inverted = clause[c].lower in ("so", "nor", "neither")  # "so are lentils"
        if inverted:
            if c + 1 >= end or not _auxiliary(clause[c + 1]):
                return None
            s, e = c + 2, end
            while e > s and clause[e - 1].lower in _ELLIPSIS_CODAS:
                e -= 1
        else:
            if clause[c].lower == "only":
                c += 1  # "only the queue workers do"
            e = end
            while e > c and (
                clause[e - 1].lower in _ELLIPSIS_CODAS
                or clause[e - 1].pos == NEG
                or clause[e - 1].lower == "never"
            ):
                e -= 1
            if e <= c + 1 or not _auxiliary(clause[e - 1]):
                return None
            s, e = c, e - 1
            while e > s and (
                _auxiliary(clause[e - 1])
                or clause[e - 1].pos == NEG
                or clause[e - 1].lower in _ELLIPSIS_CODAS | {"never"}
            ):
                e -= 1  # "Tom never did", "the gearbox also is"
        if e <= s or any(
            (t.pos in (VERB, AUX, MODAL) and t.inflected != "ing") or t.pos == "PRON"
            for t in clause[s:e]
        ):
            return None  # ("it does": a pronoun's fact is the same fact again)
        rel = m.phrase.relation
        alt = self.ex.matcher.reader.after(
            clause, s, e, clause_ok=False, task_ok=rel not in _NO_TASK_RELATIONS
        )
        if not alt or alt[-1].end < e or any(x.kind == CLAUSE for x in alt):
            return None
        negated = inverted and clause[c].lower in ("nor", "neither")
        negated = negated or any(t.pos == NEG for t in clause[c:end]) or "never" in words
        if (
            clause is not toks  # read in a later clause: the guards of _fits see other offsets
            and lead[0] == "A"
            and (rel in _PERSON_RELATIONS or "person_source" in m.phrase.flags)
            and not all(self._person_like(x) for x in alt)
        ):
            return None
        # a phrasing denied by its own words ("did nothing for", "never fixed") is echoed by
        # the auxiliary as the plain predicate: "X did nothing for A, but B did" says B did
        # something for A (Quirk et al. 12.21); a denial in the verb's sense ("used to love")
        # is echoed with it
        denied_by_word = m.phrase.negated and any(
            toks[k].pos == NEG or toks[k].lower in _DENYING_WORDS for k in m.literals
        )
        return dataclasses.replace(
            m,
            slots={**m.slots, lead[0]: alt},
            spans={**m.spans, lead[0]: (s, e)},
            negated=negated if denied_by_word else negated != m.phrase.negated,
        )

    def _listed_in_order(
        self, m: Match, toks: list[Token], sentence: str, when: datetime | None
    ) -> None:
        """ "The plan includes writing ads, screening CVs and interviewing, in that order": tasks
        listed as one argument and then said to be in order precede one another."""
        lowered = " ".join(t.lower for t in toks)
        if not any(f" {p}" in f" {lowered}" for p in self.lex.sequence.get("in_order", ())):
            return
        for args in m.slots.values():
            if len(args) < 2 or any(a.kind != TASK for a in args):
                continue
            keys = [self._end(a, "Task", "PRECEDES") for a in args]
            for a, b in itertools.pairwise(keys):
                self._edge(a, "PRECEDES", b, 0.8, sentence, when)

    def _hypothetical_spans(self, toks: list[Token]) -> list[tuple[int, int, str]]:
        """Spans of "if ..." / "unless ..." clauses (to the next comma): they assert nothing."""
        out = []
        for i, t in enumerate(toks):
            if t.lower in ("if", "unless", "whether", "suppose", "supposing", "imagine"):
                end = next((k for k in range(i + 1, len(toks)) if toks[k].lower == ","), len(toks))
                out.append((i, end, t.lower))
        return out

    def _request_spans(self, toks: list[Token]) -> list[tuple[int, int, str]]:
        """Spans of requests to the reader: a politeness marker opening its clause before a
        verb ("Please open an issue before ...", "kindly sign the form"), to the clause's end.
        An imperative asks for an act and asserts nothing (Quirk et al. 11.24); "please"
        marks it as one, where a bare imperative may also be a recipe step that states an
        order. A proposal opening with "let's" is the same."""
        out = []
        stops = (",", ";", ":", ".", "!", "—", "-")
        for i, t in enumerate(toks[:-1]):
            opens = i == 0 or toks[i - 1].lower in stops or toks[i - 1].pos == CONJ
            nxt = toks[i + 1]
            marker = t.lower in self.lex.words("request_markers") and nxt.pos in (VERB, AUX)
            # "let's circle back after lunch": a proposal (the first-person imperative,
            # Quirk et al. 11.26), not "let it cool", a step that lets something happen
            hortative = t.lower == "let" and nxt.lower in ("'s", "’s", "us")
            if opens and (marker or hortative):
                end = next(
                    (k for k in range(i + 1, len(toks)) if toks[k].lower in stops), len(toks)
                )
                out.append((i, end, t.lower))
        return out

    @staticmethod
    def _inside(m: Match, spans: list[tuple[int, int, str]]) -> bool:
        words = {w for e in m.phrase.elements for w in e.values}
        return any(
            word not in words and all(s <= k < e for k in m.literals) for s, e, word in spans
        )

    def _order_over_fact(self, m: Match, kept: list[Match], toks: list[Token]) -> bool:
        """An order whose argument holds another stated fact ("the coach suggested a warm-up
        before the match"): the fact is what is said, the order only when it happened."""
        if m.phrase.relation not in ("PRECEDES", "CAUSES"):
            return False
        spans = [
            (a.start, a.end)
            for args in m.slots.values()
            for a in args
            if m.phrase.relation == "PRECEDES" or a.kind == CLAUSE
        ]
        return any(
            n is not m
            and n.phrase.relation not in ("PRECEDES", "CONTAINS_TASK", "CAUSES", "HAS_STATUS")
            and self._states_edge(n, toks)
            and any(s <= min(n.literals) and max(n.literals) < e for s, e in spans)
            for n in kept
        )

    # --- constraints ----------------------------------------------------------------------

    def _person_like(self, arg: Arg) -> bool:
        if arg.kind == PRONOUN:
            low = arg.name
            return (
                low in self.lex.words("speaker")
                or low in self.lex.words("person_pronouns")
                or (low in ("my", "our", "his", "her", "their"))
            )
        if arg.code == "userid":
            return True
        head = arg.words[-1] if arg.words else ""
        if len(arg.words) >= 2 and head in self.lex.words("taxon_heads"):
            return False  # "the cactus family": a kind of plant, not someone's family
        if head in self.lex.words("person_nouns") or head in self.lex.words("role_heads"):
            return True
        if arg.words and arg.words[0].rstrip(".") in {
            t.rstrip(".") for t in self.lex.words("titles")
        }:
            return True
        if arg.name in ("user", "customer", "client") or arg.words[:1] in (
            ("user",),
            ("customer",),
        ):
            return True
        if len(arg.words) >= 2 and (
            any(c.isdigit() for c in arg.words[-1]) or len(arg.words[-1]) == 1
        ):
            return False  # "Ward 9", "Annex B": a numbered or lettered thing, nobody's name
        return arg.proper and arg.kind == NP and not arg.code and len(arg.words) <= 3

    def _names_a_person(self, arg: Arg, toks: list[Token]) -> bool:
        """Whether an argument names a person by its words: the speaker, "he"/"she" (or
        "they" that stands for no thing named before), a kin, role or titled noun, or a
        proper name that reads as a person by meaning (a capital alone also names products
        and places: "Redis fixed it" names a fix; a common noun must read as one clearly)."""
        if arg.kind == PRONOUN:
            if arg.name in self.lex.words("speaker"):
                return True
            return arg.name in self.lex.words("person_pronouns") and not self._thing_pronoun(arg)
        if arg.kind not in (NP, TASK) or arg.code:
            return False
        if arg.kind == TASK and arg.start < len(toks) and toks[arg.start].pos == VERB:
            return False  # an act named by its verb; a "task" read from a lone noun may not be
        if self._person_evidence(arg):
            return True
        scores = type_scores(arg.name)
        nearest = bool(scores) and scores[0][0] == "person"
        if arg.proper:
            return nearest
        # a common noun: clearly a person by meaning, or an agent noun nearest to one ("the
        # plumber"; "the timer" is an agent noun by form only)
        return is_type(arg.name, "person") or (nearest and self._role_like(arg))

    def _holds_role(self, m: Match) -> bool:
        """ "X is a Y" says a role when X is a person and Y a role or occupation; a capital alone
        does not make X a person ("Rust is a programming language" is a class)."""
        sources, targets = m.slots.get("A", []), m.slots.get("B", [])
        if not sources or not all(self._person_like(x) for x in sources):
            return False
        named_only = all(
            (x.kind == NP and x.proper and not self._person_evidence(x))
            or (x.kind == PRONOUN and self._thing_pronoun(x))
            for x in sources
        )
        return not named_only or all(self._role_like(y) for y in targets)

    def _thing_pronoun(self, arg: Arg) -> bool:
        """ "they" that stands for things named before ("Spiders ...; they're arachnids")."""
        if arg.name in self.lex.words("speaker"):
            return False
        name = self.coref.resolve(arg.name)
        return bool(name) and name != self.coref.last_person

    def _named_place(self, arg: Arg) -> bool:
        """A proper name with no word of a person that reads as a place by meaning
        (:mod:`.argtypes`): "the valley includes <town>" lists parts, not members."""
        return (
            arg.kind == NP
            and arg.proper
            and not self._person_evidence(arg)
            and is_type(arg.name, "place")
        )

    def _person_evidence(self, arg: Arg) -> bool:
        """Words that say a person, beyond a capital: a kin or role noun, a title, "user"."""
        words = arg.words
        if not words:
            return False
        people = self.lex.words("person_nouns") | self.lex.words("role_heads")
        titles = {t.rstrip(".") for t in self.lex.words("titles")}
        return words[-1] in people or words[0].rstrip(".") in titles or arg.code == "userid"

    def _role_like(self, arg: Arg) -> bool:
        head = arg.words[-1] if arg.words else ""
        if arg.words and "of" in arg.words:
            head = arg.words[arg.words.index("of") - 1]
        if head in self.lex.words("role_heads"):
            return True
        return any(
            head.endswith(s) and len(head) > len(s) + 2 and self._agent_noun(head, s)
            for s in self.lex.words("role_suffixes")
        )

    def _occupation(self, arg: Arg, toks: list[Token]) -> bool:
        """A common noun phrase that reads as a job title by meaning ("sous-chef", "postdoc");
        a name, a pronoun or an act ("contracting") is none."""
        if arg.kind != NP or arg.proper or arg.code or not arg.words or len(arg.words) > 4:
            return False
        last = toks[arg.end - 1] if 0 < arg.end <= len(toks) else None
        if last is None or last.pos not in (NOUN, ADJ) or last.lower.endswith("ing"):
            return False
        return is_occupation(arg.name)

    def _agent_noun(self, word: str, suffix: str) -> bool:
        """ "teacher", "editor", "trainee": an agent ending on a verb's stem names a doer;
        "river" or "collie" only end like one."""
        if suffix not in self.lex.words("verb_agent_suffixes"):
            return True
        people = self.lex.words("person_nouns") | self.lex.words("role_heads")
        if any(word.endswith(p) and len(p) >= 4 for p in people):
            return True  # a compound on a person word: "godmother", "stepfather"
        stem = word[: -len(suffix)]
        stems = {stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem}
        # the verb may close a compound: "goalkeeper" (keep), "caretaker" (take)
        return any(verb_known(x[i:]) for x in stems for i in range(max(1, len(x) - 2)))

    def _workplace(self, arg: Arg, toks: list[Token]) -> bool:
        """ "works at the bakery": a common noun phrase a determiner makes one particular
        establishment, after "at" (the preposition of a place of work, Merriam-Webster at 1),
        that reads as a place or an organization by meaning (:mod:`.argtypes`), is where
        someone is employed though it has no name; "works at night" or "at a desk" is not."""
        if arg.kind != NP or arg.proper or arg.code or arg.start < 2:
            return False
        # a definite determiner or a possessive makes it one known establishment; "a
        # warehouse run by X" leaves the employer to its name (Quirk et al. 5.26, definite
        # reference)
        k = arg.start  # the span may or may not hold its determiner
        while k > 0 and toks[k - 1].pos in ("DET", "POSS"):
            k -= 1
        definite = any(t.lower == "the" or t.pos == "POSS" for t in toks[k : arg.start + 1])
        if not definite or toks[k - 1].lower != "at":
            return False
        scores = dict(type_scores(arg.name))
        here = max(scores.get("place", -1.0), scores.get("group", -1.0))
        other = max((v for k, v in scores.items() if k not in ("place", "group")), default=1.0)
        # by a clear margin: "the front desk" is nearly as much a piece of furniture
        return here - other >= MARGIN and not self._person_like(arg)

    def _named_workplace(self, arg: Arg, toks: list[Token]) -> bool:
        """One establishment ("a bakery", "the garage") whose head says a place of business;
        several ("a few magazines") or one named after it ("a warehouse run by X", "a shop
        called X") leave the employer to that name."""
        if arg.kind != NP or not arg.words or arg.end > len(toks):
            return False
        last = toks[arg.end - 1]
        if last.inflected == "s" or _head_word(arg) not in self.lex.words("workplace_heads"):
            return False
        return not (arg.end < len(toks) and toks[arg.end].pos == VERB)

    def _org_like(self, arg: Arg) -> bool:
        head = _head_word(arg)
        return (arg.proper and not arg.code) or head in self.lex.words("org_heads")

    def _place_like(self, arg: Arg) -> bool:
        head = arg.words[-1] if arg.words else ""
        return (arg.proper and not arg.code) or head in self.lex.words("place_heads")

    def _is_time_arg(self, arg: Arg, toks: list[Token]) -> bool:
        """A time phrase ("2020", "last spring") names no thing a fact is about."""
        span = toks[arg.start : arg.end]
        if not span or arg.kind == PRONOUN:
            return False
        reader = self.ex.matcher.reader
        if reader.is_time(toks, arg.start) >= arg.end - arg.start:
            return True
        times = self.lex.words("time_words")
        return all(
            t.pos in ("NUM", PUNCT, "DET") or t.lower in times or _CLOCK.match(t.lower)
            for t in span
        ) and any(t.pos == "NUM" or t.lower in times or _CLOCK.match(t.lower) for t in span)

    def _aspect_only(self, arg: Arg) -> bool:
        """A task named by an aspectual verb alone ("begin", "proceed") names nothing."""
        return (
            arg.kind == TASK
            and len(arg.words) == 1
            and arg.words[0] in self.lex.words("aspect_verbs")
        )

    def _reattach(self, m: Match, toks: list[Token]) -> bool:
        """ "The translation can't begin until ...": what cannot begin is the subject, when the
        verb is aspectual; a match left with only such a verb as its argument is dropped."""
        self._role_first(m, toks)
        a = m.slots.get("A", [])
        s = m.slots.get("S", [])
        if a and all(self._aspect_only(x) for x in a):
            if s and not any(self._person_like(x) for x in s):
                m.slots["A"] = list(s)
                return True
            return False
        return True

    def _role_first(self, m: Match, toks: list[Token]) -> None:
        """ "Our site foreman, Brannigan, ...", "the treasurer of the club is Mateus": a role
        phrasing whose subject is the role and whose other end a bare name says that the name
        holds the role; the two ends trade places (the parse of a copula or an apposition has
        no direction of its own)."""
        if len(m.phrase.edges) != 1 or m.phrase.edges[0][0] != "A":
            return
        if any(
            t.lower in ("'s", "’s") and a.start <= k <= a.end
            for a in m.slots.get("A", [])
            for k, t in enumerate(toks)
        ):
            return  # "Yuki's editor is Neovim": a thing the person has, or a person; unsure
        target = m.phrase.edges[0][2]
        roles = "copula" in m.phrase.flags or "role_or_kind" in m.phrase.flags
        if m.phrase.relation != "HAS_ROLE" and not roles:
            return
        a, c = m.slots.get("A", []), m.slots.get(target, [])
        if not a or not c:
            return
        # "the treasurer for the club": the role is what stands before its scope
        bare = [_renamed(x, x.name.split(" for ", 1)[0]) if " for " in x.name else x for x in a]
        if all(x.kind == NP and not x.proper and self._role_like(x) for x in bare) and all(
            y.kind == NP and y.proper and not y.code and len(y.words) <= 3 for y in c
        ):
            m.slots["A"], m.slots[target] = list(c), bare

    def _fits(self, m: Match, toks: list[Token]) -> bool:
        """The phrasing's constraints on its arguments (precision before recall).

        Each guard is a method taking (match, tokens, A arguments, B arguments) and saying
        whether the match may stand; a match stands when every guard lets it.
        """
        a = m.slots.get("A", [])
        b = m.slots.get("B", [])
        return all(guard(m, toks, a, b) for guard in self._guards())

    def _guards(self) -> tuple[Callable[[Match, list[Token], list[Arg], list[Arg]], bool], ...]:
        return (
            self._no_time_argument,
            self._people_where_asked,
            self._groups_where_asked,
            self._places_where_asked,
            self._fits_parts,
            self._fits_owners,
            self._fits_tasks_and_tools,
            self._fits_tense,
            self._fits_status_clause,
            self._fits_intransitive,
            self._fits_perfect,
            self._no_object_after_a_break,
            self._reason_has_a_subject,
            self._fits_person_targets,
            self._fits_copula,
            self._fits_intentions,
            self._order_of_acts,
            self._asserted,
            self._fits_status,
            self._fits_verbless,
            self._no_person_blocked,
            self._fronted_subject_has_verb,
            self._no_adverbial_argument,
            self._no_bare_verb_argument,
            self._verb_literal_is_a_verb,
            self._not_almost,
            self._active_is_not_passive,
            self._usage_is_usage,
            self._liking_is_a_verb,
            self._cause_is_a_clause,
            self._compound_is_a_noun,
            self._causative_object,
        )

    def _causative_object(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "A stuck valve made the cistern overflow": a causative's object is a thing whose
        event the cause brings about; "made me cry", "made Ana rewrite it" say what someone
        did or felt, and a plan or a demand ("made us wait") states no cause of a fault."""
        if "causative" not in m.phrase.flags:
            return True
        return bool(b) and all(
            x.kind == NP and not self._person_like(x) and not self._names_a_person(x, toks)
            for x in b
        )

    @staticmethod
    def _compound_is_a_noun(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "a peanut allergy": the target of a ``compound_target`` phrasing is the noun that
        premodifies the phrasing's head noun, so its span holds no verb ("Oren's son has a
        sesame allergy" is no possessive of "son has a sesame")."""
        if "compound_target" not in m.phrase.flags or not m.literals:
            return True
        head = max(m.literals)
        return all(
            x.kind == NP
            and x.start < head
            and all(t.pos not in (VERB, AUX, MODAL) for t in toks[x.start : head])
            for x in b
        )

    @staticmethod
    def _cause_is_a_clause(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "since" and "so" state a cause only with a clause ("since the pump broke, ..."):
        "since" before a noun phrase is a time ("since the move, we have been happier"),
        Quirk et al. 14.12 (the phrasings flagged ``clause_cause``)."""
        return "clause_cause" not in m.phrase.flags or all(x.kind == CLAUSE for x in a)

    def _usage_is_usage(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "used to live" is a habit, not use; "is staying in" a progressive, not a passive;
        "anything with sweetener" attaches "with" to the pronoun, not to the verb."""
        if m.phrase.relation != "USES" or not m.literals:
            return True
        if "proper_target" in m.phrase.flags and not all(x.proper for x in b):
            return False  # "we're on <an app>" uses it; "I'm on the phone" is an activity
        lo, hi = min(m.literals), max(m.literals)
        if toks[lo].lemma == "use" and lo + 1 < len(toks) and toks[lo + 1].lower == "to":
            return False
        if " be <verb>" in m.phrase.pattern and any(
            toks[k].pos == VERB and toks[k].inflected == "ing" and toks[k].lemma != "use"
            for k in m.literals
        ):
            return False  # ("trained using X": "using" is the instrument's own word)
        if "<verb>" in m.phrase.pattern and self._prep_of_later_verb(m, toks):
            return False
        if toks[hi].pos == PREP and self.ex.matcher.status_at(toks, hi):
            return False  # "the plan in progress", "the move on hold": a status, no instrument
        before_prep = toks[hi - 1] if hi > 0 else None
        if 0 <= toks[hi].head < len(toks) and toks[hi].pos == PREP:
            # the parse says what the preposition attaches to: "builds everything with X"
            # (the verb) or "anything with sweetener" (the pronoun)
            return toks[hi].head != hi - 1 or before_prep is None or before_prep.pos != "PRON"
        return not (
            before_prep is not None
            and toks[hi].pos == PREP
            and before_prep.pos == "PRON"
            and before_prep.lower not in self.lex.words("speaker")
            and before_prep.lower not in self.lex.words("thing_pronouns")
        )

    @staticmethod
    def _liking_is_a_verb(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "Gouda, like Edam, is ...": "like" set off by a comma and tagged a preposition
        compares, it states no liking."""
        if m.phrase.relation not in ("PREFERS", "DISLIKES"):
            return True
        return not any(
            toks[k].lower == "like" and toks[k].pos == PREP and k and toks[k - 1].lower == ","
            for k in m.literals
        )

    @staticmethod
    def _not_almost(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "We almost bought a boat": "almost" / "nearly" right before a past verb says the
        event did not happen (Merriam-Webster, almost: "very nearly but not exactly")."""
        k = min(m.literals) if m.literals else 0
        return not (
            k > 0
            and toks[k - 1].lower in ("almost", "nearly")
            and toks[k].pos == VERB
            and (toks[k].inflected == "ed" or toks[k].tag in ("VBD", "VBN"))
        )

    @staticmethod
    def _prep_of_later_verb(m: Match, toks: list[Token]) -> bool:
        """ "I'll do my best to help with X": the parse attaches the phrasing's preposition to
        a verb after the phrasing's own verb, so the adjunct belongs to that verb's clause."""
        verbs = [k for k in m.literals if toks[k].pos == VERB]
        if not verbs:
            return False
        return any(
            toks[k].pos == PREP
            and verbs[0] < toks[k].head < len(toks)
            and toks[k].head not in m.literals
            and toks[toks[k].head].pos == VERB
            for k in m.literals
        )

    @staticmethod
    def _active_is_not_passive(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "was delayed due to fog" is no "B delays A": an active phrasing of a family whose
        passive is its own phrasing does not match a participle after "be"."""
        if m.phrase.relation not in _VOICED or " be " in f" {m.phrase.pattern} " or not m.literals:
            return True
        k = min(m.literals) - 1
        while k >= 0 and toks[k].pos in ("ADV", "NEG"):
            k -= 1
        verb = toks[min(m.literals)]
        return not (k >= 0 and toks[k].lemma in ("be", "get") and verb.inflected == "ed")

    @staticmethod
    def _verb_literal_is_a_verb(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "{A} run on {B}" does not match "her runs on Strava": the word after the subject
        slot must be used as a verb, not as a noun after a determiner or possessive."""
        if not m.phrase.pattern.startswith("{A} ") or not m.literals:
            return True
        k = min(m.literals)
        # a plural noun right after a determiner or possessive cannot be a third-person verb
        return not (
            toks[k].pos == NOUN
            and toks[k].inflected == "s"
            and k > 0
            and toks[k - 1].pos in ("DET", "POSS")
        )

    def _no_adverbial_argument(
        self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]
    ) -> bool:
        """ "there was a leak", "that in turn waits on ...": an expletive or a short
        prepositional adverbial read as an argument names no thing; nor does a greeting or
        an interjection ("hi all, once we sign ...", "lol we did the dry run before ...")."""
        # (a greeting that is also a time word, "morning", may name the time)
        asides = self.lex.words("interjections") | (
            self.lex.words("greetings") - self.lex.words("time_words")
        )
        for x in a + b:
            if x.words and x.words[0] in self.lex.words("expletives") and len(x.words) == 1:
                return False
            if x.kind != PRONOUN and x.words and all(w in asides for w in x.words):
                return False
            if x.kind == NP and x.end - x.start <= 2 and toks[x.start].pos == "PREP":
                return False
        return True

    @staticmethod
    def _no_bare_verb_argument(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "doesn't need to happen", "we talked about X, then ...": a lone finite or bare verb
        read as an argument (the parse gives it no object or complement) names no task; a
        gerund ("hates cooking") or a verb with its object ("restart the pod") does."""
        for x in a + b:
            if x.end - x.start != 1 or x.kind == PRONOUN:
                continue
            if x.kind == NP and x.start and toks[x.start - 1].lower == ":":
                continue  # "three packages: react, ...": an item the colon lists is a name
            t = toks[x.start]
            if t.pos != VERB or t.inflected == "ing" or t.head < 0:
                continue
            if not any(
                o.head == x.start and o.dep in ("dobj", "xcomp", "ccomp", "prt", "attr", "dative")
                for o in toks
            ):
                return False
        return True

    @staticmethod
    def _fronted_subject_has_verb(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "Based in Lisbon, Ana works ...": the subject after a fronted phrase is followed by
        its own verb; "lives in Springfield, Illinois" has none, Illinois qualifies the place."""
        if "A" not in m.spans or "B" not in m.spans or not a or any(x.kind != NP for x in a):
            return True  # an imperative ("before X, sand the boards") is its own verb
        (a_start, _), (_, b_end) = m.spans["A"], m.spans["B"]
        if a_start < b_end or a_start == 0 or toks[a_start - 1].lower != ",":
            return True
        k = max(x.end for x in a)
        while k < len(toks) and toks[k].pos == "ADV":
            k += 1
        return k < len(toks) and toks[k].pos in (VERB, AUX, MODAL, "NEG")

    def _no_person_blocked(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """A person is not what is blocked or dependent: their task is ("Kai can't start physio
        until ...": start physio), which a phrasing with the task as its argument reads."""
        if m.phrase.relation not in ("BLOCKED_BY", "DEPENDS_ON"):
            return True
        pronouns = self.lex.words("speaker") | self.lex.words("person_pronouns")
        doer = "<verb>" in m.phrase.pattern
        return not any(
            (x.kind == PRONOUN and x.name in pronouns) or (doer and self._person_like(x)) for x in a
        )

    def _asserted(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """A fact said only to be possible ("we might switch to Rust", "in theory the pump
        should fix it") is not stated; advice keeps its modal ("you could try ice")."""
        if m.phrase.relation == "RECOMMENDS" or not m.literals:
            return True
        lo = min(m.literals)
        c_lo = lo
        while c_lo > 0 and toks[c_lo - 1].lower not in _CLAUSE_STOPS:
            c_lo -= 1
        possible = self.lex.words("possibility_modals")
        for k in range(c_lo, lo):
            if toks[k].lower in possible and not (k + 1 < len(toks) and toks[k + 1].pos == NEG):
                return False
        sentence = " " + " ".join(t.lower for t in toks) + " "
        return not any(f" {w} " in sentence for w in self.lex.words("untested"))

    def _order_of_acts(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """What comes before or after in an order is an act: not a recurring occasion ("after
        every run"), nor the one who advises it or their saying ("the guide suggested we
        start before dawn": the guide is no step)."""
        if m.phrase.relation != "PRECEDES" or not m.literals:
            return True
        # "X comes first, and after that the drill": "after that" points back to the step
        # before it (a sequence marker, as "then"); the drill follows X, it does not precede
        # it. A demonstrative that heads a noun ("after that meeting") is no pointer.
        for k in m.literals:
            nxt = toks[k + 1 : k + 3]
            if (
                toks[k].lower in ("after", "before")
                and nxt
                and nxt[0].lower in ("that", "this")
                and (len(nxt) == 1 or nxt[1].pos in (DET, POSS, PRON, PUNCT, ADV))
            ):
                return False
        recurrence = self.lex.words("recurrence")
        saying = self.lex.words("saying_verbs")
        said = [k for k, t in enumerate(toks) if t.pos == VERB and t.lemma in saying]
        for x in a + b:
            if x.start < len(toks) and toks[x.start].lower in recurrence:
                return False
            for k in said:
                if x.start <= k < x.end:
                    return False  # "tell Carla" is no step
                if x.end <= k and all(
                    toks[j].pos in (AUX, MODAL, ADV, NEG, "POSS") for j in range(x.end, k)
                ):
                    return False  # the one who says it
        return True

    def _no_time_argument(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        # "based in Quito since 2019": 2019 causes nothing
        return m.phrase.relation == "HAS_STATUS" or not any(
            self._is_time_arg(x, toks) for x in a + b
        )

    def _people_where_asked(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        f, rel = m.phrase.flags, m.phrase.relation
        if (rel in _PERSON_RELATIONS or "person_source" in f) and (
            not a or not all(self._person_like(x) for x in a)
        ):
            return False
        if (
            "person_target" in f
            and a
            and not all(self._person_like(x) or self._org_like(x) for x in a)
        ):
            return False
        if "thing_fix" in f and any(x.kind == PRONOUN or self._person_like(x) for x in b):
            return False  # "Ana got rid of her van": a possession let go, no fix
        if "problem_source" in f and any(self._person_like(x) for x in a):
            return False  # "the hikers were rescued by ...", "she was treated with ...":
            # a person helped, not a problem fixed
        if "speaker_or_person" in f:
            s = m.slots.get("S", [])
            if not s or not all(self._person_like(x) for x in s):
                return False
        if "role_slot=C" in f:
            c = m.slots.get("C", [])
            # a title read by meaning only where the slot holds the role alone: "a <C> at <B>"
            # also says an employer, which a wider reading of C would claim ("best man at the
            # wedding")
            by_meaning = not m.slots.get("B")
            if not c or not all(
                self._role_like(x) or (by_meaning and self._occupation(x, toks)) for x in c
            ):
                return False
        return not (
            "agent_source" in f
            and not all(
                self._person_like(x)
                or self._org_like(x)
                or (x.kind == NP and self._role_like(x))  # "our accountant", "the editor"
                or (x.words and x.words[-1] in self.lex.words("org_heads"))
                for x in a
            )
        )

    def _groups_where_asked(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        f = m.phrase.flags
        groups = self.lex.words("group_heads")
        # "works for X", "teaches at X": a verb of work with the preposition of an employer
        # names whom one works for, even when X also reads as a place ("at <school>") or
        # heads a group ("for the council"); "left Lisbon", "is with the choir" do not
        employer = "org_only" in f and self._employer_preposition(m, toks)
        if "org_only" in f and m.phrase.weak and b and all(self._tool_typed(x, toks) for x in b):
            return False  # "we're on <an app> now": a tool in use, no employer
        if (
            "org_only" in f
            and b
            and not all(
                (
                    (self._org_like(x) and (employer or not self._named_place(x)))
                    or self._workplace(x, toks)
                    or (employer and self._named_workplace(x, toks))
                    or (x.possessor[:1].isupper() and _head_word(x) in self.lex.words("unit_heads"))
                )
                and (employer or (x.words[-1] if x.words else "") not in groups)
                for x in b
            )
        ):
            return False
        return not (
            "group_only" in f
            and b
            and not all(
                (x.words[-1] if x.words else "") in groups
                or x.head in groups
                or ("group_or_common" in f and not x.proper and not self._person_like(x))
                for x in b
            )
        )

    def _employer_preposition(self, m: Match, toks: list[Token]) -> bool:
        """Whether the match's object follows a preposition of employment ("for": in the
        service of, Merriam-Webster for 1c; "at": the place of one's work) after a verb of
        work, not after "be" ("has been at the club for years" may be a member's tenure)."""
        lits = sorted(k for k in m.literals if 0 <= k < len(toks))
        if not lits or any(toks[k].lemma == "be" for k in lits):
            return False
        b0 = m.spans["B"][0] if "B" in m.spans else -1
        preps = [toks[k] for k in lits if k < b0 and toks[k].pos == PREP]
        return bool(preps) and preps[-1].lower in self.lex.words("employer_prepositions")

    def _places_where_asked(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        if "place_only" in m.phrase.flags and b and not all(self._place_like(x) for x in b):
            return False
        if "named_place" in m.phrase.flags and not (b and all(self._named_place(x) for x in b)):
            return False  # a verb said of employers and homes alike ("leave"): a place only
        return not (m.phrase.relation == "LIVES_IN" and b and not all(x.kind == NP for x in b))

    def _fits_copula(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "X is a Y": Y must be a noun phrase introduced as a class (or a role, a part)."""
        if "copula" not in m.phrase.flags:
            return True
        if not b or not a or any(x.kind != NP for x in b) or any(x.kind == CLAUSE for x in a):
            return False
        if any(x.words and x.words[-1] in self.lex.words("possessive_pronouns") for x in b):
            return False
        if any(
            x.words and x.words[-1] in self.lex.words("evaluative_nouns") and len(x.words) <= 2
            for x in b
        ):
            return False  # "the form is a real pain": an opinion, no class
        at, _ = m.spans["B"]
        while at < len(toks) - 1 and toks[at].pos in ("ADV", "NEG"):
            at += 1
        det = toks[at].lower if at < len(toks) else ""
        plural = all(
            x.words and toks[x.end - 1].inflected == "s" and toks[x.end - 1].pos == NOUN for x in b
        )
        person = all(self._person_like(x) for x in a)
        relational = (
            {w for x in b for w in x.words[: x.words.index("of")]}
            if all("of" in x.words for x in b)
            else set()
        )
        heads = self.lex.words("part_heads") | self.lex.words("kind_heads")
        if any(
            _head_word(x) in self.lex.words("cause_heads")
            and any(t.lower == "the" for t in toks[max(x.start - 1, 0) : x.start + 1])
            for x in a
        ):
            return False  # "the cause (of X) was a worn seal" names a cause, not a class
        if det == "the" and self._superlative(toks, at + 1):
            det = "a"  # "the most populous island", "the oldest bridge": one of a class
        if (
            det not in ("a", "an")
            and not (plural and det not in ("the",))
            and not (person and self._role_like(b[0]) and det in ("the", "a", "an"))
            and not (det == "the" and relational & heads)  # "the opening segment of X"
        ):
            return False
        end = b[-1].end
        return not any(
            toks[k].pos == VERB and not _attributive(toks, k, end)
            for k in range(m.spans["B"][0], end)
        )

    @staticmethod
    def _superlative(toks: list[Token], k: int) -> bool:
        """A superlative opens the noun phrase at ``k`` ("most populous", "largest")."""
        if k >= len(toks):
            return False
        t = toks[k]
        if t.lower in ("most", "least") and k + 1 < len(toks) and toks[k + 1].pos == ADJ:
            return True
        return t.pos in (ADJ, NOUN) and is_superlative(t.lower)

    def _fits_intentions(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        rel = m.phrase.relation
        if (
            rel == "REQUIRES"
            and a
            and b
            and all(self._person_like(x) for x in a)
            and all(x.kind == TASK for x in b)
        ):
            return False  # "I need to call the bank": an intention, not a requirement
        return not (
            rel == "PRECEDES"
            and any(
                x.kind == CLAUSE and x.words and x.words[0] not in self.lex.words("pronouns")
                for x in a + b
            )
        )  # "after the holidays, Jonas moved": events of a person, not tasks

    def _fits_status(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        if m.phrase.relation != "HAS_STATUS":
            return True
        if not m.status and "=" not in m.phrase.edges[0][2]:
            return False
        if _passive_act(toks, m.literals):
            return False  # "the sanding was done with a sander": an act, not a status
        if any(x.words and x.words[-1] == "status" for x in a):
            return False  # "Status: done": the board's label, not the thing that has it
        if any(
            toks[k].pos in (AUX, MODAL) and toks[k].tag in ("VBZ", "VBP", "VBD", "MD")
            for x in a
            for k in range(x.start, x.end)
        ):
            return False  # "the permit is stuck — blocked on X": a clause, not what has a status
        person = [x for x in a if x.kind == PRONOUN and self._person_like(x)]
        if person or any(self._person_evidence(x) and not x.code for x in a):
            return False  # a status is a task's or a project's (docs/relations.md), not a person's
        if self._status_not_yet(toks, min(m.literals) if m.literals else 0):
            return False  # "has to be wrapped up", "will be frozen": a plan, not a status
        # a status of "it" with nothing named before it is no fact
        return not (a and any(x.kind == PRONOUN and not self.coref.things for x in a))

    @staticmethod
    def _status_not_yet(toks: list[Token], k: int) -> bool:
        """ "the audit has to be wrapped up", "the schema must be frozen", "it'll be done": a
        status word after a modal or an infinitive "to" says what ought to or will hold, not
        what holds now (Quirk et al. 4.49, modality)."""
        j = k - 1
        while j >= 0 and (toks[j].pos in (ADV, NEG) or toks[j].lemma == "be"):
            j -= 1
        return j >= 0 and (toks[j].pos == MODAL or toks[j].lower == "to")

    def _fits_verbless(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "search indexing done; billing in progress": a status right after a noun phrase
        with no verb states it only as a note, where the status ends its clause and is no
        finite verb ("the team finished", "dinner started" are clauses of their own). A
        ``thing_source`` phrasing ("sits within", "make up") takes no person as its part, and
        no verb takes an object that starts past a comma."""
        if "thing_source" in m.phrase.flags and any(
            x.kind == PRONOUN or self._person_like(x) for x in a
        ):
            return False  # "she sits within the team", "I made up my mind": no part
        last = max(m.literals) + 1 if m.literals else 0
        if (
            m.phrase.elements[-1].kind == "slot"
            and last < len(toks)
            and toks[last].lower in (",", ";")
            and toks[last - 1].pos == VERB
        ):
            return False  # "until the loan clears, we ...": a verb's object is not past a comma
        if "example_list" in m.phrase.flags and not self._examples_of_kind(m, toks, a, b):
            return False
        if "verbless" not in m.phrase.flags:
            return True
        lo, hi = min(m.literals), max(m.literals) + 1
        if lo == 0 or toks[lo - 1].pos not in (NOUN, PROPN, CODE):
            return False
        if hi < len(toks) and toks[hi].pos != PUNCT and not self._time_tail(toks, hi):
            return False
        first = toks[lo]
        if first.tag == "VBD" or (first.pos == VERB and first.inflected in ("s", "ing")):
            return False
        start = min((x.start for x in a), default=lo)
        k = start - 1
        while k >= 0 and toks[k].lower not in _CLAUSE_STOPS and toks[k].lower != ":":
            if toks[k].pos in (MODAL, AUX, VERB):
                return False  # "I'll do the dishes next": a clause with a verb, no note
            k -= 1
        return not any(self._person_like(x) for x in a)

    def _time_tail(self, toks: list[Token], k: int) -> bool:
        """ "Tax return filed last night", "grant report: submitted 12 May": a note's status
        may end in when it came about; the rest of its clause is then only a time phrase
        (time words, numbers and their prepositions), with at least one time word."""
        times = self.lex.words("time_words")
        seen = False
        while k < len(toks) and toks[k].pos != PUNCT:
            word = toks[k].lower
            if word in times or re.fullmatch(r"\d+(st|nd|rd|th)?", word):
                seen = True
            elif word not in _TIME_GLUE:
                return False
            k += 1
        return seen

    @staticmethod
    def _examples_of_kind(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "Languages like Rust and Zig give you ...": "like" is the preposition of examples
        only when a plural common noun (the kind) stands right before it and the sentence's
        own verb follows the examples; "cats like fish" is the verb of liking."""
        lo = min(m.literals)
        if lo == 0 or toks[lo - 1].tag != "NNS" or not a or not b:
            return False
        end = max(x.end for x in a)
        return end < len(toks) and (
            toks[end].pos in (AUX, MODAL) or (toks[end].pos == VERB and toks[end].tag != "VBG")
        )

    def _fits_parts(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        f = m.phrase.flags

        def before_of(x: Arg) -> set[str]:
            words = list(x.words)
            return set(words[: words.index("of")] if "of" in words else words)

        parts = self.lex.words("part_heads")
        if "part_source" in f and not all(before_of(x) & parts for x in a):
            return False
        return not ("part_target" in f and not all(before_of(x) & parts for x in b))

    def _fits_owners(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        f = m.phrase.flags
        if m.phrase.relation == "OWNS" and any(
            x.kind == NP and x.head in self.lex.words("general_nouns") for x in b
        ):
            return False  # "I had a great time", "she has an idea": no possession
        if "owner_target" in f and (
            not all(self._person_like(x) or self._org_like(x) for x in a)
            or any(self._person_like(x) for x in b)
        ):
            return False
        return not (
            "owner_object" in f
            and m.phrase.pattern.split()[1].startswith("hold")
            and not all(set(x.words) & self.lex.words("held_things") for x in b)
            and any(toks[k].lemma == "hold" for k in m.literals)
        )

    def _fits_tasks_and_tools(
        self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]
    ) -> bool:
        f = m.phrase.flags
        if "task_target" in f and not all(x.kind == TASK for x in b):
            return False
        if "event_target" in f and any(
            x.words and x.words[-1] in self.lex.words("progress_nouns") for x in b
        ):
            return False  # "ahead of schedule": a measure of progress, no later step
        if m.phrase.pattern.startswith("to {A}") and not all(x.kind == TASK for x in a):
            return False  # a purpose infinitive ("to renew X, ..."), not "moved to Ghent, ..."
        people = self.lex.words("person_nouns") | self.lex.words("role_heads")
        places = self.lex.words("place_heads")
        return not (
            "tool_target" in f
            and any(
                x.kind != NP or (x.words and (x.words[-1] in people or x.words[-1] in places))
                for x in b
            )
        )

    @staticmethod
    def _fits_tense(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        if "past_tense" not in m.phrase.flags:
            return True
        # "we shipped X" states a status; "before we ship X" or "we'll ship X" a plan
        verb = toks[min(m.literals)]
        return not (verb.inflected == "ing" or verb.lower == verb.lemma or verb.inflected == "s")

    def _fits_status_clause(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        if m.phrase.relation != "HAS_STATUS":
            return True
        after = max(m.literals) + 1
        if after < len(toks) and toks[after].lower in ("with", "by", "via"):
            return False  # "is done with a scale", "was closed by the patch": an act, no status
        if (
            toks[after - 1].lower == "next"
            and after < len(toks)
            and toks[after].pos not in (PUNCT, CONJ)
            and toks[after].lower not in ("then", "after", "once", "when")
        ):
            return False  # "the cafe is next to the bank", "that's next week": no next task
        if (
            m.phrase.elements[-1].kind == POS
            and not any(toks[k].lemma in ("be", "get") for k in m.literals)
            and after < len(toks)
            and toks[after].pos in (DET, POSS)
            and not self._time_tail(toks, after)
        ):
            return False  # "Marek - finished the importer": a verb with its object, no status
        if m.phrase.elements[0].kind == POS:
            # a board's column ("Done: the logo") opens its sentence or a part of it, and a
            # code comment's "TODO:" marks no task of the speaker's
            k = min(m.literals) - 1
            if k >= 0 and toks[k].lower not in (".", ";", "—", "–", "-", "(", ")", "!"):
                return False
            if any(t.lower in ("#", "//", "/*", "*", "--") for t in toks[: k + 1]):
                return False
            end = max((x.end for x in a), default=len(toks))
            if end < len(toks) and toks[end].pos in (VERB, AUX, MODAL):
                return False  # "Resolved: Ana becomes treasurer": a clause after a heading
        k = min(m.literals) - 1
        while k >= 0 and toks[k].lower not in (",", ";", ":", "-"):
            if toks[k].lower in _SUBORDINATORS or _ends_subordinator(toks, k):
                return False  # "once the migration is done, ...": a condition, not a fact
            k -= 1
        return True

    @staticmethod
    def _no_object_after_a_break(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "Route reset blocked — the order hasn't arrived", "the launch is held up: ...": a
        participle with a dash or colon after it is the state of what comes before, and the
        clause after the break its reason, never the participle's object ("{B} block {A}")."""
        if m.phrase.relation not in _VOICED or not m.literals or "{A}" not in m.phrase.pattern:
            return True
        if m.phrase.pattern.index("{A}") < m.phrase.pattern.index("{B}"):
            return True  # the object slot is B's: a passive or a nominal phrasing
        if not any(toks[k].inflected == "ed" or toks[k].tag == "VBN" for k in m.literals):
            return True
        k = max(m.literals) + 1
        return not (k < len(toks) and toks[k].lower in _BREAKS)

    @staticmethod
    def _reason_has_a_subject(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "stalled: the permit hasn't come" gives its reason after the break; "stuck —
        blocked by the review", "stuck - waiting on HR" go on with a second predicate of the
        same subject, whose own phrasing names the blocker."""
        if "reason_after_break" not in m.phrase.flags or not m.literals:
            return True
        k = max(m.literals) + 1
        while k < len(toks) and toks[k].pos in ("ADV", "NEG"):
            k += 1
        return not (k < len(toks) and toks[k].tag.startswith("VB"))

    @staticmethod
    def _fits_perfect(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        """ "the refit has stalled because ...": a task come to a standstill; the bare past
        ("the car stalled because the battery was flat") is an engine's stall, told as a
        cause. With the flag the verb literal needs its perfect auxiliary before it."""
        if "perfect" not in m.phrase.flags:
            return True
        k = min(m.literals) - 1
        while k >= 0 and toks[k].pos in ("ADV", "NEG"):
            k -= 1
        return k >= 0 and toks[k].lemma == "have" and toks[k].pos == "AUX"

    @staticmethod
    def _fits_intransitive(m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        if "intransitive" not in m.phrase.flags:
            return True
        end = max(m.literals) + 1
        return not (end < len(toks) and toks[end].pos in (NOUN, PROPN, "DET", "POSS", "PRON", CODE))

    def _fits_person_targets(self, m: Match, toks: list[Token], a: list[Arg], b: list[Arg]) -> bool:
        rel = m.phrase.relation
        speaker = self.lex.words("speaker")
        if rel == "PART_OF" and any(x.kind == TASK for x in a):
            return False  # a task is held by a project (CONTAINS_TASK), not a part of it
        if (
            rel == "PART_OF"
            and b
            and all(self._person_like(x) and x.kind in (NP, PRONOUN) for x in b)
        ):
            return False  # "belongs to Ruth": property, not a part
        if rel == "WORKS_AT" and any(x.kind == PRONOUN and x.name in speaker for x in b):
            return False  # "we hired Lotte": the speaker is no organization
        # "behind us": a finished thing, not a cause
        return not (rel == "CAUSES" and any(x.kind == PRONOUN and x.name in speaker for x in b))

    # --- nodes and edges --------------------------------------------------------------------

    def _resolve(self, arg: Arg) -> tuple[str, str]:
        """(name, label evidence) of an argument, pronouns resolved ("" when unresolved)."""
        if arg.kind == PRONOUN:
            name = self.coref.resolve(arg.name)
            if name in (self.coref.user, self.coref.speaker):
                return name, "Person"
            return name, ("Person" if name and name == self.coref.last_person else "")
        if arg.name in ("former", "latter"):
            return self.coref.resolve("the " + arg.name), ""
        if arg.name in ("user", "the user") or arg.words == ("user",):
            return self.coref.user, "Person"
        if arg.code:
            label = (
                "Error" if arg.code == "error" else ("Person" if arg.code == "userid" else "Tool")
            )
            return arg.name, label
        return arg.name, ""

    def _task_key(self, name: str) -> str:
        """A task this memory or the nearby graph already knows by that short name."""
        words = _content(name)
        if not words:
            return ""
        tasks = [n.name for n in self.nodes.values() if n.label == "Task"] + self.known_tasks
        found = [
            t
            for t in tasks
            if words <= _content(t)
            and len(words) >= 1
            and (len(words) > 1 or len(_content(t)) <= 3)
        ]
        names = {name_key(t) for t in found}
        if len(names) == 1:
            return found[0]
        return ""

    def _node(
        self, name: str, label: str, *, standalone: bool = False, evidenced: bool = True
    ) -> str:
        display = display_name(name, self.ex.aliases)
        key = name_key(display)
        if not key or len(key) > 200:
            return ""
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = _Node(display, label, evidenced=evidenced)
        elif evidenced != node.evidenced:
            # what the text shows of a name outranks what a relation's slot supposes of it
            if evidenced:
                node.label, node.evidenced = label, True
        elif _LABEL_RANK.get(label, 0) > _LABEL_RANK.get(node.label, 0):
            node.label = label
        node.standalone = node.standalone or standalone
        return key

    def _end(self, arg: Arg, role_label: str, relation: str) -> str:
        name, evidence = self._resolve(arg)
        if not name:
            return ""
        label = evidence or role_label
        evidenced = bool(evidence)
        if not evidence:
            head = arg.words[-1] if arg.words else ""
            form = self._name_form(arg, role_label)
            if arg.kind == TASK:
                label, evidenced = "Task", True
            elif head in self.lex.words("error_heads") and relation in ("CAUSES", "SOLVED_BY"):
                label, evidenced = "Error", True
            elif form and role_label in ("Person", form):
                # a Person slot's guess yields to the name's form; "works at Elm Street
                # Office" stays an organization, the slot's word for where one works
                label, evidenced = form, True
        if (
            relation in _TASKISH
            and label in ("Task", "Resource", "Entity", "Concept")
            and (arg.kind in (NP, TASK))
        ):
            known = self._task_key(name)
            if known:
                name, label, evidenced = known, "Task", True
        return self._node(name, label, standalone=label in ("Task", "Error"), evidenced=evidenced)

    def _name_form(self, arg: Arg, role_label: str) -> str:
        """The label a proper name's own head word gives it ("Acme Labs", "Harbor Street"),
        where the relation's slot would only suppose a person, a place or an organization:
        the lexicon's organization and place heads name what kind of thing the name is."""
        if role_label not in ("Person", "Organization", "Place") or not arg.proper or arg.code:
            return ""
        head = arg.words[-1] if len(arg.words) >= 2 else ""
        if head in self.lex.words("org_heads"):
            return "Organization"
        if head in self.lex.words("place_heads"):
            return "Place"
        return ""

    def _edge(
        self,
        src: str,
        rel: str,
        dst: str,
        conf: float,
        fact: str,
        when: datetime | None,
        *,
        negated: bool = False,
        attrs: dict[str, Any] | None = None,
    ) -> None:
        if not src or not dst or src == dst:
            return
        key = (src, rel, dst, negated)
        if key in self.edges:
            return
        # a changing fact holds from the time the text gives, else from when it was said
        changing = rel in self.ex.config.single_valued or rel in _PERSON_RELATIONS
        valid_from = (when or self.anchor) if changing else None
        self.edges[key] = EdgeSpec(
            src,
            dst,
            rel,
            fact[:300],
            conf,
            valid_from=valid_from,
            negated=negated,
            attributes=attrs or {},
        )

    def _one_of_many(
        self, relation: str, toks: list[Token], sources: list[Arg], targets: list[Arg]
    ) -> str:
        """ "X is one of the (four) Ys of|in Z": X is counted among Z's Ys, so it is a part
        of Z (the partitive "one of", Quirk et al. 5.9, with the whole after "of" or "in");
        the target is cut to Z. Unchanged when no whole follows, and for a person, who is
        no part ("one of the two daughters of the baker": kin, not a member)."""
        if relation != "IS_A" or len(targets) != 1:
            return relation
        if any(x.kind == PRONOUN for x in sources):
            return relation
        k = targets[0].start
        while k > 0 and toks[k - 1].pos in ("DET", "NUM", ADJ):
            k -= 1  # "the four", "six", "the oldest"
        if not (k >= 2 and toks[k - 2].lower == "one" and toks[k - 1].lower == "of"):
            return relation
        j = targets[0].start
        while j < len(toks) and toks[j].pos in ("DET", "NUM", ADJ):
            j += 1
        while j < len(toks) and (toks[j].pos in NOMINAL or toks[j].pos == ADJ):
            j += 1
        if not (
            j + 1 < len(toks)
            and toks[j].lower in ("of", "in")
            and toks[j - 1].pos == NOUN
            and toks[j - 1].inflected == "s"
            # "one of the founders of": a role among people, read as a role; "one of the
            # daughters of": kin, no part
            and toks[j - 1].lemma not in self.lex.words("role_heads")
            and toks[j - 1].lemma not in self.lex.words("person_nouns")
        ):
            return relation
        reader = self.ex.matcher.reader
        end = reader._np_end(toks, j + 1, len(toks))
        whole = reader._np(toks, j + 1, end) if end > j + 1 else None
        if whole is None or not whole.name:
            return relation
        targets[0] = whole
        return "PART_OF"

    def _ready(self, m: Match, toks: list[Token]) -> bool:
        """Whether a kept match makes edges (:meth:`_states_edge`), its status holders named
        with or without their complement (:meth:`_status_holder`)."""
        if not self._states_edge(m, toks):
            return False
        if m.phrase.relation == "HAS_STATUS" and m.slots.get("A"):
            m.slots["A"] = [self._status_holder(x, m, toks) for x in m.slots["A"]]
        return True

    def _status_holder(self, arg: Arg, m: Match, toks: list[Token]) -> Arg:
        """The name of a piece of work whose status is told, with or without its prepositional
        complement. A lone noun needs its complement to say which work ("the dig at <site>",
        "the inspection on <unit>"): a general noun names no one task (Quirk et al. 17.37,
        postmodification by a prepositional phrase identifies the head); a compound already
        names it, and a purpose or a destination after it ("<compound> for <the client>",
        "<compound> to <a place>") says what the work serves, not which work it is."""
        if arg.kind != NP or arg.proper or arg.code or not arg.words:
            return arg
        words = list(arg.words)
        serves = self.lex.words("purpose_prepositions")
        cut = next((i for i, w in enumerate(words) if w in serves), -1)
        if cut >= 2 and all(
            toks[k].pos in NOMINAL or toks[k].pos == ADJ
            for k in range(arg.start, arg.end)
            if toks[k].lower in words[:cut]
        ):
            name = arg.name.split(f" {words[cut]} ", 1)[0]
            return _renamed(arg, name) if name and name != arg.name else arg
        if len(words) != 1 or arg.end >= len(toks) or not m.literals:
            return arg
        k, lo = arg.end, min(m.literals)
        if toks[k].pos != PREP or toks[k].lower not in self.lex.words("locative_complements"):
            return arg
        if self.ex.matcher.reader.is_time(toks, k):
            return arg  # "the meeting at noon": when, not which
        j = k + 1
        while j < lo and (toks[j].pos in NOMINAL or toks[j].pos in (DET, ADJ)):
            j += 1
        rest = toks[k + 1 : j]
        if not any(t.pos in NOMINAL for t in rest):
            return arg
        if j < len(toks) and j != lo and toks[j].pos not in (AUX, VERB, ADV, NEG, MODAL):
            return arg  # the complement runs on into something else: keep the noun alone
        tail = " ".join(t.text for t in rest)
        return _renamed(arg, f"{arg.name} {toks[k].lower} {tail}")

    def _employer_of_unit(self, targets: list[Arg]) -> None:
        """ "works at <Org>'s <city> studio", "at the <city> branch of <Org>": one works for the
        organization a local unit belongs to (a branch, an office, a desk is part of it,
        WordNet branch 3 "a division of some larger organization"), so the employer is the
        named organization."""
        units = self.lex.words("unit_heads")
        for i, arg in enumerate(targets):
            words = list(arg.words)
            head = words[-1] if words else ""
            if arg.possessor and arg.possessor[:1].isupper() and head in units:
                targets[i] = _renamed(arg, arg.possessor)
            elif "of" in words[1:] and words[words.index("of", 1) - 1] in units:
                rest = arg.name.split(" of ", 1)[-1] if " of " in arg.name else ""
                rest = re.sub(r"(?i)^(?:the)\s+", "", rest)
                if rest[:1].isupper():
                    targets[i] = _renamed(arg, rest)

    def _retype(self, relation: str, sources: list[Arg], targets: list[Arg]) -> str:
        """The relation the arguments' own words say, for copular and "belong" phrasings.

        "X is a kind of Y" (IS_A Y), "X is one of the parts of Y" (PART_OF Y), "X is a
        member of Y" or "a Y member" (MEMBER_OF Y), "X is a major cause of Y" (CAUSES Y), a
        person who "belongs to" or "is part of" a group (MEMBER_OF): the target is cut to Y.
        """
        if relation not in ("IS_A", "HAS_ROLE", "PART_OF", "WORKS_AT"):
            return relation
        person = bool(sources) and all(
            self._person_like(x) and not self._named_place(x) for x in sources
        )
        out = relation
        for i, arg in enumerate(targets):
            words = list(arg.words)
            if "of" in words[1:]:
                cut = words.index("of", 1)
                lead = set(words[:cut])
                for new_rel, heads in (
                    ("IS_A", "kind_heads"),
                    ("PART_OF", "part_heads"),
                    ("MEMBER_OF", "member_heads"),
                    ("CAUSES", "cause_heads"),
                    ("OWNS", "owner_heads"),
                    ("WORKS_AT", "employee_heads"),
                    ("LIVES_IN", "resident_heads"),
                ):
                    if lead & self.lex.words(heads) and relation != "WORKS_AT":
                        rest = arg.name.split(" of ", 1)[-1] if " of " in arg.name else ""
                        rest = re.sub(r"(?i)^(?:the|a|an|our|my|their|its)\s+", "", rest)
                        if rest:
                            targets[i] = _renamed(arg, rest)
                            out = new_rel
                        break
            elif (
                person
                and relation in ("IS_A", "HAS_ROLE")
                and len(words) >= 2
                and words[-1] in self.lex.words("member_heads")
                and arg.proper is False
                and (toks_capital(arg) or words[-2] in self.lex.words("group_heads"))
            ):
                targets[i] = _renamed(arg, arg.name.rsplit(" ", 1)[0])
                out = "MEMBER_OF"  # "an Oxfam member"
            elif (
                relation == "PART_OF"
                and len(words) >= 2
                and words[-1] in self.lex.words("taxon_heads")
            ):
                targets[i] = _renamed(arg, arg.name.rsplit(" ", 1)[0])
                out = "IS_A"  # "belongs to the cactus family"
        # "X is a choir" says what X is; a person is in a group ("belongs to", "is part of")
        if person and out in ("PART_OF", "HAS_ROLE"):
            groups = self.lex.words("group_heads") | self.lex.words("org_heads")
            if targets and all(_head_word(t) in groups for t in targets):
                out = "MEMBER_OF"
        if (
            person
            and out == "PART_OF"
            and targets
            and not any(self._person_like(t) or t.name.split()[-1][:1].isupper() for t in targets)
        ):
            out = "MEMBER_OF"  # a person is no component: "belongs to the cycling collective"
        if person and out in ("IS_A", "HAS_ROLE"):
            for i, arg in enumerate(targets):
                words = list(arg.words)
                # "lead singer of the band": the role; "head of finance" is one name
                if "of" in words[1:] and words[words.index("of") + 1 :][:1] == ["the"]:
                    targets[i] = _renamed(arg, arg.name.split(" of ", 1)[0])
        return out

    def _apply(self, m: Match, toks: list[Token], sentence: str, when: datetime | None) -> None:
        if not self._ready(m, toks):
            return  # a loose phrasing alone is not evidence enough for a typed edge
        conf = 0.6 if m.phrase.weak else 0.85
        if any(t.lower in self.lex.words("hedges") for t in toks):
            conf *= 0.7
        for src_slot, rel, dst_slot in m.phrase.edges:
            relation = rel
            if "copula" in m.phrase.flags and self._holds_role(m):
                relation = "HAS_ROLE"
            if "role_or_kind" in m.phrase.flags and not all(
                self._person_like(x) for x in m.slots.get("A", [])
            ):
                relation = "IS_A"
            if not dst_slot.startswith("="):
                targets = _with_amounts(relation, list(m.slots.get(dst_slot, [])), toks)
                relation = self._one_of_many(relation, toks, m.slots.get(src_slot, []), targets)
                relation = self._retype(relation, m.slots.get(src_slot, []), targets)
                if relation == "WORKS_AT":
                    self._employer_of_unit(targets)
                m.slots[dst_slot] = targets
            if rel == "WORKS_AT" and any(
                a.words and a.words[-1] in self.lex.words("member_roles")
                for a in m.slots.get("C", [])
            ):
                relation = "MEMBER_OF"  # a volunteer or member of an organization is no employee
            if (
                relation == "LIVES_IN"
                and m.phrase.weak
                and m.slots.get(dst_slot)
                and all(
                    x.kind == NP
                    and any(t.lower == "the" for t in toks[max(x.start - 1, 0) : x.start + 1])
                    and is_type(x.name, "group")
                    for x in m.slots[dst_slot]
                )
            ):
                # "both are in the Scouts": in a group, not a place; a bare proper name is a
                # place here even when its vector leans to a club ("in Lyon")
                relation = "MEMBER_OF"
            src_label, dst_label = _ROLES.get(relation, ("Entity", "Entity"))
            no_source, no_target = _NO_PERSON_ENDS.get(relation, (False, False))
            sources = self._edge_args(m, src_slot, toks, no_person=no_source, relation=relation)
            if dst_slot.startswith("=") and m.negated and len(m.phrase.edges) > 1:
                continue  # "no longer blocked by B" denies B's hold, not that A is held up
            if dst_slot.startswith("="):
                value = m.status if dst_slot == "=*" else dst_slot[1:]
                targets_keys = [self._node(value, "Value")] if value else []
                attrs = {"status": value}
            else:
                targets_keys = [
                    self._end(t, dst_label, relation)
                    for t in self._edge_args(
                        m, dst_slot, toks, no_person=no_target, relation=relation
                    )
                ]
                attrs = {}
            source_keys = [self._end(s, src_label, relation) for s in sources]
            for s_key, t_key in itertools.product(source_keys, targets_keys):
                if relation == "HAS_STATUS":
                    self._mark_status(s_key, t_key, m, attrs.get("status", ""))
                self._edge(
                    s_key, relation, t_key, conf, sentence, when, negated=m.negated, attrs=attrs
                )
        for name, kind in m.named_kinds:  # "a sailboat named Gull": gull IS_A sailboat
            named = self._end(name, "Entity", "IS_A")
            self._edge(named, "IS_A", self._end(kind, "Concept", "IS_A"), conf, sentence, when)
        self._remember(m)

    def _mark_status(self, s_key: str, t_key: str, m: Match, value: str) -> None:
        """A status names its holder a task (or keeps it a project or a person) and gives it
        the status as an attribute; where it was said orders it in :meth:`_latest_status`."""
        self.status_at[(s_key, "HAS_STATUS", t_key, m.negated)] = min(m.literals)
        if s_key in self.nodes and not m.negated:
            node = self.nodes[s_key]
            node.attributes["status"] = value
            if node.label not in ("Task", "Project", "Person"):
                node.label = "Task"

    def _latest_status(self) -> None:
        """ "The claim was submitted and is awaiting review", "the trip was cancelled, then
        reinstated": of two statuses one sentence gives a thing, the later one is the one it
        has now (what happened to it is told in order). A denied status stays, and "blocked"
        (which comes with what blocks it) is left alone."""
        said: dict[str, list[tuple[int, tuple[str, str, str, bool]]]] = {}
        for key, at in self.status_at.items():
            if (
                not key[3]
                and key in self.edges
                and self.edges[key].attributes.get("status") != "blocked"
            ):
                said.setdefault(key[0], []).append((at, key))
        for src, keys in said.items():
            if len({k[2] for _, k in keys}) < 2:
                continue
            keys.sort()
            for _, key in keys[:-1]:
                del self.edges[key]
            if src in self.nodes:
                self.nodes[src].attributes["status"] = self.edges[keys[-1][1]].attributes["status"]

    def _edge_args(
        self, m: Match, slot: str, toks: list[Token], *, no_person: bool, relation: str = ""
    ) -> list[Arg]:
        """The arguments of ``slot`` an edge end is made of: no whole clause (but the event a
        cause or a problem clause names), no person where the relation's end never is one, a
        step's "it" named by its object."""
        out = []
        for x in m.slots.get(slot, []):
            if _whole_clause(x, toks):
                event = self._event(x, toks, m.literals) if relation in _EVENT_ENDS else None
                if event is None:
                    continue
                x = event
            if no_person and self._names_a_person(x, toks):
                continue
            if slot == "B" and "causative" in m.phrase.flags:
                x = _caused_event(x, m, toks)
            out.append(self._object_named(x, m, toks))
        return out

    def _event(self, arg: Arg, toks: list[Token], literals: frozenset[int]) -> Arg | None:
        """The event a clause with no object names, as its subject and verb: "the hit ratio
        dropped after the deploy" -> "hit ratio dropped". A cause or an effect is an event,
        and English names an event by its subject and its verb (Quirk et al. 17.51,
        nominalization: "the flight's delay"); the clause with its objects and adverbials
        names a state of affairs and makes no node
        (:func:`_whole_clause`). An existential clause names the thing it says there was
        ("there was a power surge" -> "power surge", Quirk et al. 18.44).

        From the parse: the clause's head is a verb other than "be" / "have" / "get", with a
        noun subject that is no person and no object, complement or negation, and that states
        no status ("was called off": the status phrasings read it) and no auxiliary (a
        passive or perfect clause states a state, which the labelled sets name in no one way:
        measured on extraction blind 1-12); its adverbials ("after the deploy", "again") go.
        None otherwise."""
        span = range(arg.start, arg.end)
        roots = [k for k in span if toks[k].head == k or toks[k].head not in span]
        if len(roots) != 1 or toks[roots[0]].head < 0:
            return None
        root = roots[0]
        verb = toks[root]
        children = [k for k in span if toks[k].head == root and k != root]
        if verb.lemma == "be" and any(toks[k].dep == "expl" for k in children):
            things = [k for k in children if toks[k].dep == "attr" and toks[k].pos == NOUN]
            if len(things) != 1:
                return None
            lo = things[0]
            while lo > arg.start and _depends_on(toks, lo - 1, things[0]):
                lo -= 1  # the thing's modifiers before it ("a memory leak"), not its place
            thing = self.ex.matcher.reader._np(toks, lo, things[0] + 1)
            return thing if thing.name else None
        if verb.pos != VERB or verb.lemma in ("be", "have", "get"):
            return None
        if {toks[k].dep for k in children} & _NOT_AN_EVENT or root in literals:
            return None  # the relation's own verb ("is worked around by") is no event
        if any(toks[k].pos in (AUX, MODAL) or toks[k].dep in _AUX_DEPS for k in children):
            return None  # "the flight was delayed", "the build is broken": a state, named as one
        subjects = [k for k in children if toks[k].dep in _SUBJECT_DEPS]
        if len(subjects) != 1 or toks[subjects[0]].pos not in (NOUN, PROPN):
            return None
        head = subjects[0]
        lo, hi = head, head + 1
        while lo > arg.start and _depends_on(toks, lo - 1, head):
            lo -= 1
        while hi < root and _depends_on(toks, hi, head):
            hi += 1
        subject = self.ex.matcher.reader._np(toks, lo, hi)
        if not subject.name or self._names_a_person(subject, toks):
            return None
        particles = [toks[k].lower for k in children if toks[k].dep == "prt"]
        said = " ".join([verb.lower, *particles])
        if any(" ".join(p) == said for ps in self.lex.status.values() for p in ps):
            return None  # "the fair was called off": a status, which its own phrasings read
        # the verb as written, like a clause of a subject and a lone verb ("the printer jammed")
        name = " ".join([subject.name, verb.lower, *particles])
        return Arg(lo, root + 1, name, NP, head=verb.lemma, words=tuple(name.lower().split()))

    def _object_named(self, arg: Arg, m: Match, toks: list[Token]) -> Arg:
        """A step whose object is "it" or "them" acts on the object of an earlier step of the
        same sentence ("rinse the rice, then soak it": soak the rice; "calibrate the sensor
        after mounting it": mount the sensor): the pronoun's reference is the nearest object
        named before it (Halliday & Hasan 1976, personal reference), named as written."""
        if arg.kind != TASK or len(arg.words) < 2:
            return arg
        at = [k for k, w in enumerate(arg.words) if k > 0 and w in ("it", "them")]
        if len(at) != 1:
            return arg
        others = [
            x
            for n in (*self.facts[1], m)
            for xs in n.slots.values()
            for x in xs
            if x.kind == TASK and (x.end <= arg.start or x.start >= arg.end)
        ]
        # the nearest step before it; else the step it follows in the text ("... after
        # mounting it" refers forward to nothing, back to "calibrate the sensor")
        before = sorted((x for x in others if x.end <= arg.start), key=lambda x: -x.end)
        pool = before or sorted(others, key=lambda x: x.start)
        objects = (_task_object(x, toks) for x in pool)
        # else the object of the nearest verb before it that has one, though no phrasing
        # made that verb's clause a step ("we hang the plank once ...; ... after we've
        # spiled it": spile the plank)
        objects_before = (_verb_object(toks[j : arg.start]) for j in range(arg.start - 1, -1, -1))
        # else the object of the last step of the sentence before ("we hang the plank once
        # the keel is faired; steam-bending comes after we've spiled it")
        before_toks, before_facts = self.facts_before
        earlier = sorted(
            (x for n in before_facts for xs in n.slots.values() for x in xs if x.kind == TASK),
            key=lambda x: -x.end,
        )
        obj = (
            next((o for o in objects if o), "")
            or next((o for o in objects_before if o), "")
            or next((o for x in earlier if (o := _task_object(x, before_toks))), "")
        )
        if obj:
            words = list(arg.words)
            words[at[0]] = obj
            return dataclasses.replace(arg, name=" ".join(words), words=tuple(words))
        return arg

    def _states_edge(self, m: Match, toks: list[Token]) -> bool:
        """Whether a kept match makes an edge: a loose phrasing only for the relations whose
        other guards keep it honest, or for use with an argument typed as an instrument."""
        return (
            not m.phrase.weak
            or m.phrase.relation in _WEAK_OK
            or self._typed_use(m, toks)
            or self._typed_effect(m)
        )

    def _typed_effect(self, m: Match) -> bool:
        """A loose causal phrasing ("A gave me B", "B is from A") states a cause when every B
        reads as a symptom, an illness or a fault (:mod:`.argtypes`) and no A is a person:
        "dehydration gave me a headache", not "my aunt gave me a lift" or "Ana is from Lima"."""
        if "condition_target" not in m.phrase.flags:
            return False
        targets, sources = m.slots.get("B", []), m.slots.get("A", [])
        return (
            bool(targets)
            and bool(sources)
            and all(x.kind == NP and not x.code and is_condition(x.name) for x in targets)
            and not any(
                self._person_like(x)
                and not (_opening_capital(x) and not self._names_a_person(x, []))
                for x in sources
            )
        )

    def _typed_use(self, m: Match, toks: list[Token]) -> bool:
        """A loose instrument phrasing ("<verb> ... in|on|with B") states use when every B
        reads as a tool, device, software or service (:mod:`.argtypes`), not a place or a
        person: "edits the photos in a raw converter", not "edits the photos in the garden"."""
        if m.phrase.relation != "USES" or "tool_target" not in m.phrase.flags or m.negated:
            return False
        targets = m.slots.get("B", [])
        return bool(targets) and all(self._tool_typed(x, toks) for x in targets)

    def _tool_typed(self, arg: Arg, toks: list[Token]) -> bool:
        """An argument that names a tool by meaning, by a trade name's spelling or by a head
        noun of software ("the Mapbox API")."""
        return (
            arg.kind == NP
            and not arg.code
            and (
                is_instrument(arg.name)
                or self._product_name(arg, toks)
                or _head_word(arg) in self.lex.words("tool_heads")
            )
        )

    def _product_name(self, arg: Arg, toks: list[Token]) -> bool:
        """A proper name written with a medial capital ("iPad", a "CamelCase" brand): the
        spelling of trade names and software (Wikipedia, Camel case: medial capitals in
        brand names), which names of places and people lack but for surname prefixes
        ("McAllen", "DeKalb")."""
        if not arg.proper:
            return False
        prefixes = self.lex.words("surname_prefixes")
        for t in toks[arg.start : arg.end]:
            word = t.text
            if not word.isalpha() or any(word.lower().startswith(p) for p in prefixes):
                continue
            if any(a.islower() and b.isupper() for a, b in itertools.pairwise(word)):
                return True
        return False

    def _remember(self, m: Match) -> None:
        # what a negated fact denies is no referent ("X is not a Y; it's a Z": it is X)
        denied = {end for edge in m.phrase.edges for end in edge[2:]} if m.negated else set()
        ordered = sorted(
            (a for slot, args in m.slots.items() if slot not in denied for a in args),
            key=lambda a: a.start,
        )
        names: list[str] = []
        for arg in ordered:
            name, label = self._resolve(arg)
            if not name:
                continue
            key = name_key(display_name(name, self.ex.aliases))
            node = self.nodes.get(key)
            if label == "Person" or (node is not None and node.label == "Person"):
                self.coref.saw_person(name)
            else:
                self.coref.saw_thing(node.name if node else name)
            names.append(node.name if node else name)
        for args in m.slots.values():
            if len(args) == 2:
                self.coref.saw_pair(self._resolve(args[0])[0], self._resolve(args[1])[0])

    def _code_statement(self, toks: list[Token], sentence: str) -> None:
        """ "json.loads parses a string": a code subject and what its verb acts on (weak)."""
        k = 0
        while k < len(toks) and toks[k].pos in ("DET", "ADV"):
            k += 1
        if (
            k >= len(toks)
            or toks[k].pos != CODE
            or toks[k].inflected in ("error", "quoted", "userid")
        ):
            return
        if k + 1 >= len(toks) or toks[k + 1].pos != VERB:
            return
        objs = self.ex.matcher.reader.after(toks, k + 2, len(toks), clause_ok=False, task_ok=False)
        src = self._node(toks[k].text, "Tool", standalone=True)
        for obj in objs[:2]:
            dst = self._end(obj, "Concept", "RELATED_TO")
            self._edge(src, "RELATED_TO", dst, 0.5, sentence, None)

    def _plan(self) -> None:
        plan = self.ex.plans.read(self.sentences)
        if not plan.tasks:
            return
        keys: dict[int, str] = {}
        names = [name for name, _ in plan.tasks]
        for k, name in enumerate(names):
            names[k] = self._plan_object_named(name, names[:k])
        for k, name in enumerate(names):
            if not name:
                continue
            key = self._task_key(name) or self._node(name, "Task", standalone=True)
            node = self.nodes.get(key)
            if node is None:
                continue
            node.label = "Task"
            node.attributes.setdefault("status", "pending")
            keys[k] = key
        for a, b in plan.order:
            if a in keys and b in keys and keys[a] != keys[b]:
                self._edge(keys[a], "PRECEDES", keys[b], 0.85, plan.tasks[b][1], None)
        if plan.project:
            project = self._node(plan.project, "Project", standalone=True)
            for key in dict.fromkeys(keys.values()):
                self._edge(project, "CONTAINS_TASK", key, 0.8, plan.project_sentence, None)

    def _plan_object_named(self, name: str, before: list[str]) -> str:
        """A planned step acting on "it" or "them" acts on the object of the nearest earlier
        step ("wash the lettuce, then dry it": dry the lettuce), as :meth:`_object_named`
        does for a phrasing's steps; the plan gives names, so the object is the words after
        the verb (and its particle) up to the first preposition."""
        words = name.split()
        at = [k for k, w in enumerate(words) if k > 0 and w.lower() in ("it", "them")]
        if len(at) != 1:
            return name
        preps = self.lex.words("prepositions") - {"up", "out", "off", "down", "over"}
        for prev in reversed(before):
            rest = prev.split()[1:]
            while rest and rest[0].lower() in ("up", "out", "off", "down", "back", "over", "away"):
                rest = rest[1:]
            end = next((k for k, w in enumerate(rest) if w.lower() in preps), len(rest))
            obj = rest[:end]
            while obj and obj[-1].lower() in _SPLIT_PARTICLES:
                obj = obj[:-1]  # "boil the sap down": the particle after the object is no part
            if obj and not any(w.lower() in ("it", "them") for w in obj):
                words[at[0]] = " ".join(obj)
                return " ".join(words)
        return name

    def _add_named(self) -> None:
        """The names the memory mentions outside any fact read from it, as mention nodes
        (:mod:`.named`; the engine links them apart from the facts' provenance). A name that
        is part of a fact's node name, or holds one, is that node, not a mention."""
        used = {k for e in self.edges.values() for k in (e.source, e.target)}
        taken = [f" {k} " for k, n in self.nodes.items() if k in used or n.standalone]
        for named in self.named:
            key = name_key(display_name(named.name, self.ex.aliases))
            padded = f" {key} "
            if not key or any(padded in t or t in padded for t in taken):
                continue
            added = self._node(named.name, named.label)
            if added:
                self.nodes[added].mention = True
                taken.append(padded)

    def _known_labels(self) -> dict[str, str]:
        """The labels the nearby graph already gives names, by name key: only those a node
        has on evidence (not a slot's default of its own) and that say what kind it is."""
        found: dict[str, set[str]] = {}
        for n in list(self.context.nearby_nodes)[:500]:
            if n.label in ("Entity", "Concept") or n.attributes.get(DEFAULT_LABEL):
                continue
            found.setdefault(name_key(n.name), set()).add(n.label)
        return {k: next(iter(v)) for k, v in found.items() if len(v) == 1}

    def _delta(self) -> GraphDelta:
        used = {k for e in self.edges.values() for k in (e.source, e.target)}
        known = self._known_labels()
        nodes = []
        for key, n in self.nodes.items():
            if key not in used and not n.standalone and not n.mention:
                continue
            if not n.evidenced and key in known:
                # a slot's default yields to what the graph already knows the name to be
                n.label, n.evidenced = known[key], True
            salience = 0.8 if n.label in ("Preference", "Error") else 0.5
            nodes.append(
                NodeSpec(
                    key=key,
                    name=n.name,
                    label=n.label,
                    aliases=tuple(sorted(n.aliases)),
                    attributes=dict(n.attributes),
                    confidence=n.confidence,
                    salience=salience,
                    mention=n.mention and key not in used and not n.standalone,
                    label_default=not n.evidenced,
                )
            )
        edges = tuple(self.edges.values())
        kind: MemoryKind = self.memory.kind or "knowledge"
        return GraphDelta(tuple(nodes), edges, kind, 0.6 if edges else 0.3, self.event_time)


def _task_object(task: Arg, toks: list[Token]) -> str:
    """The direct object a task names after its verb ("the rice" of "rinse the rice"): the
    noun phrase that follows the verb and its particle, to the first preposition; "" when the
    task has none or its object is itself a pronoun."""
    return _verb_object(toks[task.start : task.end])


def _verb_object(span: list[Token]) -> str:
    """The object noun phrase after the verb that opens ``span`` (see :func:`_task_object`)."""
    if len(span) < 2 or span[0].pos != VERB:
        return ""
    j = 1
    while j < len(span) and span[j].pos == "PART":
        j += 1
    k = j
    while k < len(span) and span[k].pos in ("DET", "POSS", ADJ, "NUM", NOUN, PROPN):
        k += 1
    if k == j or not any(t.pos in (NOUN, PROPN) for t in span[j:k]):
        return ""
    return " ".join(t.lower for t in span[j:k])


def _attributive(toks: list[Token], k: int, end: int) -> bool:
    """A participle that premodifies a noun of its phrase ("a distributed event log", "a
    sorting algorithm", "a fermented food"): an attributive adjective (Quirk et al. 7.15),
    no verb of a clause of its own."""
    t = toks[k]
    participle = t.tag in ("VBN", "VBG") or t.inflected in ("ed", "ing")
    return participle and k + 1 < end and toks[k + 1].pos in (NOUN, ADJ)


def _whole_clause(arg: Arg, toks: list[Token]) -> bool:
    """A clause argument that keeps its subject with an auxiliary, a modal or a verb with its
    own object ("the build is broken", "B can't work when A is down", "my partner dislikes
    clutter") names a state of affairs, not a thing: docs/relations.md names nodes by noun
    phrases and tasks by their verb phrase, so such an end makes no node. A subject with a
    lone verb names its event ("the printer jammed"); a clause cut to its verb phrase
    ("someone bumped X" -> "bump X") is a task; both stay."""
    if arg.kind != CLAUSE or arg.start >= arg.end:
        return False
    words = set(arg.words)
    named = [t for t in toks[arg.start : arg.end] if t.lower in words]
    if not named or named[0].pos in (VERB, AUX, MODAL):
        return False
    verb = next((k for k, t in enumerate(named) if t.pos in (VERB, AUX, MODAL, NEG)), None)
    if verb is None:
        return False
    after = next((t for t in named[verb:] if t.pos != NEG), None)
    if named[verb].pos == NEG and after is not None and after.tag in ("VBN", "VBG"):
        return False  # a reduced clause with no finite verb ("migrations not run") names a state
    if named[verb].pos != VERB:
        return True
    return any(t.pos in (NOUN, PROPN, CODE, "PRON", VERB, ADJ) for t in named[verb + 1 :])


def _drop_prompt(toks: list[Token]) -> list[Token]:
    """A sentence without a leading "Q:" / "A:" prompt."""
    if len(toks) > 2 and toks[0].lower in ("q", "a") and toks[1].lower == ":":
        return toks[2:]
    return toks


def _head_word(arg: Arg) -> str:
    """The head noun of a name: the word before "of", else the last word."""
    words = list(arg.words)
    if "of" in words[1:]:
        return words[words.index("of", 1) - 1]
    return words[-1] if words else ""


#: Words of amount that make an advised object an act ("less coffee", "more fibre", "no
#: screens after 10pm"): blind README conventions, "elided recommended actions are Tasks".
_AMOUNTS = frozenset({"less", "more", "fewer", "no"})


def _with_amounts(relation: str, targets: list[Arg], toks: list[Token]) -> list[Arg]:
    """The targets of an advice with their amount words (:func:`_with_amount`)."""
    if relation != "RECOMMENDS":
        return targets
    return [_with_amount(t, toks) for t in targets]


def _with_amount(arg: Arg, toks: list[Token]) -> Arg:
    """ "the doctor advised less coffee": what is advised is the change of amount (an elided
    act, "drink less coffee"), so the amount word stays in its name; without it the advice
    would read as the opposite ("coffee")."""
    if arg.kind != NP or arg.code or not arg.words or arg.words[0] in _AMOUNTS:
        return arg
    k = arg.start
    while k < arg.end and k < len(toks) and toks[k].lower not in arg.words[:1]:
        k += 1  # the first word the name kept
    j = k
    while j > 0 and toks[j - 1].lower in _AMOUNTS and k - j < 2:
        j -= 1
    if j == k:
        return arg
    amount = " ".join(t.lower for t in toks[j:k])
    return dataclasses.replace(_renamed(arg, f"{amount} {arg.name}"), kind=TASK)


def _caused_event(arg: Arg, m: Match, toks: list[Token]) -> Arg:
    """The event a causative "make" brings about, named by its subject and verb like a
    clause's event ("made the pipes burst" -> "pipes burst"; :meth:`_event`)."""
    verb = max(m.literals)
    if verb < arg.end or toks[verb].pos != VERB:
        return arg
    name = f"{arg.name} {toks[verb].lemma}"
    return Arg(arg.start, verb + 1, name, NP, head=toks[verb].lemma, words=tuple(name.split()))


def _opening_capital(arg: Arg) -> bool:
    """A one-word name whose only capital opens the sentence ("Lactose gives Arjun cramps",
    "Sulfites give Wen headaches"): the capital is no evidence of a person there, so the
    caller asks the word's meaning instead."""
    return arg.start == 0 and len(arg.words) == 1 and "PROPN" not in word_senses(arg.words[0])


def _renamed(arg: Arg, name: str) -> Arg:
    """A copy of ``arg`` named ``name`` (its words re-read from the name)."""
    words = tuple(name.lower().split())
    return Arg(arg.start, arg.end, name, arg.kind, arg.proper, arg.code, "", arg.head, words)


def toks_capital(arg: Arg) -> bool:
    """Whether the argument's first word was written with a capital (a name)."""
    return bool(arg.name[:1].isupper())


def _is_code(name: str) -> bool:
    return any(c in name for c in "()[]_.") and " " not in name.strip()


__all__ = ["StructureExtractor"]
_unused = (NOUN, Node)
