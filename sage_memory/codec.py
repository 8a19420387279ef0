"""Plain-dict and JSON forms of the records, for the journal, the stores and export files.

Dicts hold only JSON types: datetimes become ISO-8601 strings, tuples become lists. ``from_dict``
is the exact inverse of ``to_dict`` (the export/import identity tests rely on it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar

from sage_memory.types import Edge, Memory, Node, Scope

Record = Memory | Node | Edge
R = TypeVar("R", Memory, Node, Edge)

_DATETIME_FIELDS = {
    "timestamp",
    "created_at",
    "updated_at",
    "last_accessed",
    "event_time",
    "valid_from",
    "valid_to",
    "expired_at",
}
_TUPLE_FIELDS = {"aliases", "memory_ids", "mention_ids"}
_KIND = {Memory: "memory", Node: "node", Edge: "edge"}
_CLASS = {v: k for k, v in _KIND.items()}


@functools.lru_cache(maxsize=1024)
def _scope(user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Scope:
    """A stored record's scope, one Scope per distinct value: a search decodes thousands of
    rows of a few scopes, and each new Scope runs its checks again (frozen: sharing one is
    the same as building it anew)."""
    return Scope(user_id, agent_id, run_id)


def scope_from(value: Mapping[str, Any]) -> Scope:
    """``Scope(**value)`` of a stored scope dict (see :func:`_scope`)."""
    try:
        return _scope(**value)
    except TypeError:  # an unhashable value: the checks say what is wrong with it
        return Scope(**value)


def entity_of(record: Record) -> str:
    return _KIND[type(record)]


def to_dict(record: Record) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in record.__slots__:  # type: ignore[union-attr]
        value = getattr(record, name)
        if isinstance(value, Scope):
            value = {"user_id": value.user_id, "agent_id": value.agent_id, "run_id": value.run_id}
        elif isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        out[name] = value
    return out


def from_dict(cls: type[R], data: Mapping[str, Any]) -> R:
    kwargs: dict[str, Any] = {}
    for name in cls.__slots__:  # type: ignore[attr-defined]
        if name not in data:
            continue
        value = data[name]
        if name == "scope":
            value = scope_from(value)
        elif name in _DATETIME_FIELDS and value is not None:
            value = datetime.fromisoformat(value)
        elif name in _TUPLE_FIELDS:
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)


def record_from_dict(entity: str, data: Mapping[str, Any]) -> Record:
    return from_dict(_CLASS[entity], data)  # type: ignore[type-var]


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot store a value of type {type(value).__name__} in metadata: {value!r}")
