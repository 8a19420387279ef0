"""The evolver's surface in the engine (logic in sage_memory/evolve/).

This part owns the evolver's wiring: the access log (what searches returned, what feedback
said), the evolver itself and its triggers. The other parts ask it to record, flush and run.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sage_memory.engine.context import EngineContext, required
from sage_memory.engine.journal import Batch
from sage_memory.engine.lookup import Lookup
from sage_memory.engine.progress import Progress
from sage_memory.engine.unit import UnitOfWork
from sage_memory.errors import ValidationError
from sage_memory.evolve.learned import learned_relations
from sage_memory.index.base import VectorIndex
from sage_memory.schema import Schema
from sage_memory.store.base import GraphStore
from sage_memory.types import Change, RetrievalResult, Scope, Suggestion, as_utc

if TYPE_CHECKING:
    from sage_memory.config import SageConfig
    from sage_memory.evolve.history import MemoryAsOf, Reader
    from sage_memory.evolve.report import EvolutionReport
    from sage_memory.evolve.runner import Evolver

#: Opens a read-only engine over a snapshot store: (config, store, index, clock) -> engine.
#: The facade passes its own constructor, so this module never imports the facade.
ViewFactory = Callable[["SageConfig", GraphStore, VectorIndex, Callable[[], datetime]], "Reader"]


class Evolution:
    """Feedback, evolution passes, the review queue, manual merges and time travel."""

    def __init__(self, ctx: EngineContext, lookup: Lookup, open_view: ViewFactory) -> None:
        from sage_memory.evolve.access import AccessRecorder
        from sage_memory.evolve.triggers import Triggers

        self.ctx = ctx
        self.lookup = lookup
        self.open_view = open_view
        self.access = AccessRecorder(ctx.store, ctx.config.evolve)
        # The relation types the evolver starts from: the schema's before it learns the
        # accepted ones (the evolver adds those itself as it accepts them).
        self._relations = ctx.schema.relation_types
        self._evolver: Evolver | None = None
        self._evolver_lock = threading.Lock()
        self.learn_relations()
        self.triggers = Triggers(ctx.store, ctx.config)

    @property
    def evolver(self) -> Evolver:
        """The evolver, built on first use: a process that only searches (the command line's
        ``search``) never imports its planning and review code."""
        if self._evolver is None:
            with self._evolver_lock:
                if self._evolver is None:
                    from sage_memory.evolve.runner import Evolver

                    ctx = self.ctx
                    self._evolver = Evolver(
                        ctx.store,
                        ctx.index,
                        ctx.embedder,
                        ctx.config,
                        llm=ctx.llm,
                        relations=self._relations,
                    )
        return self._evolver

    def learn_relations(self) -> None:
        """Add relation types accepted from the review queue to the schema."""
        schema = self.ctx.schema
        learned = frozenset(learned_relations(self.ctx.store)) - schema.relation_types
        if learned:
            self.ctx.set_schema(Schema(schema.node_labels, schema.relation_types | learned))

    def record_search(self, result: RetrievalResult) -> None:
        """Buffer a search for the access log; the evolver learns from it."""
        self.access.record_search(result, self.ctx.now())

    def flush_access(self) -> None:
        """Write the buffered access events (before rows they mention are purged)."""
        self.access.flush()

    def quality(self, partitions: Sequence[Scope]) -> dict[str, Any] | None:
        """Graph quality as the last evolution run measured it (None before any run)."""
        return self.evolver.quality(list(partitions))

    def feedback(
        self,
        ids: str | Sequence[str],
        scope: Scope | None,
        *,
        used: bool,
        result: RetrievalResult | None,
    ) -> str:
        """Record which ids were used (or useless); returns the access event id."""
        self.ctx.check_open()
        items = [ids] if isinstance(ids, str) else list(ids)
        if not items or not all(isinstance(i, str) and i for i in items):
            raise ValidationError("feedback needs one or more memory or node ids")
        event = self.access.record_feedback(
            required(scope), items, used=used, at=self.ctx.now(), result=result
        )
        return event.id

    def evolve(
        self,
        scope: Scope | None,
        *,
        dry_run: bool = False,
        operations: Sequence[str] | None = None,
        progress: bool = False,
    ) -> EvolutionReport:
        """One bounded evolution pass over a scope's partition, or every partition."""
        ctx = self.ctx
        ctx.check_open()
        scopes = ctx.store.partitions() if scope is None else [scope.partition]
        # One run plans every scope together (one batch): the bar counts its three stages.
        desc = f"evolving {len(scopes)} scope(s)"
        with (
            ctx.writing(*(s.key for s in scopes)),
            Progress(3, desc, "stage", enabled=progress) as bar,
        ):
            self.access.flush()
            now = ctx.now()
            uow = UnitOfWork(ctx.store, Batch("evolver", "evolve", now))
            run = self.evolver.plan(
                uow, scopes, now=now, batch_id=uow.batch.id, dry_run=dry_run, operations=operations
            )
            bar.update()
            changes = [] if dry_run else uow.commit()
            ctx.sync_index(changes, uow.vectors)
            bar.update()
            report = self.evolver.finish(run, len(changes))
            bar.update()
            return report

    def after_add(self, scope: Scope, count: int) -> None:
        """Run a pass when the triggers say so (every N adds, growth by X%)."""
        if self.triggers.after_add(scope, count):
            self.evolve(scope)

    def review(self, scope: Scope | None, status: str) -> list[Suggestion]:
        """Open (or ``status``) suggestions of a scope, or of every scope, oldest first."""
        return self.ctx.store.list_suggestions(scope, status=status)

    def accept(self, suggestion_id: str) -> list[Change]:
        """Apply a suggestion, planned again on the graph as it is now, as one batch."""
        ctx = self.ctx
        ctx.check_open()
        with ctx.writing(self.evolver.get_suggestion(suggestion_id).scope.partition.key):
            now = ctx.now()
            uow = UnitOfWork(ctx.store, Batch("user", f"accept {suggestion_id}", now))
            suggestion, _ = self.evolver.accept(uow, suggestion_id, now)
            changes = uow.commit()
            ctx.sync_index(changes, uow.vectors)
            ctx.store.set_suggestion_status([suggestion.id], "accepted", now, uow.batch.id)
            self.learn_relations()
            return changes

    def reject(self, suggestion_id: str) -> Suggestion:
        """Drop a suggestion; the same suggestion is not made again."""
        ctx = self.ctx
        ctx.check_open()
        with ctx.writing(self.evolver.get_suggestion(suggestion_id).scope.partition.key):
            # Read again under the lock: another process may have accepted it meanwhile.
            suggestion = self.evolver.get_suggestion(suggestion_id)
            if suggestion.status == "accepted":
                raise ValidationError(f"suggestion {suggestion_id} is already accepted")
            ctx.store.set_suggestion_status([suggestion.id], "rejected", ctx.now())
            return self.evolver.get_suggestion(suggestion_id)

    def merge(self, keep: str, other: str, scope: Scope) -> list[Change]:
        """Merge node ``other`` into ``keep`` (names or ids) as one batch."""
        from sage_memory.evolve.proposal import apply_to
        from sage_memory.evolve.review import manual_merge

        ctx = self.ctx
        ctx.check_open()
        kept = self.lookup.find_node(keep, scope)
        gone = self.lookup.find_node(other, scope)
        with ctx.writing(kept.scope.partition.key):
            now = ctx.now()
            uow = UnitOfWork(ctx.store, Batch("user", f"merge {gone.id} into {kept.id}", now))
            apply_to(uow, manual_merge(uow, kept, gone, now))
            changes = uow.commit()
            ctx.sync_index(changes, uow.vectors)
            return changes

    def as_of(self, at: datetime) -> MemoryAsOf:
        """A read-only view of the whole memory at system time ``at``, rebuilt from the journal."""
        from sage_memory.evolve.history import MemoryAsOf, snapshot_store
        from sage_memory.index.numpy import NumpyVectorIndex

        ctx = self.ctx
        ctx.check_open()
        with ctx.lock:
            snapshot = snapshot_store(ctx.store, ctx.embedder, at)
        quiet = dataclasses.replace(
            ctx.config.evolve, every_n_adds=0, every_growth_percent=0.0, schedule_seconds=0.0
        )
        inner = self.open_view(
            ctx.config.but(evolve=quiet), snapshot, NumpyVectorIndex(), lambda: as_utc(at)
        )
        return MemoryAsOf(inner, at, self.lookup.history)
