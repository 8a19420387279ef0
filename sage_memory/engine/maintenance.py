"""Undo, export / load and backup."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sage_memory.codec import from_dict
from sage_memory.engine import index_mark, pending
from sage_memory.engine.context import DB_FILE, EngineContext
from sage_memory.engine.journal import Batch, inverse
from sage_memory.errors import NotFoundError, StorageError, ValidationError
from sage_memory.store.base import GraphStore
from sage_memory.types import Change, Memory, Scope, Vector


class Maintenance:
    """Undo, export and backup over the context's store and journal."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def undo(self, change_or_batch_id: str, *, force: bool = False) -> list[Change]:
        """Undo one journaled change or a whole batch (see ``SageMemory.undo``)."""
        ctx = self.ctx
        store = ctx.store
        ctx.check_open()
        with ctx.lock:
            entries = store.journal(batch_id=change_or_batch_id)
            if not entries:
                entries = [
                    (s, c) for s, c in store.journal(limit=None) if c.id == change_or_batch_id
                ]
            if not entries:
                raise NotFoundError(f"no change or batch with id {change_or_batch_id!r}")
            # A memory the undo brings back with its extraction pending (the change that
            # extracted it undone alone, or its deletion undone) must be queued again, or no
            # extraction run would find it. Queued before the inverse commits, as every
            # pending memory is (engine/pending.py): an undo refused below leaves an id
            # whose row is not pending, which the next reader drops.
            pending.enqueue(ctx, _restored_pending([c for _, c in entries]))
            # A store shared by processes: the partitions the batch touched stay still until
            # the inverse is applied (no other process writes those rows in between).
            with ctx.writing(*{c.scope_key for _, c in entries}):
                last_seq = max(s for s, _ in entries)
                touched = {c.entity_id for _, c in entries}
                if not force:
                    later = [
                        c.id for s, c in store.journal(after_seq=last_seq) if c.entity_id in touched
                    ]
                    if later:
                        raise ValidationError(
                            f"{len(later)} later change(s) touched the same rows (first: "
                            f"{later[0]}); undo those first, or pass force=True"
                        )
                if not force:
                    self._refuse_orphans([c for _, c in entries], touched)
                current = current_state(store, [c for _, c in entries])
                batch = Batch("user", f"undo {change_or_batch_id}", ctx.now())
                changes = inverse([c for _, c in entries], current, batch)
                vectors = self._vectors_for_restored(changes)
                store.apply(changes, vectors)
                ctx.sync_index(changes, vectors)
                return changes

    def _refuse_orphans(self, changes: Sequence[Change], touched: set[str]) -> None:
        """Refuse to undo a memory's insert without the facts extracted from it.

        Undoing that one change (not its batch) would delete the memory but keep nodes and
        edges whose provenance cites it: search would go on showing a fact whose source is gone.
        """
        store = self.ctx.store
        for c in changes:
            if c.entity != "memory" or c.op != "insert":
                continue
            memory = store.find_memory(c.entity_id)
            if memory is None:
                continue
            nodes, edges = store.derived_from(memory.scope.partition, memory.id)
            left = [i for i in [n.id for n in nodes] + [e.id for e in edges] if i not in touched]
            if left:
                raise ValidationError(
                    f"undoing change {c.id} alone would remove memory {memory.id} but keep "
                    f"{len(left)} node(s) and edge(s) that cite it; undo its batch "
                    f"{c.batch_id} (everything that call wrote), delete the memory, or pass "
                    "force=True"
                )

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
        vecs = self.ctx.embedder.embed([t for _, t in todo])
        return {i: v for (i, _), v in zip(todo, vecs, strict=True)}

    def export(
        self,
        path: str | os.PathLike[str],
        scope: Scope | None,
        format: str,
        *,
        progress: bool = False,
    ) -> int:
        """Write the records of ``scope`` (every scope when None) as jsonl or graphml."""
        from sage_memory.engine.transfer import export_graphml, export_jsonl

        ctx = self.ctx
        scopes = ctx.store.partitions() if scope is None else [scope]
        writers = {"jsonl": export_jsonl, "graphml": export_graphml}
        if format not in writers:
            raise ValidationError(f"format={format!r}: use 'jsonl' or 'graphml'")
        try:
            return writers[format](ctx, Path(path), scopes, progress=progress)
        except StorageError:
            raise
        except OSError as exc:  # a missing folder, no permission, a full disk
            raise StorageError(
                f"cannot write the export {path}: {exc.strerror or exc}. Choose a path in an "
                "existing folder you can write to."
            ) from exc

    def backup(self, target: str | os.PathLike[str]) -> Path:
        """A consistent copy of the memory folder (SQLite online backup)."""
        from sage_memory.store.sqlite import SQLiteGraphStore

        ctx = self.ctx
        if ctx.path is None or not isinstance(ctx.store, SQLiteGraphStore):
            raise StorageError("backup needs a folder-backed SageMemory; use export() instead")
        dest = Path(target)
        dest.mkdir(parents=True, exist_ok=True)
        if any(dest.iterdir()):
            raise StorageError(f"{dest} is not empty; back up into a new folder")
        ctx.store.backup(dest / DB_FILE)
        copy = SQLiteGraphStore(dest / DB_FILE)
        copy.set_meta("clean_shutdown", "0")  # forces a full index rebuild on first open
        index_mark.clear_mark(copy)  # the copy has no index: nothing of it is in sync
        copy.close()
        return dest


def current_state(store: GraphStore, changes: Sequence[Change]) -> dict[str, dict[str, Any] | None]:
    """The stored state of each changed row now (None: the row is gone)."""
    from sage_memory.codec import to_dict

    out: dict[str, dict[str, Any] | None] = {}
    for ch in changes:
        scope = _scope_from_key(ch)
        if ch.entity == "memory":
            found: Sequence[Any] = store.get_memories(scope, [ch.entity_id])
        elif ch.entity == "node":
            found = store.get_nodes(scope, [ch.entity_id])
        else:
            found = store.get_edges(scope, [ch.entity_id])
        out[ch.entity_id] = to_dict(found[0]) if found else None
    return out


def _scope_from_key(change: Change) -> Scope:
    data = change.after if change.after is not None else change.before
    assert data is not None, "a journaled change always has a before or an after state"
    return Scope(**data["scope"]).partition


def _restored_pending(changes: Sequence[Change]) -> list[Memory]:
    """The memories that undoing ``changes`` restores with their extraction pending: the
    state each change found (its ``before``), which the inverse writes back."""
    return [
        from_dict(Memory, c.before)
        for c in changes
        if c.entity == "memory" and c.before is not None and c.before.get("extraction") == "pending"
    ]
