"""The evolver's surface on the facade (logic in sage_memory/evolve/)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sage_memory.engine.journal import Batch
from sage_memory.engine.unit import UnitOfWork
from sage_memory.errors import (
    ValidationError,
)
from sage_memory.schema import Schema
from sage_memory.types import (
    Change,
    RetrievalResult,
    Scope,
    Suggestion,
    as_utc,
)

if TYPE_CHECKING:
    from sage_memory.evolve.history import MemoryAsOf
    from sage_memory.evolve.runner import EvolutionReport

from sage_memory.engine.base import EngineBase


class EvolutionOps(EngineBase):
    """The evolver's surface on the facade (logic in sage_memory/evolve/)."""

    # -- evolution (logic in sage_memory/evolve/) -----------------------------------------
    def _learn_relations(self) -> None:
        """Add relation types accepted from the review queue to the schema."""
        learned = frozenset(self._evolver.learned_relations()) - self.schema.relation_types
        if learned:
            self.schema = Schema(self.schema.node_labels, self.schema.relation_types | learned)
            self._ingestor.schema = self.schema

    def feedback(
        self,
        ids: str | Sequence[str],
        *,
        used: bool = True,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        result: RetrievalResult | None = None,
    ) -> str:
        """Say which memories or nodes were actually used (``used=False``: were useless).

        Feedback counts more than being returned by a search. It is paired with the nodes of
        ``result``, or else of the scope's last search within the hour, so the evolver learns
        which answers go with which questions. Returns the access event id.
        """
        self._check_open()
        items = [ids] if isinstance(ids, str) else list(ids)
        if not items or not all(isinstance(i, str) and i for i in items):
            raise ValidationError("feedback needs one or more memory or node ids")
        scope = Scope(user_id, agent_id, run_id)
        event = self._access.record_feedback(scope, items, used=used, at=self.now(), result=result)
        return event.id

    def evolve(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        dry_run: bool = False,
        operations: Sequence[str] | None = None,
    ) -> EvolutionReport:
        """One bounded evolution pass over a scope (every scope when none is given).

        Reinforces and decays edge weights from the access log, settles clear conflicts, finds
        duplicates, communities and relation patterns, archives stale memories and removes
        orphans. What ``config.evolve.auto_apply`` allows is applied as one journal batch
        (``undo(report.batch_id)`` reverts it); the rest is queued for :meth:`review`.
        ``dry_run=True`` writes nothing and reports what would happen.
        """
        self._check_open()
        if user_id is None and agent_id is None and run_id is None:
            scopes = self.store.partitions()
        else:
            scopes = [Scope(user_id, agent_id, run_id).partition]
        with self._lock:
            self._check_open()
            self._access.flush()
            now = self.now()
            uow = UnitOfWork(self.store, Batch("evolver", "evolve", now))
            run = self._evolver.plan(
                uow, scopes, now=now, batch_id=uow.batch.id, dry_run=dry_run, operations=operations
            )
            changes = [] if dry_run else uow.commit()
            self._sync_index(changes, uow.vectors)
            return self._evolver.finish(run, len(changes))

    def review(
        self, *, user_id: str | None = None, agent_id: str | None = None, status: str = "open"
    ) -> list[Suggestion]:
        """The review queue: suggestions the evolver may not apply on its own, oldest first."""
        scope = None if user_id is None and agent_id is None else Scope(user_id, agent_id)
        return self.store.list_suggestions(scope, status=status)

    def accept(self, suggestion_id: str) -> list[Change]:
        """Apply a suggestion (planned again on the graph as it is now) as one batch.

        Returns the changes; ``undo(changes[0].batch_id)`` reverts them.
        """
        self._check_open()
        with self._lock:
            now = self.now()
            uow = UnitOfWork(self.store, Batch("user", f"accept {suggestion_id}", now))
            suggestion, _ = self._evolver.accept(uow, suggestion_id, now)
            changes = uow.commit()
            self._sync_index(changes, uow.vectors)
            self.store.set_suggestion_status([suggestion.id], "accepted", now, uow.batch.id)
            self._learn_relations()
            return changes

    def reject(self, suggestion_id: str) -> Suggestion:
        """Drop a suggestion from the queue; the same suggestion is not made again."""
        self._check_open()
        suggestion = self._evolver.get_suggestion(suggestion_id)
        self.store.set_suggestion_status([suggestion.id], "rejected", self.now())
        return self._evolver.get_suggestion(suggestion_id)

    def merge(
        self,
        keep: str,
        other: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Change]:
        """Merge node ``other`` into node ``keep`` (names or ids): every edge is re-pointed and
        the names kept as aliases. One batch; ``undo(changes[0].batch_id)`` restores both."""
        from sage_memory.evolve.proposal import apply_to
        from sage_memory.evolve.review import manual_merge

        self._check_open()
        kept = self.find_node(keep, user_id=user_id, agent_id=agent_id)
        gone = self.find_node(other, user_id=user_id, agent_id=agent_id)
        with self._lock:
            now = self.now()
            uow = UnitOfWork(self.store, Batch("user", f"merge {gone.id} into {kept.id}", now))
            apply_to(uow, manual_merge(uow, kept, gone, now))
            changes = uow.commit()
            self._sync_index(changes, uow.vectors)
            return changes

    def as_of(self, at: datetime) -> MemoryAsOf:
        """A read-only view of the whole memory as it was at system time ``at``, rebuilt from
        the journal: get, get_all, search, explore, find_node, graph, stats, history, export."""
        from sage_memory.evolve.history import MemoryAsOf, snapshot_store
        from sage_memory.index.numpy import NumpyVectorIndex

        self._check_open()
        with self._lock:
            snapshot = snapshot_store(self.store, self.embedder, at)
        quiet = dataclasses.replace(
            self.config.evolve, every_n_adds=0, every_growth_percent=0.0, schedule_seconds=0.0
        )
        from sage_memory.engine.core import SageMemory

        inner = SageMemory(
            config=self.config.but(evolve=quiet),
            embedder=self.embedder,
            extractor=self.extractor,
            store=snapshot,
            index=NumpyVectorIndex(),
            clock=lambda: as_utc(at),
        )
        return MemoryAsOf(inner, at, self.history)
