"""Current value first: the statement of the asked time ranks above the others of its slot.

A fact that changes ("Ines works from the Lyon office", later "Ines rents a flat in Ghent") leaves
several memories that answer the same question, each stating the value of its time.

Among the memories a search returns (after fusion and MMR chose them), two are *statements of
one slot* when

- the graph says so: both state a value of one single-valued relation (lives in, works at,
  status...; ``ExtractConfig.single_valued``) of one subject, and they name the same of the
  query's names or the query names that subject (a person who moved from the asked team to
  its twin is keyed by one slot in both teams' notes; the twin's note is not the asked
  team's value). Their order is then the values' world time (``valid_from``), not the order
  the memories were said or added; or
- the graph gives in both a holder of the post the question names ("who is the club's
  treasurer now?": "Ilse is treasurer", later "Ilse stepped down; Omar is treasurer"), and
  they name the same of the query's names: a post has one holder at a time, so the slot is
  its holder, though the graph keys each post fact by whoever holds it; or
- their text says so (for phrasings no extractor read): both answer the query about as well as
  the best of them does, they name the same of the query's names (so a twin team's note is
  never mixed in), and either both hold the words of the slot asked (the query's words beside
  its names and its "now": "lab partner", "commits merged") or they are near paraphrases that
  are each among the other's nearest (mutual nearest neighbours: a world's preamble is close to
  every slot it mentions, and plain closeness chained it into one group with a later, other
  slot that then took the lead). Their order is when each was said (the memory's timestamp).

- a later statement says, in its sentence stating the slot asked, that the value changed
  ("commits merged into main, which has now reached 165"), and holds the slot words of an
  earlier statement that answers the query (:mod:`.change`): an update told in passing in a
  long message whose whole text is far from the query. A note headed by another name than
  the earlier one's heading, which holds the asked name ("Wragby Town: ..." after "Hethel
  Rovers: ..."), is another team's, and restates nothing of it.

- for a question asking where (now, or at a time), a later statement tells that the asked
  team or thing moved to a named place ("we've relocated to Oxlade!", "the stall moves to
  the Cuthwin Exchange"; :func:`.change.relocates`) and an earlier one that answers the query
  names a place of it, both naming the same of the query's names: moves of things, not only
  the graph's moves of people.

- a later statement names a value an earlier one gives (a proper name it says besides the
  query's) with a change beside it ("Halden Press missed the date, so we switched to
  Inkwise" after "the printing is done by Halden Press"), and the value is one of the asked
  slot (said where the earlier one holds a slot word or a change, or retold beside one); or
  it names, with a change, the asked subject of a slot the graph holds in the earlier one
  ("Priya has left and joined Tessel" after the fact "Priya works at Corvid Labs") while the
  graph holds no slot of that subject for it. The update uses none of the query's words, so
  it counts only when the query asks which value holds (now, or at a time it names). In
  a group holding such a pair only a statement of the slot (a graph value, a slot word, a
  told change) may lead: a note joined by closeness alone is no value of it, however late.

In each group of such statements the one of the asked time takes the group's best score, then
the one of the asked time among the others that may lead, and so on; the rest keep their order
below them (history stays, just below it). The lead may be a later note of another slot of the
same person or team that closeness joined to the group: the asked value then comes second, not
the oldest statement, which says it in the query's own words. A group joined by words
alone is put in time order only when the query asks for the present or names a time; otherwise
the statements that say their value changed rank above those said before them, and nothing
else moves (two passages on one topic are no versions of one value). Statements of one moment
keep the fused order.

When a chosen memory states a value that no longer holds and the memory stating the value that
holds is not among the chosen, that memory is brought in (:func:`newer_values`; read from the
slots the chosen memories touch, at most :data:`MAX_BROUGHT`, never from a hub's slot) and
kept only when it leads its slot.

A question about the past ("used to", "before", "originally", a past tense without a date)
keeps the fused order; a question with a reference time (``as_of``, or a window it names such
as "in April 2026") puts first the latest statement made by then.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from sage_memory.retrieve.change import (
    NEAR,
    asks_now,
    changes_slot,
    marks_change,
    names_nothing,
    relocates,
    retold_value,
    sentences,
    slot_sentence,
    statement_span,
    value_words,
    without_now,
)
from sage_memory.retrieve.mentions import body, title
from sage_memory.retrieve.query import MONTH_NAMES, QueryPlan
from sage_memory.retrieve.reader import GraphReader
from sage_memory.retrieve.subjects import names_rival
from sage_memory.types import Edge, Memory, Scope, Vector
from sage_memory.words import QUERY_STOPWORDS, TEXT_CACHE, word_tokens

#: Chosen memories (best first) among which statements of one slot are looked for.
WINDOW = 10
#: Cosine two memories need to count as statements of one thing (MiniLM; a paraphrase of the
#: same sentence scores far above this, two notes of one team about different things below).
PARAPHRASE = 0.45
#: Share of the best candidate's query similarity a statement needs to take part.
RELEVANT_SHARE = 0.6
#: Two statements are near paraphrases only when each is among the other's this many most
#: similar candidates (mutual nearest neighbours), besides the cosine above.
NEIGHBOURS = 2
#: Words of the slot asked (the query's content words beside its names) two statements must
#: both hold to be statements of it by their words (fewer when the query has fewer).
SLOT_WORDS = 2
#: Letters a word is cut to before slot words are compared.
STEM = 5
#: Query words that ask for the time of the value, not which slot ("now", "these days").
_WHEN_ASKED = frozenset(
    ["now", "current", "currently", "these", "days", "today", "latest", "still", "anymore"]
)
#: Query cues of a historical question beyond the query reader's past tense ("did", "was",
#: ...). A bare "first" is not one: "the first release's size" may ask for a current value.
_HISTORICAL = re.compile(
    r"\b(originally|initially|used to|before|previous(?:ly)?|former(?:ly)?|earlier"
    r"|at first|in the past|history|over time|in order|ever)\b"
)


#: A question asking where, and a statement naming a place: a locative preposition before a
#: capitalised name ("in Livingston", "to Harbour Street"), the form a place value takes.
_WHERE_ASKED = re.compile(r"\bwhere\b")
_PLACE_NAMED = re.compile(r"\b(?:in|at|to|into|near|from)\s+(?:the\s+)?[A-Z][a-z]")
#: An adverbial dating a new state from a moment on ("from this week", "starting Monday",
#: "as of May"): the sentence tells a change though it names no change.
_ONSET = re.compile(
    r"\b(?:from|starting|as of|effective)\s+(?:this|next|the start of|today|tomorrow|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|" + "|".join(MONTH_NAMES) + r")\b"
)
#: Succession in a role said with what is handed on before the one who takes it ("handed the
#: books to Grace", "passes the chair on to Omar"): the phrasal "hand over" with its object
#: between verb and receiver, the receiver a name.
_HANDED = re.compile(
    r"\b(?:hand|hands|handed|handing|pass|passes|passed|passing)\b(?:\s+[\w'’-]+){1,4}?"
    r"\s+(?:on\s+|over\s+)?to\s+(?:Dr\.?\s+|Mr\.?\s+|Mrs\.?\s+|Ms\.?\s+)?[A-Z]"
)
#: An English inflectional ending (plural, past, participle), cut only when a stem of at least
#: three letters stays ("meetings" -> "meet", "moved" -> "mov", not "red" -> "r").
_INFLECTION = re.compile(r"(?<=\w{3})(?:ings?|ed|es|s)$")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
#: A calendar date or year in a query ("1 February 2026", "March 3rd", "in 2025").
_DATE = re.compile(
    rf"(?i)\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|(?:19|20)\d\d\b)"
)
#: A month named with its year ("April 2026", "Dec 2025"): with :data:`_DATE`, a date, whose
#: figures are no value of a slot.
_MONTH_YEAR = re.compile(rf"(?i)\b{_MONTH}\s+(?:19|20)\d\d\b")
#: The status values of docs/relations.md (HAS_STATUS): a slot whose statements name them is
#: a status, and a statement naming none states no value of it.
STATUS_VALUES = re.compile(r"\b(?:done|in progress|pending|blocked|on hold|cancell?ed)\b")

#: The relation of a post held (docs/relations.md): one holder at a time, so statements of
#: two holders of the post a question names are statements of one slot, its holder.
POST = "HAS_ROLE"

#: Memories the newer values of the chosen memories' slots may bring in, at most.
MAX_BROUGHT = 3
#: A subject with more values of one relation than this is a hub ("the user" of a long
#: chat): its values are not read for bringing newer ones in.
MAX_VALUES = 20
#: Facts read per subject (the latest added first): a busy subject (a speaker who moved and
#: changed jobs for years) has past values without end, and a slot with more than
#: :data:`MAX_VALUES` of them is a hub's anyway. Keeps the read bounded, whatever the size.
SLOT_EDGES = 200


@dataclass(frozen=True, slots=True)
class SlotValue:
    """One value of a single-valued relation of one subject, as the graph holds it."""

    key: tuple[str, str]  # (subject node id, relation)
    valid_from: datetime | None
    edge: Edge


@dataclass(frozen=True, slots=True)
class Slots:
    """The slots the chosen memories state values of, and every known value of them."""

    stated: dict[str, list[SlotValue]]  # memory id -> the values it states
    values: dict[tuple[str, str], list[SlotValue]]  # slot -> its values, in world time
    #: subject node id -> its names (name and aliases, lower-cased), for the stated slots
    subjects: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: post node id -> its names, for the posts (:data:`POST`) the chosen memories give
    posts: dict[str, tuple[str, ...]] = field(default_factory=dict)


def read_slots(
    store: GraphReader,
    scope: Scope,
    memory_ids: Sequence[str],
    relations: Sequence[str],
    *,
    names: bool = True,
) -> Slots:
    """The single-valued facts behind ``memory_ids`` and the other values of their slots.

    Cost: one provenance lookup for the memories and one edge read for the nodes they
    mention, restricted to ``relations`` and outgoing edges (what the memories touch), at
    most :data:`SLOT_EDGES` of each node; with ``names`` (the query names someone or
    something: only then is a subject's name compared with it), one read of the slots'
    subject nodes.
    """
    if not memory_ids or not relations:
        return Slots({}, {})
    wanted = set(memory_ids)
    nodes = sorted({n for ns in store.memory_nodes(scope, memory_ids).values() for n in ns})
    if not nodes:
        return Slots({}, {})
    by_key: dict[tuple[str, str], list[SlotValue]] = {}
    facts = store.edges_of(
        scope, nodes, direction="out", relations=list(relations), per_node=SLOT_EDGES
    )
    for e in facts:
        if e.attributes.get("negated") or e.attributes.get("competing"):
            continue
        key = (e.source_id, e.relation)
        by_key.setdefault(key, []).append(SlotValue(key, e.valid_from, e))
    stated: dict[str, list[SlotValue]] = {}
    values: dict[tuple[str, str], list[SlotValue]] = {}
    for key, vals in by_key.items():
        mine = [v for v in vals if wanted.intersection(v.edge.memory_ids)]
        if not mine:
            continue
        values[key] = sorted(vals, key=_value_order)
        for v in mine:
            for mid in wanted.intersection(v.edge.memory_ids):
                stated.setdefault(mid, []).append(v)
    # The posts the chosen memories give are read with the subjects (one read): a question
    # naming a post ("who is the club's treasurer now?") asks for its holder.
    posts = {v.edge.target_id for vs in stated.values() for v in vs if v.key[1] == POST}
    read = store.get_nodes(scope, sorted({s for s, _ in values} | posts)) if names else ()
    named = {
        n.id: tuple(dict.fromkeys(x.casefold() for x in (n.name, *n.aliases) if x)) for n in read
    }
    subjects = {s: named[s] for s, _ in values if s in named}
    return Slots(stated, values, subjects, {p: named[p] for p in posts if p in named})


def newer_values(slots: Slots, chosen: Sequence[str], at: datetime | None) -> list[tuple[str, str]]:
    """(memory, chosen memory) pairs: the first states the value that holds at ``at`` (None:
    now) of a slot the second states an older or other value of, and no chosen memory states
    it: the update a search missed. Best first (the chosen are best first); at most
    :data:`MAX_BROUGHT`, and none from a hub's slot (more than :data:`MAX_VALUES` values)."""
    have = set(chosen)
    out: dict[str, str] = {}
    for mid in chosen:
        for v in slots.stated.get(mid, ()):
            vals = slots.values.get(v.key, [])
            if len(vals) > MAX_VALUES or v.edge.is_current(at):
                continue
            for now in vals:
                if now.edge.is_current(at) and not have.intersection(now.edge.memory_ids):
                    # The memory that first stated the value (provenance keeps the order
                    # memories were learnt in; the smallest random id would be any of them).
                    new = now.edge.memory_ids[0] if now.edge.memory_ids else None
                    if new is not None and new not in out:
                        out[new] = mid
    return list(out.items())[:MAX_BROUGHT]


def _value_order(v: SlotValue) -> tuple[datetime, datetime, str, str]:
    start = v.valid_from or datetime.min.replace(tzinfo=UTC)
    return (start, v.edge.created_at, v.edge.fact, v.edge.id)


def historical(plan: QueryPlan) -> bool:
    """Whether the query asks about the past without naming when (then no reordering)."""
    if plan.window is not None:
        return False
    return plan.past or bool(_HISTORICAL.search(plan.text.casefold()))


def reference_time(plan: QueryPlan, as_of: datetime | None, now: datetime) -> datetime | None:
    """The moment whose value the query asks for: ``as_of``, else the end of a window the
    query names (not after ``now``); None for "now", when the latest statement counts
    whatever its stamp."""
    if as_of is not None:
        return as_of
    if plan.window is not None:
        # A month without a year is its latest occurrence not after now (as for facts).
        return min(plan.window.end, now)
    return None


def current_first(
    scores: Mapping[str, float],
    memories: Mapping[str, Memory],
    vectors: Mapping[str, Vector],
    qvec: Vector,
    plan: QueryPlan,
    at: datetime | None,
    slots: Slots | None = None,
) -> dict[str, float]:
    """``scores`` with each slot's scores handed out again, the current statement first.

    Args:
        scores: candidate memory id -> fused score.
        memories: the candidates' memories (timestamps and text).
        vectors: the candidates' vectors (a memory without one takes no part).
        qvec: the query's vector.
        plan: the read query (names; the caller checks :func:`historical`).
        at: the reference time (:func:`reference_time`; None: the latest statement first).
        slots: memory id -> the values of single-valued relations it states
            (:func:`read_slots`); two memories stating values of one (subject, relation) are
            statements of one slot whatever their words, ordered by the values' world time.
    """
    stated = slots.stated if slots is not None else {}
    top = [i for i in sorted(scores, key=lambda i: (-scores[i], memories[i].text)) if i in vectors]
    top = top[:WINDOW]
    if len(top) < 2:
        return dict(scores)
    subjects = slots.subjects if slots is not None else {}
    posts = slots.posts if slots is not None else {}
    # Without a "now" or a reference time in the query, a group joined by words alone is
    # put in time order only by a later statement that says its value changed.
    by_time = asks_now(plan.text) or at is not None
    statements = _Statements(top, memories, vectors, qvec, plan, stated, subjects, by_time, posts)
    members = _groups(top, statements.same_slot)
    # A number the query names picks its statement ("the 3 PM call"); one inside a name
    # ("Y6", "v2 API") names the subject, and a date's ("on 1 May 2026") the asked time.
    asked = _numbers(_DATE.sub(" ", plan.text)) - {w for n in plan.names for w in _numbers(n)}
    out = dict(scores)
    for ids in members:  # each best first
        if len(ids) < 2:
            continue
        keyed = bool(set.intersection(*(statements.keys[i] for i in ids)))
        # Only a statement of the slot may lead a group, not a note joined by closeness
        # alone (the same team on something else: a greeting, the weather), however late;
        # nor a note titled with a rival of the asked name (a twin team's). When none is
        # one, the group keeps the old rule.
        eligible = {i for i in ids if statements.may_lead(i)}
        if statements.retelling.intersection(ids):
            # When a later statement retells a value an earlier one gave, the group is about
            # that value: only a statement of the slot may lead it.
            eligible = {i for i in eligible if statements.states(i)}
        eligible = eligible or set(ids)
        eligible = statements.of_kind(ids, eligible)
        lead = _lead(
            ids, memories, statements.keys, stated, at, by_time, statements.changed, eligible
        )
        if lead is None or lead == ids[0]:
            continue
        if asked & (_numbers(memories[ids[0]].text) - _numbers(memories[lead].text)):
            continue  # the query names a number of the best statement: it asks for that one
        if by_time or keyed:
            # The statement of the asked time takes the group's best score; after it the
            # other statements that may lead, each the one of the asked time among those
            # left (the lead may be a note of another slot of the same person or team, told
            # later: the value asked then comes next, not the oldest one that matched the
            # query best); the rest keep their order below them.
            order = _successive(
                lead,
                ids,
                memories,
                statements.keys,
                stated,
                at,
                by_time,
                statements.changed,
                eligible,
            )
        else:
            # A change told in text supersedes what was said before it, not what came after
            # (a later reply that repeats an older figure keeps its place).
            ids = [i for i in ids if i == lead or memories[i].timestamp < memories[lead].timestamp]
            order = _told_changes(ids, memories, statements.changed)
        held = sorted((scores[i] for i in ids), reverse=True)
        for i, s in zip(order, held, strict=True):
            out[i] = s
    return out


class _Statements:
    """What :func:`current_first` compares of its candidates: closeness to the query and to
    each other, the query's names and slot words each holds, the graph slots each states,
    and the sentence stating the asked slot (and whether it says the value changed)."""

    def __init__(
        self,
        top: Sequence[str],
        memories: Mapping[str, Memory],
        vectors: Mapping[str, Vector],
        qvec: Vector,
        plan: QueryPlan,
        stated: Mapping[str, Sequence[SlotValue]],
        subjects: Mapping[str, Sequence[str]] | None = None,
        by_time: bool = True,
        posts: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        q = np.asarray(qvec, dtype=np.float32)
        self.memories, self.plan = memories, plan
        self.subjects = subjects or {}
        self.mat = {i: np.asarray(vectors[i], dtype=np.float32) for i in top}
        self.to_query = {i: float(self.mat[i] @ q) for i in top}
        self.floor = RELEVANT_SHARE * max(self.to_query.values(), default=0.0)
        self.names = {i: _named(memories[i].text, plan.names) for i in top}
        self.keys = {i: {v.key for v in stated.get(i, ())} for i in top}
        # The posts the question names ("who is the club's treasurer now?") each statement
        # gives a holder of: the slot asked is the post's holder, whoever holds it.
        asked_posts = {
            p for p, names in (posts or {}).items() if _posts_named(names, _stems(plan.text))
        }
        self.held = {
            i: {
                v.edge.target_id
                for v in stated.get(i, ())
                if v.key[1] == POST and v.edge.target_id in asked_posts
            }
            for i in top
        }
        name_words = {w for n in plan.names for w in _stems(n)}
        # The slot asked: the query's words beside its names and the words asking for the
        # present ("at present", "these days" ask when, not which slot).
        asked_words = _stems(without_now(plan.text))
        self.qterms = asked_words - name_words - {w[:STEM] for w in _WHEN_ASKED}
        self.terms = {i: _stems(memories[i].text) & self.qterms for i in top}
        # The values of a closed kind each names after its title, in all of it and in its
        # sentences holding a slot word (see :meth:`of_kind`): the status values, and the
        # figures that are neither a date nor one the query names.
        own = _numbers(plan.text)
        self.kinds: list[tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]] = []
        reads: tuple[Callable[[str], frozenset[str]], ...] = (
            _statuses,
            lambda text: _figures(text, own),
        )
        for read in reads:
            said = {i: read(body(memories[i].text)) for i in top}
            slot = {i: read(self._slot_sentences(i)) if said[i] else said[i] for i in top}
            self.kinds.append((said, slot))
        # The words of the query a statement may say after its title (see :meth:`may_lead`),
        # and the slot words in more than one title of the window: the team's topic ("Kite
        # crew: ..."), where one title's own slot words ("Kite crew budget: ...") are not.
        self.asked_words = self.qterms | {w for n in plan.names for w in word_tokens(n)}
        titled = [_stems(title(memories[i].text)) & self.qterms for i in top]
        self.topic = {w for w in self.qterms if sum(w in t for t in titled) > 1}
        # Notes titled with a rival of a name the query says ("Station Gneiss" asked, "Station
        # Basalt: ..."): another team's, whatever their text names.
        told = names_rival(plan.text, [title(memories[i].text) for i in top])
        self.rival_titled = {i for i, rival in zip(top, told, strict=True) if rival}
        # The sentence of each statement that states the asked slot, when one does, and
        # whether it says the value changed (:mod:`.change`): a long message tells an update
        # in passing.
        self.need = min(SLOT_WORDS, len(self.qterms))
        self.said = {
            i: slot_sentence(memories[i].text, _stems, self.qterms, self.need) for i in top
        }
        self.changed = {
            i for i in top if (hit := self.said[i]) and changes_slot(hit[0], _stems, self.qterms)
        }
        self.near = _nearest(
            [i for i in top if self.to_query[i] >= self.floor], self.mat, NEIGHBOURS
        )
        # A later statement that names the value an earlier one gives, with a change ("Halden
        # Press missed the date, so we switched to Inkwise"): what became of that value.
        # Only a query asking which value holds (now, or at a time it names) asks for that:
        # the pair is judged by a name and a change word, none of the query's words, and a
        # query asking what was said or done ("have I set up the routes?") wants the
        # statement that says it, not the later messages that name the same things.
        asked = set(word_tokens(plan.text)) | set(plan.names)
        values = {i: value_words(memories[i].text, asked) for i in top} if by_time else {}
        self.retold = {
            (old, new)
            for old in values
            for new in values
            if memories[new].timestamp > memories[old].timestamp
            and self.to_query[old] >= self.floor
            and self._same_names(old, new)
            and self._retells(old, new, values[old], asked)
        }
        if by_time:
            self.retold |= self._subject_retold(top, self.subjects)
        # A question asking where (now, or at a time): a later note saying that the asked
        # team or thing moved to a named place ("we've relocated to Oxlade!") is a value of
        # the place an earlier note gives ("the office is at Canal Street"), though it holds
        # none of the query's words.
        where = by_time and bool(_WHERE_ASKED.search(plan.text.casefold()))
        self.placed = {i for i in top if where and _PLACE_NAMED.search(body(memories[i].text))}
        self.moved = {i for i in top if where and relocates(body(memories[i].text))}
        self.told = set(self.changed)
        self.changed |= {new for _, new in self.retold}
        self.retelling = {i for pair in self.retold for i in pair}

    def _subject_retold(
        self, top: Sequence[str], subjects: Mapping[str, Sequence[str]]
    ) -> set[tuple[str, str]]:
        """(old, new) pairs: the graph holds a value of a single-valued slot of the asked
        subject in ``old`` ("Priya works at Corvid Labs"), and ``new``, said later, names
        that subject with a change ("Priya has left and joined Tessel") while the graph
        holds no slot of that subject for it (no extractor read it): what became of the
        value. A subject the query does not name is left out (a later note on a colleague)."""
        memories, asked = self.memories, set(self.plan.names)
        out: set[tuple[str, str]] = set()
        for old in top:
            if self.to_query[old] < self.floor:
                continue
            for subject, _ in self.keys[old]:
                words = {w for n in subjects.get(subject, ()) for w in word_tokens(n)}
                if not words or not words <= asked:
                    continue
                for new in top:
                    if (
                        memories[new].timestamp > memories[old].timestamp
                        and subject not in {s for s, _ in self.keys[new]}
                        and self._same_names(old, new)
                        and retold_value(body(memories[new].text), words, NEAR) is not None
                    ):
                        out.add((old, new))
        return out

    def _retells(self, old: str, new: str, values: frozenset[str], asked: set[str]) -> bool:
        """Whether ``new`` names a value ``old`` gives with a change, and the value is one
        of the asked slot: ``old`` names it in a sentence holding a word of the slot or telling
        a change itself ("she's renting in Arles now"), or the sentences of ``new`` that retell
        it hold a word of the slot (the query names no slot word: any value)."""
        told = retold_value(self.memories[new].text, values)
        if told is None:
            return False
        if self.need == 0 or _stems(told) & self.qterms:
            return True
        in_slot = {
            w
            for sentence in sentences(self.memories[old].text)
            if _stems(sentence) & self.qterms or marks_change(sentence)
            for w in value_words(sentence, asked)
        }
        return retold_value(self.memories[new].text, in_slot) is not None

    def _same_names(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` name the same of the query's names, or neither names any
        (a twin team's note names its own team, not the asked one)."""
        names = self.names
        return not (names[a] or names[b]) or bool(names[a] & names[b])

    def states(self, i: str) -> bool:
        """Whether ``i`` states a value of the asked slot by more than closeness: the graph
        holds a value of a single-valued relation for it, it holds a word of the slot, or it
        tells a change (of the slot, or of a value an earlier statement gave). One of the
        slot's words is enough here: the test keeps out notes on other things, not others'
        phrasings of the slot. A query asking its slot by a name alone ("Station Heron's PI")
        has the name's words for the slot's."""
        if self.keys[i] or self.terms[i]:
            return True
        if not self.qterms and _own_words(self.memories[i].text, self.asked_words):
            return True
        return i in self.changed or i in self.retelling

    def may_lead(self, i: str) -> bool:
        """Whether ``i`` may lead a group of statements: it says something of the asked
        subject or slot after its title. A team's note holds the team's name and topic in its
        title ("Team Heron: ..."), and a note on something else of the team ("rained off
        again, pub instead", a season's greeting) is joined to the team's statements by
        closeness alone; it must not lead them, however late. So it may lead when the graph
        holds a value of a single-valued relation for it, it retells a value, it says a word
        of the query after its title (a slot word or a name), it names a place for a question
        asking where ("signed for a unit in Livingston"), or it tells a change with a value
        (a name or a figure: "dropping the old one, we want the v3 design"). A note titled
        with a rival of the asked name is another team's and never leads."""
        if i in self.rival_titled:
            return False
        if self.keys[i] or i in self.retelling:
            return True
        text = self.memories[i].text
        if _own_words(text, self.asked_words) or _stems(title(text)) & self.qterms - self.topic:
            return True
        said = body(text)
        if _WHERE_ASKED.search(self.plan.text.casefold()) and _PLACE_NAMED.search(said):
            return True
        asked = set(word_tokens(self.plan.text)) | set(self.plan.names)
        figures = _numbers(said) - _numbers(self.plan.text)
        changes = marks_change(said) or _ONSET.search(said.casefold()) or _HANDED.search(said)
        return bool(changes) and bool(value_words(said, asked) or figures)

    def _slot_sentences(self, i: str) -> str:
        """The sentences of ``i`` after its title that hold a word of the slot asked."""
        said = sentences(body(self.memories[i].text))
        return " ".join(s for s in said if _stems(s) & self.qterms)

    def of_kind(self, ids: Sequence[str], eligible: set[str]) -> set[str]:
        """``eligible`` without the statements that name no value of the slot's kind, when
        the slot's values are of one kind: at least two statements name differing status
        values (docs/relations.md's six) in their sentences of the slot (holding its words),
        or else differing figures there ("the goal is 3:45", later "my goal is 3:30"). A later
        note of the same topic that names none (what the task needs, a cause, a plan, another
        slot's news) states no value of it, however late. Unchanged when none that names one
        may lead."""
        for said, slot in self.kinds:
            if len({slot[i] for i in ids if slot[i]}) > 1:
                return {i for i in eligible if said[i]} or eligible
        return eligible

    def same_slot(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` state values of one slot (see the module docstring)."""
        keys, names = self.keys, self.names
        # Both must answer the query about as well as the best: a slot the query does not
        # ask about (what "the user" prefers, in a question about a count) is not joined.
        relevant = min(self.to_query[a], self.to_query[b]) >= self.floor
        shared = keys[a] & keys[b]
        if relevant and shared and (self._same_names(a, b) or self._subject_asked(shared)):
            # The graph says so: one subject, one single-valued relation. When that subject
            # is not the one asked ("Yelland Brisco is head coach", asked about a club),
            # a note naming none of the query's names is another team's story of the same
            # person (a twin station he moved to), not a value of the asked one.
            return True
        if relevant and self.held[a] & self.held[b] and self._same_names(a, b):
            # Two holders of the post the question names ("Ilse is treasurer", later "Ilse
            # stepped down; Omar is treasurer"): one slot, its holder, though the graph keys
            # each by its holder and the later note states a fact of the former holder too.
            return True
        if self.restates(a, b) or self.restates(b, a):
            return True
        if (a, b) in self.retold or (b, a) in self.retold:
            return True
        if {s for s, _ in keys[a]} & {s for s, _ in keys[b]}:
            # The graph says they are other slots of one subject ("Alice likes jazz", "Alice
            # moved to Berlin"): however close their words, neither is the other's update.
            return False
        # Statements naming the query's names must share one (a twin team's note names its
        # own team, not the asked one); two that name none of them may be one slot.
        if (names[a] or names[b]) and not names[a] & names[b]:
            return False
        if self._moved_from(a, b) or self._moved_from(b, a):
            return True
        if not relevant:
            return False
        # The words of the slot asked (the query's words other than its names) that both
        # state: "the lab partner" in "Imogen's lab partner is Jonas" and "my new lab partner
        # is Sade", whatever else each says.
        if len(self.terms[a] & self.terms[b]) >= self.need > 0:
            return True
        # Near paraphrases, and each among the other's nearest: a world's notes share their
        # header and topic, so closeness alone chains a preamble to every slot it mentions.
        near = b in self.near[a] and a in self.near[b]
        return near and float(self.mat[a] @ self.mat[b]) >= PARAPHRASE

    def _subject_asked(self, keys: AbstractSet[tuple[str, str]]) -> bool:
        """Whether the query names the subject of one of these slots (every word of one of
        its names is a word of the query's names), or a subject's names were not read (then
        the graph's word stands)."""
        asked = {w for n in self.plan.names for w in word_tokens(n)}
        for subject, _ in keys:
            names = self.subjects.get(subject)
            if names is None:
                return True
            if any((words := set(word_tokens(n))) and words <= asked for n in names):
                return True
        return False

    def _moved_from(self, old: str, new: str) -> bool:
        """``new``, said later, tells that the asked team or thing moved to a named place,
        and ``old``, which answers the query, names a place (or a move) of it: two values of
        where it is. Both must name the same of the query's names (a twin team moves too),
        or the query names none."""
        if new not in self.moved or old not in self.placed | self.moved:
            return False
        if self.memories[new].timestamp <= self.memories[old].timestamp:
            return False
        if self.plan.names and not self.names[old] & self.names[new]:
            return False
        return self.to_query[old] >= self.floor

    def restates(self, old: str, new: str) -> bool:
        """``new``, said later, restates ``old``'s slot with a change: its slot sentence says
        the value changed and holds the asked words ``old`` holds, ``old`` answers the query,
        and the sentence names what ``old`` names, or nothing. The later message may be long
        and about much else, so its whole text need not be close to the query."""
        memories = self.memories
        if new not in self.changed or memories[new].timestamp <= memories[old].timestamp:
            return False
        sentence, held = self.said[new] or ("", set())
        if self.to_query[old] < self.floor or len(held & self.terms[old]) < self.need:
            return False
        if not (self.names[old] or self.names[new]):
            return True
        named = _named(sentence, self.plan.names)
        if self.names[old] & named:
            return True
        # A value told in passing leaves out the name of what it counts ("commits merged
        # into main, which has now reached 165"); a twin team's note names its own team.
        span = statement_span(sentence, _stems, self.qterms)
        return not named and names_nothing(span) and not self._other_heading(old, new)

    def _other_heading(self, old: str, new: str) -> bool:
        """Whether ``new`` is headed by another name than ``old``'s heading, which holds a
        name the query says ("Wragby Town: ..." after "Hethel Rovers: ..."): a note headed by
        another team is that team's, whatever its sentence leaves out."""
        mine, theirs = title(self.memories[old].text), title(self.memories[new].text)
        if not theirs or not _named(mine, self.plan.names) or _named(theirs, self.plan.names):
            return False
        return any(w[:1].isupper() for w in theirs.split())


def _posts_named(names: Sequence[str], asked: frozenset[str]) -> bool:
    """Whether the query (its word stems ``asked``) names the post of these names: every
    content word of one of them ("treasurer", "head of quality")."""
    return any((held := _stems(n)) and held <= asked for n in names)


@functools.lru_cache(maxsize=TEXT_CACHE)
def _statuses(text: str) -> frozenset[str]:
    """The status values (:data:`STATUS_VALUES`) ``text`` names (kept per text)."""
    return frozenset(STATUS_VALUES.findall(text.casefold()))


def _figures(text: str, own: Collection[str]) -> frozenset[str]:
    """The figures of ``text`` that are neither part of a date nor among ``own``."""
    return _undated_figures(text) - set(own)


@functools.lru_cache(maxsize=TEXT_CACHE)
def _undated_figures(text: str) -> frozenset[str]:
    """The figures of ``text`` that are not part of a date (kept per text: the candidates'
    texts and sentences are read again for each search)."""
    return _numbers(_DATE.sub(" ", _MONTH_YEAR.sub(" ", text)))


def _own_words(text: str, words: AbstractSet[str]) -> AbstractSet[str]:
    """The ``words`` (stems, or whole words of a name) ``text`` says after its title."""
    said = body(text)
    return (_stems(said) | set(word_tokens(said))) & words


@functools.lru_cache(maxsize=TEXT_CACHE)
def _stems(text: str) -> frozenset[str]:
    """The content words of ``text``, each without its inflection (-s, -es, -ed, -ing) and
    cut to its first letters (a cheap stem that joins "coverage" and "covered", "merged" and
    "merges", "meet" and "meetings").

    Kept per text (frozen, so no caller can change what the next one reads): a search reads
    the stems of the same candidates, sentences and words many times over."""
    return frozenset(
        _INFLECTION.sub("", w)[:STEM]
        for w in word_tokens(text)
        if w not in QUERY_STOPWORDS and len(w) > 2
    )


def _nearest(ids: Sequence[str], mat: Mapping[str, np.ndarray], k: int) -> dict[str, set[str]]:
    """Each of ``ids`` -> its ``k`` most similar others among ``ids``."""
    out: dict[str, set[str]] = {}
    for a in ids:
        others = sorted((b for b in ids if b != a), key=lambda b: (-float(mat[a] @ mat[b]), b))
        out[a] = set(others[:k])
    return out


def _groups(top: Sequence[str], linked: Callable[[str, str], bool]) -> list[list[str]]:
    """The connected groups of ``top`` under ``linked`` (union-find), each in ``top``'s order."""
    parent = {i: i for i in top}

    def root(r: str) -> str:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for x, a in enumerate(top):
        for b in top[x + 1 :]:
            if linked(a, b):
                parent[root(b)] = root(a)
    members: dict[str, list[str]] = {}
    for i in top:
        members.setdefault(root(i), []).append(i)
    return list(members.values())


def _lead(
    ids: Sequence[str],
    memories: Mapping[str, Memory],
    keys: Mapping[str, set[tuple[str, str]]],
    stated: Mapping[str, Sequence[SlotValue]],
    at: datetime | None,
    by_time: bool = True,
    changed: Collection[str] = (),
    eligible: Collection[str] | None = None,
) -> str | None:
    """The statement of the asked time: the latest made by ``at`` (None: the latest). Its
    time is world time: the start of the value it states when every member states a value of
    one slot the graph knows, else when it was said.

    A group the graph does not hold is ordered by time only when ``by_time`` (the query asks
    for the present or names a time); else only a later statement that says its value
    changed (``changed``) may lead it. A statement later than the best in name only (the
    same moment, as for passages stored in one batch) never leads: the order between them
    is unknown, so the fused order stays."""
    shared = set.intersection(*(keys[i] for i in ids))

    def when(i: str) -> datetime:
        starts = [v.valid_from for v in stated.get(i, ()) if v.key in shared and v.valid_from]
        return max(starts) if starts else memories[i].timestamp

    if not shared and not by_time:
        # Only a statement that says its value changed may lead, over those said before it.
        ids = [i for i in ids if i in changed]
        if not ids:
            return None
    made = [i for i in ids if at is None or when(i) <= at]
    if not made:
        # Everything was said after the asked time: the earliest is the closest to it.
        pool = [i for i in ids if eligible is None or i in eligible] or ids
        return min(pool, key=lambda i: (when(i), ids.index(i)))
    # The latest that may lead (``eligible``: a statement of the slot, not a note joined by
    # closeness); among statements of that moment, the best of all (``ids`` is best first),
    # so a note of one batch never overtakes the fused order.
    pool = [i for i in made if eligible is None or i in eligible] or made
    moment = max((when(i), memories[i].timestamp) for i in pool)
    return next(i for i in made if (when(i), memories[i].timestamp) == moment)


def _successive(
    lead: str,
    ids: Sequence[str],
    memories: Mapping[str, Memory],
    keys: Mapping[str, set[tuple[str, str]]],
    stated: Mapping[str, Sequence[SlotValue]],
    at: datetime | None,
    by_time: bool,
    changed: Collection[str],
    eligible: Collection[str],
) -> list[str]:
    """``ids`` (best first) with ``lead`` first, then, while one of those left may lead
    (``eligible``), the statement of the asked time among those left (:func:`_lead`); the
    others after them, in their order."""
    order = [lead]
    rest = [i for i in ids if i != lead]
    while rest:
        nxt = _lead(rest, memories, keys, stated, at, by_time, changed, eligible)
        if nxt is None or nxt not in eligible:
            break
        order.append(nxt)
        rest.remove(nxt)
    return [*order, *rest]


def _told_changes(
    ids: Sequence[str], memories: Mapping[str, Memory], changed: Collection[str]
) -> list[str]:
    """``ids`` (best first) with each statement that says its value changed above the ones
    said before it: the latest such statement first, then the same again among the earlier
    (a reply that echoes an update does not leave the update below the value it replaced)."""
    told = [i for i in ids if i in changed]
    if not told:
        return list(ids)
    lead = max(told, key=lambda i: (memories[i].timestamp, -ids.index(i)))
    when = memories[lead].timestamp
    before = [i for i in ids if i != lead and memories[i].timestamp < when]
    rest = [i for i in ids if i != lead and i not in before]
    return [lead, *_told_changes(before, memories, changed), *rest]


def _named(text: str, names: Sequence[str]) -> frozenset[str]:
    """The query's names this text mentions (whole words, any case)."""
    low = text.casefold()
    return frozenset(n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", low))


@functools.lru_cache(maxsize=TEXT_CACHE)
def _numbers(text: str) -> frozenset[str]:
    """The words of ``text`` that hold a digit ("7", "v2", "2026"); kept per text, as
    :func:`_stems`."""
    return frozenset(w for w in re.findall(r"\w+", text.casefold()) if any(c.isdigit() for c in w))
