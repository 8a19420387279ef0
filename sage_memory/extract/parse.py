"""Turn an LLM's extraction answer into GraphDelta objects, tolerantly and safely.

Two steps, both pure:

1. :func:`load_json` finds and repairs the JSON: code fences and prose around it, trailing
   commas, Python literals (``True``/``None``), and answers cut off by a token limit (the last
   incomplete element is dropped, open arrays and objects are closed).
2. :func:`parse_extraction` validates it against the schema of ``extract/prompts.py``. Only
   nodes, edges, kind, salience and event time come out; every other key is ignored, so an answer
   that echoes an injected "scope", "user_id" or "config" changes nothing. Unknown relations
   become RELATED_TO (the original name kept in the edge's attributes), unknown labels are mapped
   or become Entity, numbers are clamped, counts and strings are capped.

Anything unusable raises :class:`~sage_memory.errors.ExtractionError` with a message precise
enough to send back to the model; no other exception escapes, whatever the input.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sage_memory.entities.names import match_key, merge_aliases
from sage_memory.errors import ExtractionError
from sage_memory.schema import Schema
from sage_memory.types import EdgeSpec, GraphDelta, MemoryKind, NodeSpec

#: Caps per memory, so one runaway answer cannot flood the graph.
MAX_NODES_PER_MEMORY = 50
MAX_EDGES_PER_MEMORY = 100
MAX_ALIASES = 10
#: Caps on string lengths (characters).
MAX_NAME_CHARS = 200
MAX_LABEL_CHARS = 64
MAX_RELATION_CHARS = 64
MAX_SUMMARY_CHARS = 1000
MAX_FACT_CHARS = 500
#: Answers longer than this are refused before any parsing work.
MAX_ANSWER_CHARS = 1_000_000
#: Deeper nesting than this is not an extraction answer (ours is 5 deep).
MAX_DEPTH = 32
#: Confidence when the model gives none (or garbage).
DEFAULT_CONFIDENCE = 0.8
#: How many candidate JSON starts to try in prose before repairing the first one.
_MAX_STARTS = 20
#: Longest text tried as a Python literal (parsing Python is slower than parsing JSON).
_MAX_LITERAL_CHARS = 100_000

_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_WORD_START = re.compile(r"[A-Za-z_]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACES = re.compile(r"\s+")
#: Unpaired UTF-16 halves ("\ud800" is valid JSON) cannot be stored as UTF-8.
_SURROGATES = re.compile("[\ud800-\udfff]")


# --- step 1: text -> JSON value ------------------------------------------------------------


def _snippet(text: str, limit: int = 80) -> str:
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def _candidates(text: str) -> list[str]:
    """Texts that may hold the JSON: the fenced blocks first, then the whole answer."""
    blocks = [m.group(1) for m in _FENCE.finditer(text) if "{" in m.group(1) or "[" in m.group(1)]
    return [*blocks, text]


def _acceptable(value: Any) -> bool:
    """An object, or a non-empty list of objects: what an extraction answer can be."""
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _starts(text: str) -> list[int]:
    """Where a JSON value may begin, in order, at most :data:`_MAX_STARTS`."""
    starts: list[int] = []
    for match in re.finditer(r"[{\[]", text):
        starts.append(match.start())
        if len(starts) >= _MAX_STARTS:
            break
    return starts


class _Repair:
    """One repair in progress: the output so far, the open containers, the last safe point."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.stack: list[str] = []
        # The last point where the output, with the open containers closed, is complete JSON.
        self.safe_len, self.safe_stack = 0, ""
        self.in_string = self.escaped = False

    def mark_safe(self) -> None:
        self.safe_len, self.safe_stack = len(self.out), "".join(self.stack)

    def string_char(self, c: str) -> None:
        self.out.append(c)
        if self.escaped:
            self.escaped = False
        elif c == "\\":
            self.escaped = True
        elif c == '"':
            self.in_string = False

    def open(self, c: str) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise ExtractionError(f"the answer's JSON is nested deeper than {MAX_DEPTH} levels")
        self.stack.append("}" if c == "{" else "]")
        self.out.append(c)
        self.mark_safe()

    def close(self, c: str) -> bool:
        """Close a container; True when the first top-level value is complete."""
        out, stack = self.out, self.stack
        while out and (out[-1].isspace() or out[-1] == ","):  # trailing comma
            out.pop()
        if stack and stack[-1] == c:
            stack.pop()
            out.append(c)
        elif stack:
            # A mismatched closer ("[1, 2}"): treat it as the one expected here.
            out.append(stack.pop())
        if not stack:
            return True
        self.mark_safe()
        return False

    def comma(self) -> None:
        out = self.out
        while out and out[-1].isspace():
            out.pop()
        if out and out[-1] not in "[{,":  # a comma after a value: that value is complete
            self.mark_safe()
            out.append(",")

    def cut_off(self) -> str:
        """Keep what was complete and close the rest.

        An unterminated string is dropped with its element rather than closed, because a
        half-written name would become a wrong entity.
        """
        kept = "".join(self.out[: self.safe_len]).rstrip()
        while kept.endswith((",", ":")):
            kept = kept[:-1].rstrip()
        return kept + self.safe_stack[::-1]


def _repair(text: str, begin: int) -> str:
    """Rewrite broken JSON starting at ``begin`` into JSON that ``json.loads`` accepts.

    Removes trailing commas, turns Python literals into JSON ones, stops after the first
    complete top-level value, and when the text is cut off, drops the last incomplete element
    and closes what is still open.

    Raises:
        ExtractionError: nesting deeper than :data:`MAX_DEPTH`.
    """
    r = _Repair()
    i, n = begin, len(text)
    while i < n:
        c = text[i]
        if r.in_string:
            r.string_char(c)
        elif c == '"':
            r.in_string = True
            r.out.append(c)
        elif c in "{[":
            r.open(c)
        elif c in "}]":
            if r.close(c):
                return "".join(r.out)  # the first top-level value is complete; prose follows
        elif c == ",":
            r.comma()
        elif _WORD_START.match(c):
            word = _WORD.match(text, i)
            token = word.group(0) if word else c
            r.out.append(_PY_LITERALS.get(token, token))
            i += len(token)
            continue
        else:
            r.out.append(c)
        i += 1
    return r.cut_off()


def _python_literal(text: str, start: int) -> Any:
    """A Python dict/list literal (single quotes, tuples) some models print instead of JSON.

    ``ast.literal_eval`` evaluates literals only, never code. ``None`` when it is not one.
    """
    end = max(text.rfind("}"), text.rfind("]"))
    if end <= start or end - start > _MAX_LITERAL_CHARS:
        return None
    try:
        with warnings.catch_warnings():
            # Odd escapes in the answer ("\s") make ast warn, and under -W error the warning
            # would escape as an exception: they are data here, not a problem of ours.
            warnings.simplefilter("ignore")
            return ast.literal_eval(text[start : end + 1])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def load_json(text: str) -> Any:
    """Find, repair and decode the JSON value in an LLM answer.

    Args:
        text: The raw answer: may have code fences, prose, trailing commas, or be cut off.

    Returns:
        The decoded object or array.

    Raises:
        ExtractionError: nothing usable as JSON.
    """
    if not isinstance(text, str):
        raise ExtractionError(f"the answer is {type(text).__name__}, not text")
    if len(text) > MAX_ANSWER_CHARS:
        raise ExtractionError(
            f"the answer is {len(text):,} characters; the limit is {MAX_ANSWER_CHARS:,}"
        )
    if not text.strip():
        raise ExtractionError("the answer is empty; expected a JSON object")
    decoder = json.JSONDecoder(strict=False)  # strict=False: raw newlines inside strings
    last_error = "no '{' found"
    for candidate in _candidates(text.lstrip("\ufeff")):
        # Try each place a value may start, in order: "[note]" in prose before the answer
        # must not hide it. At each start, decode as is, else repair (a cut-off answer must be
        # repaired as a whole, not replaced by the first inner object that happens to parse).
        for start in _starts(candidate):
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except (ValueError, RecursionError):
                try:
                    value = decoder.decode(_repair(candidate, start))
                except ExtractionError as exc:
                    last_error = str(exc)
                    continue
                except (ValueError, RecursionError) as exc:
                    value = _python_literal(candidate, start)
                    if value is None:
                        last_error = f"invalid JSON even after repair ({exc})"
                        continue
            if _acceptable(value):
                return value
            last_error = f"found JSON but not an object ({_snippet(repr(value), 40)})"
    raise ExtractionError(f"could not read JSON from the answer: {last_error}; {_snippet(text)}")


# --- step 2: JSON value -> GraphDelta ------------------------------------------------------


def _text(value: Any, limit: int) -> str:
    """A clean single-line string, or '' for anything that is not a string."""
    if not isinstance(value, str):
        return ""
    value = _SURROGATES.sub("\ufffd", value)
    return _SPACES.sub(" ", value).strip()[:limit].strip()


def _unit(value: Any, default: float | None) -> float | None:
    """A number clamped to [0, 1]; ``default`` for non-numbers, NaN and booleans."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return default
    if math.isnan(number):
        return default
    return min(1.0, max(0.0, number))


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return False


def _when(value: Any) -> datetime | None:
    """An ISO 8601 date or datetime as UTC; ``None`` for anything else."""
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        return None
    raw = value.strip()
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        try:
            day = date.fromisoformat(raw[:10])
        except ValueError:
            return None
        parsed = datetime(day.year, day.month, day.day)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except (OverflowError, ValueError):  # year 1 or 9999 shifted out of range
        return None


def _kind(value: Any) -> MemoryKind | None:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered == "knowledge":
            return "knowledge"
        if lowered == "experience":
            return "experience"
    return None


@dataclass(slots=True)
class _NodeDraft:
    """A node being built; several mentions of one name merge into it."""

    key: str
    name: str
    label: str
    aliases: list[str] = field(default_factory=list)
    summary: str = ""
    confidence: float = DEFAULT_CONFIDENCE

    def freeze(self) -> NodeSpec:
        return NodeSpec(
            key=self.key,
            name=self.name,
            label=self.label,
            aliases=tuple(self.aliases),
            summary=self.summary,
            confidence=self.confidence,
        )


class _DeltaBuilder:
    """Validates one memory's nodes and edges into a GraphDelta."""

    def __init__(self, schema: Schema, aliases: Mapping[str, str]) -> None:
        self.schema = schema
        self.aliases = aliases
        self.nodes: dict[str, _NodeDraft] = {}
        self.lookup: dict[str, str] = {}  # normalised name or alias -> node key
        self.edges: list[EdgeSpec] = []
        self.edge_keys: set[tuple[str, str, str, bool, str]] = set()

    def _norm(self, name: str) -> str:
        return match_key(name, self.aliases, builtin=False)

    def node(self, name: str, label: str, confidence: float) -> str | None:
        """The key of the node called ``name``, creating it if there is room."""
        norm = self._norm(name)
        if not norm:
            return None
        if norm in self.lookup:
            draft = self.nodes[self.lookup[norm]]
            if draft.label == "Entity" and label != "Entity":
                draft.label = label  # a later mention may know what it is
            draft.confidence = max(draft.confidence, confidence)
            return draft.key
        if len(self.nodes) >= MAX_NODES_PER_MEMORY:
            return None
        self.nodes[norm] = _NodeDraft(key=norm, name=name, label=label, confidence=confidence)
        self.lookup[norm] = norm
        return norm

    def add_node(self, raw: Any) -> None:
        if not isinstance(raw, Mapping):
            return
        name = _text(raw.get("name"), MAX_NAME_CHARS)
        if not name:
            return
        label_raw = _text(raw.get("label"), MAX_LABEL_CHARS)
        label = self.schema.map_label(label_raw) if label_raw else "Entity"
        confidence = _unit(raw.get("confidence"), DEFAULT_CONFIDENCE)
        key = self.node(name, label, DEFAULT_CONFIDENCE if confidence is None else confidence)
        if key is None:
            return
        draft = self.nodes[key]
        summary = _text(raw.get("summary"), MAX_SUMMARY_CHARS)
        if summary and not draft.summary:
            draft.summary = summary
        aliases = raw.get("aliases")
        if isinstance(aliases, list):
            for alias in aliases[: MAX_ALIASES * 2]:
                text = _text(alias, MAX_NAME_CHARS)
                norm = self._norm(text) if text else ""
                if not norm or len(draft.aliases) >= MAX_ALIASES:
                    continue
                if text != draft.name and text not in draft.aliases:
                    draft.aliases.append(text)
                # An alias names the same node, so an edge may use it as an endpoint.
                self.lookup.setdefault(norm, key)

    def add_edge(self, raw: Any) -> None:
        if not isinstance(raw, Mapping) or len(self.edges) >= MAX_EDGES_PER_MEMORY:
            return
        source_name = _text(raw.get("source"), MAX_NAME_CHARS)
        target_name = _text(raw.get("target"), MAX_NAME_CHARS)
        relation_raw = _text(raw.get("relation"), MAX_RELATION_CHARS)
        if not (source_name and target_name and relation_raw):
            return
        confidence = _unit(raw.get("confidence"), DEFAULT_CONFIDENCE)
        confidence = DEFAULT_CONFIDENCE if confidence is None else confidence
        # Endpoints only named in an edge become nodes: the edge is the evidence for them.
        endpoint_confidence = min(confidence, DEFAULT_CONFIDENCE)
        source = self.node(source_name, "Entity", endpoint_confidence)
        target = self.node(target_name, "Entity", endpoint_confidence)
        if source is None or target is None or source == target:
            return
        relation, original = self.schema.map_relation(relation_raw)
        negated = _flag(raw.get("negated"))
        dedupe = (source, relation, target, negated, original or "")
        if dedupe in self.edge_keys:
            return
        self.edge_keys.add(dedupe)
        valid_from, valid_to = _when(raw.get("valid_from")), _when(raw.get("valid_to"))
        if valid_from is not None and valid_to is not None and valid_to < valid_from:
            valid_to = None  # an interval that ends before it starts: keep the start only
        self.edges.append(
            EdgeSpec(
                source=source,
                target=target,
                relation=relation,
                fact=_text(raw.get("fact"), MAX_FACT_CHARS),
                confidence=confidence,
                valid_from=valid_from,
                valid_to=valid_to,
                negated=negated,
                attributes={"original_relation": original} if original else {},
            )
        )

    def build(self, entry: Mapping[str, Any]) -> GraphDelta:
        nodes, edges = entry.get("nodes"), entry.get("edges")
        for raw in nodes if isinstance(nodes, list) else ():
            self.add_node(raw)
        for raw in edges if isinstance(edges, list) else ():
            self.add_edge(raw)
        salience = _unit(entry.get("salience"), None)
        return GraphDelta(
            nodes=tuple(d.freeze() for d in self.nodes.values()),
            edges=tuple(self.edges),
            kind=_kind(entry.get("kind")),
            salience=salience,
            event_time=_when(entry.get("event_time")),
        )


def _entries(value: Any) -> list[Any]:
    """The per-memory entries of an answer, whichever accepted shape it has."""
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):  # pragma: no cover - load_json returns dicts and lists
        raise ExtractionError(f"the answer is a {type(value).__name__}, not a JSON object")
    if "memories" in value:
        memories = value["memories"]
        if isinstance(memories, list):
            return memories
        if isinstance(memories, dict):
            return [memories]
        raise ExtractionError(
            f'"memories" must be a list of objects, got {type(memories).__name__}'
        )
    if "nodes" in value or "edges" in value:
        return [value]  # one memory's entry without the wrapper
    keys = ", ".join(repr(k) for k in list(value)[:10]) or "none"
    raise ExtractionError(
        f'expected a JSON object with a "memories" list (or "nodes"/"edges"); got keys {keys}'
    )


def _is_entry(raw: Any) -> bool:
    return isinstance(raw, Mapping) and (
        isinstance(raw.get("nodes"), list) or isinstance(raw.get("edges"), list)
    )


def _raw_index(raw: Mapping[str, Any]) -> int | None:
    value = raw.get("index")
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) < 10:
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _place(entries: list[Mapping[str, Any]], expected: int) -> list[Mapping[str, Any] | None]:
    """Put each entry in the slot of the memory it answers."""
    indices = [_raw_index(raw) for raw in entries]
    given = {i for i in indices if i is not None}
    # Models often count from 1; a complete 1..N numbering without 0 means exactly that.
    if given and 0 not in given and given == set(range(1, expected + 1)):
        indices = [None if i is None else i - 1 for i in indices]
    slots: list[Mapping[str, Any] | None] = [None] * expected
    unnumbered: list[Mapping[str, Any]] = []
    for raw, index in zip(entries, indices, strict=True):
        if index is None:
            unnumbered.append(raw)
        elif 0 <= index < expected and slots[index] is None:
            slots[index] = raw
        # else: out of range or a repeat; the first entry for a memory wins
    # Entries without an index fill the free slots in order: models often omit "index" when
    # they answer the memories in sequence.
    free = [i for i, slot in enumerate(slots) if slot is None]
    for raw, i in zip(unnumbered, free, strict=False):
        slots[i] = raw
    return slots


def parse_extraction(
    text: str,
    *,
    schema: Schema,
    expected: int = 1,
    aliases: Mapping[str, str] | None = None,
) -> list[GraphDelta | None]:
    """Validate an extraction answer into one GraphDelta per memory of the request.

    Args:
        text: The model's raw answer.
        schema: Known labels and relations; unknown ones are mapped (see module docstring).
        expected: How many memories the request held.
        aliases: Extra name aliases (``ExtractConfig.aliases``), used to merge mentions of one
            entity within an answer.

    Returns:
        A list of length ``expected``: the delta for memory ``i``, or ``None`` when the answer
        has no usable entry for it. Node keys are normalised names; edges refer to them.

    Raises:
        ExtractionError: the answer is not JSON, has the wrong shape, or has no usable entry
            for any memory.
    """
    if expected < 1:
        raise ValueError(f"expected={expected} must be at least 1")
    entries = _entries(load_json(text))
    if not entries:
        # {"memories": []}: the model says there is nothing to extract, which is an answer.
        return [GraphDelta() for _ in range(expected)]
    usable = [raw for raw in entries if _is_entry(raw)]
    if not usable:
        raise ExtractionError(
            f"the answer has {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} but none "
            'with a "nodes" or "edges" list; expected {"memories": [{"index": 0, "nodes": [...], '
            '"edges": [...]}]}'
        )
    table = merge_aliases(aliases)
    slots = _place(usable, expected)
    if all(raw is None for raw in slots):
        found = sorted({i for raw in usable if (i := _raw_index(raw)) is not None})[:10]
        raise ExtractionError(
            f"no entry matches a memory of the request: indices {found} given, "
            f"expected 0 to {expected - 1}"
        )
    return [None if raw is None else _DeltaBuilder(schema, table).build(raw) for raw in slots]
