"""The offline default extractor: regular patterns, no model, no network.

:class:`RuleExtractor` reads a memory sentence by sentence:

1. it masks code identifiers, quoted terms, ids and times (:func:`.text.prepare`);
2. it turns relation triggers (:func:`.patterns.find_relations`) into nodes and edges,
   resolving pronouns ("I" -> the user, "it" -> the current focus, "she" -> the last person)
   and linking a short name to a task it already knows by head-noun matching ("the backend" ->
   "build the backend API"), in this memory or among ``ExtractionContext.nearby_nodes``;
3. it reads plans ("first X, then Y, finally Z"; "before X, Y"; "once X is done, Y") into
   Task nodes and PRECEDES chains, with a Project and CONTAINS_TASK when one is named;
4. it reads an agent's own action log ("The user asked to ... I loaded it with
   pandas.read_csv ...") into an Event with USES edges to what it used, and Steps for
   "first ... then ...";
5. it adds a weak POSSIBLY_RELATED_TO edge (confidence 0.3) between entities that share a
   sentence without any pattern.

Confidence follows pattern strength: explicit verb patterns 0.8-0.9, heuristic ones
(taxonomy by plural, "since", "with X") 0.6-0.75, co-occurrence 0.3.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import display_key, display_name, merge_aliases, strip_private
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.patterns import (
    GUARDS,
    RawRelation,
    clean_phrase,
    find_relations,
    is_gerund_clause,
    person_like,
    strip_subject,
    tool_like,
    verb_phrase,
)
from sage_memory.extract.text import (
    AUXILIARIES,
    FIRST_PERSON,
    KNOWN_TOOLS,
    PH_OPEN,
    PLACEHOLDER_RE,
    ROLE_NOUNS,
    TOOL_HEADS,
    VERB_BASES,
    Masked,
    Mention,
    content_words,
    find_proper_names,
    head_word,
    leading_np,
    prepare,
    split_sentences,
    stem,
    trailing_np,
    word_set,
)
from sage_memory.types import EdgeSpec, GraphDelta, Memory, MemoryKind, Node, NodeSpec, as_utc

#: Longest text read; the rest of a longer memory is ignored (the engine keeps the text).
MAX_CHARS = 20_000
_MAX_SENTENCE = 600
_LABEL_RANK = {
    "Person": 9, "Place": 8, "Organization": 8, "Project": 7, "Error": 7, "Event": 6, "Task": 6,
    "Step": 5, "Tool": 5, "Resource": 5, "Document": 5, "Preference": 4, "Rule": 4, "Value": 3,
    "Concept": 2, "Entity": 1,
}  # fmt: skip
#: (subject label, object label) a relation gives to names that have no better label.
_ROLES: dict[str, tuple[str, str]] = {
    "PRECEDES": ("Task", "Task"), "DEPENDS_ON": ("Task", "Concept"),
    "BLOCKED_BY": ("Task", "Task"), "REQUIRES": ("Concept", "Concept"),
    "USES": ("Concept", "Tool"), "HAS_ROLE": ("Person", "Concept"),
    "MEMBER_OF": ("Person", "Organization"), "SOLVED_BY": ("Error", "Task"),
    "PREFERS": ("Person", "Preference"), "DISLIKES": ("Person", "Preference"),
    "ALLERGIC_TO": ("Person", "Preference"), "LIVES_IN": ("Person", "Place"),
    "WORKS_AT": ("Person", "Organization"), "HAS_STATUS": ("Task", "Value"),
    "RECOMMENDS": ("Person", "Rule"), "RELATED_TO": ("Tool", "Concept"),
}  # fmt: skip
#: Relations whose non-person ends may name a task of the plan ("the backend" -> a task).
_TASKISH = frozenset({"DEPENDS_ON", "BLOCKED_BY", "REQUIRES", "USES", "HAS_STATUS", "PRECEDES"})
_FAMILY_SALIENCE = {
    "health": 0.85, "preference": 0.7, "rule": 0.7, "fixes": 0.75, "causality": 0.65,
    "state": 0.65, "experience": 0.6, "dependency": 0.6, "sequence": 0.6, "requirement": 0.6,
}  # fmt: skip
_ERRORISH = re.compile(
    r"(?i)\b(?:errors?|bugs?|crash\w*|exceptions?|fail\w*|broke|broken|leaks?|timeouts?|jams?|drops"
    r"|outages?|conflicts?|mismatch|flaky|slow)\b"
)
_PH = PH_OPEN + r"\d+\ue001"
_QUESTION = re.compile(r"\?\s*$|^(?i:what|which|who|whom|whose|where|why|how)\b(?!.*[.!]\s*$)")
_PREFIX = re.compile(
    r"(?i)^(?:(?:the\s+)?(?:user|customer|client|task|column|file|function|method|command|variable"
    r"|error|call(?:ing)?|us(?:e|ing)|run(?:ning)?)\s+)+(?=" + _PH + r"\s*$)"
)
_AGENT_WORDS = FIRST_PERSON | {"it", "them"}
_USER_WORDS = frozenset({"user", "the user", "customer", "the customer", "client", "the client"})
_ACTION = re.compile(
    r"(?i)(?:^|[,;.!?\n]\s*|\band\s+|\bthen\s+)(?:i|we)\s+(?:(?:then|also|first|just|quickly|finally"
    r"|successfully)\s+)?(?:loaded|called|ran|asked|queried|fetched|searched|used|tried|executed"
    r"|sent|computed|summed|parsed|opened|wrote|created|checked|looked|retried|answered|replied"
    r"|escalated|refunded|issued|found|installed|deployed|switched|plotted|dropped|saved"
    r"|converted|filtered|merged|grouped|read|updated|downloaded|uploaded|generated|tested"
    r"|debugged|restarted|reran|invoked|triggered|requested|summari[sz]ed|translated|extracted"
    r"|renamed|deleted|removed|added|counted|sorted|exported|imported|calculated|scraped"
    r"|emailed|messaged|verified|confirmed)\b"
)
_REQUEST = re.compile(
    r"(?i)(?:^|[,;]\s*)(?P<who>(?:the\s+)?(?:user|customer|client|caller|buyer|visitor)|"
    + _PH
    + r"|[A-Z][a-z]+)?\s*\b(?:asked|wanted|requested|needed|wants|asks|requests)(?:\s+(?:me|us))?"
    r"\s+(?:to\s+|for\s+)?(?P<what>[^;]+)$"
)
_OUTCOME = re.compile(
    r"(?i)\b(?:it|that|this)\s+(?:(?P<ok>worked|succeeded|helped|fixed\s+it)|(?P<bad>did\s+not\s+work"
    r"|failed))\b"
)
_TOOL_CALL = re.compile(r"(?i)\b(?:called|invoked|ran|queried|hit|tried)\s+(?P<x>[^,;]+)")
_RESULT = re.compile(
    r"(?i)\b(?:into|as)\s+(?P<ph>" + _PH + ")|\b(?:saved|wrote|stored|exported)\b[^,;]*?"
    r"\b(?:to|into|in)\s+(?:the\s+file\s+)?(?P<ph2>" + _PH + ")"
)
_PROJECT = re.compile(
    r"(?i)\b(?:want|plan|planning|going|intend|intending|hope|hoping|decided|would\s+like|about)\s+to"
    r"\s+(?:build|create|make|write|develop|launch|start|set\s+up|design|renovate|organi[sz]e"
    r"|open|run|publish|redo|remodel)\s+(?P<p>[^,;:.]+)|\b(?:am|are|is)\s+(?:currently\s+)?"
    r"(?:building|making|creating|developing|writing|launching|renovating|organi[sz]ing)\s+"
    r"(?P<q>[^,;:.]+)|\b(?:the|my|our|this)\s+(?P<r>[\w\s-]{2,40}?)\s+project\b"
)
_SEQ = re.compile(
    r"(?i)(?:^|(?<=[\s,;:(]))(?<!the\s)(?<!a\s)(?:and\s+)?(?:(?P<first>first(?:ly)?(?:\s+of\s+all)?"
    r"|to\s+(?:start|begin)(?:\s+with)?)|(?P<cont>then|next|after\s+that|afterwards?"
    r"|subsequently|finally|lastly|eventually|step\s*\d+|\d{1,2}[.)](?=\s)|(?<=[,;]\s)second(?:ly)?"
    r"|third(?:ly)?))\b\s*[,:.)-]?\s*"
)
_ENDS = re.compile(r"(?i)\s*(?:$|[,;.]|(?:and|then|but|so|because|though|although|while)\b)")
_ONCE = re.compile(
    r"(?i)^(?:once|after)\s+(?P<a>[^,]+?)(?:\s+(?:is|are|has\s+been|have\s+been|was|were)\s+(?:done"
    r"|finished|complete|completed|ready|over|signed|approved|merged|in\s+place|set\s+up))?\s*,"
    r"\s*(?P<b>.+)$"
)
_BEFORE_LEAD = re.compile(r"(?i)^before\s+(?P<a>[^,]+?)\s*,\s*(?P<b>.+)$")
_BEFORE_MID = re.compile(r"(?i)^(?P<a>.+?)\s+before\s+(?P<b>.+)$")
_AFTER_MID = re.compile(r"(?i)^(?P<a>.+?)\s+after\s+(?!that\b)(?P<b>.+)$")
_MAKE_SURE = re.compile(
    r"(?i)^(?:(?:please|always|first)\s+)?(?:make\s+sure|ensure|check|verify|confirm)\s+(?:that\s+)?"
)
_ITEM_CUT = re.compile(
    r"\s*,?\s*\b(?:but|which|because|so\s+that|although)\b.*$|\s*,\s*and\s+(?:it|this|that|he"
    r"|she|they|the\s+\w+\s+\w+ed)\b.*$",
    re.IGNORECASE | re.DOTALL,
)
_ITEM_SUBJECT = re.compile(
    r"(?i)^.*?\b(?:i|we|you|they|let\s+us)\s+(?:(?:will|would|should|must|need\s+to|have\s+to|got\s+to"
    r"|want\s+to|am\s+going\s+to|are\s+going\s+to|going\s+to|can|could|plan\s+to|hope\s+to)\s+)+"
)
_ITEM_LEAD = re.compile(
    r"(?i)^(?:(?:ok|okay|so|and|also|then|plus|got\s+to|need\s+to|have\s+to)\s+)*(?:(?:i|we|you|they"
    r"|let\s+us)\s+)?(?:(?:will|would|should|must|need\s+to|have\s+to|has\s+to|got\s+to|want\s+to"
    r"|am\s+going\s+to|are\s+going\s+to|going\s+to|can|could|plan\s+to|hope\s+to|then|also"
    r"|first|just|probably|definitely|really)\s+)*"
)
_SVO = re.compile(
    r"(?i)(?:^|[,;]\s*)(?:(?:the|a|an|calling|using|running)\s+)?(?P<s>"
    + _PH
    + r"|[A-Za-z][\w.-]+)\s+(?P<v>[a-z]{3,}s)\s+(?P<o>[^,;]+)"
)
_SVO_SKIP = word_set(
    "is has does was uses needs requires depends causes leads results fixes solves resolves "
    "contains includes comprises consists likes loves prefers hates lives works blocks waits "
    "relies runs gets receives enjoys dislikes belongs stems comes arises makes seems looks "
    "means happens"
)
_CODE_KINDS = frozenset({"call", "dotted", "file", "command", "construct", "error", "var"})


@dataclass(slots=True)
class _Node:
    name: str
    label: str
    aliases: set[str] = field(default_factory=set)
    attributes: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.8
    salience: float = 0.5
    standalone: bool = False  # kept even without edges (tasks, code, errors, events)


class PatternExtractor:
    """Offline extractor built on regular patterns (the previous default; agent action logs are
    still read by it).

    Args:
        config: aliases and single-valued relations are read from it; defaults when None.

    Example:
        >>> from sage_memory.extract.base import ExtractionContext
        >>> delta = RuleExtractor().extract(memory, ExtractionContext())  # doctest: +SKIP
    """

    name = "rules"

    def __init__(self, config: ExtractConfig | None = None) -> None:
        self.config = config if config is not None else ExtractConfig()
        self.aliases = merge_aliases(self.config.aliases)
        self.single_valued = frozenset(self.config.single_valued)

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        """Propose nodes and edges for one memory; never raises (see ``GraphDelta.error``)."""
        try:
            return _Builder(memory, context, self).run()
        except Exception as exc:  # the port's contract: odd text must never raise
            return GraphDelta(error=f"rule extractor failed: {type(exc).__name__}: {exc}"[:500])

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        """:meth:`extract` for each item, in order."""
        return [self.extract(memory, context) for memory, context in items]


class _Builder:
    """Accumulates the nodes and edges of one memory."""

    def __init__(self, memory: Memory, context: ExtractionContext, ex: PatternExtractor) -> None:
        self.memory = memory
        self.nearby: list[Node] = list(context.nearby_nodes)[:500]
        self.aliases, self.single = ex.aliases, ex.single_valued
        self.anchor = as_utc(memory.timestamp)
        self.nodes: dict[str, _Node] = {}
        self.edges: dict[tuple[str, str, str, bool], EdgeSpec] = {}
        self.families: set[str] = set()
        self.user = self._user_name()
        self.focus: str | None = None
        self.last_person: str | None = None
        self.last_np = ""
        self.tasks: list[str] = []
        self.step_keys: list[str] = []
        self.last_seq: str | None = None
        self.project: str | None = None
        self.project_fact = ""  # the sentence that named the project, cited by CONTAINS_TASK
        self.event: str | None = None
        self.experience = False
        self.event_time: datetime | None = None
        self.masked = Masked("", "", (), ())
        self.fact = ""
        self.when: datetime | None = None
        self.steps: list[tuple[int, int, str]] = []
        self.sentence_keys: list[str] = []

    def _user_name(self) -> str:
        meta = self.memory.metadata if isinstance(self.memory.metadata, dict) else {}
        for key in ("user_name", "speaker", "name"):
            value = meta.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return self.memory.scope.user_id or "user"

    # --- driver ---------------------------------------------------------------------------

    def run(self) -> GraphDelta:
        text = strip_private(self.memory.text or "")[:MAX_CHARS]
        if not text.strip():
            return GraphDelta(kind=self.memory.kind, salience=0.1)
        self.experience = self.memory.kind == "experience" or bool(_ACTION.search(text))
        if self.experience:
            self.families.add("experience")
        for seg in split_sentences(text):
            for start in range(0, len(seg.text), _MAX_SENTENCE):
                self._sentence(seg.text[start : start + _MAX_SENTENCE])
        self._finish()
        return self._delta()

    def _sentence(self, sentence: str) -> None:
        masked = prepare(sentence, self.anchor)
        self.masked, self.fact, self.steps, self.sentence_keys = masked, sentence[:300], [], []
        self.when = masked.times[0].value if masked.times else None
        if self.event_time is None and self.when is not None:
            self.event_time = self.when
        before = len(self.edges)
        for ent in masked.entities:  # an error named here is what "it" means in this sentence
            if ent.kind == "error":
                self._code_node(ent, "Error")
        if _QUESTION.search(masked.text):  # a question asserts nothing
            self._code_mentions()
            return
        raws = find_relations(masked)
        if re.search(r"\b(?:must|always|never|policy|rule|only\s+if)\b", masked.text, re.I):
            self.families.add("rule")
        self._project()
        if self.experience:
            self._request()
        self._sequence(bool(raws))
        for raw in raws:
            self._apply(raw)
        self._used_together()
        if self.experience:
            self._actions()
        self._code_svo()
        self._code_mentions()
        if len(self.edges) == before:
            self._cooccurrence()
        self.last_np = trailing_np(masked.text.rstrip(" .!?")) or self.last_np

    # --- nodes ----------------------------------------------------------------------------

    def _node(self, name: str, label: str, *, standalone: bool = False, conf: float = 0.8) -> str:
        display = display_name(name, self.aliases)
        key = display_key(display)
        if not key or len(key) > 200:
            return ""
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = _Node(display, label, confidence=conf)
        elif _LABEL_RANK.get(label, 0) > _LABEL_RANK.get(node.label, 0):
            node.label = label
        if name.strip() and name.strip() != node.name:
            node.aliases.add(name.strip())
        node.standalone = node.standalone or standalone
        self.sentence_keys.append(key)
        return key

    def _person(self, name: str) -> str:
        key = self._node(name, "Person")
        self.last_person = key or self.last_person
        return key

    def _code_node(self, ent: Mention, role: str) -> str:
        kind = ent.kind
        if kind == "userid":
            return self._person(ent.text)
        label = {"error": "Error", "file": "Document", "var": "Value"}.get(kind, "Tool")
        if kind == "error" and ":" not in ent.text:  # "that DatabaseError" -> the known one
            known = [n.name for n in self.nearby if n.name.startswith(ent.text + ":")]
            ent = ent._replace(text=known[0]) if len(known) == 1 else ent
        if kind == "quoted":
            keep = ("Task", "Error", "Preference", "Place", "Organization")
            label = role if role in keep else "Value"
            if re.search(r"\b(?:not|no|error|failed|cannot|denied|invalid|refused)\b", ent.text):
                label = "Error"
        key = self._node(ent.text, label, standalone=kind in _CODE_KINDS, conf=0.9)
        if label == "Error" and key:
            self.focus = key
        return key

    def _entity(
        self, text: str | None, role: str, relation: str = "", embed: str = "MENTIONS"
    ) -> str:
        """The node key for a masked name, or "" when it names nothing usable."""
        if text is None:
            return self.focus or ""
        t = _PREFIX.sub("", text.strip())
        pronoun = self._pronoun(t.lower(), role)
        if pronoun is not None:
            return pronoun
        ent = self.masked.entity(t)
        if ent is not None:
            return self._code_node(ent, role)
        name = re.split(r"(?<=\w)'s\s+", self.masked.unmask(t))[-1]
        if name.lower() in _USER_WORDS:
            return self._person(self.user)
        words = name.split()
        if not words or not any(c.isalnum() for c in name):
            return ""
        name = " ".join(words[:12])
        if role == "Person" and (person_like(t, self.masked) or relation):
            return self._person(name)
        label = self._label(name, t, role, relation)
        if relation in _TASKISH and label in ("Task", "Concept"):
            found = self._resolve_task(name)
            if found:
                return found
            if is_gerund_clause(name) or verb_phrase(name):
                label = "Task"
        key = self._node(name, label, standalone=label in ("Task", "Error"))
        for m in PLACEHOLDER_RE.finditer(t):
            code = self._code_node(self.masked.entities[int(m.group(1))], "Tool")
            self._edge(key, embed, code, 0.6 if embed == "MENTIONS" else 0.75)
        return key

    def _pronoun(self, low: str, role: str) -> str | None:
        """The node a pronoun stands for ("" for none known); None when ``low`` is no pronoun."""
        if low in FIRST_PERSON:
            return self._person(self.user)
        if low in ("he", "she", "him", "her") or (low in ("they", "them") and role == "Person"):
            return self.last_person or ""
        if low in ("it", "this", "that", "them", "these", "those", "they"):
            return self.focus or ""
        if low in ("you", "one", "someone", "everyone", "there", "what", "which", "who"):
            return ""
        return None

    def _label(self, name: str, masked_name: str, role: str, relation: str) -> str:
        """The label of a named node in ``role`` (a Person role that names no person is an
        Entity; a known tool keeps its label)."""
        if role == "Person":
            return "Entity"
        if name.lower() in KNOWN_TOOLS:
            return KNOWN_TOOLS[name.lower()]
        if (
            role in ("Concept", "Task")
            and _ERRORISH.search(name)
            and relation in ("CAUSED_BY", "SOLVED_BY")
        ):
            return "Error"
        if role == "Tool" and not tool_like(masked_name, self.masked):
            return "Concept"
        return role

    def _resolve_task(self, name: str) -> str:
        """A task (or project) of this delta or nearby whose words cover ``name``'s words."""
        words = set(content_words(name))
        head = head_word(name)
        if not words or not head:
            return ""
        best, best_score, best_label = "", 0.0, "Task"
        candidates = [(n.name, n.label) for n in self.nodes.values() if n.label in ("Task", "Step")]
        candidates += [
            (n.name, n.label) for n in self.nearby if n.label in ("Task", "Step", "Project")
        ]
        for cand, label in candidates:
            cw = set(content_words(cand))
            if head in cw and words <= cw:
                score = len(words) / len(cw)
                if score > best_score:
                    best, best_score, best_label = cand, score, label
        return self._node(best, best_label, standalone=True) if best else ""

    # --- edges ----------------------------------------------------------------------------

    def _edge(self, src: str, rel: str, dst: str, conf: float, *, negated: bool = False,
              attrs: dict[str, Any] | None = None) -> None:  # fmt: skip
        if not src or not dst or src == dst:
            return
        valid_from = self.when
        if valid_from is None and rel in self.single:
            valid_from = self.anchor  # a state that changes holds from when it was said
        old = self.edges.get((src, rel, dst, negated))
        if old is None or old.confidence < conf:
            self.edges[(src, rel, dst, negated)] = EdgeSpec(
                src, dst, rel, self.fact, conf, valid_from, None, negated, dict(attrs or {})
            )

    def _apply(self, raw: RawRelation) -> None:
        attrs: dict[str, Any] = dict(raw.attrs)
        reverse = attrs.pop("reverse", None) is not None
        modal = attrs.pop("modal", None) is not None
        relation = raw.relation
        s_role, o_role = _ROLES.get(relation, ("Concept", "Concept"))
        if relation == "HAS_PROPERTY" and raw.subject and person_like(raw.subject, self.masked):
            s_role = "Person"
        if reverse:
            s_role, o_role = o_role, s_role
        self.families.add(raw.family)
        chains = GUARDS[raw.guard].chains_to_user
        agent = (raw.subject or "").lower() in _AGENT_WORDS or chains
        if self.experience and relation == "USES" and agent and (self._acts() or self.event):
            subject = self._action_source(raw.start)  # "I loaded it with X": the step uses X
        else:
            subject = self._entity(raw.subject, s_role, relation)
        if chains:  # "X with Y" where X is itself used: chain to X's user
            for e in self.edges.values():
                if e.relation == "USES" and e.target == subject and e.fact == self.fact:
                    subject = e.source
                    break
        if not subject:
            return
        if relation == "HAS_STATUS":
            self._status(subject, attrs, raw)
            return
        o_rel = relation if relation in ("DEPENDS_ON", "BLOCKED_BY") else ""
        targets = [self._entity(o, o_role, o_rel) for o in raw.objects]
        for target in filter(None, targets):
            rel = self._adjust(relation, subject, target, modal)
            src, dst = (target, subject) if reverse else (subject, target)
            self._edge(src, rel, dst, raw.confidence, negated=raw.negated, attrs=attrs)
            if rel in ("CAUSED_BY", "SOLVED_BY"):
                self.focus = src
        if relation not in ("CAUSED_BY", "SOLVED_BY") and self.nodes[subject].label != "Person":
            self.focus = subject if not reverse else self.focus

    def _acts(self) -> bool:
        return _ACTION.search(self.masked.text) is not None

    def _used_together(self) -> None:
        """Two calls used by one thing in one sentence are related ("opened with open(),
        closed with close()")."""
        by_source: dict[str, list[str]] = {}
        for e in self.edges.values():
            if e.relation == "USES" and e.fact == self.fact and "(" in e.target:
                by_source.setdefault(e.source, []).append(e.target)
        for targets in by_source.values():
            for a, b in itertools.pairwise(targets):
                self._edge(a, "RELATED_TO", b, 0.6, attrs={"why": "used together"})

    def _adjust(self, relation: str, subject: str, target: str, modal: bool) -> str:
        s_label = self.nodes[subject].label
        head = target.rsplit(maxsplit=1)[-1]
        if relation == "IS_A" and s_label == "Person" and head.rstrip("s") in ROLE_NOUNS | {head}:
            return "HAS_ROLE"
        if relation == "USES" and modal and s_label in ("Task", "Concept"):
            return "REQUIRES"
        if relation == "LIVES_IN" and target in KNOWN_TOOLS:
            return "USES"
        return relation

    def _status(self, task: str, attrs: dict[str, Any], raw: RawRelation) -> None:
        status = str(attrs.get("status", ""))
        if not status:
            return
        node = self.nodes[task]
        if node.label not in ("Task", "Step", "Project", "Person"):
            node.label = "Task"
        node.standalone = True
        negated = raw.negated or "negated_status" in attrs
        if not negated and node.label != "Person":
            node.attributes["status"] = status
        value = self._node(status, "Value")
        self._edge(
            task, "HAS_STATUS", value, raw.confidence, negated=negated, attrs={"status": status}
        )

    # --- plans ----------------------------------------------------------------------------

    def _project(self) -> None:
        for m in _PROJECT.finditer(self.masked.text):
            raw = m.group("p") or m.group("q") or m.group("r") or ""
            name = leading_np(raw) if not m.group("r") else raw
            name = re.sub(r"\s+project$", "", name, flags=re.I).strip()
            if name and not name.lower().startswith(("it", "this", "that")):
                key = self._node(self.masked.unmask(name), "Project", standalone=True)
                if key:
                    self.project, self.focus = key, key
                    self.project_fact = self.fact
                    self.families.add("sequence")
                    return

    def _sequence(self, has_relations: bool) -> None:
        text = self.masked.text
        items = _split_sequence(text)
        initial = bool(items) and _SEQ.match(text) is not None
        if len(items) < 2 and not (
            items and (initial or (items[0][2] == "cont" and self.last_seq))
        ):
            items = [] if has_relations else self._conditional(text)
            if not items:
                return
        self.families.add("sequence")
        keys: list[str] = []
        prev_verb, prev_step = "", False
        for i, (start, end, kind) in enumerate(items):
            name, is_step = self._task_name(text[start:end], trailing_np(text[:start]) if i else "")
            words = name.lower().split()
            if not words or (len(items) == 1 and words[0] not in VERB_BASES and len(words) < 3):
                continue  # "First line", "Next week": an adjective, not a one-step plan
            first = words[0]
            bare = first in ("the", "a", "an", "my", "our", "their") or self.masked.entity(
                text[start:end].strip(" ,;.")
            )
            if prev_verb and bare:  # "then the frontend": the verb of the step before
                name, is_step = f"{prev_verb} {name}", is_step or prev_step
            lead = name.split()[0]
            prev_verb = lead if lead.lower() in VERB_BASES or is_step else ""
            prev_step = is_step
            key = self._resolve_task(name) if not is_step else ""
            if not key:
                key = self._node(name, "Step" if is_step else "Task", standalone=True)
                node = self.nodes.get(key)
                if node is not None and not is_step and "status" not in node.attributes:
                    node.attributes["status"] = "pending"
            if not key:
                continue
            (self.step_keys if is_step else self.tasks).append(key)
            self.steps.append((start, end, key))
            if i == 0 and kind == "cont" and self.last_seq:
                keys.append(self.last_seq)
            keys.append(key)
        for a, b in itertools.pairwise(keys):
            self._edge(a, "PRECEDES", b, 0.85)
        if keys:
            self.last_seq = keys[-1]

    def _task_name(self, raw: str, before: str) -> tuple[str, bool]:
        text = _ITEM_CUT.sub("", raw.rsplit(":", 1)[-1]).strip(" ,;.")
        text = re.sub(r"\s*,?\s*\band\s*$", "", text, flags=re.I)
        step = self.experience and bool(
            re.match(r"^(?:(?:i|we)\s+)?\w+ed\b|^(?:i|we)\s+\w+", text, re.I)
        )
        text = _ITEM_LEAD.sub("", _ITEM_SUBJECT.sub("", text)).strip()
        text = clean_phrase(text, keep_det=True) if text else ""
        referent = before or self.last_np
        if step and referent:  # "asked for it" must not become one node shared by every log
            text = re.sub(r"\bit\b", referent, text, count=1)
        name = self.masked.unmask(text)
        return (name, step) if 0 < len(name.split()) <= 14 else ("", False)

    def _conditional(self, text: str) -> list[tuple[int, int, str]]:
        m = _ONCE.match(text) or _BEFORE_LEAD.match(text)
        mid = _BEFORE_MID.match(text) or _AFTER_MID.match(text)
        if m is not None:
            a, b = (m.start("a"), m.end("a")), (m.start("b"), m.end("b"))
            later_first = text.lower().startswith("before")
        elif mid is not None:
            a, b = (mid.start("a"), mid.end("a")), (mid.start("b"), mid.end("b"))
            later_first = " after " in text[a[1] : b[0] + 1].lower()
            head = _ITEM_LEAD.sub("", text[a[0] : a[1]]).split(" ", 1)[0].lower()
            if head not in VERB_BASES and not _MAKE_SURE.match(text[a[0] : a[1]]):
                return []
        else:
            return []
        first, second = (b, a) if later_first else (a, b)
        sure = _MAKE_SURE.match(text[first[0] : first[1]])
        if sure:  # "make sure X before Y": Y depends on X, it is not a step of the plan
            pre = clean_phrase(text[first[0] + sure.end() : first[1]])
            task = self._entity(
                clean_phrase(strip_subject(text[second[0] : second[1]])), "Task", "DEPENDS_ON"
            )
            self._edge(task, "DEPENDS_ON", self._entity(pre, "Concept"), 0.8)
            self.families.add("dependency")
            return []
        rest = _split_sequence(text[second[0] : second[1]])
        out = [(first[0], first[1], "")]
        if len(rest) >= 2:
            return out + [(second[0] + s, second[0] + e, k) for s, e, k in rest]
        return [*out, (second[0], second[1], "")]

    # --- experience -----------------------------------------------------------------------

    def _request(self) -> None:
        m = _REQUEST.search(self.masked.text)
        if m is None or (m.group("who") is None and m.start() > 0):
            return
        who = (m.group("who") or "").strip()
        if who.lower() in FIRST_PERSON or who.lower() in ("then", "so", "and", "but", "he", "she"):
            return
        what = clean_phrase(re.split(r",\s*(?:then|and|so)\b|\s+then\s+", m.group("what"))[0])
        event = self._entity(what, "Event", embed="USES") if what else ""
        if not event:
            return
        self.nodes[event].label = "Event"
        self.nodes[event].standalone = True
        self.event = event
        if who:
            person = self._entity(who, "Person", "RELATED_TO")
            self._edge(person, "RELATED_TO", event, 0.7, attrs={"verb": "asked"})

    def _action_source(self, pos: int) -> str:
        for start, end, key in self.steps:
            if start <= pos <= end + 1:
                return key
        if self.event:
            return self.event
        m = _ACTION.search(self.masked.text)
        if m is None:
            return ""
        clause = re.split(
            r"\s+(?:and|then|but|so)\s+|[,;]", self.masked.text[m.start() :].strip(" ,;")
        )[0]
        name = self.masked.unmask(clause_text := strip_subject(clause))
        if not clause_text:
            return ""
        self.event = self._node(name, "Event", standalone=True)
        return self.event

    def _actions(self) -> None:
        text = self.masked.text
        outcome = _OUTCOME.search(text)
        target = self.event or (self.step_keys[-1] if self.step_keys else "")
        if outcome and target:  # what worked is what the agent should repeat
            ok = outcome.group("ok") is not None
            self.nodes[target].attributes["outcome"] = "success" if ok else "failure"
        if not self._acts():
            return
        used = {e.target for e in self.edges.values() if e.fact == self.fact}
        results = {m.group("ph") or m.group("ph2") for m in _RESULT.finditer(text)}
        for m in PLACEHOLDER_RE.finditer(text):
            ent = self.masked.entities[int(m.group(1))]
            if ent.kind in ("userid", "error"):
                continue
            code = self._code_node(ent, "Value")
            source = self._action_source(m.start())
            if code and code not in used and source != code:
                rel = "RESULTED_IN" if m.group() in results else "USES"
                self._edge(source, rel, code, 0.8)
        for m in _TOOL_CALL.finditer(text):
            np = leading_np(m.group("x"))
            if np and (np.split()[-1].lower() in TOOL_HEADS or tool_like(np, self.masked)):
                self._edge(self._action_source(m.start()), "USES", self._entity(np, "Tool"), 0.8)

    # --- code and co-occurrence -----------------------------------------------------------

    def _code_svo(self) -> None:
        for m in _SVO.finditer(self.masked.text):
            verb, subj = m.group("v").lower(), m.group("s")
            ent = self.masked.entity(subj)
            if verb in _SVO_SKIP:
                continue
            if (ent is None and subj.lower() not in KNOWN_TOOLS) or (
                ent is not None and ent.kind in ("quoted", "userid", "error")
            ):
                continue
            source = self._entity(subj, "Tool")
            obj = leading_np(m.group("o"))
            if obj and source:
                self._edge(
                    source, "RELATED_TO", self._entity(obj, "Concept"), 0.6, attrs={"verb": verb}
                )
                self.families.add("code")
            self._verb_link(source, verb)

    def _verb_link(self, source: str, verb: str) -> None:
        """ "the with statement closes the file" -> with statement RELATED_TO close()."""
        bases = {verb[:-1], verb[:-2], stem(verb)}
        names = [n.name for n in self.nodes.values() if n.label == "Tool"]
        names += [n.name for n in self.nearby if n.label in ("Tool", "Resource")]
        for name in names:
            base = name.lower().split("(")[0].rsplit(".", 1)[-1]
            if "(" in name and base in bases:
                target = self._node(name, "Tool")
                self._edge(
                    source,
                    "RELATED_TO",
                    target,
                    0.6,
                    attrs={"verb": verb, "why": "verb names the call"},
                )

    def _code_mentions(self) -> None:
        for ent in self.masked.entities:
            if ent.kind in _CODE_KINDS:
                self._code_node(ent, "Tool")

    def _cooccurrence(self) -> None:
        keys = [k for k in dict.fromkeys(self.sentence_keys) if self.nodes[k].label != "Value"]
        if len(keys) + len(find_proper_names(self.masked.original)) < 2:
            return
        spans = [(e.start, e.end) for e in self.masked.entities]
        for prop in find_proper_names(self.masked.original):
            inside = any(a < prop.end and prop.start < b for a, b in spans)
            if not inside and prop.text.lower() not in FIRST_PERSON:
                key = self._node(prop.text, KNOWN_TOOLS.get(prop.text.lower(), "Entity"), conf=0.5)
                if key and key not in keys:
                    keys.append(key)
        for a, b in list(itertools.pairwise(keys))[:3]:
            self._edge(a, "POSSIBLY_RELATED_TO", b, 0.3, attrs={"why": "same sentence"})

    # --- output ---------------------------------------------------------------------------

    def _finish(self) -> None:
        if self.project is None and self.tasks:
            low = self.memory.text.lower()
            projects = [n for n in self.nearby if n.label == "Project" and head_word(n.name)]
            hits = [n for n in projects if re.search(rf"\b{re.escape(head_word(n.name))}", low)]
            if len(hits) == 1:
                self.project = self._node(hits[0].name, "Project")
        if self.project_fact:
            self.fact = self.project_fact
        for task in dict.fromkeys(self.tasks):
            if self.project:
                self._edge(self.project, "CONTAINS_TASK", task, 0.8)
        for step in dict.fromkeys(self.step_keys):
            if self.event:
                self._edge(self.event, "CONTAINS_TASK", step, 0.75)

    def _delta(self) -> GraphDelta:
        used = {k for e in self.edges.values() for k in (e.source, e.target)}
        nodes = []
        for key, n in self.nodes.items():
            if key not in used and not n.standalone:
                continue
            salience = 0.8 if n.label in ("Preference", "Rule", "Error") else 0.5
            nodes.append(
                NodeSpec(key=key, name=n.name, label=n.label, aliases=tuple(sorted(n.aliases)),
                         attributes=dict(n.attributes), confidence=n.confidence, salience=salience)
            )  # fmt: skip
        edges = tuple(self.edges.values())
        salience = max((_FAMILY_SALIENCE.get(f, 0.5) for f in self.families), default=0.5)
        if not edges:
            salience = min(salience, 0.3)
        kind: MemoryKind = "experience" if self.experience else "knowledge"
        return GraphDelta(tuple(nodes), edges, kind, salience, self.event_time)


def _split_sequence(text: str) -> list[tuple[int, int, str]]:
    """Spans of the items of "first X, then Y, finally Z" (kind: "first", "cont" or "")."""
    marks = list(_SEQ.finditer(text))
    if not marks:
        return []
    items: list[tuple[int, int, str]] = []
    pos, kind = 0, ""
    for m in marks:
        chunk = text[pos : m.start()]
        if chunk.split()[-1:] and chunk.split()[-1].lower() in AUXILIARIES:
            continue  # "is finally done": an adverb, not a step marker
        # "X first, then Y" marks X; "..., first we Y" opens a new clause
        postfix = (
            bool(m.group("first")) and chunk.strip(" ,;:") != "" and _ENDS.match(text, m.end())
        )
        if chunk.strip(" ,;:.") and (kind or postfix or m.group("cont")):
            items.append((pos, m.start(), kind))
        kind = "" if postfix else ("first" if m.group("first") else "cont")
        pos = m.end()
    if text[pos:].strip(" ,;:.") and kind:
        items.append((pos, len(text), kind))
    return items


#: The name users and the engine know; see the end of this module.
RuleExtractor = PatternExtractor
