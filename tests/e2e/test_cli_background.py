"""The command line's deferred extraction, as a user runs it: ``add`` stores and returns, a
detached worker builds the graph, ``extract`` finishes what is pending, and a worker killed
midway loses nothing. Real processes on a real folder (SQLite, MiniLM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sage_memory import SageMemory

TEXTS = [
    "Alice moved to Berlin in 2019.",
    "Bob works at Acme as an engineer.",
    "Carol bought a red bicycle for her commute.",
    "Dan is allergic to peanuts.",
    "Erin manages the payments team at Globex.",
    "Frank lives in Lisbon with his dog Rex.",
]
#: Generous: a worker on a loaded machine; only a hang fails (no speed is asserted).
PATIENCE = 300.0
#: Each test starts several interpreters (the CLI, workers) on a real folder.
pytestmark = pytest.mark.slow
#: The first test runs the shipped default (MiniLM); the others use the hashing embedder, whose
#: vectors load in no time, since each of their many processes would load the model again.
FAST = "hashing"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SAGE_MEMORY_EXTRACT", None)  # the shipped default: background
    return env


def cli(folder: Path, *argv: str, check: bool = True, embedder: str = FAST) -> Any:
    where = ["--path", str(folder), "--user", "alice", "--embedder", embedder]
    done = subprocess.run(
        [sys.executable, "-m", "sage_memory.cli", *where, *argv],
        capture_output=True,
        text=True,
        env=_env(),
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in argv else done


def worker_argv(folder: Path) -> list[str]:
    """The command line that ``add`` starts its background worker with."""
    return [sys.executable, "-m", "sage_memory.worker", "--path", str(folder), "--embedder", FAST]


def wait_until_extracted(folder: Path, embedder: str = FAST) -> dict[str, Any]:
    """Stats once nothing is pending (read-only while a worker owns the folder)."""
    deadline = time.monotonic() + PATIENCE
    while True:
        stats: dict[str, Any] = cli(folder, "stats", "--json", embedder=embedder)
        if stats["pending"] == 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.2)


def pend(folder: Path, texts: list[str]) -> list[str]:
    """Store ``texts`` with their extraction pending and no worker started."""
    with SageMemory(folder, embedder=FAST) as mem:
        return [r.memory_id for r in mem.add_many(texts, user_id="alice", defer=True)]


def graph_of(folder: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The folder's node names and (source, relation, target) facts."""
    with SageMemory(folder, read_only=True, embedder=FAST) as mem:
        sub = mem.graph(user_id="alice")
    names = {n.id: n.name for n in sub.nodes}
    facts = {(names[e.source_id], e.relation, names[e.target_id]) for e in sub.edges}
    return set(names.values()), facts


def reference_graph(tmp_path: Path, texts: list[str]) -> tuple[set[str], set[Any]]:
    """The graph of ``texts`` added one by one with inline extraction."""
    folder = tmp_path / "reference"
    with SageMemory(folder, embedder=FAST) as mem:
        mem.add_many(texts, user_id="alice")
    return graph_of(folder)


def test_add_returns_pending_then_the_worker_builds_the_graph(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    model = "minilm"
    cli(folder, "add", TEXTS[1], "--extract", "now", embedder=model)
    added = cli(folder, "add", TEXTS[0], "--json", embedder=model)
    assert added["extraction"] == "pending"
    assert added["node_ids"] == []
    # Searchable at once, by its vector and by its words (the worker may own the folder: a
    # search opens it read-only beside it).
    found = cli(folder, "search", "Which city did she relocate to?", "--json", embedder=model)
    assert found["memories"][0]["id"] == added["memory_id"]
    assert "dense" in found["memories"][0]["channels"]
    found = cli(folder, "search", "Berlin", "--json", embedder=model)
    assert found["memories"][0]["id"] == added["memory_id"]
    stats = wait_until_extracted(folder, embedder=model)
    assert stats["pending"] == 0
    assert stats["nodes"] > 0
    memory = cli(folder, "get", added["memory_id"], "--json", embedder=model)
    assert memory["extraction"] == "ok"
    explored = cli(folder, "explore", "Alice", "--json", embedder=model)
    assert "Berlin" in {n["name"] for n in explored["nodes"]}


def test_adds_in_a_row_wait_for_the_worker_and_all_get_extracted(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    ids = [cli(folder, "add", text, "--json")["memory_id"] for text in TEXTS[:3]]
    assert wait_until_extracted(folder)["pending"] == 0
    with SageMemory(folder, read_only=True, embedder=FAST) as mem:
        assert {m.extraction for m in mem.get_all(user_id="alice")} == {"ok"}
        assert {m.id for m in mem.get_all(user_id="alice")} == set(ids)
    assert graph_of(folder) == reference_graph(tmp_path, TEXTS[:3])


def test_add_extract_now_builds_the_graph_before_returning(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    added = cli(folder, "add", TEXTS[0], "--extract", "now", "--json")
    assert added["extraction"] == "ok"
    assert added["node_ids"]
    assert cli(folder, "stats", "--json")["pending"] == 0
    assert not (folder / ".worker-run").exists()  # no worker was started


def test_extract_command_finishes_what_is_pending(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    ids = pend(folder, TEXTS)
    assert cli(folder, "stats", "--json")["pending"] == len(TEXTS)
    first = cli(folder, "extract", "--limit", "2", "--json")
    assert first["extracted"] == 2
    assert first["pending"] == len(TEXTS) - 2
    rest = cli(folder, "extract", "--json")
    assert set(first["memory_ids"]) | set(rest["memory_ids"]) == set(ids)
    assert rest["pending"] == 0
    assert cli(folder, "extract", "--json")["extracted"] == 0  # nothing twice
    assert graph_of(folder) == reference_graph(tmp_path, TEXTS)


def test_a_killed_worker_leaves_memories_pending_and_a_rerun_completes_them(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "mem"
    texts = [f"{t[:-1]} (note {i})." for i in range(5) for t in TEXTS]
    pend(folder, texts)
    worker = subprocess.Popen(worker_argv(folder), env=_env())
    # Kill it once it has written some graphs but not all (or at once if it is already done).
    deadline = time.monotonic() + PATIENCE
    while worker.poll() is None and time.monotonic() < deadline:
        with SageMemory(folder, read_only=True, embedder=FAST) as mem:
            left = mem.stats(user_id="alice")["pending"]
        if left < len(texts):
            break
        time.sleep(0.05)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    with SageMemory(folder, read_only=True, embedder=FAST) as mem:
        stored = mem.get_all(user_id="alice")
    assert len(stored) == len(texts)  # nothing lost
    assert {m.extraction for m in stored} <= {"ok", "pending"}
    rerun = cli(folder, "extract", "--json")
    assert rerun["pending"] == 0
    with SageMemory(folder, read_only=True, embedder=FAST) as mem:
        assert {m.extraction for m in mem.get_all(user_id="alice")} == {"ok"}
    # The rerun built what the killed worker had not, and nothing twice.
    assert graph_of(folder) == reference_graph(tmp_path, texts)


def test_two_workers_at_once_extract_each_memory_once(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    pend(folder, TEXTS)
    workers = [subprocess.Popen(worker_argv(folder)) for _ in range(3)]
    for w in workers:
        assert w.wait(timeout=PATIENCE) == 0
    assert cli(folder, "stats", "--json")["pending"] == 0
    assert graph_of(folder) == reference_graph(tmp_path, TEXTS)


def test_undo_of_a_background_add_removes_the_memory_and_its_graph(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    added = cli(folder, "add", TEXTS[0], "--json")
    wait_until_extracted(folder)
    history = cli(folder, "history", added["memory_id"], "--json")
    batches = {c["batch_id"] for c in history}
    assert len(batches) == 1  # the add and its later extraction: one batch
    cli(folder, "undo", batches.pop())
    stats = cli(folder, "stats", "--json")
    assert (stats["memories"], stats["nodes"], stats["edges"]) == (0, 0, 0)


@pytest.mark.skipif(sys.platform == "win32", reason="advisory folder locks are POSIX")
def test_a_write_waits_for_the_worker_instead_of_failing(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    pend(folder, TEXTS)
    worker = subprocess.Popen(worker_argv(folder))
    try:
        deadline = time.monotonic() + PATIENCE
        while not _held_by_worker(folder) and worker.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        # Whether or not the worker still holds it by now, the add must not fail as "busy".
        added = cli(folder, "add", "Gina plays the cello.", "--extract", "now", "--json")
        assert added["extraction"] == "ok"
    finally:
        worker.wait(timeout=PATIENCE)


def _held_by_worker(folder: Path) -> bool:
    from sage_memory.worker import worker_owns

    return worker_owns(folder)
