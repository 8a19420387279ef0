"""Crash consistency: a writer killed with SIGKILL at random points loses no acknowledged write.

The writer (crash_writer.py) prints each memory id only after ``add``/``add_many`` returned.
After the kill the folder is reopened (the engine reconciles the vector index with SQLite after
an unclean shutdown) and every acknowledged write must be there, found by ``get`` and by
``search``; no edge may point at a missing node; the vector index must hold exactly the SQLite
ids; SQLite's and FTS5's integrity checks must pass. bench/soak.py runs the same trial many
more times (``--trials 20`` or more).

Kill points are random but reproducible: set SAGE_CRASH_SEED to explore other ones.
"""

from __future__ import annotations

import os
import random
import sqlite3
import warnings
from pathlib import Path

import pytest
from reliability_kit import (
    fresh_url,
    graph_problems,
    kill_writer,
    open_memory,
    sqlite_problems,
    verify_folder,
)

from sage_memory.index.base import collection_name
from sage_memory.index.chroma import ChromaVectorIndex

SEED = int(os.environ.get("SAGE_CRASH_SEED", "20261129"))


@pytest.mark.slow
def test_sigkilled_writer_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    """Three kills on one folder, each after a recovery: fresh, Chroma flushing often, again."""
    rng = random.Random(SEED)
    folder = tmp_path / "mem"
    acked: dict[str, tuple[str, str]] = {}
    deleted: dict[str, str] = {}
    attempted: set[str] = set()
    for small_hnsw in (False, True, False):
        kill_after, jitter = rng.randint(1, 60), rng.uniform(0.0, 0.03)
        trial = kill_writer(
            folder,
            seed=rng.randrange(1_000_000),
            kill_after_acks=kill_after,
            jitter_s=jitter,
            small_hnsw=small_hnsw,
        )
        assert trial.problems == [], f"seed {SEED}"
        assert len(trial.acked) >= 1
        acked.update(trial.acked)
        deleted.update(trial.deleted)
        attempted |= trial.attempted
        found, problems = verify_folder(folder, acked, deleted, attempted)
        assert problems == [], f"seed {SEED}, kill after {kill_after} acks + {jitter:.3f}s"
        assert found == len(set(acked) - set(deleted) - attempted)


@pytest.mark.slow
def test_kill_during_open_and_reconcile(tmp_path: Path) -> None:
    """A kill while the folder is being opened (and the index reconciled) harms nothing."""
    rng = random.Random(SEED + 1)
    folder = tmp_path / "mem"
    first = kill_writer(folder, seed=1, kill_after_acks=40, jitter_s=0.0)
    assert first.problems == []
    # The next writer dies somewhere between interpreter start and its first writes.
    second = kill_writer(folder, seed=2, kill_after_acks=0, jitter_s=rng.uniform(0.3, 1.5))
    assert second.exit_code is not None
    acked = {**first.acked, **second.acked}
    deleted = {**first.deleted, **second.deleted}
    found, problems = verify_folder(folder, acked, deleted, first.attempted | second.attempted)
    assert problems == []
    assert found == len(set(acked) - set(deleted) - first.attempted - second.attempted)


def _mark_unclean(folder: Path) -> None:
    db = sqlite3.connect(folder / "sage.db")
    with db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'clean_shutdown'")
    db.close()


def test_reconcile_repairs_writes_in_flight(tmp_path: Path) -> None:
    """What a kill between the SQLite commit and the index write leaves: vectors missing from
    the index, and vectors of rows whose deletion committed. Reopening repairs both."""
    folder = tmp_path / "mem"
    with open_memory(folder) as mem:
        results = mem.add_many([f"Alice met Bob about {i}" for i in range(30)], user_id="alice")
        part = results[0].memory.scope.key
    index = ChromaVectorIndex(folder / "chroma")
    lost = [r.memory_id for r in results[:5]]
    index.delete(collection_name(part, "memory"), lost)
    index.upsert(collection_name(part, "memory"), ["ghost-of-a-deleted-row"], [[1.0] * 256])
    index.close()
    _mark_unclean(folder)
    with open_memory(folder) as mem:
        assert graph_problems(mem) == []
        assert lost[0] in {h.id for h in mem.search("Alice met Bob about 0", user_id="alice")}
        assert "ghost-of-a-deleted-row" not in mem.index.ids(collection_name(part, "memory"))


def _garbage(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.write(os.urandom(256))


@pytest.mark.parametrize("damage", ["chroma_sqlite", "hnsw_header", "folder_gone"])
def test_damaged_index_is_rebuilt_from_sqlite(tmp_path: Path, damage: str) -> None:
    """The vector index is derived: a damaged one is rebuilt on open, never a dead end.

    Regression: a garbled chroma.sqlite3 made the folder unopenable, and because Chroma caches
    the failed client per folder, even a rebuilt index could not be opened in that process.
    """
    folder = tmp_path / "mem"
    folder.mkdir()
    index = ChromaVectorIndex(folder / "chroma", hnsw={"sync_threshold": 20, "batch_size": 10})
    with open_memory(folder, index=index) as mem:
        mem.add_many([f"Alice met Bob about topic {i}" for i in range(120)], user_id="alice")
    chroma = folder / "chroma"
    if damage == "chroma_sqlite":
        _garbage(chroma / "chroma.sqlite3")
    elif damage == "hnsw_header":
        headers = list(chroma.glob("*/header.bin"))
        assert headers, "the HNSW index should have been persisted"
        for header in headers:
            _garbage(header)
    else:
        for item in sorted(chroma.rglob("*"), reverse=True):
            item.unlink() if item.is_file() else item.rmdir()
        chroma.rmdir()
    expect = (
        pytest.warns(RuntimeWarning, match="damaged")
        if damage != "folder_gone"
        else warnings.catch_warnings()  # a missing index is simply rebuilt, no warning
    )
    with expect, open_memory(folder) as mem:
        assert graph_problems(mem) == []
        hits = mem.search("Alice met Bob about topic 7", user_id="alice")
        assert hits.memories[0].text == "Alice met Bob about topic 7"
    assert sqlite_problems(folder / "sage.db") == []


def test_damaged_sqlite_store_is_a_clear_error(tmp_path: Path) -> None:
    """SQLite is the source of truth: damage there is reported, with the fix, not papered over."""
    from sage_memory.errors import StorageError

    folder = tmp_path / "mem"
    with open_memory(folder) as mem:
        mem.add("Alice met Bob", user_id="alice")
    _garbage(folder / "sage.db")
    with pytest.raises(StorageError, match="restore a backup"):
        open_memory(folder)


_DIE_IN_INDEX = """
import os, sys
sys.path.insert(0, sys.argv[2])
from reliability_kit import open_memory
from sage_memory.index.chroma import ChromaVectorIndex

class DiesOnRemoval(ChromaVectorIndex):
    # A process crash at the first index removal: after, or before, the SQLite commit.
    def delete(self, collection, ids):
        os._exit(0)

    def drop(self, collection):
        os._exit(0)

folder, op = sys.argv[1], sys.argv[3]
mem = open_memory(folder, index=DiesOnRemoval(os.path.join(folder, "chroma")))
if op == "delete_all":
    mem.delete_all(user_id="victim")
else:
    for m in mem.get_all(user_id="victim"):
        mem.delete(m.id, user_id="victim")
print("not reached")
"""


@pytest.mark.parametrize("op", ["delete_all", "delete"])
def test_crash_inside_a_deletion_leaves_no_orphan_vectors(tmp_path: Path, op: str) -> None:
    """Regression: deletions committed SQLite first and removed vectors after, so a crash in
    between left vectors of a partition SQLite no longer lists, which reconciliation (walking
    SQLite's partitions) never revisited: a deleted user's vectors stayed on disk for good."""
    import subprocess
    import sys

    from reliability_kit import REPO_ROOT

    folder = tmp_path / "mem"
    with open_memory(folder) as mem:
        mem.add("Alice met Bob", user_id="keeper")
        r = mem.add("victim text without graph", user_id="victim", infer=False)
        victim_key = r.memory.scope.key
    child = subprocess.run(
        [sys.executable, "-c", _DIE_IN_INDEX, str(folder), str(Path(__file__).parent), op],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert "not reached" not in child.stdout, child.stderr
    with open_memory(folder) as mem:
        left = {m.id for m in mem.get_all(user_id="victim")}
        indexed = mem.index.ids(collection_name(victim_key, "memory"))
        assert indexed == left  # both gone, or both there: never vectors without rows
        assert graph_problems(mem) == []


@pytest.mark.slow
def test_sigkilled_writers_on_postgres_keep_every_acknowledged_write(
    request: pytest.FixtureRequest,
) -> None:
    """Server mode: two writers killed (SIGKILL) one after the other on one PostgreSQL
    memory. Every acknowledged write is found, and no unit of work was applied in part: every
    row is the last state of an unbroken journal chain (reliability_kit.journal_problems)."""
    rng = random.Random(SEED)
    url = fresh_url(request.getfixturevalue("postgres_url"))
    acked: dict[str, tuple[str, str]] = {}
    deleted: dict[str, str] = {}
    attempted: set[str] = set()
    for _ in range(2):
        kill_after, jitter = rng.randint(1, 40), rng.uniform(0.0, 0.03)
        trial = kill_writer(
            url, seed=rng.randrange(1_000_000), kill_after_acks=kill_after, jitter_s=jitter
        )
        assert trial.problems == [], f"seed {SEED}"
        acked.update(trial.acked)
        deleted.update(trial.deleted)
        attempted |= trial.attempted
        found, problems = verify_folder(url, acked, deleted, attempted)
        assert problems == [], f"seed {SEED}, kill after {kill_after} acks + {jitter:.3f}s"
        assert found == len(set(acked) - set(deleted) - attempted)
