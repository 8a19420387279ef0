"""Server mode under load: many writer processes and readers on one PostgreSQL-backed memory.

    .venv/bin/python bench/postgres_concurrency.py            # 8 writers x 1,000 adds, 2 readers
    .venv/bin/python bench/postgres_concurrency.py --quick    # 8 writers x 60 adds

Starts pgserver's PostgreSQL 16 + pgvector (or uses SAGE_TEST_POSTGRES_URL). Every writer is
its own process adding to ONE scope, with entity names shared by all writers ("Alice",
"Bogdan", ...) and facts that keep changing (where each person lives, where they work: the
single-valued relations whose old value must expire when a new one arrives). Two reader
processes search the same scope all the while. Then ``--kills`` more writers are killed with
SIGKILL at random points mid-add. The memory is reopened and checked:

* acknowledged writes lost: every memory id a writer printed after ``add`` returned is there
  with its text;
* duplicate nodes: two nodes of the scope with the same name key;
* double current values: a (person, single-valued relation) with two current edges;
* partial units of work: a row that is not the last state of an unbroken journal chain (each
  change starts from the state the previous one left), or an edge to a missing node.

The embedder is the hashing one (no model): the figure is about the store, not the embedding.
Results: bench/results/postgres_concurrency.json and the section in bench/README.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

PEOPLE = ("Alice", "Bogdan", "Chiara", "Dmitri", "Esther", "Farid")
CITIES = ("Paris", "Rome", "Oslo", "Lima", "Kyoto", "Quito", "Accra", "Perth")
COMPANIES = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay")
SCOPE = "team"
RESULTS = Path(__file__).resolve().parent / "results" / "postgres_concurrency.json"


def fact(rng: random.Random) -> str:
    person = rng.choice(PEOPLE)
    if rng.random() < 0.5:
        return f"{person} lives in {rng.choice(CITIES)}"
    return f"{person} works at {rng.choice(COMPANIES)}"


# -- the child processes ------------------------------------------------------------------------


def writer(url: str, seed: int, adds: int) -> None:
    """Add ``adds`` facts; print each acknowledged memory id (after add returned), flushed."""
    from sage_memory import SageMemory

    rng = random.Random(seed)
    mem = SageMemory(url=url, embedder="hashing")
    print("READY", flush=True)
    start = time.perf_counter()
    for _ in range(adds):
        text = fact(rng)
        result = mem.add(text, user_id=SCOPE)
        sys.stdout.write(f"A\t{result.memory_id}\t{text}\n")
        sys.stdout.flush()
    print(f"DONE\t{time.perf_counter() - start:.3f}", flush=True)
    mem.close()


def reader(url: str, seed: int, stop_file: str) -> None:
    """Search the shared scope until ``stop_file`` exists; print latencies and errors."""
    from sage_memory import SageMemory

    rng = random.Random(seed)
    mem = SageMemory(url=url, embedder="hashing")
    print("READY", flush=True)
    ms: list[float] = []
    errors: list[str] = []
    while not os.path.exists(stop_file):
        query = f"where does {rng.choice(PEOPLE)} live or work"
        start = time.perf_counter()
        try:
            mem.search(query, user_id=SCOPE, limit=10)
        except Exception as exc:  # counted and reported, never hidden
            errors.append(f"{type(exc).__name__}: {exc}")
        ms.append((time.perf_counter() - start) * 1000)
    mem.close()
    print(json.dumps({"ms": ms, "errors": errors[:5], "error_count": len(errors)}), flush=True)


# -- the parent -----------------------------------------------------------------------------


def spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen(
        [sys.executable, __file__, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def collect_acks(
    proc: subprocess.Popen[str], acks: dict[str, str], lock: threading.Lock, on_ack: Any = None
) -> threading.Thread:
    """Read a writer's lines in a thread: complete ``A`` lines are acknowledged writes."""

    def run() -> None:
        assert proc.stdout is not None
        count = 0
        for line in proc.stdout:
            if not line.endswith("\n"):
                break  # cut by a kill: never acknowledged
            if line.startswith("A\t"):
                _, mid, text = line.rstrip("\n").split("\t", 2)
                with lock:
                    acks[mid] = text
                count += 1
                if on_ack is not None:
                    on_ack(count)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "READY":
        raise RuntimeError(
            f"child did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        )


def run_writers(url: str, writers: int, adds: int, readers: int) -> dict[str, Any]:
    acks: dict[str, str] = {}
    lock = threading.Lock()
    stop_file = os.path.join(tempfile.mkdtemp(prefix="sagestop"), "stop")
    reading = [spawn("reader", url, str(100 + i), stop_file) for i in range(readers)]
    for proc in reading:
        wait_ready(proc)
    procs = [spawn("writer", url, str(i), str(adds)) for i in range(writers)]
    for proc in procs:
        wait_ready(proc)
    start = time.perf_counter()
    threads = [collect_acks(p, acks, lock) for p in procs]
    failed = []
    for proc in procs:
        proc.wait()
        if proc.returncode != 0:
            failed.append(proc.stderr.read()[-2000:] if proc.stderr else "?")
    wall = time.perf_counter() - start
    for thread in threads:
        thread.join()
    Path(stop_file).write_text("stop")
    searches: list[float] = []
    read_errors = 0
    for proc in reading:
        out, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            failed.append(err[-2000:])
            continue
        summary = json.loads(out.strip().splitlines()[-1])
        searches += summary["ms"]
        read_errors += summary["error_count"]
    return {
        "acks": acks,
        "failed": failed,
        "wall_s": wall,
        "search_ms": searches,
        "read_errors": read_errors,
    }


def kill_writers(url: str, kills: int, seed: int) -> dict[str, str]:
    """Writers killed with SIGKILL after a random number of acknowledged adds (+ jitter)."""
    rng = random.Random(seed)
    acks: dict[str, str] = {}
    lock = threading.Lock()
    procs = []
    for i in range(kills):
        proc = spawn("writer", url, str(1000 + i), "100000")
        wait_ready(proc)
        procs.append(proc)
    for proc in procs:
        target = rng.randint(3, 30)
        reached = threading.Event()
        thread = collect_acks(proc, acks, lock, lambda n, t=target, e=reached: n >= t and e.set())
        reached.wait(300)
        time.sleep(rng.uniform(0.0, 0.05))  # land anywhere inside the next add
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        thread.join(30)
    return acks


def check(url: str, acks: dict[str, str]) -> dict[str, Any]:
    from sage_memory import SageMemory
    from sage_memory.codec import record_from_dict
    from sage_memory.config import ExtractConfig
    from sage_memory.store.base import name_key
    from sage_memory.types import Scope

    mem = SageMemory(url=url, embedder="hashing")
    store = mem.store
    try:
        scope = Scope(user_id=SCOPE)
        stored = {m.id: m.text for m in store.list_memories(scope, include_archived=True)}
        lost = sum(1 for mid, text in acks.items() if stored.get(mid) != text)
        nodes = store.list_nodes(scope)
        names = Counter(name_key(n.name) for n in nodes)
        duplicates = sum(count - 1 for count in names.values() if count > 1)
        edges = store.list_edges(scope)
        single = set(ExtractConfig().single_valued)
        current: dict[tuple[str, str], int] = defaultdict(int)
        for e in edges:
            if e.relation in single and e.expired_at is None and e.valid_to is None:
                current[e.source_id, e.relation] += 1
        double_current = sum(1 for n in current.values() if n > 1)
        node_ids = {n.id for n in nodes}
        partial = sum(
            1 for e in edges if e.source_id not in node_ids or e.target_id not in node_ids
        )
        chains: dict[str, list[Any]] = defaultdict(list)
        for _, change in store.journal(scope=scope, limit=None):  # in seq order
            chains[change.entity_id].append(change)
        for row in [*stored_rows(store, scope), *nodes, *edges]:
            chain = chains.get(row.id, [])
            broken = not chain or any(b.before != a.after for a, b in itertools.pairwise(chain))
            last = chain[-1].after if chain else None
            if broken or last is None or record_from_dict(chain[-1].entity, last) != row:
                partial += 1
        return {
            "memories": len(stored),
            "nodes": len(nodes),
            "edges": len(edges),
            "acknowledged": len(acks),
            "lost": lost,
            "duplicate_nodes": duplicates,
            "double_current_values": double_current,
            "partial_units": partial,
        }
    finally:
        mem.close()


def stored_rows(store: Any, scope: Any) -> list[Any]:
    return list(store.list_memories(scope, include_archived=True))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 1)


def readme(res: dict[str, Any]) -> str:
    c = res["checks"]
    p50, p95 = res["search_p50_ms"], res["search_p95_ms"]
    short = (
        f" The target is 1,000 adds per writer; at this throughput that is"
        f" {8000 / max(res['adds_per_s'], 0.1) / 60:.0f} minutes, so this run used {res['adds']}"
        f" ({res['wall_s'] / 60:.0f} minutes of writing)."
        if res["adds"] < 1000
        else ""
    )
    return f"""## Server mode: concurrent writers on PostgreSQL

    .venv/bin/python bench/postgres_concurrency.py            # 8 writers x 1,000 adds, 2 readers
    .venv/bin/python bench/postgres_concurrency.py --quick    # 8 writers x 60 adds

{res["writers"]} writer processes x {res["adds"]} adds each on ONE scope of one
PostgreSQL-backed memory (pgserver's PostgreSQL 16 + pgvector, hashing embedder: the figure is
about the store), names shared by every writer and facts that keep changing (where a person
lives or works, single-valued relations); {res["readers"]} reader processes searching the same
scope meanwhile; then {res["kills"]} more writers killed with SIGKILL mid-add. Generated by the
script (commit {res["commit"]}, {res["when"]}); the machine's 2 CPUs were shared with other
work.{short}

| check | result |
|---|---|
| acknowledged writes (incl. the killed writers') | {c["acknowledged"]} |
| acknowledged writes lost | {c["lost"]} |
| duplicate nodes | {c["duplicate_nodes"]} |
| (person, single-valued relation) with two current values | {c["double_current_values"]} |
| partial units of work (rows off their journal chain, dangling edges) | {c["partial_units"]} |
| writer or reader processes that failed | {res["failed"]} |
| search errors in the readers | {res["read_errors"]} |
| add throughput, {res["writers"]} writers on one scope | {res["adds_per_s"]} adds/s |
| search p50 / p95 ms while the writers ran ({res["searches"]} searches) | {p50} / {p95} |

Writers of one scope take turns: each `add` plans and applies under the scope's advisory lock,
so the throughput is that of one writer plus the overlap of embedding and extraction (outside
the lock). Writers of different scopes do not wait on each other.
"""


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "writer":
        writer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "reader":
        reader(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--adds", type=int, default=1000)
    ap.add_argument("--kills", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="60 adds per writer")
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument(
        "--readme-only", action="store_true", help="write the section from the saved results"
    )
    args = ap.parse_args()
    if args.readme_only:
        from common import write_section

        saved = json.loads(RESULTS.read_text())
        write_section(
            "## Server mode: concurrent writers on PostgreSQL",
            _with_markers(readme(saved), saved["adds"]),
        )
        return
    if args.quick:
        args.adds = 60
    from common import git_commit, stamp, write_section

    base = os.environ.get("SAGE_TEST_POSTGRES_URL")
    server = None
    if not base:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="sagebench"), cleanup_mode="delete")
        base = server.get_uri()
    sep = "&" if "?" in base else "?"
    url = f"{base}{sep}schema=bench_{uuid.uuid4().hex[:10]}"
    try:
        from sage_memory import SageMemory

        SageMemory(url=url, embedder="hashing").close()  # the schema, once
        run = run_writers(url, args.writers, args.adds, args.readers)
        killed = kill_writers(url, args.kills, seed=7) if args.kills else {}
        checks = check(url, {**run["acks"], **killed})
    finally:
        if server is not None:
            server.cleanup()
    done = len(run["acks"])
    res = {
        "writers": args.writers,
        "readers": args.readers,
        "adds": args.adds,
        "kills": args.kills,
        "checks": checks,
        "failed": len(run["failed"]),
        "failures": run["failed"][:3],
        "read_errors": run["read_errors"],
        "adds_per_s": round(done / run["wall_s"], 1),
        "wall_s": round(run["wall_s"], 1),
        "searches": len(run["search_ms"]),
        "search_p50_ms": round(statistics.median(run["search_ms"]), 1)
        if run["search_ms"]
        else None,
        "search_p95_ms": pct(run["search_ms"], 95),
        "commit": git_commit(),
        **stamp(),
    }
    print(json.dumps(res, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")
    if not args.no_readme:
        write_section(
            "## Server mode: concurrent writers on PostgreSQL",
            _with_markers(readme(res), args.adds),
        )


def _with_markers(text: str, adds: int) -> str:
    """The section under its heading between generated-section markers (bench/sections.py)."""
    from sections import marked

    heading, _, body = text.partition("\n")
    command = f"bench/postgres_concurrency.py --adds {adds}"
    return marked(heading, "postgres-concurrency", command, body)


if __name__ == "__main__":
    main()
