"""Per-memory features that need the memory itself: who said it, when, how fresh it is."""

from __future__ import annotations

from datetime import datetime

from sage_memory.entities.names import SPEAKER_LABEL
from sage_memory.retrieve.fusion import recency
from sage_memory.retrieve.query import QueryPlan
from sage_memory.types import Memory

_GENERIC_ROLES = frozenset({"user", "assistant", "system", "tool", "human", "ai", "function"})
_SPEAKER_KEYS = ("speaker", "author", "name", "user_name")
#: The time feature of a memory inside the query's window, by the window's grain: a named
#: day is a strong hint, a named year hardly one (tuned on the LoCoMo dev split).
GRAIN_MATCH = {"day": 1.0, "week": 0.6, "month": 0.33, "year": 0.0}


def author_of(memory: Memory) -> str | None:
    """Who said the memory, lower-cased: metadata speaker, a named role, or a "Name: " prefix."""
    for key in _SPEAKER_KEYS:
        value = memory.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().casefold()
    if memory.role and memory.role.casefold() not in _GENERIC_ROLES:
        return memory.role.casefold()
    m = SPEAKER_LABEL.match(memory.text)
    return m.group(1).casefold() if m else None


def author_match(memory: Memory, plan: QueryPlan) -> float:
    """1.0 when the query names the memory's speaker (by full name or first name)."""
    if not plan.names:
        return 0.0
    who = author_of(memory)
    if who is None:
        return 0.0
    return 1.0 if who in plan.names or who.split()[0] in plan.names else 0.0


def time_match(memory: Memory, plan: QueryPlan) -> float:
    """How well the memory's time (the event it talks about, else when it was said) fits the
    window the query names; 0 without a window."""
    window = plan.window
    if window is None:
        return 0.0
    when = memory.event_time or memory.timestamp
    if window.contains(when) or (memory.event_time and window.contains(memory.timestamp)):
        return GRAIN_MATCH[window.grain]
    return 0.0


def freshness(memory: Memory, now: datetime, half_life_days: float = 30.0) -> float:
    return recency((now - memory.timestamp).total_seconds() / 86400.0, half_life_days)
