"""Evolution runs: bounded, incremental passes that plan changes and queue suggestions.

One run is one journal batch (undo it whole with ``mem.undo(report.batch_id)``). Per scope
partition it looks at what changed since the previous run and at a rotating slice of the rest,
never at the whole graph at once (except communities on graphs no bigger than the budget):

    access log window  -> reinforce / associate (and access counts)
    edge slice         -> decay; relation discovery
    changed nodes      -> conflicts, duplicates (merge / split), communities, orphans
    memory slice       -> archive

``EvolveConfig.max_items_per_run`` caps each of those reads, so a run costs about the same on
a graph of 1k or 1M nodes; the slices rotate, so every item is visited over successive runs.
Weights decay exactly however late a run visits an edge (each edge keeps ``weight_at``).

What applies on its own is ``EvolveConfig.auto_apply``; the rest goes to the review queue.
Schema changes never apply on their own; nor does anything a step marks for review (close
conflicts, relation upgrades), and a merge only auto-applies at ``merge_auto_confidence``.

:class:`Evolver` is the engine's handle on all of it and delegates: planning a run
(:mod:`~sage_memory.evolve.planner`, the steps of one partition's pass in
:mod:`~sage_memory.evolve.steps`), finishing and reporting it (:mod:`~sage_memory.evolve.report`),
the review queue (:mod:`~sage_memory.evolve.suggestions`); :mod:`~sage_memory.evolve.triggers`
decides when a run happens on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sage_memory.config import SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.entities.names import merge_aliases
from sage_memory.evolve import report, suggestions
from sage_memory.evolve.context import EvolveContext
from sage_memory.evolve.planner import plan_run
from sage_memory.evolve.proposal import Proposal, Workspace
from sage_memory.evolve.report import EvolutionReport
from sage_memory.evolve.run import Run, check_operations
from sage_memory.evolve.state import load_state
from sage_memory.index.base import VectorIndex
from sage_memory.llm.base import ChatModel
from sage_memory.store.base import EvolvingStore
from sage_memory.types import Scope, Suggestion


class Evolver:
    """Plans evolution runs and review decisions for the engine, which applies them.

    The arguments are the parts of its :class:`~sage_memory.evolve.context.EvolveContext`
    (``relations``: the relation types the schema knows); the aliases come from the config.
    """

    def __init__(
        self,
        store: EvolvingStore,
        index: VectorIndex,
        embedder: Embedder,
        config: SageConfig,
        *,
        llm: ChatModel | None = None,
        relations: Iterable[str] = (),
    ) -> None:
        self.ctx = EvolveContext(
            store,
            index,
            embedder,
            config,
            llm,
            set(relations),
            merge_aliases(config.extract.aliases),
        )

    # -- runs ------------------------------------------------------------------------------
    def plan(
        self,
        ws: Workspace,
        scopes: Sequence[Scope],
        *,
        now: datetime,
        batch_id: str,
        dry_run: bool = False,
        operations: Iterable[str] | None = None,
    ) -> Run:
        """Plan a run into ``ws``: auto-applied proposals are written to it, the rest kept."""
        run = Run(batch_id, now, dry_run, check_operations(operations))
        plan_run(self.ctx, ws, scopes, run)
        return run

    def finish(self, run: Run, changes: int) -> EvolutionReport:
        """Queue the suggestions, save cursors and metrics (unless a dry run); the report."""
        return report.finish_run(self.ctx, run, changes)

    def state(self, scope: Scope) -> dict[str, Any]:
        """The saved state of a partition's last run (cursors, metrics); {} before any run."""
        return load_state(self.ctx.store, scope)

    def quality(self, scopes: Sequence[Scope]) -> dict[str, Any] | None:
        """Graph quality as measured by the last run of each scope, and its change."""
        return report.quality(self.ctx, scopes)

    # -- review ----------------------------------------------------------------------------
    def get_suggestion(self, suggestion_id: str) -> Suggestion:
        """A queued suggestion by id, whatever its status."""
        return suggestions.get_suggestion(self.ctx, suggestion_id)

    def accept(
        self, ws: Workspace, suggestion_id: str, now: datetime
    ) -> tuple[Suggestion, Proposal]:
        """Plan an open suggestion again on the current graph and write it into ``ws``."""
        return suggestions.accept(self.ctx, ws, suggestion_id, now)

    def learned_relations(self) -> list[str]:
        """Relation types added by accepted suggestions (kept in the store)."""
        return suggestions.learned_relations(self.ctx)
