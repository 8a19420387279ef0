"""The queue of memories stored with their extraction deferred (``add(..., defer=True)``).

A deferred add stores the memory (text, scope, time, embedding, lexical postings) with
``extraction="pending"`` and returns; :meth:`~sage_memory.engine.writes.WritePath.
extract_pending` builds its nodes and edges later. The row's status is the truth; this queue
is only the index that finds pending rows without reading every memory, kept in the store's
meta table so every store backend holds it without a schema change: one meta row per queued
memory (``QUEUE_PREFIX`` + its id) on a store with the optional
:class:`~sage_memory.store.base.MetaItems` port, so a deferred add writes only its own rows
(one JSON value holding the whole queue was rewritten on every add: quadratic in the
backlog); a store with only the core port keeps that single value (``QUEUE_META``). A folder
written with the single value has it moved into rows on first use.

Order of writes, so that no crash loses a pending memory:

- the id is queued *before* the memory's transaction commits: a crash in between leaves an id
  without a row, which the next reader drops;
- it is dequeued *after* the extraction's transaction commits: a crash in between leaves the id
  of a row that is no longer pending, which is dropped too.

The queue is read and rewritten under the engine's lock and, on a store shared by processes
(PostgreSQL), under a cross-process lock of its own, never while a partition lock is held
(two lock orders could deadlock two writers).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence

from sage_memory.engine.context import EngineContext
from sage_memory.store.base import MetaItems
from sage_memory.types import Memory, Scope

#: The meta key holding the queue of a store without :class:`MetaItems`: a JSON object,
#: memory id -> [user_id, agent_id, run_id, order]; with it, only the marker ``KEYED``.
QUEUE_META = "extraction_queue"
#: The meta key of each queued memory (followed by its id) on a store with :class:`MetaItems`;
#: its value is the JSON list of the single value's entries.
QUEUE_PREFIX = "extraction_queue/"
#: ``QUEUE_META``'s value once the queue lives in keyed rows (so "never written" stays
#: distinguishable from "empty", and a single value left by an older version is moved once).
KEYED = "keyed"
#: The cross-process lock key of the queue (no partition key: those hold a unit separator).
QUEUE_LOCK = "extraction-queue"

Entry = list[str | int | None]


def _keyed(ctx: EngineContext) -> MetaItems | None:
    return ctx.store if isinstance(ctx.store, MetaItems) else None


def _parse(raw: str) -> dict[str, Entry]:
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _read(ctx: EngineContext) -> dict[str, Entry] | None:
    """The queue in the order it was filled; None when it was never written."""
    raw = ctx.store.get_meta(QUEUE_META)
    if raw is None:
        return None
    keyed = _keyed(ctx)
    if keyed is None or raw != KEYED:
        # A single value (on a store with the port: written by an older version, moved into
        # rows by the next write; read as it is until then).
        return _parse(raw)
    out: dict[str, Entry] = {}
    for key, value in keyed.meta_items(QUEUE_PREFIX).items():
        try:
            entry = json.loads(value)
        except ValueError:
            continue
        if isinstance(entry, list):
            out[key[len(QUEUE_PREFIX) :]] = entry
    # Keys come in id order: put them back in the order they were queued.
    return dict(sorted(out.items(), key=lambda kv: _order(kv[1])))


def _order(entry: Entry) -> int:
    value = entry[3] if len(entry) > 3 else 0
    return value if isinstance(value, int) else 0


def _write(ctx: EngineContext, put: dict[str, Entry], drop: Iterable[str] = ()) -> None:
    """Queue ``put`` and drop ``drop`` (under the queue's lock)."""
    keyed = _keyed(ctx)
    raw = ctx.store.get_meta(QUEUE_META)
    if keyed is None:
        queue = {} if raw is None else _parse(raw)
        gone = set(drop)
        if not put and not gone & queue.keys():
            return
        queue = {k: v for k, v in queue.items() if k not in gone}
        queue.update(put)
        ctx.store.set_meta(QUEUE_META, json.dumps(queue))
        return
    items: dict[str, str | None] = {}
    if raw is not None and raw != KEYED:  # an older version's single value: move it once
        # Its entries carry no number: their places in it, before every newer entry.
        old = _parse(raw).items()
        items.update((QUEUE_PREFIX + k, json.dumps([*v[:3], i])) for i, (k, v) in enumerate(old))
    if raw != KEYED:
        items[QUEUE_META] = KEYED
    items.update((QUEUE_PREFIX + k, None) for k in drop)
    items.update((QUEUE_PREFIX + k, json.dumps(v)) for k, v in put.items())
    if items:
        keyed.set_meta_many(items)


def _entries(memories: Iterable[Memory]) -> dict[str, Entry]:
    """Queue entries of ``memories``, numbered after every entry queued before (by time, so
    that no two writers, nor two processes, need to share a counter)."""
    base = time.time_ns()
    return {
        m.id: [m.scope.user_id, m.scope.agent_id, m.scope.run_id, base + i]
        for i, m in enumerate(memories)
    }


def _scope(entry: Entry) -> Scope:
    user, agent, run = [*entry, None, None, None][:3]
    return Scope(
        None if user is None else str(user),
        None if agent is None else str(agent),
        None if run is None else str(run),
    )


def enqueue(ctx: EngineContext, memories: Iterable[Memory]) -> None:
    """Queue ``memories`` for extraction (call before their transaction commits)."""
    entries = _entries(memories)
    if not entries:
        return
    with ctx.writing(QUEUE_LOCK):
        _write(ctx, entries)


def dequeue(ctx: EngineContext, memory_ids: Iterable[str]) -> None:
    """Drop ``memory_ids`` from the queue (extracted, deleted, or no longer pending)."""
    ids = set(memory_ids)
    if not ids:
        return
    with ctx.writing(QUEUE_LOCK):
        _write(ctx, {}, ids)


def queued(ctx: EngineContext, scope: Scope | None = None) -> list[tuple[str, Scope]]:
    """The queued memory ids (with their scope) in ``scope``, or in every scope for None.

    A folder whose queue was never written (made before deferred adds existed, or loaded from
    an export) is searched once for pending rows, and its queue written.
    """
    queue = _read(ctx)
    if queue is None:
        queue = _seed(ctx)
    out = [(mid, _scope(entry)) for mid, entry in queue.items()]
    return [(mid, s) for mid, s in out if scope is None or _within(s, scope)]


def pending_count(ctx: EngineContext, scope: Scope | None = None) -> int:
    """How many memories of ``scope`` (None: every scope) still wait for their extraction:
    queued ids whose row exists and is pending (a deleted memory's id may linger queued)."""
    queue = _read(ctx)
    if not queue:
        return 0
    count = 0
    by_part: dict[str, tuple[Scope, list[str]]] = {}
    for mid, s in ((mid, _scope(e)) for mid, e in queue.items()):
        if scope is None or _within(s, scope):
            by_part.setdefault(s.partition.key, (s.partition, []))[1].append(mid)
    for part, ids in by_part.values():
        count += sum(m.extraction == "pending" for m in ctx.store.get_memories(part, ids))
    return count


def _within(memory_scope: Scope, asked: Scope) -> bool:
    """Whether a memory of ``memory_scope`` belongs to the ``asked`` scope (a scope without
    a run holds its runs' memories too)."""
    if memory_scope.partition.key != asked.partition.key:
        return False
    return asked.run_id is None or memory_scope.run_id == asked.run_id


def _seed(ctx: EngineContext) -> dict[str, Entry]:
    """Queue every pending row of the store (once per folder; read-only views only look)."""
    found: list[Memory] = []
    for part in ctx.store.partitions():
        found += [
            m
            for m in ctx.store.list_memories(part, include_archived=True)
            if m.extraction == "pending"
        ]
    queue = _entries(found)
    if not _read_only(ctx):
        with ctx.writing(QUEUE_LOCK):
            # what another writer queued (or seeded) meanwhile joins what this scan found
            known = _read(ctx) or {}
            _write(ctx, {k: v for k, v in queue.items() if k not in known})
            queue.update(known)
    return queue


def _read_only(ctx: EngineContext) -> bool:
    return bool(getattr(ctx.store, "read_only", False))


def chunks(items: Sequence[tuple[str, Scope]], size: int) -> Iterable[list[tuple[str, Scope]]]:
    """``items`` in lists of at most ``size``."""
    for start in range(0, len(items), max(1, size)):
        yield list(items[start : start + size])
