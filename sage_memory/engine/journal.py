"""Building journaled changes and their inverses.

A :class:`~sage_memory.types.Change` carries a row's state before and after, so every mutation
(an add, an extraction write, a merge, an evolution step) is undone the same way: write
``before`` back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sage_memory.codec import Record, entity_of, to_dict
from sage_memory.types import Change, ChangeOp, Entity, new_id


@dataclass
class Batch:
    """The changes of one call, applied together and undone together."""

    actor: str
    reason: str
    at: datetime
    id: str = field(default_factory=new_id)
    changes: list[Change] = field(default_factory=list)

    def record(self, before: Record | None, after: Record | None) -> Change:
        """Add the change that turns ``before`` into ``after`` (either may be None)."""
        ref = after if after is not None else before
        assert ref is not None, "a change needs a before or an after state"
        op: ChangeOp = "insert" if before is None else "delete" if after is None else "update"
        change = Change(
            id=new_id(),
            batch_id=self.id,
            scope_key=ref.scope.key,
            entity=entity_of(ref),  # type: ignore[arg-type]
            entity_id=ref.id,
            op=op,
            before=None if before is None else to_dict(before),
            after=None if after is None else to_dict(after),
            at=self.at,
            actor=self.actor,
            reason=self.reason,
        )
        self.changes.append(change)
        return change


def inverse(
    changes: Sequence[Change], current: dict[str, dict[str, Any] | None], batch: Batch
) -> list[Change]:
    """Changes that restore each row to its state before ``changes`` (newest undone first).

    ``current`` maps entity ids to their present stored state (None when absent), so the
    journal records exactly what the undo overwrote.
    """
    out: list[Change] = []
    for ch in reversed(changes):
        now = current.get(ch.entity_id)
        target = ch.before
        op: ChangeOp = "insert" if now is None else "delete" if target is None else "update"
        entity: Entity = ch.entity
        out.append(
            Change(
                id=new_id(),
                batch_id=batch.id,
                scope_key=ch.scope_key,
                entity=entity,
                entity_id=ch.entity_id,
                op=op,
                before=now,
                after=target,
                at=batch.at,
                actor=batch.actor,
                reason=f"undo {ch.id}",
            )
        )
        current[ch.entity_id] = None if target is None else dict(target)
    return out
