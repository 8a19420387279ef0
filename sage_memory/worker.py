"""The background extraction worker: what builds the graph after a command-line ``add``.

``sage-memory add`` stores the memory with its extraction pending (``add(defer=True)``), then
starts this module as a detached process, ``python -m sage_memory.worker --path FOLDER``, and
returns without loading the parser. The worker opens the folder (waiting while another command
holds it), runs :meth:`~sage_memory.engine.core.SageMemory.extract_pending`, and exits.

Many adds in a row start many workers; two lock files beside the folder's own keep it to one
running and at most one waiting:

- ``.worker-run``: held by the worker that extracts. The others wait for it.
- ``.worker-next``: held by the one worker waiting to run. A new worker that finds it taken
  exits at once: the waiting one has not read the queue yet (it reads it after it gets
  ``.worker-run`` and lets ``.worker-next`` go), so it will extract the new memory too.

Killing a worker loses nothing: its memories stay pending (the engine writes each memory's
graph in one transaction and dequeues it after) and the next worker, or ``sage-memory
extract``, finishes them. While a worker holds the folder, the command line's writes wait for
it (:func:`worker_owns`) instead of failing as they do for other owners.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

RUN_LOCK = ".worker-run"
NEXT_LOCK = ".worker-next"
#: The last worker's outcome (or its error), for ``sage-memory stats`` readers and bug reports.
LOG_FILE = ".worker-log"
#: How long a worker waits for a folder another process holds before it leaves the memories
#: pending (the next add's worker, or ``sage-memory extract``, takes them).
OPEN_PATIENCE_SECONDS = 120.0
#: Memories extracted per opening of the folder. Between rounds the worker lets the folder go
#: for ROUND_GAP_SECONDS, so an add waiting for it (polling every 0.05 s) gets in after one
#: round rather than after a long queue; reopening costs about 0.3 s of CPU, the parser stays
#: loaded.
ROUND = 16
ROUND_GAP_SECONDS = 0.2


def spawn(folder: Path, embedder: str) -> int:
    """Start a detached worker for ``folder``; returns its process id.

    The worker outlives this process (its own session, no inherited terminal): the command
    returns while the worker extracts.
    """
    cmd = [sys.executable, "-m", "sage_memory.worker", "--path", str(folder)]
    cmd += ["--embedder", embedder]
    detach: dict[str, object] = (
        {"creationflags": getattr(subprocess, "DETACHED_PROCESS", 0)}
        if os.name == "nt"
        else {"start_new_session": True}
    )
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        **detach,  # type: ignore[call-overload]
    )
    return int(proc.pid)


def worker_owns(folder: Path) -> bool:
    """Whether the process that holds ``folder`` is one of its extraction workers (the folder
    lock file names its owner's pid; the run lock file names the running worker's)."""
    try:
        owner = (folder / ".lock").read_text().split()
        runner = (folder / RUN_LOCK).read_text().split()
    except OSError:
        return False
    return len(owner) >= 2 and len(runner) >= 2 and owner[1] == runner[1]


def _flock(path: Path, *, wait: bool) -> IO[str] | None:
    """An exclusive lock on ``path`` (held while the returned file is open); None when
    ``wait`` is False and another process holds it."""
    fh = open(path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks, workers may overlap
        return fh
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        fh.close()
        return None
    return fh


def _open(folder: Path, embedder: str) -> object | None:
    """The folder's memory, waiting for another process to let it go; None if it never does."""
    from sage_memory.engine.core import SageMemory
    from sage_memory.errors import FolderBusyError

    deadline = time.monotonic() + OPEN_PATIENCE_SECONDS
    while True:
        try:
            return SageMemory(folder, embedder=embedder)
        except FolderBusyError:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)


def run(folder: Path, embedder: str) -> int:
    """Extract every pending memory of ``folder`` (one worker at a time); the count done."""
    waiting = _flock(folder / NEXT_LOCK, wait=False)
    if waiting is None:
        return 0  # a worker waits already, and will see what was queued before now
    with contextlib.ExitStack() as held:
        held.callback(waiting.close)
        running = _flock(folder / RUN_LOCK, wait=True)
        assert running is not None
        held.callback(running.close)
        running.seek(0)
        running.truncate()
        running.write(f"pid {os.getpid()}")
        running.flush()
        waiting.close()  # from here on, a new add's worker waits for this one, then runs
        done = failed = 0
        while True:
            mem = _open(folder, embedder)
            if mem is None:
                _log(folder, f"extracted {done}; the folder stayed busy, the rest left pending")
                return done
            with mem:  # type: ignore[attr-defined]
                results = mem.extract_pending(limit=ROUND)  # type: ignore[attr-defined]
            done += len(results)
            failed += sum(r.extraction_error is not None for r in results)
            # A short round drained the queue as it stood when read; what was queued since
            # has a worker of its own, waiting for this one (see the module's docstring).
            if len(results) < ROUND:
                break
            time.sleep(ROUND_GAP_SECONDS)
        _log(folder, f"extracted {done} memories ({failed} with errors)")
        return done
    return 0  # pragma: no cover - the block above returns


def _log(folder: Path, line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with contextlib.suppress(OSError):
        (folder / LOG_FILE).write_text(f"{stamp} pid {os.getpid()}: {line}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sage_memory.worker",
        description="Extract the pending memories of a folder (started by sage-memory add).",
    )
    parser.add_argument("--path", required=True, help="the memory folder")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args(argv)
    folder = Path(args.path)
    if not folder.is_dir():
        return 2
    try:
        run(folder, args.embedder)
    except Exception as exc:  # detached: nobody sees stderr; the memories stay pending
        _log(folder, f"failed: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
