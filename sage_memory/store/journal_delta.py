"""The SQLite journal's row images as deltas, so a popular row's history grows linearly.

A journal row holds a row's state before and after one change. Stored whole, the images of a
node mentioned by thousands of memories (its ``memory_ids`` grow by one id per mention) made
the journal grow with the square of the mentions. Here each image is stored against its
neighbour in the same row's history instead:

``before`` column
    ``NULL`` (an insert), ``{...}`` (the whole image: a *key frame*, and every row written by
    older versions), or ``=N``: the same as the ``after`` of this row's previous change, N
    changes after the last key frame. ``=`` is written only when the previous change's
    ``after`` hashes the same as this ``before`` (the hash is stored with it), so a history
    rewritten in between (``rewrite_journal``) or purged never links to the wrong image.
``after`` column
    ``NULL`` (a delete), ``{...}`` (whole, written by older versions), ``F<hash>{...}`` (whole,
    with the 16-hex-digit hash of its canonical JSON), ``D<hash>{delta}``: the changes from
    this row's ``before`` (keys set, keys dropped, items appended to or removed from a list),
    or ``R<hash>``: the same as the row as it is stored now. An insert is written so (a chat
    turn's whole record, kept again in the journal, was the largest part of it); the store
    turns it into ``F`` from the row before the row's next change overwrites it
    (:func:`by_reference`), so an ``R`` is only ever the last change of its row.

A key frame is written once a chain is both 16 changes long and longer than the image's size
divided by 256: a small row restarts every 16 changes, a node of 400 KB every 1,600, so the key
frames cost at most about 256 bytes per change and decoding one change reads a bounded chain.
Decoding returns exactly the dicts the whole images would have given (``json.loads`` of the
canonical JSON), so undo, redo and history see no difference.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.types import Edge, Memory, Node

Image = dict[str, Any]

#: A chain restarts with a whole image after at least this many changes...
MIN_CHAIN = 16
#: ...and once it is longer than the image's size divided by this (bytes per change).
BYTES_PER_LINK = 256


#: Fields always stored, whatever their value (readers of the raw rows use them).
_ALWAYS = frozenset({"id", "scope", "text", "name", "source_id", "target_id", "relation"})


@functools.cache
def _defaults(entity: str) -> dict[str, Any]:
    """The JSON form of each constant default of a record type (factories only for the
    empty containers: a ``created_at`` stamped at construction has no constant default)."""
    cls = {"memory": Memory, "node": Node, "edge": Edge}[entity]
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in _ALWAYS:
            continue
        if f.default is not dataclasses.MISSING:
            value = f.default
        elif f.default_factory in (dict, tuple, list):  # type: ignore[comparison-overlap]
            value = f.default_factory()  # type: ignore[misc]
        else:
            continue
        out[f.name] = json.loads(dumps(value))
    return out


def compact(entity: str, image: Mapping[str, Any]) -> dict[str, Any]:
    """``image`` without the fields that hold their type's default (:func:`complete` puts
    them back): a chat turn's record is mostly defaults (no source, no role, no metadata...)."""
    defaults = _defaults(entity)
    return {k: v for k, v in image.items() if k not in defaults or not _same(v, defaults[k])}


def complete(entity: str, image: Mapping[str, Any]) -> Image:
    """The inverse of :func:`compact` (an image stored whole is returned as it was)."""
    missing = {k: copy.deepcopy(v) for k, v in _defaults(entity).items() if k not in image}
    return dict(sorted({**image, **missing}.items())) if missing else dict(image)


#: A memory row's fields that its own columns hold (``id``, ``ts``, ``created_at``): the
#: row's JSON leaves them out (:func:`memory_row`, :func:`memory_record`).
_MEMORY_COLUMNS = ("id", "timestamp", "created_at")


def memory_row(image: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON a SQLite memory row keeps of a memory's image: :func:`compact`, less the
    fields its columns hold, and less ``updated_at`` while it equals ``created_at`` (a memory
    never updated). A chat turn's record was seven times its text."""
    out = compact("memory", image)
    if out.get("updated_at") == out.get("created_at"):
        out.pop("updated_at", None)
    for key in _MEMORY_COLUMNS:
        out.pop(key, None)
    return out


def memory_record(memory_id: str, ts: str, created_at: str, data: str) -> dict[str, Any]:
    """The inverse of :func:`memory_row` from a row's columns (rows written whole by older
    versions come back as they were)."""
    out: dict[str, Any] = json.loads(data)
    out.setdefault("id", memory_id)
    out.setdefault("timestamp", ts)
    out.setdefault("created_at", created_at)
    out.setdefault("updated_at", out["created_at"])
    return out


def _same(value: Any, default: Any) -> bool:
    """JSON equality for a default's small value (1, 1.0 and True differ)."""
    if type(value) is not type(default):
        return False
    return bool(value == default) if not isinstance(value, dict | list) else not value


def image_hash(canonical: str) -> str:
    """The 16-hex-digit hash stored with an ``after`` image (of its canonical JSON)."""
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=8).hexdigest()


class Link:
    """What the next change of a row needs from its previous one: depth and ``after`` hash."""

    __slots__ = ("depth", "hash")

    def __init__(self, depth: int, after_hash: str | None) -> None:
        self.depth = depth
        self.hash = after_hash

    @classmethod
    def from_columns(cls, before: str | None, after: str | None) -> Link:
        """The link of a stored row (only the first 17 characters of each column are read)."""
        depth = int(before[1:]) if before is not None and before.startswith("=") else 0
        has_hash = after is not None and after[:1] in ("F", "D", "R")
        return cls(depth, after[1:17] if has_hash else None)  # type: ignore[index]


def encode(
    entity: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    previous: Link | None,
    after_json: str | None = None,
    before_json: str | None = None,
) -> tuple[str | None, str | None, Link]:
    """The two stored columns of a change, and the link its next change will need.

    Args:
        entity: "memory", "node" or "edge" (whole images leave out its default values).
        before: The row's state before the change (None: an insert).
        after: The row's state after it (None: a delete).
        previous: The link of the row's previous journaled change (None: there is none).
        after_json: ``dumps(after)`` if the caller already has it.
        before_json: ``dumps(before)`` if the caller already has it.
    """
    before_col: str | None = None
    depth = 0
    if before is not None:
        if before_json is None:
            before_json = dumps(before)
        depth = 0 if previous is None else previous.depth + 1
        linked = previous is not None and previous.hash == image_hash(before_json)
        if linked and (depth < MIN_CHAIN or depth * BYTES_PER_LINK <= len(before_json)):
            before_col = f"={depth}"
        else:
            before_col, depth = dumps(compact(entity, before)), 0
    if after is None:
        return before_col, None, Link(depth, None)
    if after_json is None:
        after_json = dumps(after)
    digest = image_hash(after_json)
    if before is None:
        return before_col, f"F{digest}{dumps(compact(entity, after))}", Link(depth, digest)
    return before_col, f"D{digest}{dumps(diff(before, after))}", Link(depth, digest)


def stored_record(db: Any, entity: str, entity_id: str) -> dict[str, Any] | None:
    """The record a SQLite row of ``entity`` holds (None: no row), for :func:`resolve`."""
    if entity == "memory":
        row = db.execute(
            "SELECT id, ts, created_at, data FROM memories WHERE id = ?", (entity_id,)
        ).fetchone()
        return None if row is None else memory_record(*row)
    table = "nodes" if entity == "node" else "edges"
    row = db.execute(f"SELECT data FROM {table} WHERE id = ?", (entity_id,)).fetchone()
    return None if row is None else dict(json.loads(row[0]))


def by_reference(after_col: str | None) -> bool:
    """Whether a stored ``after`` column stands for the row as it is stored now (``R``)."""
    return after_col is not None and after_col[:1] == "R"


def reference(after_col: str) -> str:
    """The ``R`` form of an insert's ``F`` column: its hash, without the image."""
    assert after_col[:1] == "F", after_col[:1]
    return "R" + after_col[1:17]


def resolve(entity: str, after_col: str, row: Mapping[str, Any] | None) -> str:
    """The ``F`` column of an ``R`` one, given the row's record as stored (None: no row;
    a memory's as :func:`memory_record` gives it).

    Raises:
        ValueError: If there is no row, or it no longer holds the image (hash differs).
    """
    if row is None:
        raise ValueError("a journal reference to a row that is gone")
    image = complete(entity, row)
    digest = after_col[1:17]
    if image_hash(dumps(image)) != digest:
        raise ValueError("a journal reference to a row that changed since")
    return f"F{digest}{dumps(compact(entity, image))}"


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The changes that turn ``before`` into ``after``: ``s`` keys set, ``x`` keys dropped,
    ``a`` strings appended to a list, ``r`` strings removed from a list of distinct strings.

    Values are compared as their JSON (1, 1.0 and True differ), so that :func:`patch` gives
    back exactly what ``json.loads(dumps(after))`` would.
    """
    put: dict[str, Any] = {}
    appended: dict[str, list[str]] = {}
    removed: dict[str, list[str]] = {}
    for key, new in after.items():
        if key not in before:
            put[key] = new
            continue
        old = before[key]
        if _strings(old) and _strings(new):
            if old == new:
                continue
            if len(new) > len(old) and new[: len(old)] == old:
                appended[key] = new[len(old) :]
                continue
            gone = _removal(old, new)
            if gone is not None:
                removed[key] = gone
                continue
        elif dumps(old) == dumps(new):
            continue
        put[key] = new
    out: dict[str, Any] = {}
    if put:
        out["s"] = put
    dropped = [k for k in before if k not in after]
    if dropped:
        out["x"] = dropped
    if appended:
        out["a"] = appended
    if removed:
        out["r"] = removed
    return out


def _strings(value: Any) -> bool:
    """A list of strings only (``==`` on it is exact JSON equality)."""
    return isinstance(value, list) and set(map(type, value)) <= {str}


def _removal(old: list[str], new: list[str]) -> list[str] | None:
    """The strings whose removal turns ``old`` into ``new``, if that is all that happened."""
    if not old or len(new) >= len(old) or len(set(old)) != len(old):
        return None
    keep = set(new)
    gone = [x for x in old if x not in keep]
    return gone if [x for x in old if x in keep] == new else None


def patch(before: Mapping[str, Any], delta: Mapping[str, Any]) -> Image:
    """The inverse of :func:`diff`: ``before`` with ``delta`` applied (a new dict)."""
    out = dict(before)
    for key in delta.get("x", ()):
        out.pop(key, None)
    out.update(delta.get("s", {}))
    for key, items in delta.get("a", {}).items():
        out[key] = [*out[key], *items]
    for key, items in delta.get("r", {}).items():
        gone = set(items)
        out[key] = [x for x in out[key] if x not in gone]
    return dict(sorted(out.items()))  # the key order of json.loads(dumps(...))


def step(
    entity: str, state: Image | None, before_col: str | None, after_col: str | None
) -> tuple[Image | None, Image | None]:
    """Decode one stored change of a row of kind ``entity`` given the ``after`` of the row's
    previous change (``state``).

    Returns:
        (before, after) as dicts; they may share objects with ``state``: copy them (see
        :func:`fresh`) before handing them out.
    """
    if before_col is None:
        before = None
    elif before_col.startswith("="):
        if state is None:
            raise ValueError("a journal delta whose previous change is missing")
        before = state
    else:
        before = complete(entity, json.loads(before_col))
    if after_col is None:
        return before, None
    head = after_col[:1]
    if head == "{":
        return before, complete(entity, json.loads(after_col))
    if head == "F":
        return before, complete(entity, json.loads(after_col[17:]))
    if before is None:
        raise ValueError("a journal delta without the state it applies to")
    return before, patch(before, json.loads(after_col[17:]))


def linked(chain: Sequence[tuple[int, str | None, str | None]]) -> bool:
    """Whether consecutive (seq, before, after) columns are consecutive changes of their row:
    each ``=N`` follows the change N - 1 links after a whole image."""
    depth = None
    for _, before_col, _after in chain:
        here = int(before_col[1:]) if before_col is not None and before_col[:1] == "=" else 0
        if depth is not None and here not in (0, depth + 1):
            return False
        depth = here
    return True


def fresh(image: Image | None) -> Image | None:
    """A copy of a decoded image that shares nothing with the decoder's state."""
    if image is None:
        return None
    return {k: list(v) if _strings(v) else copy.deepcopy(v) for k, v in image.items()}
