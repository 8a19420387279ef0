"""Row mapping shared by the SQL stores (SQLite and PostgreSQL): one place for what is the same.

Both stores keep a record as JSON text beside the columns they query, vectors as bytes
(PostgreSQL float32, :func:`vector_blob`; SQLite float16),
the journal as twelve columns, and review-queue items as JSON; these helpers turn those rows
into the plain data of :mod:`sage_memory.types` and back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from sage_memory.codec import scope_from
from sage_memory.errors import ValidationError
from sage_memory.types import Change, Scope, Suggestion, Vector

__all__ = [
    "journal_entry",
    "scope_of",
    "suggestion_from_dict",
    "suggestion_to_dict",
    "text_searchable",
    "utf8_only",
    "vector_blob",
]

#: The journal's columns in the order :func:`journal_entry` reads them.
JOURNAL_COLUMNS = (
    "seq, id, batch_id, scope_key, entity, entity_id, op, before, after, at, actor, reason"
)


def text_searchable(node: Mapping[str, Any]) -> bool:
    """Whether a node record goes into the partition's node text search: every node but a
    mention-only one (mentioned by memories, no fact read about it: ``Node.mention_ids``).
    Retrieval links a query's words to the entities facts were read about; a name only
    mentioned would take a place among the few nodes a search reads and change the lexical
    statistics of those. Its name is still found by exact lookup (``find_nodes``)."""
    return bool(node.get("memory_ids")) or not node.get("mention_ids")


def scope_of(data: Mapping[str, Any]) -> Scope:
    """The scope of a stored record (its ``scope`` field)."""
    return scope_from(data["scope"])


def vector_blob(vector: Vector) -> bytes:
    """A vector as the float32 bytes PostgreSQL keeps."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def journal_entry(
    row: Sequence[Any],
    images: tuple[dict[str, Any] | None, dict[str, Any] | None] | None = None,
) -> tuple[int, Change]:
    """(sequence number, change) from a row of :data:`JOURNAL_COLUMNS` whose images are JSON,
    or with its (before, after) ``images`` decoded already (the SQLite journal stores deltas)."""
    if images is None:
        images = (
            None if row[7] is None else json.loads(row[7]),
            None if row[8] is None else json.loads(row[8]),
        )
    before, after = images
    change = Change(
        id=row[1],
        batch_id=row[2],
        scope_key=row[3],
        entity=row[4],
        entity_id=row[5],
        op=row[6],
        before=before,
        after=after,
        at=datetime.fromisoformat(row[9]),
        actor=row[10],
        reason=row[11],
    )
    return int(row[0]), change


@contextmanager
def utf8_only() -> Iterator[None]:
    """SQL stores keep UTF-8: a lone surrogate (valid in a Python str) is a caller's error."""
    try:
        yield
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else "?"
        raise ValidationError(
            f"text with an unpaired UTF-16 surrogate {bad!r} cannot be stored or looked up; "
            "decode it properly first"
        ) from exc


def suggestion_to_dict(item: Suggestion) -> dict[str, Any]:
    """The JSON form of a review-queue item (for stores)."""
    return {
        "id": item.id,
        "scope": item.scope.as_dict(),
        "op": item.op,
        "key": item.key,
        "summary": item.summary,
        "confidence": item.confidence,
        "created_at": item.created_at.isoformat(),
        "evidence": dict(item.evidence),
        "payload": dict(item.payload),
        "status": item.status,
        "updated_at": None if item.updated_at is None else item.updated_at.isoformat(),
        "proposed_in": item.proposed_in,
        "batch_id": item.batch_id,
    }


def suggestion_from_dict(data: Mapping[str, Any]) -> Suggestion:
    """The inverse of :func:`suggestion_to_dict`."""
    updated = data.get("updated_at")
    return Suggestion(
        id=data["id"],
        scope=Scope(**data["scope"]),
        op=data["op"],
        key=data["key"],
        summary=data["summary"],
        confidence=float(data["confidence"]),
        created_at=datetime.fromisoformat(data["created_at"]),
        evidence=data.get("evidence", {}),
        payload=data.get("payload", {}),
        status=data.get("status", "open"),
        updated_at=None if updated is None else datetime.fromisoformat(updated),
        proposed_in=data.get("proposed_in"),
        batch_id=data.get("batch_id"),
    )
