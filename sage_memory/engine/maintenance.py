"""Undo, export / load and backup."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sage_memory.engine.journal import Batch, inverse
from sage_memory.errors import (
    NotFoundError,
    StorageError,
    ValidationError,
)
from sage_memory.types import (
    Change,
    Scope,
    Vector,
)

if TYPE_CHECKING:
    pass

from sage_memory.engine.base import DB_FILE, EngineBase


class MaintenanceOps(EngineBase):
    """Undo, export / load and backup."""

    # -- journal ---------------------------------------------------------------------------
    def undo(self, change_or_batch_id: str, *, force: bool = False) -> list[Change]:
        """Undo one journaled change, or every change of a batch (an add, a merge, a run).

        Refuses when a later change touched the same rows, unless ``force=True`` (which then
        overwrites the later changes too). Returns the changes the undo applied.
        """
        self._check_open()
        with self._lock:
            entries = self.store.journal(batch_id=change_or_batch_id)
            if not entries:
                entries = [
                    (s, c) for s, c in self.store.journal(limit=None) if c.id == change_or_batch_id
                ]
            if not entries:
                raise NotFoundError(f"no change or batch with id {change_or_batch_id!r}")
            last_seq = max(s for s, _ in entries)
            touched = {c.entity_id for _, c in entries}
            if not force:
                later = [
                    c.id
                    for s, c in self.store.journal(after_seq=last_seq)
                    if c.entity_id in touched
                ]
                if later:
                    raise ValidationError(
                        f"{len(later)} later change(s) touched the same rows (first: {later[0]}); "
                        "undo those first, or pass force=True"
                    )
            current = self._current_state([c for _, c in entries])
            batch = Batch("user", f"undo {change_or_batch_id}", self.now())
            changes = inverse([c for _, c in entries], current, batch)
            vectors = self._vectors_for_restored(changes)
            self.store.apply(changes, vectors)
            self._sync_index(changes, vectors)
            return changes

    def _current_state(self, changes: Sequence[Change]) -> dict[str, dict[str, Any] | None]:
        from sage_memory.codec import to_dict

        out: dict[str, dict[str, Any] | None] = {}
        for ch in changes:
            scope = _scope_from_key(ch)
            if ch.entity == "memory":
                found: Sequence[Any] = self.store.get_memories(scope, [ch.entity_id])
            elif ch.entity == "node":
                found = self.store.get_nodes(scope, [ch.entity_id])
            else:
                found = self.store.get_edges(scope, [ch.entity_id])
            out[ch.entity_id] = to_dict(found[0]) if found else None
        return out

    def _vectors_for_restored(self, changes: Sequence[Change]) -> dict[str, Vector]:
        """Re-embed restored memories and nodes whose text changed or that came back."""
        todo: list[tuple[str, str]] = []
        for ch in changes:
            if ch.after is None or ch.entity == "edge":
                continue
            field = "text" if ch.entity == "memory" else "name"
            if ch.before is None or ch.before.get(field) != ch.after.get(field):
                todo.append((ch.entity_id, ch.after[field]))
        if not todo:
            return {}
        vecs = self.embedder.embed([t for _, t in todo])
        return {i: v for (i, _), v in zip(todo, vecs, strict=True)}

    # -- export / import -------------------------------------------------------------------
    def export(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        format: str = "jsonl",
    ) -> int:
        """Write memories, nodes and edges to a file: "jsonl" (lossless, for :meth:`load`) or
        "graphml" (the graph, for graph tools). Returns the number of records written."""
        from sage_memory.engine.transfer import export_graphml, export_jsonl

        scopes = (
            self.store.partitions()
            if user_id is None and agent_id is None
            else [Scope(user_id, agent_id)]
        )
        writers = {"jsonl": export_jsonl, "graphml": export_graphml}
        if format not in writers:
            raise ValidationError(f"format={format!r}: use 'jsonl' or 'graphml'")
        try:
            return writers[format](self, Path(path), scopes)
        except StorageError:
            raise
        except OSError as exc:  # a missing folder, no permission, a full disk
            raise StorageError(
                f"cannot write the export {path}: {exc.strerror or exc}. Choose a path in an "
                "existing folder you can write to."
            ) from exc

    def backup(self, target: str | os.PathLike[str]) -> Path:
        """A consistent copy of the memory folder while it stays in use (SQLite online backup;
        the vector index is rebuilt from it when the copy is opened)."""
        from sage_memory.store.sqlite import SQLiteGraphStore

        if self.path is None or not isinstance(self.store, SQLiteGraphStore):
            raise StorageError("backup needs a folder-backed SageMemory; use export() instead")
        dest = Path(target)
        dest.mkdir(parents=True, exist_ok=True)
        if any(dest.iterdir()):
            raise StorageError(f"{dest} is not empty; back up into a new folder")
        self.store.backup(dest / DB_FILE)
        copy = SQLiteGraphStore(dest / DB_FILE)
        copy.set_meta("clean_shutdown", "0")  # forces a full index rebuild on first open
        copy.close()
        return dest


def _scope_from_key(change: Change) -> Scope:
    data = change.after if change.after is not None else change.before
    assert data is not None, "a journaled change always has a before or an after state"
    return Scope(**data["scope"]).partition
