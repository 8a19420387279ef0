"""A read-only handle reads the journal as one state of the file, while the owner writes.

The journal keeps an insert's image by reference to the row ("the row as stored now") until the
row's next change; a reader that read the journal page, then the row after the owner changed it,
found a reference to a row that had changed and reported the journal damaged (seen in the CLI's
background-worker test: a read-only open catching up on the index while the worker wrote)."""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, datetime
from pathlib import Path

from sage_memory.codec import to_dict
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import Change, Node, Scope, new_id

_AT = datetime(2026, 1, 1, tzinfo=UTC)
_SCOPE = Scope(user_id="u")


def _put(store: SQLiteGraphStore, before: Node | None, after: Node) -> None:
    store.apply(
        [
            Change(
                id=new_id(),
                batch_id=new_id(),
                scope_key=_SCOPE.key,
                entity="node",
                entity_id=after.id,
                op="insert" if before is None else "update",
                before=None if before is None else to_dict(before),
                after=to_dict(after),
                at=_AT,
                actor="test",
                reason="test",
            )
        ]
    )


def test_a_reader_decodes_the_journal_tail_while_the_owner_changes_its_rows(
    tmp_path: Path,
) -> None:
    owner = SQLiteGraphStore(tmp_path / "s.db")
    reader = SQLiteGraphStore(tmp_path / "s.db", read_only=True)
    written = threading.Event()
    renamed: list[str] = []

    def write() -> None:
        try:
            # Each node is inserted (its image kept by reference) and then changed.
            for i in range(300):
                node = Node(id=new_id(), scope=_SCOPE, name=f"n{i}", created_at=_AT, updated_at=_AT)
                _put(owner, None, node)
                _put(owner, node, dataclasses.replace(node, name=f"n{i} renamed"))
                renamed.append(f"n{i} renamed")
        finally:
            written.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while not written.is_set():
            for _, change in reader.journal(after_seq=max(0, reader.journal_seq() - 3)):
                assert change.after is not None and change.after["name"].startswith("n")
    finally:
        writer.join()
    assert len(renamed) == 300
    last = reader.journal(after_seq=reader.journal_seq() - 1)
    assert [c.after["name"] for _, c in last if c.after] == ["n299 renamed"]
    reader.close()
    owner.close()
