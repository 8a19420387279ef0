"""Prompts the evolver sends to an LLM (when one is configured), and the parsing of answers.

Prompts are versioned pure functions; parsing is separate and never trusts the answer: anything
unusable yields ``None`` and the caller falls back to its offline method.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sage_memory.llm.base import ChatModel, Message

SUMMARY_PROMPT_VERSION = "summary-v1"
SPLIT_PROMPT_VERSION = "split-v1"

SUMMARY_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "summary": {"type": "string"}},
    "required": ["title", "summary"],
}

SPLIT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "split": {"type": "boolean"},
        "names": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["split", "names"],
}


def summary_prompt(names: Sequence[str], facts: Sequence[str]) -> list[Message]:
    """Ask for a title and a two-sentence summary of one community of the graph."""
    body = "Entities:\n" + "\n".join(f"- {n}" for n in names[:40])
    if facts:
        body += "\n\nFacts:\n" + "\n".join(f"- {f}" for f in facts[:40])
    return [
        {
            "role": "system",
            "content": "You summarise a cluster of a knowledge graph for later retrieval. "
            'Answer with JSON only: {"title": "<at most 6 words>", "summary": "<at most two '
            'sentences naming the main entities and how they relate>"}. Use only the given '
            "entities and facts.",
        },
        {"role": "user", "content": body},
    ]


def split_prompt(name: str, groups: Sequence[Sequence[str]]) -> list[Message]:
    """Ask whether one node name covers several different things, given its edge groups."""
    parts = []
    for i, contexts in enumerate(groups, start=1):
        parts.append(f"Group {i}:\n" + "\n".join(f"- {c}" for c in contexts[:15]))
    return [
        {
            "role": "system",
            "content": "A knowledge-graph node may conflate different things that share a name "
            "(Python the language and python the snake). Given the statements about the node, "
            'grouped, answer with JSON only: {"split": true|false, "names": ["<name for group '
            '1>", "<name for group 2>", ...]}. Say split=false when the groups are one thing.',
        },
        {"role": "user", "content": f"Node: {name}\n\n" + "\n\n".join(parts)},
    ]


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (code fences and chatter around it are ignored)."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None


def parse_summary(text: str) -> tuple[str, str] | None:
    """(title, summary) from an answer to :func:`summary_prompt`, or None."""
    data = parse_json_object(text)
    if data is None:
        return None
    title, summary = data.get("title"), data.get("summary")
    if not isinstance(title, str) or not isinstance(summary, str):
        return None
    title, summary = " ".join(title.split())[:80], " ".join(summary.split())[:1000]
    return (title, summary) if title and summary else None


def parse_split(text: str, groups: int) -> list[str] | None:
    """Names for each group from an answer to :func:`split_prompt`; None when it says no split
    or the answer is unusable."""
    data = parse_json_object(text)
    if data is None or data.get("split") is not True:
        return None
    names = data.get("names")
    if not isinstance(names, list) or len(names) != groups:
        return None
    clean = [" ".join(n.split())[:120] for n in names if isinstance(n, str)]
    if len(clean) != groups or not all(clean) or len(set(clean)) != groups:
        return None
    return clean


def ask(llm: ChatModel, messages: list[Message], schema: Mapping[str, Any]) -> str | None:
    """One LLM call; None when it fails (the evolver then works offline)."""
    try:
        return llm.complete(messages, json_schema=schema).text
    except Exception:  # any backend failure means "no LLM answer", never a failed run
        return None
