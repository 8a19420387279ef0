"""The operations a run may perform and the mutable state of one run while it plans."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sage_memory.errors import ValidationError
from sage_memory.evolve.proposal import Proposal
from sage_memory.types import Scope

#: Every operation a run knows, in the order a run performs them.
OPERATIONS: tuple[str, ...] = (
    "reinforce",
    "associate",
    "decay",
    "expire_conflicts",
    "merge",
    "split",
    "summarize",
    "upgrade_relation",
    "new_relation",
    "suggest_links",
    "archive",
    "remove_orphans",
)


def check_operations(operations: Iterable[str] | None) -> frozenset[str]:
    """The operations a run may perform; all when None."""
    if operations is None:
        return frozenset(OPERATIONS)
    ops = frozenset(operations)
    unknown = sorted(ops - set(OPERATIONS))
    if unknown:
        raise ValidationError(
            f"unknown evolution operation(s) {unknown}; choose from {', '.join(OPERATIONS)}"
        )
    return ops


@dataclass
class Run:
    """The mutable state of one run while it plans.

    Attributes:
        batch_id: The run's journal batch.
        now: The run's time.
        dry_run: True when nothing is to be written.
        operations: The operations the run may perform.
        scopes: The partitions planned so far.
        proposed: Every proposal with its partition, and whether it applied.
        written: Ids of rows the run wrote (reads of them go through the workspace).
        gone: Ids of rows the run deleted.
        states: Each partition's new run state, by partition key.
        started: ``time.perf_counter()`` at the start.
    """

    batch_id: str
    now: datetime
    dry_run: bool
    operations: frozenset[str]
    scopes: list[Scope] = field(default_factory=list)
    proposed: list[tuple[Scope, Proposal, bool]] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
