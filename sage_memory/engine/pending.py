"""The queue of memories stored with their extraction deferred (``add(..., defer=True)``).

A deferred add stores the memory (text, scope, time, embedding, lexical postings) with
``extraction="pending"`` and returns; :meth:`~sage_memory.engine.writes.WritePath.
extract_pending` builds its nodes and edges later. The row's status is the truth; this queue
is only the index that finds pending rows without reading every memory, kept as one small meta
value (memory id -> scope) so every store backend holds it without a schema change.

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
from collections.abc import Iterable, Sequence

from sage_memory.engine.context import EngineContext
from sage_memory.types import Memory, Scope

#: The meta key holding the queue: a JSON object, memory id -> [user_id, agent_id, run_id].
QUEUE_META = "extraction_queue"
#: The cross-process lock key of the queue (no partition key: those hold a unit separator).
QUEUE_LOCK = "extraction-queue"


def _read(ctx: EngineContext) -> dict[str, list[str | None]] | None:
    raw = ctx.store.get_meta(QUEUE_META)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _scope(entry: list[str | None]) -> Scope:
    user, agent, run = [*entry, None, None, None][:3]
    return Scope(user, agent, run)


def enqueue(ctx: EngineContext, memories: Iterable[Memory]) -> None:
    """Queue ``memories`` for extraction (call before their transaction commits)."""
    entries = {m.id: [m.scope.user_id, m.scope.agent_id, m.scope.run_id] for m in memories}
    if not entries:
        return
    with ctx.writing(QUEUE_LOCK):
        queue = _read(ctx) or {}
        queue.update(entries)
        ctx.store.set_meta(QUEUE_META, json.dumps(queue))


def dequeue(ctx: EngineContext, memory_ids: Iterable[str]) -> None:
    """Drop ``memory_ids`` from the queue (extracted, deleted, or no longer pending)."""
    ids = set(memory_ids)
    if not ids:
        return
    with ctx.writing(QUEUE_LOCK):
        queue = _read(ctx) or {}
        if ids & queue.keys():
            kept = {k: v for k, v in queue.items() if k not in ids}
            ctx.store.set_meta(QUEUE_META, json.dumps(kept))


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


def _seed(ctx: EngineContext) -> dict[str, list[str | None]]:
    """Queue every pending row of the store (once per folder; read-only views only look)."""
    found: list[Memory] = []
    for part in ctx.store.partitions():
        found += [
            m
            for m in ctx.store.list_memories(part, include_archived=True)
            if m.extraction == "pending"
        ]
    queue = {m.id: [m.scope.user_id, m.scope.agent_id, m.scope.run_id] for m in found}
    if not _read_only(ctx):
        with ctx.writing(QUEUE_LOCK):
            # what another writer queued (or seeded) meanwhile joins what this scan found
            queue.update(_read(ctx) or {})
            ctx.store.set_meta(QUEUE_META, json.dumps(queue))
    return queue


def _read_only(ctx: EngineContext) -> bool:
    return bool(getattr(ctx.store, "read_only", False))


def chunks(items: Sequence[tuple[str, Scope]], size: int) -> Iterable[list[tuple[str, Scope]]]:
    """``items`` in lists of at most ``size``."""
    for start in range(0, len(items), max(1, size)):
        yield list(items[start : start + size])
