"""Plain data: the nouns of sage_memory. No I/O here, only validation of values.

Every object is a frozen dataclass; change one with :func:`dataclasses.replace`. Ids are uuid4
hex strings; datetimes are timezone-aware UTC.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from sage_memory.errors import ValidationError

#: Embeddings as float32 arrays: one vector (1-D) or a batch with one vector a row (2-D); numpy's
#: array type does not carry the shape, the parameter names do. The one array alias.
Vector = npt.NDArray[np.float32]
MemoryKind = Literal["knowledge", "experience"]
ExtractionStatus = Literal["ok", "failed", "skipped", "pending"]

#: Longest accepted scope value. Ids are names, not documents.
MAX_SCOPE_CHARS = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Unpaired UTF-16 halves cannot be stored as UTF-8 (SQLite, export files).
_SURROGATE = re.compile("[\ud800-\udfff]")


def new_id() -> str:
    """A fresh random id (uuid4, 32 hex characters)."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Return ``value`` in UTC; a naive datetime is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _check_scope_value(name: str, value: str | None) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}: {value!r}")
    if not value or value != value.strip():
        raise ValidationError(
            f"{name}={value!r} is empty or has surrounding spaces; "
            "pass a non-empty id such as 'alice'"
        )
    if len(value) > MAX_SCOPE_CHARS:
        raise ValidationError(f"{name} is {len(value)} characters; the limit is {MAX_SCOPE_CHARS}")
    if _CONTROL.search(value):
        raise ValidationError(f"{name}={value!r} contains control characters; use printable text")
    if _SURROGATE.search(value):
        raise ValidationError(f"{name}={value!r} holds an unpaired surrogate; use valid Unicode")


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to.

    The graph is partitioned by ``(user_id, agent_id)``: nodes and edges of one partition are
    never visible from another. ``run_id`` (a session) tags memories inside a partition; a read
    that names a run sees only that run's memories and the graph items they support.
    """

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        _check_scope_value("user_id", self.user_id)
        _check_scope_value("agent_id", self.agent_id)
        _check_scope_value("run_id", self.run_id)
        if self.user_id is None and self.agent_id is None and self.run_id is None:
            raise ValidationError(
                "no scope given: pass user_id=..., agent_id=... or run_id=... "
                "(every memory belongs to someone)"
            )

    @property
    def partition(self) -> Scope:
        """The graph partition: the scope without its run, unless the run is all there is."""
        if self.run_id is None or (self.user_id is None and self.agent_id is None):
            # Already a partition: itself (frozen, so equal to a copy), not a new Scope whose
            # checks a search would run some forty times.
            return self
        return Scope(self.user_id, self.agent_id, None)

    @property
    def key(self) -> str:
        """A stable string for the partition, used as a storage key."""
        # The partition's fields joined, without building the partition (a validated Scope):
        # the write path asks for keys hundreds of thousands of times per add_many.
        if self.user_id is None and self.agent_id is None:
            return f"\x1f\x1f{self.run_id or ''}"
        return f"{self.user_id or ''}\x1f{self.agent_id or ''}\x1f"

    def as_dict(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("user_id", self.user_id),
                ("agent_id", self.agent_id),
                ("run_id", self.run_id),
            )
            if v
        }


@dataclass(frozen=True, slots=True)
class Memory:
    """One episode: raw text the agent observed or said. Never lost, even when extraction fails."""

    id: str
    text: str
    scope: Scope
    timestamp: datetime  # world time: when it happened / was said
    created_at: datetime  # system time: when it was stored
    updated_at: datetime
    kind: MemoryKind = "knowledge"
    source: str | None = None
    role: str | None = None  # chat role when the memory came from a message
    salience: float = 0.5
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extraction: ExtractionStatus = "pending"
    extraction_error: str | None = None
    event_time: datetime | None = None  # absolute date the text talks about, when resolvable
    archived: bool = False
    access_count: int = 0
    last_accessed: datetime | None = None


@dataclass(frozen=True, slots=True)
class Node:
    """An entity, concept, task, event, tool, preference... in one scope's graph."""

    id: str
    scope: Scope
    name: str
    label: str = "Entity"
    aliases: tuple[str, ...] = ()
    summary: str = ""
    attributes: Mapping[str, Any] = field(default_factory=dict)
    confidence: float = 1.0
    salience: float = 0.5
    memory_ids: tuple[str, ...] = ()  # provenance: the memories that state a fact about it
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    access_count: int = 0
    last_accessed: datetime | None = None
    #: Memories that only mention it (a name said outside any fact read from them: "Wow,
    #: John!"), never listed in ``memory_ids``. Kept apart because a mention says nothing of
    #: how the memory bears on the node: retrieval (the walk, the other-subject test, the
    #: node's support counts) reads ``memory_ids`` only, while deletion and the graph view
    #: see both. A node with mentions and no ``memory_ids`` is a *mention-only* node.
    mention_ids: tuple[str, ...] = ()

    def only_mentioned(self) -> bool:
        """Whether memories name it but no fact was read about it (a mention-only node)."""
        return not self.memory_ids and bool(self.mention_ids)


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed, bi-temporal relation between two nodes of the same scope.

    ``valid_from``/``valid_to`` are world time (when the fact held); ``created_at``/``expired_at``
    are system time (when the memory learnt it and when it stopped believing it).
    """

    id: str
    scope: Scope
    source_id: str
    target_id: str
    relation: str
    fact: str = ""
    weight: float = 1.0
    confidence: float = 1.0
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_at: datetime = field(default_factory=utcnow)
    expired_at: datetime | None = None
    memory_ids: tuple[str, ...] = ()
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def is_current(self, at: datetime | None = None) -> bool:
        """True when the fact holds at ``at`` (world time; default now) and is not expired.

        A competing claim (a weaker value kept beside the standing fact) never holds."""
        if self.attributes.get("competing"):
            return False
        if at is None:
            return self.expired_at is None and self.valid_to is None
        if self.valid_from is not None and at < self.valid_from:
            return False
        return not (self.valid_to is not None and at >= self.valid_to)


# --- what extractors propose --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node an extractor proposes. ``key`` is local to one delta (edges refer to it)."""

    key: str
    name: str
    label: str = "Entity"
    aliases: tuple[str, ...] = ()
    summary: str = ""
    attributes: Mapping[str, Any] = field(default_factory=dict)
    confidence: float = 0.8
    salience: float = 0.5
    #: The memory only mentions it: no fact about it was read ("Wow, John!"). The engine links
    #: the memory to the node as a mention (``Node.mention_ids``), not as provenance.
    mention: bool = False
    #: The label is only what a relation's slot gives its ends by default ("X owns Y": X a
    #: Person), not evidenced by the text, a lexicon or the name's form. Resolution lets such a
    #: node join an existing node of the same name whatever its label, and keeps that label.
    label_default: bool = False


@dataclass(frozen=True, slots=True)
class EdgeSpec:
    """An edge an extractor proposes, between two NodeSpec keys."""

    source: str
    target: str
    relation: str
    fact: str = ""
    confidence: float = 0.8
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    negated: bool = False
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GraphDelta:
    """What an extractor proposes for one memory. The engine applies it through the journal."""

    nodes: tuple[NodeSpec, ...] = ()
    edges: tuple[EdgeSpec, ...] = ()
    kind: MemoryKind | None = None
    salience: float | None = None
    event_time: datetime | None = None
    tokens_used: int = 0
    error: str | None = None  # set when the extractor fell back or failed


# --- what reads return --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """A memory with the score and channels that found it."""

    memory: Memory
    score: float
    channels: tuple[str, ...] = ()
    why: str = ""
    #: Every fact this memory supports no longer holds (at ``as_of``, or now).
    expired: bool = False

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def text(self) -> str:
        return self.memory.text

    @property
    def timestamp(self) -> datetime:
        return self.memory.timestamp

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self.memory.metadata


@dataclass(frozen=True, slots=True)
class NodeHit:
    node: Node
    score: float
    channels: tuple[str, ...] = ()
    why: str = ""

    @property
    def id(self) -> str:
        return self.node.id

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def label(self) -> str:
        return self.node.label


@dataclass(frozen=True, slots=True)
class EdgeHit:
    edge: Edge
    score: float
    source_name: str = ""
    target_name: str = ""
    channels: tuple[str, ...] = ()
    why: str = ""

    @property
    def id(self) -> str:
        return self.edge.id

    @property
    def relation(self) -> str:
        return self.edge.relation

    @property
    def fact(self) -> str:
        return self.edge.fact or f"{self.source_name} {self.edge.relation} {self.target_name}"


@dataclass(frozen=True, slots=True)
class RerankOutcome:
    """What the optional LLM rerank stage of a search did (``RetrievalResult.rerank``).

    Attributes:
        status: "applied" (the model's order is used), "timeout", "error" or "invalid" (the
            search kept its stage-2 order), or "skipped" (fewer than two candidates: no call).
        model: the chat model's name.
        prompt_version: the rerank prompt's version.
        calls: LLM calls made (0 or 1).
        candidates: memories shown to the model.
        input_tokens, output_tokens: as the model reported them.
        ms: time the stage took, including a timed-out wait.
    """

    status: Literal["applied", "timeout", "error", "invalid", "skipped"]
    model: str = ""
    prompt_version: str = ""
    calls: int = 0
    candidates: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    ms: float = 0.0


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """What ``search`` returns: ranked memories and graph items, and a packed context."""

    query: str
    scope: Scope
    memories: tuple[MemoryHit, ...] = ()
    nodes: tuple[NodeHit, ...] = ()
    edges: tuple[EdgeHit, ...] = ()
    context: str = ""
    took_ms: float = 0.0
    #: The focus this search used (node names), given or inferred; () for none.
    focus: tuple[str, ...] = ()
    #: True when the focus was inferred from the session's recent memories.
    focus_inferred: bool = False
    #: What the LLM rerank stage did; None when it was not asked for.
    rerank: RerankOutcome | None = None

    def __iter__(self):  # type: ignore[no-untyped-def]  # iterate like a list of memories
        return iter(self.memories)

    def __len__(self) -> int:
        return len(self.memories)


@dataclass(frozen=True, slots=True)
class Subgraph:
    """Nodes and edges around a start node, as ``explore`` returns them."""

    scope: Scope
    start: tuple[str, ...]
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)


@dataclass(frozen=True, slots=True)
class AddResult:
    """What ``add`` returns."""

    memory_id: str
    memory: Memory
    memory_ids: tuple[str, ...] = ()  # all memories of the call (a list of messages gives several)
    node_ids: tuple[str, ...] = ()
    edge_ids: tuple[str, ...] = ()
    expired_edge_ids: tuple[str, ...] = ()
    change_ids: tuple[str, ...] = ()
    tokens_used: int = 0
    extraction_error: str | None = None
    #: Memories of the call that were already stored (same text, scope and timestamp, or the
    #: same ``metadata["id"]``): nothing was written for them; their ids are the stored ones.
    skipped_ids: tuple[str, ...] = ()

    @property
    def skipped(self) -> bool:
        """True when this memory was already stored and nothing was written for it."""
        return self.memory_id in self.skipped_ids


ChangeOp = Literal["insert", "update", "delete"]
Entity = Literal["memory", "node", "edge"]


@dataclass(frozen=True, slots=True)
class Change:
    """One journaled mutation of one row, with its state before and after (``None`` = absent).

    Undoing a change writes ``before`` back. A batch groups the changes of one call (an add, a
    merge, an evolution run) so they can be undone together.
    """

    id: str
    batch_id: str
    scope_key: str
    entity: Entity
    entity_id: str
    op: ChangeOp
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    at: datetime
    actor: str = "user"
    reason: str = ""


# --- what the evolver keeps besides the graph ---------------------------------------------

AccessKind = Literal["retrieved", "used", "unused"]
SuggestionStatus = Literal["open", "accepted", "rejected"]


@dataclass(frozen=True, slots=True)
class AccessEvent:
    """One use of the memory: what a search returned, or what the caller said it used.

    ``node_ids``/``memory_ids`` are the items the event is about; ``context_ids`` are the nodes
    of the search a feedback refers to: a context node pairs with each item (so usage links a
    question's topic to what answered it) but not with the other context nodes.
    """

    id: str
    scope: Scope
    at: datetime
    kind: AccessKind = "retrieved"
    weight: float = 1.0
    node_ids: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()
    context_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A change the evolver proposes but may not apply on its own: an item of the review queue.

    ``payload`` says what accepting does (re-planned on the graph as it is then); ``key`` names
    what it is about, so the same suggestion is never queued twice, nor again once rejected.
    """

    id: str
    scope: Scope
    op: str
    key: str
    summary: str
    confidence: float
    created_at: datetime
    evidence: Mapping[str, Any] = field(default_factory=dict)
    payload: Mapping[str, Any] = field(default_factory=dict)
    status: SuggestionStatus = "open"
    updated_at: datetime | None = None
    proposed_in: str | None = None  # the evolution run (batch id) that suggested it
    batch_id: str | None = None  # the batch that applied it on accept (undo it with undo())


def replace(obj: Any, **changes: Any) -> Any:
    """:func:`dataclasses.replace`, re-exported for convenience."""
    return dataclasses.replace(obj, **changes)
