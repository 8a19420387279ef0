"""The embedded folder, shared politely: a second process reads beside the owner, and a CLI
write waits for the owner instead of failing at once. Two real processes each time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sage_memory import FolderBusyError, SageMemory, StorageError

OWNER = textwrap.dedent(
    """
    import sys
    from sage_memory import SageMemory
    mem = SageMemory(sys.argv[1], embedder="hashing")
    mem.add("Alice lives in Paris", user_id="alice")
    print("ready", flush=True)
    for line in sys.stdin:          # each line: one more write, acknowledged
        if line.strip() == "close":
            break
        mem.add(line.strip(), user_id="alice")
        print("added", flush=True)
    mem.close()
    print("closed", flush=True)
    """
)


def _owner(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
    return proc


def _tell(proc: subprocess.Popen[str], line: str) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SAGE_EMBEDDER": "hashing"}
    cmd = [sys.executable, "-m", "sage_memory.cli", "--path", str(folder), "--user", "alice"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_a_second_process_reads_while_the_owner_writes(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    owner = _owner(folder)
    try:
        with pytest.raises(FolderBusyError, match="read_only=True"):
            SageMemory(folder, embedder="hashing")
        reader = SageMemory(folder, embedder="hashing", read_only=True)
        try:
            hits = reader.search("where does alice live", user_id="alice").memories
            assert [m.text for m in hits] == ["Alice lives in Paris"]
            assert _tell(owner, "Alice moved to Rome") == "added"
            # The owner's committed write is visible to the reader at once (SQLite WAL).
            assert [m.text for m in reader.get_all(user_id="alice")] == [
                "Alice lives in Paris",
                "Alice moved to Rome",
            ]
            assert reader.stats(user_id="alice")["memories"] == 2
            assert [n.name for n in reader.explore("Alice", user_id="alice").nodes][:1] == ["Alice"]
            reader.export(tmp_path / "copy.jsonl", user_id="alice")
            assert len((tmp_path / "copy.jsonl").read_text().splitlines()) > 2
            with pytest.raises(StorageError, match="read-only"):
                reader.add("Alice moved to Oslo", user_id="alice")
        finally:
            reader.close()
        assert _tell(owner, "close") == "closed"
    finally:
        owner.kill()
        owner.wait()
    with SageMemory(folder, embedder="hashing") as mem:  # the owner's data is intact
        assert len(mem.get_all(user_id="alice")) == 2


def test_cli_reads_beside_the_owner_and_writes_wait_for_it(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    owner = _owner(folder)
    try:
        found = _cli(folder, "search", "Paris", "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["memories"][0]["text"] == "Alice lives in Paris"
        refused = _cli(folder, "add", "Alice moved to Lima")
        assert refused.returncode == 2 and "in use by" in refused.stderr
        # A write told to wait succeeds once the owner closes within the wait.
        waiting = subprocess.Popen(
            [
                sys.executable, "-m", "sage_memory.cli", "--path", str(folder), "--user",
                "alice", "--wait", "60", "add", "Alice moved to Lima", "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "SAGE_EMBEDDER": "hashing"},
        )  # fmt: skip
        time.sleep(1.0)
        assert waiting.poll() is None  # still waiting for the owner
        assert _tell(owner, "close") == "closed"
        out, err = waiting.communicate(timeout=120)
        assert waiting.returncode == 0, err
        assert json.loads(out)["memory_id"]
    finally:
        owner.kill()
        owner.wait()
    with SageMemory(folder, embedder="hashing") as mem:
        assert [m.text for m in mem.get_all(user_id="alice")] == [
            "Alice lives in Paris",
            "Alice moved to Lima",
        ]
