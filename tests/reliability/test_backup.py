"""Backup: export -> load is an identity, and an online backup is consistent while writes go on.

Identity is checked field by field on every record (memories, nodes, edges of every scope),
then again by exporting the loaded copy: both exports must hold the same records.

The online backup (SQLite's backup API under the store lock) must give a copy that opens,
passes ``PRAGMA integrity_check``, rebuilds its vector index, and holds a prefix of the
writer's acknowledged writes: everything acknowledged before the backup began, nothing torn.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from reliability_kit import (
    NameExtractor,
    fresh_url,
    graph_problems,
    open_memory,
    sqlite_problems,
)

from sage_memory import SageMemory
from sage_memory.codec import to_dict
from sage_memory.errors import StorageError
from sage_memory.extract.base import ExtractionContext
from sage_memory.index.numpy import NumpyVectorIndex
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import EdgeSpec, GraphDelta, Memory, NodeSpec

_LIVES = re.compile(r"(\w+) (?:lives in|moved to) (\w+)")


class LivesExtractor(NameExtractor):
    """NameExtractor plus "X lives in Y" -> LIVES_IN, a single-valued relation: a move
    expires the old edge, so exports carry bi-temporal history too."""

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        m = _LIVES.search(memory.text)
        if not m:
            return super().extract(memory, context)
        return GraphDelta(
            nodes=(NodeSpec("p", m[1], "Person"), NodeSpec("c", m[2], "Place")),
            edges=(EdgeSpec("p", "c", "LIVES_IN", fact=m[0], confidence=0.9),),
        )


SCOPES: list[dict[str, str]] = [
    {"user_id": "alice"},
    {"agent_id": "planner"},
    {"user_id": "alice", "agent_id": "planner"},
    {"user_id": "bob", "run_id": "session-1"},
    {"user_id": "用户 7"},
]


def _fill(mem: Any) -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    for i, scope in enumerate(SCOPES):
        mem.add(
            "Alice lives in Paris",
            timestamp=t0,
            metadata={"source": "chat", "n": i, "tags": ["a", "b"], "nested": {"x": None}},
            kind="knowledge",
            **scope,
        )
        mem.add("Alice moved to Berlin", timestamp=t0 + timedelta(days=30 * (i + 1)), **scope)
        mem.add(
            [
                {"role": "user", "content": f"Ask Carol about Project{i} \"quoted\" 'x'"},
                {"role": "assistant", "content": "Carol leads Project{i} with Dmitri"},
            ],
            **scope,
        )
        r = mem.add(f"Esther reviewed Kyoto plan {i}", kind="experience", **scope)
        mem.update(r.memory_id, f"Esther approved Kyoto plan {i}", **scope)
        gone = mem.add(f"Farid temporary note {i}", **scope)
        mem.delete(gone.memory_id, **scope)


def _snapshot(mem: Any) -> dict[str, list[dict[str, Any]]]:
    """Every record of every scope, as plain dicts, sorted by id."""
    out: dict[str, list[dict[str, Any]]] = {"memory": [], "node": [], "edge": []}
    for part in mem.store.partitions():
        out["memory"] += [to_dict(m) for m in mem.store.list_memories(part, include_archived=True)]
        out["node"] += [to_dict(n) for n in mem.store.list_nodes(part)]
        out["edge"] += [to_dict(e) for e in mem.store.list_edges(part)]
    return {k: sorted(v, key=lambda d: d["id"]) for k, v in out.items()}


def _export_records(path: Path) -> list[str]:
    lines = path.read_text("utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "sage_memory.export"
    return sorted(lines[1:])


@dataclass(frozen=True)
class Filled:
    db: Path
    snapshot: dict[str, list[dict[str, Any]]]
    export_all: Path
    export_alice: Path
    alice_ids: frozenset[str]
    count: int


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """Filled once for the module, on the SQLite store (synchronous=NORMAL: the writes would
    otherwise dominate this file's time); the loads below go to a folder and to memory."""
    base = tmp_path_factory.mktemp("filled")
    store = SQLiteGraphStore(base / "src.db", synchronous="NORMAL")
    parts = {"store": store, "index": NumpyVectorIndex(), "extractor": LivesExtractor()}
    with open_memory(None, **parts) as mem:
        _fill(mem)
        count = mem.export(base / "all.jsonl")
        mem.export(base / "alice.jsonl", user_id="alice")
        alice = frozenset(m.id for m in mem.get_all(user_id="alice"))
        snapshot = _snapshot(mem)
    return Filled(base / "src.db", snapshot, base / "all.jsonl", base / "alice.jsonl", alice, count)


@pytest.mark.parametrize("target", ["folder", "memory", "postgres"])
def test_export_then_load_is_an_identity(
    tmp_path: Path, target: str, filled: Filled, request: pytest.FixtureRequest
) -> None:
    before = filled.snapshot
    assert filled.count == sum(len(v) for v in before.values())
    assert any(e["expired_at"] for e in before["edge"]), "the fixture should hold history"
    assert len({json.dumps(m["scope"]) for m in before["memory"]}) == len(SCOPES)

    dest = None if target == "memory" else tmp_path / "dest"
    where: dict[str, Any] = {}
    if target == "postgres":  # the engine's export is a backup of a server memory too
        dest, where = None, {"url": fresh_url(request.getfixturevalue("postgres_url"))}
    loaded = SageMemory.load(
        filled.export_all, dest, embedder="hashing", extractor=LivesExtractor(), **where
    )
    try:
        after = _snapshot(loaded)
        for kind in ("memory", "node", "edge"):
            assert len(after[kind]) == len(before[kind]), kind
            for a, b in zip(after[kind], before[kind], strict=True):
                for field, value in b.items():
                    assert a[field] == value, f"{kind} {b['id']} field {field}"
        assert graph_problems(loaded) == []
        # A loaded memory works: search finds by meaning and words, scopes stay apart.
        hits = loaded.search("Esther approved Kyoto plan 3", user_id="bob", run_id="session-1")
        assert hits.memories[0].text == "Esther approved Kyoto plan 3"
        loaded.export(tmp_path / "again.jsonl")
    finally:
        loaded.close()
    assert _export_records(tmp_path / "again.jsonl") == _export_records(filled.export_all)


def test_export_of_one_scope_holds_only_that_scope(filled: Filled) -> None:
    records = [json.loads(line) for line in _export_records(filled.export_alice)]
    scopes = {(r["data"]["scope"]["user_id"], r["data"]["scope"]["agent_id"]) for r in records}
    assert scopes == {("alice", None)}
    assert {r["data"]["id"] for r in records if r["type"] == "memory"} == filled.alice_ids


@pytest.mark.slow
def test_online_backup_while_a_writer_keeps_writing(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "backup"
    written: list[list[str]] = []  # acknowledged batches, in order
    errors: list[BaseException] = []
    stop = threading.Event()
    with open_memory(src) as mem:

        def writer() -> None:
            i = 0
            try:
                while not stop.is_set():
                    texts = [f"batch{i}x{j} Alice met Person{j % 7}" for j in range(1 + i % 4)]
                    written.append([r.memory_id for r in mem.add_many(texts, user_id="u")])
                    i += 1
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=writer)
        thread.start()
        while len(written) < 30:  # let it get going
            thread.join(0.01)
        acked_before = len(written)
        mem.backup(dest)
        acked_after = len(written)
        while len(written) < acked_after + 10:  # and keep going afterwards
            thread.join(0.01)
        stop.set()
        thread.join(timeout=120)
        assert errors == []
        assert graph_problems(mem) == []
    assert sqlite_problems(dest / "sage.db") == []
    with open_memory(dest) as copy:
        present = {m.id for m in copy.get_all(user_id="u")}
        # A prefix of the acknowledged batches: all acknowledged before the backup, then
        # perhaps a few more (committed while it ran), never a torn batch or a gap.
        k = 0
        while k < len(written) and set(written[k]) <= present:
            k += 1
        assert present == {mid for batch in written[:k] for mid in batch}
        assert acked_before <= k <= acked_after + 1
        assert graph_problems(copy) == []  # the index was rebuilt from the copy
        last = written[k - 1][0]
        assert copy.search(copy.get(last).text, user_id="u").memories[0].id == last


def test_backup_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    with open_memory(None) as mem, pytest.raises(StorageError, match="export"):
        mem.backup(tmp_path / "b1")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with open_memory(tmp_path / "src") as mem:
        mem.add("Alice met Bob", user_id="u")
        with pytest.raises(StorageError, match="not empty"):
            mem.backup(full)
    assert (full / "keep.txt").read_text() == "mine"
