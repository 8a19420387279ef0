"""Experience records: what an agent did, with which tools, what came of it, what it learnt.

``add_experience(task=..., actions=[...], outcome=..., lesson=...)`` stores one memory of kind
"experience" whose text reads as a short report, whose metadata keeps the record as given
(``metadata["experience"]``), and whose graph is built from the record's structure, without an
extractor or an LLM:

    task -USES-> tool            one per distinct tool; the fact names the call, its arguments
                                 and its result, attributes keep success and the arguments
    task -RESULTED_IN-> outcome  the outcome as an Event node
    task -RELATED_TO-> lesson    the lesson as a Rule node (attributes: role "lesson")

An action is a mapping ``{"tool": name, "arguments": {...} | str, "result": str,
"success": bool}`` (``"name"`` is accepted for ``"tool"``, ``"args"`` for ``"arguments"``) or
a plain string for a step that used no tool (it is kept in the text only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sage_memory.errors import ValidationError
from sage_memory.types import EdgeSpec, NodeSpec

#: One action of an experience: a tool call as a mapping, or a plain step.
Action = str | Mapping[str, Any]

#: Longest node name made from free text (a task, an outcome, a lesson); the memory keeps it all.
MAX_NAME_CHARS = 120
#: Longest rendering of a call's arguments or result in the text and facts.
MAX_VALUE_CHARS = 300


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One action that used a tool, as read from the caller's mapping."""

    tool: str
    arguments: str
    result: str
    success: bool | None


@dataclass(frozen=True, slots=True)
class ExperienceRecord:
    """What ``add_experience`` stores: the text, the metadata and the graph."""

    text: str
    metadata: dict[str, Any]
    nodes: tuple[NodeSpec, ...]
    edges: tuple[EdgeSpec, ...]


def _short(value: str, limit: int) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _text(name: str, value: object, *, required: bool) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValidationError(f"{name}={value!r} must be a non-empty string")
    return value.strip()


def read_action(raw: Action, at: int) -> ToolCall | str:
    """A tool call or a plain step, checked.

    Raises:
        ValidationError: for anything but a non-empty string or a mapping naming its tool.
    """
    if isinstance(raw, str):
        if not raw.strip():
            raise ValidationError(f"actions[{at}] is empty; describe the step or drop it")
        return raw.strip()
    if not isinstance(raw, Mapping):
        raise ValidationError(
            f"actions[{at}]={raw!r} must be a string or a mapping like "
            "{'tool': 'search', 'arguments': {...}, 'result': '...', 'success': True}"
        )
    tool = raw.get("tool", raw.get("name"))
    if not isinstance(tool, str) or not tool.strip():
        raise ValidationError(f"actions[{at}] names no tool: give 'tool' (or 'name')")
    success = raw.get("success")
    if success is not None and not isinstance(success, bool):
        raise ValidationError(f"actions[{at}]['success']={success!r} must be True, False or None")
    return ToolCall(
        tool=tool.strip(),
        arguments=_render(raw.get("arguments", raw.get("args"))),
        result=_render(raw.get("result")),
        success=success,
    )


def _call_text(call: ToolCall) -> str:
    args = f"({_short(call.arguments, MAX_VALUE_CHARS)})" if call.arguments else ""
    status = {True: "", False: " failed", None: ""}[call.success]
    result = f": {_short(call.result, MAX_VALUE_CHARS)}" if call.result else ""
    return f"{call.tool}{args}{status}{result}"


def experience_record(
    task: str,
    actions: Sequence[Action],
    outcome: str | None,
    lesson: str | None,
    success: bool | None,
) -> ExperienceRecord:
    """The text, metadata and graph of one experience (see the module docstring).

    Raises:
        ValidationError: for an empty task, a bad action, or a wrong type.
    """
    task = _text("task", task, required=True)
    outcome = _text("outcome", outcome, required=False)
    lesson = _text("lesson", lesson, required=False)
    if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
        raise ValidationError("actions must be a list (of strings or tool-call mappings)")
    if success is not None and not isinstance(success, bool):
        raise ValidationError(f"success={success!r} must be True, False or None")
    steps = [read_action(a, i) for i, a in enumerate(actions)]
    parts = [_sentence(f"Task: {task}")]
    if steps:
        rendered = [s if isinstance(s, str) else _call_text(s) for s in steps]
        parts.append(_sentence("Actions: " + "; ".join(rendered)))
    if outcome:
        verdict = {True: " (succeeded)", False: " (failed)", None: ""}[success]
        parts.append(_sentence(f"Outcome{verdict}: {outcome}"))
    if lesson:
        parts.append(_sentence(f"Lesson: {lesson}"))
    nodes = [NodeSpec("task", _short(task, MAX_NAME_CHARS), "Task", confidence=1.0)]
    edges: list[EdgeSpec] = []
    tools: dict[str, str] = {}  # tool name -> node key
    for i, step in enumerate(steps):
        if isinstance(step, str):
            continue
        key = tools.get(step.tool.casefold())
        if key is None:
            key = tools[step.tool.casefold()] = f"tool{len(tools)}"
            nodes.append(NodeSpec(key, _short(step.tool, MAX_NAME_CHARS), "Tool", confidence=1.0))
        attributes: dict[str, Any] = {"step": i, "arguments": step.arguments[:MAX_VALUE_CHARS]}
        if step.success is not None:
            attributes["success"] = step.success
        edges.append(
            EdgeSpec(
                "task",
                key,
                "USES",
                fact=f"{_short(task, MAX_NAME_CHARS)} used {_call_text(step)}",
                confidence=1.0,
                attributes=attributes,
            )
        )
    if outcome:
        nodes.append(NodeSpec("outcome", _short(outcome, MAX_NAME_CHARS), "Event", confidence=1.0))
        edges.append(
            EdgeSpec(
                "task",
                "outcome",
                "RESULTED_IN",
                fact=f"{_short(task, MAX_NAME_CHARS)} resulted in {_short(outcome, 200)}",
                confidence=1.0,
                attributes={} if success is None else {"success": success},
            )
        )
    if lesson:
        nodes.append(NodeSpec("lesson", _short(lesson, MAX_NAME_CHARS), "Rule", confidence=1.0))
        edges.append(
            EdgeSpec(
                "task",
                "lesson",
                "RELATED_TO",
                fact=f"lesson from {_short(task, MAX_NAME_CHARS)}: {_short(lesson, 200)}",
                confidence=1.0,
                attributes={"role": "lesson"},
            )
        )
    metadata: dict[str, Any] = {
        "experience": {
            "task": task,
            "actions": [
                s
                if isinstance(s, str)
                else {
                    "tool": s.tool,
                    "arguments": s.arguments,
                    "result": s.result,
                    "success": s.success,
                }
                for s in steps
            ],
            "outcome": outcome or None,
            "lesson": lesson or None,
            "success": success,
        }
    }
    return ExperienceRecord(" ".join(parts), metadata, tuple(nodes), tuple(edges))
