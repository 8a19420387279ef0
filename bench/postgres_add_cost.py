"""What one ``add`` costs on PostgreSQL: statements, time, time under the partition lock.

    .venv/bin/python bench/postgres_add_cost.py --before 46ac1d5   # that commit beside this tree

One writer adds the concurrency benchmark's facts (bench/postgres_concurrency.py: shared names,
changing single-valued facts) to one scope: ``--warmup`` adds, then ``--adds`` measured ones.
It counts the SQL statements the add sends (psycopg ``execute`` / ``executemany`` calls; a
pipeline sends several per round trip) and times the add and the part under the partition lock
(``EngineContext.writing``), the part that writers of one scope take in turns. With
``--before COMMIT``, the same run is made on that commit's ``sage_memory`` (``git archive``)
in alternation with this tree's, ``--rounds`` times each, so a shared machine's load falls on
both alike. pgserver's PostgreSQL (or SAGE_TEST_POSTGRES_URL); hashing embedder. Results:
bench/results/postgres_add_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "postgres_add_cost.json"


def child(url: str, warmup: int, adds: int) -> None:
    """Run in a child process (its sage_memory from PYTHONPATH): print one JSON line."""
    import contextlib
    import random
    import time

    import psycopg

    import sage_memory
    from sage_memory.engine import context

    sys.path.insert(0, str(HERE))
    from postgres_concurrency import fact

    mem = sage_memory.SageMemory(url=url, embedder="hashing")
    rng = random.Random(1)
    for _ in range(warmup):
        mem.add(fact(rng), user_id="team")
    statements = 0
    held: list[float] = []
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def counted(real: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            nonlocal statements
            statements += 1
            return real(self, *args, **kwargs)

        return call

    writing = context.EngineContext.writing

    @contextlib.contextmanager
    def timed(self: Any, *partitions: str) -> Any:
        start = time.perf_counter()
        with writing(self, *partitions):
            yield
        held.append(time.perf_counter() - start)

    psycopg.Cursor.execute = counted(execute)  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counted(executemany)  # type: ignore[method-assign]
    context.EngineContext.writing = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    for _ in range(adds):
        mem.add(fact(rng), user_id="team")
    total = time.perf_counter() - start
    mem.close()
    print(
        json.dumps(
            {
                "source": str(Path(sage_memory.__file__).parent),
                "statements_per_add": statements / adds,
                "ms_per_add": 1000 * total / adds,
                "ms_locked_per_add": 1000 * sum(held) / adds,
            }
        )
    )


def run(tree: Path | None, url: str, warmup: int, adds: int) -> dict[str, Any]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run(
        [sys.executable, __file__, "child", url, str(warmup), str(adds)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="a commit to measure beside this tree")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--adds", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from common import stamp

    base = os.environ.get("SAGE_TEST_POSTGRES_URL")
    server = None
    if not base:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="sagecost"), cleanup_mode="delete")
        base = server.get_uri()
    sep = "&" if "?" in base else "?"
    trees: dict[str, Path | None] = {"now": None}
    with tempfile.TemporaryDirectory(prefix="sage-before-") as tmp:
        if args.before:
            archive = subprocess.run(
                ["git", "-C", str(HERE.parent), "archive", args.before, "sage_memory"],
                capture_output=True,
                check=True,
            )
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            trees = {"before": Path(tmp), "now": None}
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        try:
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    url = f"{base}{sep}schema=cost_{uuid.uuid4().hex[:10]}"
                    runs[name].append(run(tree, url, args.warmup, args.adds))
                    print(name, runs[name][-1], flush=True)
        finally:
            if server is not None:
                server.cleanup()
    res: dict[str, Any] = {
        "before": args.before,
        "warmup": args.warmup,
        "adds": args.adds,
        "rounds": args.rounds,
        "median": {
            name: {
                key: round(statistics.median(r[key] for r in rs), 1)
                for key in ("statements_per_add", "ms_per_add", "ms_locked_per_add")
            }
            for name, rs in runs.items()
        },
        "runs": runs,
        **stamp(),
    }
    print(json.dumps(res["median"], indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
