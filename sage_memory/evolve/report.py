"""Finishing a run: queue what did not apply, measure the graph, save state, report.

:class:`EvolutionReport` is what ``SageMemory.evolve`` returns; graph quality is measured per
partition after each run (see :mod:`~sage_memory.evolve.hygiene`) and kept in its state, so
:func:`quality` answers without reading the graph.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sage_memory.evolve import hygiene
from sage_memory.evolve.context import EvolveContext
from sage_memory.evolve.proposal import Proposal
from sage_memory.evolve.run import OPERATIONS, Run
from sage_memory.evolve.state import load_state, save_state
from sage_memory.types import Scope, Suggestion, new_id


@dataclass(frozen=True, slots=True)
class ProposedChange:
    """One proposal of a run, as reported: applied now, or queued as a suggestion."""

    op: str
    summary: str
    confidence: float
    applied: bool
    key: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    suggestion_id: str | None = None


@dataclass(frozen=True, slots=True)
class EvolutionReport:
    """What one evolution run did (or, for a dry run, would do).

    Attributes:
        batch_id: The run's journal batch: ``mem.undo(batch_id)`` reverts the whole run.
        dry_run: True when nothing was written.
        scopes: The partitions the run covered.
        operations: The operations it was allowed to perform.
        proposed: Every proposal, applied or not.
        suggestions: The review items it queued (for a dry run: would queue).
        changes: Journal entries written.
        metrics: Graph quality after the run (see :mod:`sage_memory.evolve.hygiene`).
        deltas: Change of each metric since the previous run.
        started_at: The run's time.
        took_ms: Wall time of the run.
    """

    batch_id: str
    dry_run: bool
    scopes: tuple[Scope, ...]
    operations: tuple[str, ...]
    proposed: tuple[ProposedChange, ...]
    suggestions: tuple[Suggestion, ...]
    changes: int
    metrics: Mapping[str, float]
    deltas: Mapping[str, float]
    started_at: datetime
    took_ms: float

    @property
    def applied(self) -> tuple[ProposedChange, ...]:
        return tuple(p for p in self.proposed if p.applied)

    def counts(self) -> dict[str, dict[str, int]]:
        """Proposals per operation: ``{"applied": {...}, "suggested": {...}}``."""
        applied = Counter(p.op for p in self.proposed if p.applied)
        suggested = Counter(p.op for p in self.proposed if not p.applied)
        return {"applied": dict(applied), "suggested": dict(suggested)}


def to_suggestion(p: Proposal, scope: Scope, now: datetime, run_id: str | None) -> Suggestion:
    """The review-queue item for a proposal that did not apply."""
    return Suggestion(
        id=new_id(),
        scope=scope.partition,
        op=p.op,
        key=p.key or f"{p.op}:{new_id()}",
        summary=p.summary,
        confidence=round(float(p.confidence), 4),
        created_at=now,
        evidence=dict(p.evidence),
        payload=dict(p.payload),
        proposed_in=run_id,
    )


def finish_run(ctx: EvolveContext, run: Run, changes: int) -> EvolutionReport:
    """Queue the suggestions, save cursors and metrics (unless a dry run); the report."""
    proposed, queued = _queue(ctx, run)
    metrics, deltas = _measure(ctx, run)
    if not run.dry_run:
        for part in run.scopes:
            save_state(ctx.store, part, run.states[part.key])
        ctx.store.prune_access(run.now - timedelta(days=ctx.cfg.access_retention_days))
    return EvolutionReport(
        batch_id=run.batch_id,
        dry_run=run.dry_run,
        scopes=tuple(run.scopes),
        operations=tuple(op for op in OPERATIONS if op in run.operations),
        proposed=proposed,
        suggestions=tuple(queued),
        changes=changes,
        metrics=metrics,
        deltas=deltas,
        started_at=run.now,
        took_ms=round((time.perf_counter() - run.started) * 1000, 2),
    )


def _queue(ctx: EvolveContext, run: Run) -> tuple[tuple[ProposedChange, ...], list[Suggestion]]:
    """Every proposal as reported, and the suggestions queued (a dry run queues nothing)."""
    suggestions: list[Suggestion] = []
    ids: dict[int, str] = {}
    for i, (scope, p, applied) in enumerate(run.proposed):
        if applied:
            continue
        s = to_suggestion(p, scope, run.now, run.batch_id)
        suggestions.append(s)
        ids[i] = s.id
    queued = suggestions if run.dry_run else ctx.store.put_suggestions(suggestions)
    queued_ids = {s.id for s in queued}
    proposed = tuple(
        ProposedChange(
            op=p.op,
            summary=p.summary,
            confidence=p.confidence,
            applied=applied,
            key=p.key,
            evidence=p.evidence,
            suggestion_id=ids[i] if ids.get(i) in queued_ids else None,
        )
        for i, (_, p, applied) in enumerate(run.proposed)
    )
    return proposed, queued


def _measure(ctx: EvolveContext, run: Run) -> tuple[Mapping[str, float], Mapping[str, float]]:
    """Graph quality after the run over all its partitions, and its change since the last run.

    Each partition's figures go into its new state as well.
    """
    raws: list[Mapping[str, Any]] = []
    previous: list[tuple[Mapping[str, Any], int]] = []
    merges = 0
    for part in run.scopes:
        state = run.states.setdefault(part.key, {})
        raw = ctx.store.graph_metrics(part)
        open_merges = sum(
            1 for s in ctx.store.list_suggestions(part, status="open") if s.op == "merge"
        )
        before = None
        if "prev_raw" in state:
            prev = (state.pop("prev_raw"), int(state.pop("prev_merges", 0)))
            previous.append(prev)
            before = hygiene.quality(*prev)
        state.update(raw=raw, merge_candidates=open_merges)
        state["metrics"] = hygiene.quality(raw, open_merges)
        state["deltas"] = hygiene.deltas(state["metrics"], before)
        state.update(last_run=run.now.isoformat(), last_batch=run.batch_id)
        raws.append(raw)
        merges += open_merges
    metrics = hygiene.quality(hygiene.combine(raws), merges)
    before_all = None
    if previous and len(previous) == len(run.scopes):
        before_all = hygiene.quality(
            hygiene.combine(r for r, _ in previous), sum(n for _, n in previous)
        )
    return metrics, hygiene.deltas(metrics, before_all)


def quality(ctx: EvolveContext, scopes: Sequence[Scope]) -> dict[str, Any] | None:
    """Graph quality as measured by the last run of each scope, and its change."""
    states = [load_state(ctx.store, s) for s in scopes]
    states = [s for s in states if "raw" in s]
    if not states:
        return None
    if len(states) == 1:
        st = states[0]
        return {
            "metrics": st["metrics"],
            "deltas": st.get("deltas", {}),
            "last_run": st.get("last_run"),
        }
    metrics = hygiene.quality(
        hygiene.combine(s["raw"] for s in states),
        sum(int(s.get("merge_candidates", 0)) for s in states),
    )
    return {"metrics": metrics, "deltas": {}, "last_run": max(s["last_run"] for s in states)}
