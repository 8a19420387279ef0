"""``add(..., defer=True)`` and ``extract_pending``: the two halves of an add, in the API."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.engine import pending

TEXTS = [
    "Alice moved to Berlin in 2019.",
    "Bob works at Acme as an engineer.",
    "Carol bought a red bicycle for her commute.",
    "Alice moved to Lisbon in 2023.",
]


def facts(mem: SageMemory, user: str = "u") -> set[tuple[str, str, str]]:
    sub = mem.graph(user_id=user, include_expired=True)
    names = {n.id: n.name for n in sub.nodes}
    return {(names[e.source_id], e.relation, names[e.target_id]) for e in sub.edges}


@pytest.fixture
def reference(tmp_path: Path) -> set[tuple[str, str, str]]:
    """The facts of TEXTS added one by one with inline extraction."""
    with SageMemory(tmp_path / "reference") as mem:
        for text in TEXTS:
            mem.add(text, user_id="u")
        return facts(mem)


def test_a_deferred_add_is_stored_searchable_and_pending(tmp_path: Path) -> None:
    with SageMemory(tmp_path / "m") as mem:
        r = mem.add(TEXTS[0], user_id="u", defer=True)
        assert (r.memory.extraction, r.node_ids, r.edge_ids) == ("pending", (), ())
        assert mem.get(r.memory_id, user_id="u").extraction == "pending"
        assert mem.search("Berlin", user_id="u").memories[0].id == r.memory_id
        assert mem.stats(user_id="u")["pending"] == 1
        assert mem.stats()["nodes"] == 0
    with SageMemory(tmp_path / "m") as mem:  # durable: pending after a reopen too
        assert mem.stats()["pending"] == 1


def test_extract_pending_builds_what_an_inline_add_builds(
    tmp_path: Path, reference: set[tuple[str, str, str]]
) -> None:
    with SageMemory(tmp_path / "m") as mem:
        for text in TEXTS:
            mem.add(text, user_id="u", defer=True)
        done = mem.extract_pending()
        assert len(done) == 4
        assert all(r.memory.extraction == "ok" for r in done)
        assert mem.stats()["pending"] == 0
        assert mem.extract_pending() == []  # nothing twice
        assert facts(mem) == reference


def test_limit_takes_the_oldest_and_scope_only_its_own(tmp_path: Path) -> None:
    with SageMemory(tmp_path / "m") as mem:
        first = mem.add(TEXTS[0], user_id="u", defer=True).memory_id
        mem.add(TEXTS[1], user_id="u", defer=True)
        other = mem.add(TEXTS[2], user_id="v", defer=True).memory_id
        assert [r.memory_id for r in mem.extract_pending(limit=1)] == [first]
        assert [r.memory_id for r in mem.extract_pending(user_id="v")] == [other]
        assert mem.stats(user_id="u")["pending"] == 1
        assert mem.stats(user_id="v")["pending"] == 0


def test_threads_extracting_at_once_build_each_graph_once(
    tmp_path: Path, reference: set[tuple[str, str, str]]
) -> None:
    with SageMemory(tmp_path / "m") as mem:
        mem.add_many(TEXTS, user_id="u", defer=True)
        done: list[int] = []
        threads = [
            threading.Thread(target=lambda: done.append(len(mem.extract_pending())))
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(done) == len(TEXTS)  # each memory claimed by exactly one thread
        assert facts(mem) == reference


def test_undo_of_the_add_batch_removes_memory_and_graph(tmp_path: Path) -> None:
    with SageMemory(tmp_path / "m") as mem:
        r = mem.add(TEXTS[0], user_id="u", defer=True)
        mem.extract_pending()
        batches = {c.batch_id for c in mem.history(r.memory_id)}
        assert batches == {mem.history(r.memory_id)[0].batch_id}
        mem.undo(batches.pop())
        stats = mem.stats()
        assert (stats["memories"], stats["nodes"], stats["edges"], stats["pending"]) == (0, 0, 0, 0)


def test_undoing_the_change_that_marked_a_memory_extracted_queues_it_again(
    tmp_path: Path,
) -> None:
    """Undo of the one change that marked a deferred memory extracted (not its whole batch):
    the memory is pending again, and the next extraction run finds it."""
    with SageMemory(tmp_path / "m") as mem:
        kept = mem.add(TEXTS[0], user_id="u", defer=True).memory_id
        mem.extract_pending()
        assert mem.stats()["pending"] == 0
        marked = [c for c in mem.history(kept) if c.op == "update"]
        assert [(c.before or {}).get("extraction") for c in marked] == ["pending"]
        mem.undo(marked[0].id, force=True)
        assert mem.get(kept, user_id="u").extraction == "pending"
        assert mem.stats()["pending"] == 1
        assert [r.memory_id for r in mem.extract_pending()] == [kept]
        assert mem.stats()["pending"] == 0


def test_deleted_or_updated_pending_memories_are_not_extracted(tmp_path: Path) -> None:
    with SageMemory(tmp_path / "m") as mem:
        gone = mem.add(TEXTS[0], user_id="u", defer=True).memory_id
        changed = mem.add(TEXTS[1], user_id="u", defer=True).memory_id
        mem.delete(gone, user_id="u")
        mem.update(changed, "Bob works at Initech.", user_id="u")  # extracted by the update
        assert mem.stats()["pending"] == 0
        assert mem.extract_pending() == []
        assert pending.queued(mem._ctx) == []  # both ids left the queue


def test_a_store_without_a_queue_is_searched_once_for_pending_rows(tmp_path: Path) -> None:
    """A folder loaded from an export of pending memories has rows but no queue."""
    with SageMemory(tmp_path / "m") as mem:
        mem.add(TEXTS[0], user_id="u", defer=True)
        mem.export(tmp_path / "all.jsonl")
    with SageMemory.load(tmp_path / "all.jsonl", tmp_path / "copy") as copy:
        assert copy.get_all(user_id="u")[0].extraction == "pending"
        assert [r.memory.extraction for r in copy.extract_pending()] == ["ok"]
        assert copy.stats()["nodes"] > 0


def test_a_backlog_of_deferred_adds_is_one_row_each_drained_completely_after_reopen(
    tmp_path: Path,
) -> None:
    """Each deferred add queues its own meta row (no value holding the whole backlog is
    rewritten); the backlog survives a reopen and extract_pending drains all of it, in the
    order the memories were added."""
    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        ids = [
            mem.add(f"Dana visited the museum number {i}.", user_id="u", defer=True).memory_id
            for i in range(15)
        ]
        ids += [
            r.memory_id
            for r in mem.add_many(
                [f"Eli read chapter {i} of the book." for i in range(15)], user_id="u", defer=True
            )
        ]
        store = mem._ctx.store
        assert store.get_meta(pending.QUEUE_META) == pending.KEYED
        rows = store.meta_items(pending.QUEUE_PREFIX)  # type: ignore[attr-defined]
        assert sorted(rows) == sorted(pending.QUEUE_PREFIX + i for i in ids)
    with SageMemory(folder, embedder="hashing") as mem:
        assert mem.stats()["pending"] == 30
        assert [mid for mid, _ in pending.queued(mem._ctx)] == ids
        assert sorted(r.memory_id for r in mem.extract_pending(limit=10)) == sorted(ids[:10])
    with SageMemory(folder, embedder="hashing") as mem:
        assert mem.stats()["pending"] == 20
        assert sorted(r.memory_id for r in mem.extract_pending()) == sorted(ids[10:])
        assert mem.stats()["pending"] == 0
        assert mem._ctx.store.meta_items(pending.QUEUE_PREFIX) == {}  # type: ignore[attr-defined]
        assert all(m.extraction == "ok" for m in mem.get_all(user_id="u"))


def test_a_queue_written_as_one_value_by_an_older_version_is_moved_into_rows(
    tmp_path: Path,
) -> None:
    """A folder whose queue is the single JSON value older versions wrote: its memories are
    still found, in its order, and the next write moves it into one row per memory."""
    import json

    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        ids = [
            mem.add(f"Fay planted tree number {i}.", user_id="u", defer=True).memory_id
            for i in range(6)
        ]
        store = mem._ctx.store
        old = {i: ["u", None, None] for i in ids}  # the older layout: no order number
        store.set_meta_many(  # type: ignore[attr-defined]
            {pending.QUEUE_PREFIX + i: None for i in ids} | {pending.QUEUE_META: json.dumps(old)}
        )
    with SageMemory(folder, embedder="hashing") as mem:
        assert mem.stats()["pending"] == 6
        assert [mid for mid, _ in pending.queued(mem._ctx)] == ids
        extra = mem.add("Fay planted one more tree.", user_id="u", defer=True).memory_id
        store = mem._ctx.store
        assert store.get_meta(pending.QUEUE_META) == pending.KEYED
        assert [mid for mid, _ in pending.queued(mem._ctx)] == [*ids, extra]
        assert len(mem.extract_pending()) == 7
        assert mem.stats()["pending"] == 0
