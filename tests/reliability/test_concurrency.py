"""Concurrency: many threads on one SageMemory, and two processes on one folder.

Threads: 8 workers mix add, add_many, search, explore, get, delete (and evolve when the engine
has it) on shared users, so they contend for the same nodes. Afterwards: no worker raised,
every acknowledged write is there, every acknowledged delete is gone, the graph invariants
hold, and the memories and graph equal those of a serial replay of the acknowledged writes in
a fresh memory (the extractor's names are far apart, so resolution is order-independent).

Processes: one process owns a folder at a time; a second one gets a StorageError naming the
owner, never a half-working handle, and the owner's data stays intact.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from reliability_kit import (
    REPO_ROOT,
    graph_problems,
    is_url,
    journal_problems,
    location,
    open_memory,
    sqlite_problems,
)

from sage_memory.errors import NotFoundError, StorageError
from sage_memory.index.numpy import NumpyVectorIndex
from sage_memory.store.sqlite import SQLiteGraphStore

NAMES = ("Alice", "Bogdan", "Chiara", "Dmitri", "Esther", "Farid", "Gwendolyn", "Hiroshi")
USERS = ("u1", "u2", "u3")
WORKERS = 8
OPS_PER_WORKER = 24


@dataclass
class Log:
    """Acknowledged writes in acknowledgement order, shared by the workers."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    writes: list[tuple[str, str, str]] = field(default_factory=list)  # (op, user, id / text)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (user, text)
    errors: list[BaseException] = field(default_factory=list)

    def ack(self, op: str, user: str, mid: str, text: str = "") -> None:
        with self.lock:
            self.writes.append((op, user, mid))
            if op == "add":
                self.texts[mid] = (user, text)


def _text(rng: random.Random, token: str) -> str:
    a, b = rng.sample(NAMES, 2)
    return f"{token} {a} talked with {b}"


def _worker(mem: Any, log: Log, seed: int, with_evolve: bool) -> Callable[[], None]:
    rng = random.Random(seed)

    def run() -> None:
        mine: list[tuple[str, str, str]] = []  # (id, user, text) of live memories I wrote
        try:
            for step in range(OPS_PER_WORKER):
                user = rng.choice(USERS)
                roll = rng.random()
                if roll < 0.3:
                    text = _text(rng, f"w{seed}s{step}t")
                    r = mem.add(text, user_id=user)
                    log.ack("add", user, r.memory_id, text)
                    mine.append((r.memory_id, user, text))
                elif roll < 0.45:
                    texts = [_text(rng, f"w{seed}s{step}b{i}t") for i in range(rng.randint(2, 4))]
                    for r, text in zip(mem.add_many(texts, user_id=user), texts, strict=True):
                        log.ack("add", user, r.memory_id, text)
                        mine.append((r.memory_id, user, text))
                elif roll < 0.65 and mine:
                    # Read your own writes: the token of a live memory finds it.
                    mid, owner, text = rng.choice(mine)
                    hits = mem.search(text.split()[0], user_id=owner, limit=5)
                    assert mid in {h.id for h in hits.memories}, f"search lost {mid}"
                elif roll < 0.8 and mine:
                    mid, owner, text = rng.choice(mine)
                    name = text.split()[1]
                    sub = mem.explore(name, user_id=owner, hops=1)
                    assert name in {n.name for n in sub.nodes}
                    assert mem.get(mid, user_id=owner).text == text
                elif roll < 0.9 and mine:
                    mid, owner, _ = mine.pop(rng.randrange(len(mine)))
                    mem.delete(mid, user_id=owner)
                    log.ack("delete", owner, mid)
                elif with_evolve:
                    mem.evolve(user_id=user)
                else:
                    mem.search(rng.choice(NAMES), user_id=user)
        except BaseException as exc:  # reported by the test, with its traceback
            with log.lock:
                log.errors.append(exc)

    return run


def _run_workers(mem: Any, *, with_evolve: bool = False) -> Log:
    log = Log()
    threads = [
        threading.Thread(target=_worker(mem, log, seed, with_evolve), name=f"worker-{seed}")
        for seed in range(WORKERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)  # a safety net against a deadlock, not a timing assertion
    assert not [t.name for t in threads if t.is_alive()], "workers deadlocked"
    if log.errors:
        raise log.errors[0]
    return log


def _live(log: Log) -> dict[str, tuple[str, str]]:
    deleted = {mid for op, _, mid in log.writes if op == "delete"}
    return {mid: ut for mid, ut in log.texts.items() if mid not in deleted}


def _graph_view(mem: Any, user: str) -> tuple[set[str], set[tuple[str, str, str, float]]]:
    """A memory-id-free view of a user's graph: node names and (src, relation, dst, weight)."""
    sub = mem.graph(user_id=user)
    names = {n.id: n.name for n in sub.nodes}
    edges = {
        (names[e.source_id], e.relation, names[e.target_id], round(e.weight, 6)) for e in sub.edges
    }
    return set(names.values()), edges


def _check_against_serial_replay(mem: Any, log: Log) -> None:
    live = _live(log)
    for mid, (user, text) in live.items():
        assert mem.get(mid, user_id=user).text == text
    for op, user, mid in log.writes:
        if op == "delete":
            with pytest.raises(NotFoundError):
                mem.get(mid, user_id=user)
    replay = open_memory(None)
    try:
        replayed: dict[str, str] = {}
        for op, user, mid in log.writes:
            if op == "add":
                replayed[mid] = replay.add(log.texts[mid][1], user_id=user).memory_id
            else:
                replay.delete(replayed[mid], user_id=user)
        for user in USERS:
            got = sorted(m.text for m in mem.get_all(user_id=user))
            want = sorted(m.text for m in replay.get_all(user_id=user))
            assert got == want, f"memories of {user} differ from the serial replay"
            assert _graph_view(mem, user) == _graph_view(replay, user), f"graph of {user}"
    finally:
        replay.close()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["memory", "folder", "postgres"])
def test_eight_threads_match_a_serial_replay(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    path = location(where, tmp_path, request)
    with open_memory(path) as mem:
        log = _run_workers(mem)
        assert sum(op == "add" for op, _, _ in log.writes) > 40
        assert graph_problems(mem) == []
        _check_against_serial_replay(mem, log)
        if is_url(path):
            assert journal_problems(mem) == []
    if isinstance(path, Path):
        assert sqlite_problems(path / "sage.db") == []
        with open_memory(path) as again:  # and it all survived a clean reopen
            assert graph_problems(again) == []
            assert {m.id for u in USERS for m in again.get_all(user_id=u)} == set(_live(log))


@pytest.mark.slow
def test_threads_with_evolve_keep_every_write(tmp_path: Path) -> None:
    """With evolution in the mix the graph may legitimately change shape (merges, decay), so
    only the memories and the invariants are compared. On the SQLite store (the folder run
    above covers Chroma), without a disk flush per write."""
    store = SQLiteGraphStore(tmp_path / "sage.db", synchronous="NORMAL")
    with open_memory(None, store=store, index=NumpyVectorIndex()) as mem:
        log = _run_workers(mem, with_evolve=True)
        assert graph_problems(mem) == []
        for mid, (user, text) in _live(log).items():
            assert mem.get(mid, user_id=user).text == text


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_delete_all_racing_adds_keeps_index_and_graph_consistent(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    """Regressions: delete_all listed, forgot and dropped the partition's collections in three
    separate steps, so an add landing in between lost its vector from the index; and a search
    or an add querying a collection while delete_all dropped it failed with Chroma's
    "Missing metadata segment" instead of finding the collection empty."""
    with open_memory(location(where, tmp_path, request)) as mem:
        stop = threading.Event()
        added: list[str] = []
        errors: list[BaseException] = []

        def writer() -> None:
            i = 0
            try:
                while not stop.is_set() or i < 5:
                    added.append(mem.add(f"Alice met Bogdan round {i}", user_id="u1").memory_id)
                    i += 1
            except BaseException as exc:
                errors.append(exc)

        def reader() -> None:
            try:
                while not stop.is_set():
                    mem.search("Alice Bogdan", user_id="u1")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
        for t in threads:
            t.start()
        for _ in range(8):
            mem.delete_all(user_id="u1")
        stop.set()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
        assert graph_problems(mem) == []
        left = {m.id for m in mem.get_all(user_id="u1")}
        assert left <= set(added)
        for mid in left:
            assert mid in {h.id for h in mem.search(mem.get(mid).text, user_id="u1").memories}


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_update_racing_delete_does_not_resurrect(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    """Regression: update() read the row, extracted outside the lock, then wrote the row back
    even if a delete had landed meanwhile, so a deleted memory came back."""
    from reliability_kit import NameExtractor

    class Gated(NameExtractor):
        def __init__(self) -> None:
            super().__init__()
            self.hold = False
            self.inside = threading.Event()
            self.go = threading.Event()

        def extract_many(self, items: Any) -> Any:
            if self.hold:
                self.inside.set()
                self.go.wait(30)
            return super().extract_many(items)

    gated = Gated()
    with open_memory(location(where, tmp_path, request), extractor=gated) as mem:
        r = mem.add("Alice met Bogdan", user_id="u1")
        gated.hold = True
        outcome: list[BaseException | None] = []

        def update() -> None:
            try:
                mem.update(r.memory_id, "Alice met Chiara", user_id="u1")
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        t = threading.Thread(target=update)
        t.start()
        assert gated.inside.wait(30)
        gated.hold = False
        mem.delete(r.memory_id, user_id="u1")
        gated.go.set()
        t.join(timeout=60)
        assert len(outcome) == 1
        assert isinstance(outcome[0], NotFoundError)
        with pytest.raises(NotFoundError):
            mem.get(r.memory_id)
        assert mem.get_all(user_id="u1") == []
        assert graph_problems(mem) == []


@pytest.mark.parametrize("where", ["memory", "folder", "postgres"])
def test_close_while_threads_read_and_write(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    """Closing under busy threads: each call either completes or raises StorageError
    ("closed"); nothing else escapes (no sqlite3.ProgrammingError, no Chroma error, no
    psycopg error)."""
    mem = open_memory(location(where, tmp_path, request))
    mem.add_many([f"Alice met Bogdan about {i}" for i in range(20)], user_id="u1")
    unexpected: list[BaseException] = []
    calls = threading.Semaphore(0)

    def worker(i: int) -> None:
        n = 0
        while True:
            n += 1
            try:
                if i % 2:
                    mem.add(f"Chiara met Dmitri {i}-{n}", user_id="u1")
                else:
                    mem.search("Alice", user_id="u1")
                    mem.explore("Alice", user_id="u1")
                mem.get_all(user_id="u1")
            except StorageError:
                return
            except BaseException as exc:
                unexpected.append(exc)
                return
            calls.release()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for _ in range(12):  # close only once the workers are well under way
        assert calls.acquire(timeout=60)
    mem.close()
    for t in threads:
        t.join(timeout=60)
    assert unexpected == [], repr(unexpected[:3])


_OPEN_IN_CHILD = """
import sys
sys.path.insert(0, sys.argv[2])
from reliability_kit import open_memory
from sage_memory.errors import StorageError
try:
    open_memory(sys.argv[1]).close()
except StorageError as exc:
    print("StorageError:", exc)
    sys.exit(3)
except Exception as exc:
    print(type(exc).__name__, exc)
    sys.exit(4)
print("opened")
"""


def _open_in_child(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _OPEN_IN_CHILD, str(folder), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_second_process_gets_a_clear_error_never_corruption(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    with open_memory(folder) as mem:
        mem.add_many([f"Alice met Bogdan about {i}" for i in range(50)], user_id="u1")
        child = _open_in_child(folder)
        assert child.returncode == 3, child.stdout + child.stderr
        assert "in use by pid" in child.stdout
        assert "one process owns a memory folder at a time" in child.stdout.lower()
        # The owner is unaffected and keeps writing.
        token = uuid.uuid4().hex
        r = mem.add(f"{token} Alice after the intruder", user_id="u1")
        assert mem.search(token, user_id="u1").memories[0].id == r.memory_id
        assert graph_problems(mem) == []
    assert sqlite_problems(folder / "sage.db") == []
    # Released on close: now the other process may open it.
    child = _open_in_child(folder)
    assert child.returncode == 0, child.stdout + child.stderr


def test_second_handle_in_the_same_process_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    with open_memory(folder) as mem:
        mem.add("Alice met Bogdan", user_id="u1")
        with pytest.raises(StorageError, match="in use"):
            open_memory(folder)
        assert len(mem.get_all(user_id="u1")) == 1
    with open_memory(folder) as again:
        assert len(again.get_all(user_id="u1")) == 1
