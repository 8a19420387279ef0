"""The write path: add, add_many, update, delete, delete_all and direct graph edits.

add -> validate -> embed -> extract (outside the lock) -> plan in a unit of work
    -> one SQLite transaction (rows + journal) -> vector index sync

A deferred add (``defer=True``) stops after embedding: the memory is stored with extraction
"pending" and queued (engine/pending.py); ``extract_pending`` runs the rest later, journaled
in the add's own batch, so undoing the add still removes the memory and its graph together.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from sage_memory.engine import pending
from sage_memory.engine.dedup import content_ids
from sage_memory.engine.inputs import Episode, episodes_from
from sage_memory.engine.journal import Batch
from sage_memory.engine.unit import UnitOfWork
from sage_memory.errors import (
    NotFoundError,
    ValidationError,
)
from sage_memory.extract.base import ExtractionContext
from sage_memory.index.base import collection_name, query_many
from sage_memory.types import (
    AddResult,
    Change,
    EdgeSpec,
    GraphDelta,
    Memory,
    MemoryKind,
    Node,
    NodeSpec,
    Scope,
    Subgraph,
    Vector,
    new_id,
)

if TYPE_CHECKING:
    from sage_memory.engine.forget import Scrubbed

from sage_memory.engine.context import EngineContext, required
from sage_memory.engine.evolution import Evolution
from sage_memory.engine.lookup import Lookup
from sage_memory.store.base import GraphStore


def _existing(store: GraphStore, scope: Scope, entity: str, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` (rows of one kind) still exist in ``scope``."""
    if entity == "memory":
        return {m.id for m in store.get_memories(scope, ids)}
    if entity == "node":
        return {n.id for n in store.get_nodes(scope, ids)}
    return {e.id for e in store.get_edges(scope, ids)}


class WritePath:
    """The write path: add, add_many, update, delete, delete_all and direct graph edits."""

    def __init__(self, ctx: EngineContext, lookup: Lookup, evolution: Evolution) -> None:
        self.ctx = ctx
        self.lookup = lookup
        self.evolution = evolution

    # -- writing ---------------------------------------------------------------------------
    def add(
        self,
        data: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        asked: Scope | None,
        *,
        timestamp: datetime | None,
        metadata: Mapping[str, Any] | None,
        kind: MemoryKind | None,
        source: str | None,
        infer: bool,
        dedup: bool = True,
        defer: bool = False,
    ) -> AddResult:
        """Remember a text, a chat message or a list of messages.

        The text is stored and embedded, then (unless ``infer=False``) turned into nodes and
        edges. If extraction fails the memory is still stored, with the failure recorded on it.
        A list of messages becomes one memory per message; the result describes the first, and
        ``memory_ids`` lists all.

        Returns:
            AddResult with the memory id, the nodes and edges it created or touched, the facts it
            expired, the journal change ids and the LLM tokens used.
        """
        self.ctx.check_open()
        scope = required(asked)
        episodes = episodes_from(
            data,
            max_chars=self.ctx.config.max_text_chars,
            timestamp=timestamp,
            metadata=metadata,
            kind=kind,
            source=source,
        )
        ids = content_ids(episodes, scope) if dedup else [None] * len(episodes)
        results = self._add_episodes(episodes, scope, infer=infer, ids=ids, defer=defer)
        if len(results) == 1:
            return results[0]
        first = results[0]
        return dataclasses.replace(
            first,
            memory_ids=tuple(r.memory_id for r in results),
            skipped_ids=tuple(i for r in results for i in r.skipped_ids),
            node_ids=tuple(dict.fromkeys(n for r in results for n in r.node_ids)),
            edge_ids=tuple(dict.fromkeys(e for r in results for e in r.edge_ids)),
            change_ids=tuple(c for r in results for c in r.change_ids),
            tokens_used=sum(r.tokens_used for r in results),
        )

    def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        asked: Scope | None,
        *,
        infer: bool,
        progress: bool,
        batch_size: int | None,
        dedup: bool = True,
        defer: bool = False,
    ) -> list[AddResult]:
        """Remember many items with batched embedding and extraction.

        Items are strings or dicts ``{text, timestamp?, metadata?, kind?, source?, role?}``.
        Each batch is one transaction: a batch that returned is durable.
        """
        self.ctx.check_open()
        scope = required(asked)
        size = batch_size or self.ctx.config.embed_batch_size
        if size < 1:
            raise ValidationError(f"batch_size={size} must be at least 1")
        episodes: list[Episode] = []
        for i, item in enumerate(items):
            try:
                episodes.extend(episodes_from(item, max_chars=self.ctx.config.max_text_chars))
            except ValidationError as exc:
                raise ValidationError(f"item {i}: {exc}") from exc
        ids = content_ids(episodes, scope) if dedup else [None] * len(episodes)
        bar = _progress(len(episodes), progress)
        results: list[AddResult] = []
        try:
            for start in range(0, len(episodes), size):
                chunk = episodes[start : start + size]
                chunk_ids = ids[start : start + size]
                results.extend(
                    self._add_episodes(chunk, scope, infer=infer, ids=chunk_ids, defer=defer)
                )
                bar(len(chunk))
        finally:
            bar(0, done=True)
        return results

    def _add_episodes(
        self,
        episodes: Sequence[Episode],
        scope: Scope,
        *,
        infer: bool,
        ids: Sequence[str | None],
        defer: bool = False,
    ) -> list[AddResult]:
        ctx = self.ctx
        now = ctx.now()
        stored = self._already_stored(scope, ids)
        memories: list[Memory] = []
        for ep, cid in zip(episodes, ids, strict=True):
            if cid is not None and cid in stored:
                continue
            ep_scope = scope if ep.run_id is None else dataclasses.replace(scope, run_id=ep.run_id)
            memories.append(
                Memory(
                    id=cid or new_id(),
                    text=ep.text,
                    scope=ep_scope,
                    timestamp=ep.timestamp or now,
                    created_at=now,
                    updated_at=now,
                    kind=ep.kind or "knowledge",
                    source=ep.source,
                    role=ep.role,
                    metadata=dict(ep.metadata or {}),
                    extraction="pending" if infer else "skipped",
                )
            )
        before = set(stored)
        if not memories:
            added: dict[str, AddResult] = {}
        elif infer and defer:
            added = self._store_pending(memories, scope, now, stored)
        else:
            added = self._store_new(memories, scope, infer, now, stored)
        by_id = {**{i: _skipped(m) for i, m in stored.items()}, **added}
        fresh = iter(memories)
        return [
            by_id[cid] if cid is not None and cid in before else by_id[next(fresh).id]
            for cid in ids
        ]

    def _already_stored(self, scope: Scope, ids: Sequence[str | None]) -> dict[str, Memory]:
        """The memories of this call's content ids that are stored (one id lookup). A memory
        updated since keeps its id: its first content was added, and is not added again."""
        wanted = [cid for cid in ids if cid is not None]
        if not wanted:
            return {}
        return {m.id: m for m in self.ctx.store.get_memories(scope.partition, wanted)}

    def _store_new(
        self,
        memories: list[Memory],
        scope: Scope,
        infer: bool,
        now: datetime,
        stored: dict[str, Memory],
    ) -> dict[str, AddResult]:
        """Embed, extract and write ``memories``; a content id another writer stored in the
        meantime is added to ``stored`` instead of being written twice."""
        ctx = self.ctx
        vectors = ctx.embedder.embed([m.text for m in memories])
        deltas = self._extract(memories, vectors) if infer else [None] * len(memories)
        # Without a delta there are no names to embed or resolve: the ingestor (and what it
        # imports) is not built for such a write.
        graph = any(d is not None for d in deltas)
        if graph:
            ctx.ingestor.prepare(deltas)
        # A store shared by processes (PostgreSQL) also locks the partition across processes:
        # entity resolution and single-valued relations read what is stored, then write; and
        # of two writers adding the same content, the second finds the first's row.
        with ctx.writing(scope.partition.key):
            late = ctx.store.get_memories(scope.partition, [m.id for m in memories])
            stored.update((m.id, m) for m in late)
            uow = UnitOfWork(ctx.store, Batch("extractor" if infer else "user", "add", now))
            outcomes = []
            try:
                if graph and len(memories) > 1:  # one vector query for the names, not one each
                    with contextlib.suppress(Exception):  # else each node queries on its own
                        keys = [m.scope.partition.key for m in memories]
                        ctx.ingestor.prefetch_hits(list(zip(keys, deltas, strict=True)))
                for memory, vec, delta in zip(memories, vectors, deltas, strict=True):
                    if memory.id not in stored:
                        outcomes.append((*self._plan_add(uow, memory, vec, delta, now), delta))
            finally:
                if graph:
                    ctx.ingestor.clear_hits()
            changes = uow.commit()
            ctx.sync_index(changes, uow.vectors)
            self._queue_competing_claims(scope, [out for _, out, _ in outcomes], now)
        if outcomes:
            self.evolution.after_add(scope, len(outcomes))  # every N adds / growth by X%
        change_ids = tuple(c.id for c in changes)
        return {
            mem.id: AddResult(
                memory_id=mem.id,
                memory=mem,
                memory_ids=(mem.id,),
                node_ids=tuple(out.node_ids),
                edge_ids=tuple(out.edge_ids),
                expired_edge_ids=tuple(out.expired_edge_ids),
                change_ids=change_ids,
                tokens_used=0 if delta is None else delta.tokens_used,
                extraction_error=mem.extraction_error,
            )
            for mem, out, delta in outcomes
        }

    def _store_pending(
        self,
        memories: list[Memory],
        scope: Scope,
        now: datetime,
        stored: dict[str, Memory],
    ) -> dict[str, AddResult]:
        """Embed and write ``memories`` with extraction "pending", queued for
        :meth:`extract_pending`: no extractor runs (nor loads). Search finds them at once by
        their vector and words; their nodes and edges come when they are extracted."""
        ctx = self.ctx
        vectors = ctx.embedder.embed([m.text for m in memories])
        pending.enqueue(ctx, memories)  # before the commit (engine/pending.py says why)
        with ctx.writing(scope.partition.key):
            late = ctx.store.get_memories(scope.partition, [m.id for m in memories])
            stored.update((m.id, m) for m in late)
            uow = UnitOfWork(ctx.store, Batch("extractor", "add", now))
            kept = [m for m in memories if m.id not in stored]
            for memory, vec in zip(memories, vectors, strict=True):
                if memory.id not in stored:
                    uow.put(memory, vec)
            changes = uow.commit()
            ctx.sync_index(changes, uow.vectors)
        change_ids = tuple(c.id for c in changes)
        return {
            m.id: AddResult(memory_id=m.id, memory=m, memory_ids=(m.id,), change_ids=change_ids)
            for m in kept
        }

    def extract_pending(self, asked: Scope | None, *, limit: int | None) -> list[AddResult]:
        """Build the nodes and edges of memories stored with ``defer=True``, oldest first.

        Safe beside other extracting threads and processes: each memory is extracted outside
        the lock, then written only if its row is still pending under the partition's write
        lock (the claim), so two runs never build one memory's graph twice. A run stopped
        midway leaves the rest pending for the next. Each memory's graph is journaled in the
        batch of the add that stored it.

        Returns:
            One AddResult per memory extracted (``extraction_error`` set where it failed).
        """
        ctx = self.ctx
        ctx.check_open()
        if limit is not None and limit < 0:
            raise ValidationError(f"limit={limit} must be 0 or more (None: every one)")
        entries = pending.queued(ctx, asked)
        parts: dict[str, tuple[Scope, list[str]]] = {}
        for mid, s in entries:
            parts.setdefault(s.partition.key, (s.partition, []))[1].append(mid)
        rows = [m for part, ids in parts.values() for m in ctx.store.get_memories(part, ids)]
        # Time order (then the order they were added): a later value of a single-valued fact
        # must meet the earlier one already stored, as it would have when added at once.
        order = {mid: i for i, (mid, _) in enumerate(entries)}
        live = sorted(
            (m for m in rows if m.extraction == "pending"),
            key=lambda m: (m.timestamp, m.created_at, order[m.id]),
        )
        pending.dequeue(ctx, {mid for mid, _ in entries} - {m.id for m in live})
        live = live if limit is None else live[:limit]
        results: list[AddResult] = []
        size = ctx.config.embed_batch_size
        for start in range(0, len(live), size):
            results += self._extract_stored(live[start : start + size])
        return results

    def _extract_stored(self, memories: Sequence[Memory]) -> list[AddResult]:
        """Extract pending ``memories`` and write each one's graph in its add's batch."""
        ctx = self.ctx
        found = ctx.store.get_vectors([m.id for m in memories])
        missing = {m.id: m.text for m in memories if m.id not in found}
        if missing:  # a store that lost a vector: embed again (search needs one too)
            found.update(zip(missing, ctx.embedder.embed(list(missing.values())), strict=True))
        vectors = np.stack([found[m.id] for m in memories])
        deltas = self._extract(memories, vectors)
        ctx.ingestor.prepare(deltas)
        results: list[AddResult] = []
        for memory, delta in zip(memories, deltas, strict=True):
            vec = found[memory.id] if memory.id in missing else None  # else the stored one stays
            result = self._write_extracted(memory, vec, delta)
            if result is not None:
                results.append(result)
        pending.dequeue(ctx, [m.id for m in memories])  # after the commits (see pending.py)
        return results

    def _write_extracted(
        self, memory: Memory, vec: Vector | None, delta: GraphDelta | None
    ) -> AddResult | None:
        """Write one extracted memory's graph, if its row is still pending (the claim)."""
        ctx = self.ctx
        part = memory.scope.partition
        now = ctx.now()
        with ctx.writing(part.key):
            current = ctx.store.get_memories(part, [memory.id])
            if not current or current[0].extraction != "pending":
                return None  # deleted, or extracted by another run meanwhile
            batch = Batch("extractor", "add", now, id=self._batch_of(memory.id))
            uow = UnitOfWork(ctx.store, batch)
            memory, out = self._plan_add(uow, current[0], vec, delta, now)
            changes = uow.commit()
            ctx.sync_index(changes, uow.vectors)
            self._queue_competing_claims(part, [out], now)
        self.evolution.after_add(part, 1)
        return AddResult(
            memory_id=memory.id,
            memory=memory,
            memory_ids=(memory.id,),
            node_ids=tuple(out.node_ids),
            edge_ids=tuple(out.edge_ids),
            expired_edge_ids=tuple(out.expired_edge_ids),
            change_ids=tuple(c.id for c in changes),
            tokens_used=0 if delta is None else delta.tokens_used,
            extraction_error=memory.extraction_error,
        )

    def _batch_of(self, memory_id: str) -> str:
        """The batch that inserted ``memory_id`` (a new one when the journal forgot it)."""
        for _, change in self.ctx.store.journal(entity_id=memory_id):
            if change.op == "insert":
                return change.batch_id
        return new_id()

    def _queue_competing_claims(self, scope: Scope, outcomes: Sequence[Any], now: datetime) -> None:
        """A review item for each claim kept beside a much more confident fact."""
        pairs = [pair for out in outcomes for pair in out.competing]
        if not pairs:
            return
        from sage_memory.evolve.conflicts import competing_claim
        from sage_memory.evolve.report import to_suggestion

        store = self.ctx.store
        part = scope.partition
        edges = {e.id: e for e in store.get_edges(part, [i for p in pairs for i in p])}
        ends = {x for e in edges.values() for x in (e.source_id, e.target_id)}
        names = {n.id: n.name for n in store.get_nodes(part, sorted(ends))}
        items = [
            to_suggestion(
                competing_claim(edges[weak], edges[standing], now, names), part, now, None
            )
            for weak, standing in pairs
            if weak in edges and standing in edges
        ]
        store.put_suggestions(items)

    def _extract(self, memories: Sequence[Memory], vectors: Vector) -> list[GraphDelta | None]:
        nearby = self._nearby_nodes(memories, vectors)
        items = [
            (memory, ExtractionContext(nearby_nodes=nodes))
            for memory, nodes in zip(memories, nearby, strict=True)
        ]
        try:
            return list(self.ctx.extractor.extract_many(items))
        except Exception as exc:  # an extractor bug must never lose the memories
            return [GraphDelta(error=f"{type(exc).__name__}: {exc}") for _ in memories]

    def _nearby_nodes(self, memories: Sequence[Memory], vectors: Vector) -> list[list[Node]]:
        """The stored nodes nearest each memory: one vector query and one read per partition
        for a whole chunk (per memory, these two calls cost more than the extraction)."""
        k = self.ctx.config.extract.max_context_nodes
        out: list[list[Node]] = [[] for _ in memories]
        parts: dict[str, list[int]] = {}
        for i, memory in enumerate(memories):
            parts.setdefault(memory.scope.partition.key, []).append(i)
        for rows in parts.values():
            part = memories[rows[0]].scope.partition
            hits = query_many(self.ctx.index, collection_name(part.key, "node"), vectors[rows], k)
            wanted = list(dict.fromkeys(nid for found in hits for nid, _ in found))
            nodes = {n.id: n for n in self.ctx.store.get_nodes(part, wanted)} if wanted else {}
            for row, found in zip(rows, hits, strict=True):
                out[row] = [nodes[nid] for nid, _ in found if nid in nodes]
        return out

    def _plan_add(
        self,
        uow: UnitOfWork,
        memory: Memory,
        vec: Vector | None,
        delta: GraphDelta | None,
        now: datetime,
    ) -> tuple[Memory, Any]:
        # The ingest and forget modules load on the first write that needs them: a deferred
        # add (the command line's default) stores the text only and never imports them, and
        # a write without a graph (infer=False) only passes the salience gate.
        from sage_memory.engine.gate import IngestOutcome, salience_gate

        if delta is not None:
            memory = dataclasses.replace(
                memory,
                kind=delta.kind or memory.kind,
                event_time=delta.event_time,
                extraction="failed" if delta.error and not delta.nodes else "ok",
                extraction_error=delta.error,
            )
        memory, graph_worthy = salience_gate(memory, delta, self.ctx.config.extract)
        uow.put(memory, vec)
        if delta is None or not delta.nodes or not graph_worthy:
            return memory, IngestOutcome()
        saved = uow.snapshot()
        try:
            return memory, self.ctx.ingestor.apply(uow, memory, delta, now)
        except Exception as exc:  # keep the memory, drop its half-planned graph writes
            uow.restore(saved)
            failed = dataclasses.replace(
                memory, extraction="failed", extraction_error=f"{type(exc).__name__}: {exc}"
            )
            uow.put(failed, vec)
            return failed, IngestOutcome()

    def update(
        self,
        memory_id: str,
        text: str,
        scope: Scope | None,
        *,
        infer: bool,
    ) -> AddResult:
        """Replace a memory's text; what only the old text supported is removed, the new text
        is extracted again. Journaled as one batch (undo restores the old text and graph)."""
        from sage_memory.engine.forget import scrub_survivors
        from sage_memory.engine.ingest import support_removal

        ctx = self.ctx
        ctx.check_open()
        old = self.lookup.get(memory_id, scope)
        episodes = episodes_from(text, max_chars=ctx.config.max_text_chars)
        now = ctx.now()
        memory = dataclasses.replace(
            old, text=episodes[0].text, updated_at=now, extraction="pending" if infer else "skipped"
        )
        vec = ctx.embedder.embed([memory.text])
        delta = self._extract([memory], vec)[0] if infer else None
        with ctx.writing(old.scope.partition.key):
            # A delete or another update may have landed during extraction: plan against the
            # stored row, and never bring a deleted memory back.
            stored = ctx.store.get_memories(old.scope, [old.id])
            if not stored:
                raise NotFoundError(f"memory {memory_id!r} was deleted while being updated")
            old = stored[0]
            memory = dataclasses.replace(
                old, text=memory.text, updated_at=now, extraction=memory.extraction
            )
            uow = UnitOfWork(ctx.store, Batch("user", f"update {memory_id}", now))
            nodes, edges = ctx.store.derived_from(old.scope.partition, old.id)
            support_removal(uow, old, nodes, edges, now)
            scrub_survivors(uow, [old])  # the old text's words leave what stays
            memory, out = self._plan_add(uow, memory, vec[0], delta, now)
            changes = uow.commit()
            ctx.sync_index(changes, uow.vectors)
        return AddResult(
            memory_id=memory.id,
            memory=memory,
            memory_ids=(memory.id,),
            node_ids=tuple(out.node_ids),
            edge_ids=tuple(out.edge_ids),
            expired_edge_ids=tuple(out.expired_edge_ids),
            change_ids=tuple(c.id for c in changes),
            tokens_used=0 if delta is None else delta.tokens_used,
            extraction_error=memory.extraction_error,
        )

    def delete(self, memory_id: str, scope: Scope | None) -> None:
        """Forget a memory and everything derived only from it; final."""
        self.ctx.check_open()
        memory = self.lookup.get(memory_id, scope)
        self._forget([memory])

    def delete_all(self, asked: Scope | None) -> int:
        """Forget every memory of a scope (and the graph derived from them). Returns the count."""
        ctx = self.ctx
        ctx.check_open()
        scope = required(asked)
        # Under the write lock throughout: a concurrent add must land wholly before or after,
        # never between the listing and the collection drop (its vector would be dropped).
        with ctx.writing(scope.partition.key):
            whole = scope.run_id is None or scope.partition.run_id is not None
            if whole:  # the index first, for the reason given in _forget
                for entity in ("memory", "node"):
                    ctx.index.drop(collection_name(scope.partition.key, entity))
            memories = ctx.store.list_memories(scope, include_archived=True)
            self._forget(memories, erase=not whole)
            if whole:
                # The whole partition goes: also nodes and edges no memory supports any more.
                part = scope.partition
                uow = UnitOfWork(ctx.store, Batch("user", "delete_all", ctx.now()))
                for edge in ctx.store.list_edges(part):
                    uow.remove(edge)
                for node in ctx.store.list_nodes(part):
                    uow.remove(node)
                changes = uow.commit()
                ctx.sync_index(changes, {})
                # The whole partition journal, not only these changes: rows removed earlier (by
                # undo, update, merges) live on there with their old text.
                journaled = {c.entity_id for _, c in ctx.store.journal(scope=part)}
                ctx.store.purge_journal([*{c.entity_id for c in changes} | journaled])
                self.evolution.flush_access()
                ctx.store.purge_evolver_state(part)
                _erase_deleted(ctx)
                for entity in ("memory", "node"):
                    ctx.index.drop(collection_name(part.key, entity))
        return len(memories)

    def _forget(self, memories: Sequence[Memory], *, erase: bool = True) -> None:
        """Delete ``memories`` and what only they support; ``erase``: rewrite the store's file
        afterwards (``delete_all`` does it once, at its end)."""
        from sage_memory.engine.forget import scrub_survivors
        from sage_memory.engine.ingest import support_removal

        ctx = self.ctx
        now = ctx.now()
        with ctx.writing(*(m.scope.partition.key for m in memories)):
            stale = self._removed_earlier(memories)  # before the journal forgets the memories
            uow = UnitOfWork(ctx.store, Batch("user", "delete", now))
            for memory in memories:
                nodes, edges = ctx.store.derived_from(memory.scope.partition, memory.id)
                support_removal(uow, memory, nodes, edges, now)
                uow.remove(memory)
            # What other memories still support stays, without the words only these had.
            scrubbed = scrub_survivors(uow, memories)
            changes = uow.changes()
            # Vectors go before the rows: a crash in between leaves rows without vectors, which
            # reconciliation restores. The other order could leave vectors of a partition that
            # SQLite no longer lists, which reconciliation never revisits.
            ctx.sync_index([c for c in changes if c.after is None], {})
            if changes:
                ctx.store.apply(changes, uow.vectors)
            gone = {c.entity_id for c in changes if c.after is None}
            # The journal must not keep the text of what the user asked to forget: the entries
            # of rows that went, and the quotes of it in the history of rows that stay.
            ctx.store.purge_journal(sorted(gone | stale))
            self._scrub_history(uow, scrubbed)
            # Nor the evolver its notes (access log, review queue) about what went or changed.
            self.evolution.flush_access()
            touched = sorted(gone | stale | set(scrubbed.supports))
            for part in {m.scope.partition.key: m.scope.partition for m in memories}.values():
                ctx.store.purge_evolver_state(part, touched)
            if erase:
                _erase_deleted(ctx)

    def _scrub_history(self, uow: UnitOfWork, scrubbed: Scrubbed) -> None:
        """Rewrite the journal images of surviving rows that quoted a forgotten text."""
        from sage_memory.codec import to_dict
        from sage_memory.engine.forget import scrub_journal

        store = self.ctx.store
        current = {r.id: r for r in uow.touched()}
        fixed = []
        for row_id, support in scrubbed.supports.items():
            row = current.get(row_id)
            if row is None:
                continue
            fixed += scrub_journal(store.journal(entity_id=row_id), support, to_dict(row))
        if fixed:
            store.rewrite_journal(fixed)

    def _removed_earlier(self, memories: Sequence[Memory]) -> set[str]:
        """Rows written in the same batches as ``memories`` that no longer exist (an update or
        an undo removed them): only the journal remembers their text, so it must forget it."""
        store = self.ctx.store
        batches = {c.batch_id for m in memories for _, c in store.journal(entity_id=m.id)}
        stale: set[str] = set()
        for batch in batches:
            # One lookup per partition and kind, not one per row: a bulk import's batch holds
            # thousands of rows, and each delete of one of its memories reads them all.
            wanted: dict[tuple[str, str], tuple[Scope, set[str]]] = {}
            for _, change in store.journal(batch_id=batch):
                data = change.after if change.after is not None else change.before
                if data is None:
                    continue
                scope = Scope(**data["scope"]).partition
                wanted.setdefault((scope.key, change.entity), (scope, set()))[1].add(
                    change.entity_id
                )
            for (_, entity), (scope, ids) in wanted.items():
                stale |= ids - _existing(store, scope, entity, sorted(ids))
        return stale

    # -- direct graph edits (logic in engine/graph_edit.py) --------------------------------
    def add_graph(
        self,
        text: str,
        asked: Scope | None,
        *,
        nodes: Sequence[NodeSpec],
        edges: Sequence[EdgeSpec],
        timestamp: datetime | None,
        metadata: Mapping[str, Any] | None,
        source: str | None,
        kind: MemoryKind | None,
    ) -> AddResult:
        """Remember ``text`` with the nodes and edges it states, as given, as one batch."""
        from sage_memory.engine.graph_edit import add_graph

        self.ctx.check_open()
        scope = required(asked)
        return add_graph(
            self.ctx,
            text,
            nodes,
            edges,
            scope,
            timestamp=timestamp,
            metadata=metadata,
            source=source,
            kind=kind,
        )

    def delete_node(self, name_or_id: str, scope: Scope) -> list[Change]:
        """Remove a node (by id or exact name) and its edges; undoable. Memories stay."""
        from sage_memory.engine.graph_edit import delete_node

        node = self.lookup.find_node(name_or_id, scope, exact=True)
        return delete_node(self.ctx, node)

    def delete_edge(self, edge_id: str, scope: Scope) -> list[Change]:
        """Remove one edge by id; undoable. Its nodes and memories stay."""
        from sage_memory.engine.graph_edit import delete_edge

        found = self.ctx.store.get_edges(scope.partition, [edge_id])
        if not found:
            raise NotFoundError(f"no edge with id {edge_id!r} in this scope")
        return delete_edge(self.ctx, found[0])

    def graph(self, scope: Scope, *, include_expired: bool) -> Subgraph:
        """Every node and (current, unless ``include_expired``) edge of a scope's graph."""
        from sage_memory.engine.graph_edit import whole_graph

        return whole_graph(self.ctx, scope, include_expired=include_expired)


def _skipped(memory: Memory) -> AddResult:
    """The result of adding content that was already stored: nothing was written."""
    return AddResult(
        memory_id=memory.id, memory=memory, memory_ids=(memory.id,), skipped_ids=(memory.id,)
    )


def _erase_deleted(ctx: EngineContext) -> None:
    """Stores with files (SQLite) rewrite them so no byte of what was deleted remains."""
    erase = getattr(ctx.store, "erase_deleted", None)
    if erase is not None:
        erase()


def _progress(total: int, enabled: bool) -> Callable[..., None]:
    """A progress callback: tqdm when installed, a plain stderr line otherwise."""
    if not enabled:
        return lambda n, done=False: None
    try:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="mem", desc="adding")

        def step(n: int, done: bool = False) -> None:
            bar.update(n)
            if done:
                bar.close()

        return step
    except ImportError:
        count = [0]

        def plain(n: int, done: bool = False) -> None:
            count[0] += n
            end = "\n" if done else ""
            print(f"\radding {count[0]}/{total}", end=end, file=sys.stderr, flush=True)

        return plain
