"""Turning what users pass to ``add`` into validated episodes, with errors that name the fix."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sage_memory.errors import ValidationError
from sage_memory.types import MemoryKind, as_utc

_ROLES = {"user", "assistant", "system", "tool", "human", "ai", "function"}
#: Unpaired UTF-16 halves: Python strings may hold them, UTF-8 (SQLite, JSON files, tokenizers)
#: cannot, so one stored text would break every later write or search of its scope.
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Longest metadata accepted, as JSON characters: metadata labels a memory, it is not a document.
MAX_METADATA_CHARS = 64_000


@dataclass(frozen=True, slots=True)
class Episode:
    """One memory to store, before it has an id."""

    text: str
    role: str | None = None
    timestamp: datetime | None = None
    metadata: Mapping[str, Any] | None = None
    kind: MemoryKind | None = None
    source: str | None = None
    run_id: str | None = None


def check_text(text: object, max_chars: int, what: str = "text") -> str:
    if not isinstance(text, str):
        raise ValidationError(
            f"{what} must be a string, got {type(text).__name__}; pass the text of the memory"
        )
    if not text.strip():
        raise ValidationError(f"{what} is empty; there is nothing to remember")
    if len(text) > max_chars:
        raise ValidationError(
            f"{what} has {len(text):,} characters; the limit is {max_chars:,} "
            "(SageConfig.max_text_chars). Split long documents into passages before adding them."
        )
    if "\x00" in text:
        raise ValidationError(f"{what} contains a NUL character; remove it before adding")
    check_unicode(text, what)
    return text


def check_unicode(text: str, what: str) -> None:
    """Reject lone surrogates (e.g. from ``bytes.decode(errors="surrogateescape")``)."""
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise ValidationError(
            f"{what} holds an unpaired UTF-16 surrogate {bad.group()!r} at {bad.start()}; "
            "decode the text properly (it cannot be stored as UTF-8)"
        )


def check_metadata(metadata: object) -> Mapping[str, Any] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
        raise ValidationError("metadata must be a dict with string keys, e.g. {'source': 'chat'}")
    from sage_memory.codec import dumps

    try:
        text = dumps(metadata)
        # A lone surrogate fails here (UnicodeEncodeError is a ValueError), not in SQLite.
        text.encode("utf-8")
        # NaN and infinities are not JSON, and NaN != NaN breaks export/load round trips.
        json.loads(text, parse_constant=_not_json)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError(f"metadata must be JSON-serialisable: {exc}") from exc
    if len(text) > MAX_METADATA_CHARS:
        raise ValidationError(
            f"metadata is {len(text):,} characters as JSON; the limit is {MAX_METADATA_CHARS:,}. "
            "Keep large content in the memory text or in your own store."
        )
    return dict(metadata)


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not a JSON number")


def check_kind(kind: object) -> MemoryKind | None:
    if kind is None:
        return None
    if kind not in ("knowledge", "experience"):
        raise ValidationError(f"kind={kind!r}: use 'knowledge' or 'experience'")
    return kind  # type: ignore[return-value]


def episodes_from(
    data: object,
    *,
    max_chars: int,
    timestamp: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    kind: MemoryKind | None = None,
    source: str | None = None,
) -> list[Episode]:
    """Accept a string, one chat message ``{role, content}``, a list of messages, or a dict
    ``{text, timestamp?, metadata?, kind?, source?, role?}`` (the ``add_many`` item form)."""
    if timestamp is not None and not isinstance(timestamp, datetime):
        raise ValidationError(
            f"timestamp must be a datetime, got {type(timestamp).__name__}: {timestamp!r:.80}"
        )
    ts = None if timestamp is None else as_utc(timestamp)
    meta = check_metadata(metadata)
    kind = check_kind(kind)
    if isinstance(data, str):
        return [Episode(check_text(data, max_chars), None, ts, meta, kind, source)]
    if isinstance(data, Mapping):
        return [_episode_from_dict(data, max_chars, ts, meta, kind, source)]
    if isinstance(data, Sequence) and not isinstance(data, (bytes, bytearray)):
        if not data:
            raise ValidationError("an empty list of messages; there is nothing to remember")
        out = []
        for i, item in enumerate(data):
            if not isinstance(item, Mapping):
                raise ValidationError(
                    f"message {i} is a {type(item).__name__}; each message must be a dict "
                    "such as {'role': 'user', 'content': '...'}"
                )
            out.append(_episode_from_dict(item, max_chars, ts, meta, kind, source, index=i))
        return out
    raise ValidationError(
        f"cannot remember a {type(data).__name__}; pass a string, a message dict "
        "{'role': ..., 'content': ...} or a list of them"
    )


def _episode_from_dict(
    item: Mapping[str, Any],
    max_chars: int,
    ts: datetime | None,
    meta: Mapping[str, Any] | None,
    kind: MemoryKind | None,
    source: str | None,
    index: int | None = None,
) -> Episode:
    where = "item" if index is None else f"message {index}"
    text = item.get("content", item.get("text"))
    if text is None:
        raise ValidationError(f"{where} has no 'content' (or 'text') key: {dict(item)!r:.200}")
    role = item.get("role")
    if role is not None and (not isinstance(role, str) or role.lower() not in _ROLES):
        raise ValidationError(f"{where} has role={role!r}; use one of {sorted(_ROLES)}")
    item_ts = item.get("timestamp")
    if item_ts is not None:
        if isinstance(item_ts, str):
            try:
                item_ts = datetime.fromisoformat(item_ts)
            except ValueError as exc:
                raise ValidationError(
                    f"{where} has timestamp={item_ts!r}; use ISO-8601 like 2026-05-01T10:00:00Z"
                ) from exc
        if not isinstance(item_ts, datetime):
            raise ValidationError(f"{where} timestamp must be a datetime or ISO-8601 string")
        item_ts = as_utc(item_ts)
    item_meta = check_metadata(item.get("metadata"))
    merged = {**(meta or {}), **(item_meta or {})} or None
    run_id = item.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        raise ValidationError(f"{where} run_id must be a string")
    return Episode(
        text=check_text(text, max_chars, f"{where} content"),
        role=None if role is None else role.lower(),
        timestamp=item_ts or ts,
        metadata=merged,
        kind=check_kind(item.get("kind")) or kind,
        source=item.get("source") or source,
        run_id=run_id,
    )
