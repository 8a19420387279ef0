"""Re-adding is not remembering twice (every backend).

Regression: the same text with the same scope and timestamp stored twice (a re-run script, a
second import) doubled the memories, and the copies took the top search hits.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sage_memory.cli import main

T = datetime(2026, 3, 1, 9, tzinfo=UTC)
LINES = ["Alice lives in Paris", "Bob works at Acme", "Alice likes tea"]


def test_the_same_text_scope_and_time_is_stored_once(backend: Any) -> None:
    mem = backend.open(extractor=None)
    first = mem.add("Alice lives in Paris", user_id="alice", timestamp=T)
    again = mem.add("Alice lives in Paris", user_id="alice", timestamp=T)
    assert not first.skipped and again.skipped
    assert again.memory_id == first.memory_id and again.change_ids == ()
    mem.add("Alice lives in Paris", user_id="bob", timestamp=T)  # another scope: its own
    mem.add("Alice lives in Paris", user_id="alice", timestamp=T.replace(day=2))  # another day
    assert len(mem.get_all(user_id="alice")) == 2
    hits = mem.search("where does alice live?", user_id="alice", limit=5).memories
    assert len({h.memory.timestamp for h in hits}) == len(hits)  # no copy takes a slot
    forced = mem.add("Alice lives in Paris", user_id="alice", timestamp=T, dedup=False)
    assert not forced.skipped and len(mem.get_all(user_id="alice")) == 3


def test_a_callers_id_makes_an_add_idempotent(backend: Any) -> None:
    mem = backend.open(extractor=None)
    a = mem.add("Alice lives in Paris", user_id="alice", metadata={"id": "note-1"})
    b = mem.add("Alice lives in Paris (re-sent)", user_id="alice", metadata={"id": "note-1"})
    assert b.skipped and b.memory_id == a.memory_id and b.memory.text == "Alice lives in Paris"
    assert len(mem.get_all(user_id="alice")) == 1


def test_add_many_run_twice_reports_what_it_skipped(backend: Any) -> None:
    mem = backend.open(extractor=None)
    items = [{"text": t, "timestamp": T} for t in [*LINES, LINES[0]]]  # a repeat in one call
    first = mem.add_many(items, user_id="alice")
    assert [r.skipped for r in first] == [False] * 4  # two turns saying the same are two
    again = mem.add_many(items, user_id="alice")
    assert [r.skipped for r in again] == [True] * 4
    assert [r.memory_id for r in again] == [r.memory_id for r in first]
    assert len(mem.get_all(user_id="alice")) == 4
    # Messages without a timestamp are new episodes each time.
    mem.add_many(["hello"], user_id="alice")
    mem.add_many(["hello"], user_id="alice")
    assert len(mem.get_all(user_id="alice")) == 6


def test_cli_import_twice_counts_what_was_already_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_text(
        "".join(f'{{"text": "{t}", "timestamp": "2026-03-01T09:00:00Z"}}\n' for t in LINES)
    )
    base = ["--path", str(tmp_path / "mem"), "--user", "alice"]
    assert main([*base, "import", str(f), "--quiet", "--no-infer"]) == 0
    assert "imported 3 memories" in capsys.readouterr().out
    assert main([*base, "import", str(f), "--quiet", "--no-infer"]) == 0
    out = capsys.readouterr().out
    assert "imported 0 memories; 3 already stored" in out


WRITER = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from sage_memory import SageMemory
    mem = SageMemory(url=sys.argv[1], embedder="hashing")
    t = datetime(2026, 3, 1, 9, tzinfo=UTC)
    items = [{"text": f"note {i} of the import", "timestamp": t} for i in range(20)]
    results = mem.add_many(items, user_id="shared", infer=False, batch_size=4)
    mem.close()
    print(sum(not r.skipped for r in results))
    """
)


def test_processes_adding_the_same_content_store_it_once(postgres_url: str) -> None:
    """On PostgreSQL the check holds across processes (the partition's advisory lock)."""
    import uuid

    from sage_memory import SageMemory

    sep = "&" if "?" in postgres_url else "?"
    url = f"{postgres_url}{sep}schema=t_{uuid.uuid4().hex[:12]}"
    SageMemory(url=url, embedder="hashing").close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(3)
    ]
    written = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        written.append(int(out))
    assert sum(written) == 20
    mem = SageMemory(url=url, embedder="hashing")
    try:
        assert len(mem.get_all(user_id="shared")) == 20
    finally:
        mem.close()
