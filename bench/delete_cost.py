"""What forgetting costs: one ``delete`` (and the close and open after it) as the folder grows.

A deleted memory's bytes must leave the SQLite file, so ``delete`` rewrites the file (VACUUM)
at once while it is at most ``SQLiteGraphStore.erase_now_bytes`` (64 MB), and otherwise marks
the rewrite pending and runs it once at ``close`` (or the next open after a crash). This
measures both regimes on one folder-backed memory (SQLite + Chroma):

1. fill a folder with N memories: 40 story memories through the rule extractor (so a delete
   also rebuilds graph facts), the rest chat-like filler without extraction (``infer=False``);
2. close and reopen once with nothing to erase (the reference close and open);
3. time ``delete`` of a few filler memories and of a story memory whose edge another memory
   also supports (its fact sentence is rebuilt from what remains);
4. time the ``close`` after those deletes (the deferred rewrite, if any) and the next open.

Embedder: the hashing embedder (``embedder="hashing"``, 256-d), for speed: what is measured is
the store's work, which does not depend on the vectors' source (the file is smaller than with
MiniLM's 384-d vectors, which SQLite also stores, so a MiniLM folder crosses 64 MB sooner).
Wall times on a machine shared with other work; compare rows of one run, not runs.

Run: ``.venv/bin/python bench/delete_cost.py`` (10k and 50k memories, a few minutes), or
``--sizes 2000`` for a quick look. ``--render`` rewrites the README section from the saved
bench/results/delete_cost.json without measuring. Writes bench/results/delete_cost.json and
the ``delete-cost`` section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sections import BENCH_README, write_section  # noqa: E402

RESULTS = HERE / "results" / "delete_cost.json"
NAME = "delete-cost"
COMMAND = ".venv/bin/python bench/delete_cost.py"
USER = "u"

STORY = [
    "Alice lives in Paris.",
    "Alice lives in Paris, near the river.",
    "Bob works at Acme.",
    "Bob uses Postgres for the billing service.",
    "The billing service depends on the payments API.",
] + [f"Sprint {i}: Carol reviewed the FastAPI backend of the blog." for i in range(35)]

_CHAT = (
    "we talked about the trip and the weather and what to cook this week, then about "
    "books films music work plans the garden the car a new bike and the neighbours"
)
_FILLER = _CHAT.split()


def filler(count: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.choices(_FILLER, k=12)).capitalize() + f" ({i})." for i in range(count)]


def file_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.glob("sage.db*")) / 2**20, 1)


def timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def vacuum_alone(folder: Path, copy: Path) -> float:
    """Milliseconds of a plain VACUUM of a copy of the folder's database (same size): the
    share of a delete that is the file rewrite."""
    src = sqlite3.connect(str(folder / "sage.db"))
    dst = sqlite3.connect(str(copy))
    try:
        src.backup(dst)
        return timed(lambda: dst.execute("VACUUM"))
    finally:
        src.close()
        dst.close()


def measure(size: int, deletes: int, rng: random.Random) -> dict[str, Any]:
    from sage_memory import SageMemory

    with tempfile.TemporaryDirectory(prefix="sage-delete-") as tmp:
        folder = Path(tmp) / "mem"
        mem = SageMemory(folder, embedder="hashing")
        base = datetime(2026, 1, 1, tzinfo=UTC)
        story = [
            mem.add(t, user_id=USER, timestamp=base + timedelta(minutes=i)).memory_id
            for i, t in enumerate(STORY)
        ]
        fill_ids: list[str] = []
        texts = filler(size - len(STORY), rng)
        for start in range(0, len(texts), 5000):
            chunk = texts[start : start + 5000]
            items = [
                {"text": t, "timestamp": base + timedelta(hours=1, minutes=start + i)}
                for i, t in enumerate(chunk)
            ]
            got = mem.add_many(items, user_id=USER, infer=False, batch_size=len(chunk))
            fill_ids += [r.memory_id for r in got]
        store = mem.store
        limit = store.erase_now_bytes
        close_ref = timed(mem.close)
        t0 = time.perf_counter()
        mem = SageMemory(folder, embedder="hashing")
        open_ref = (time.perf_counter() - t0) * 1000
        before_mb = file_mb(folder)
        vacuum = vacuum_alone(folder, Path(tmp) / "copy.db")
        plain = [
            timed(lambda m=m: mem.delete(m, user_id=USER)) for m in rng.sample(fill_ids, deletes)
        ]
        # "Alice lives in Paris." shares its LIVES_IN edge with the next memory: the edge stays
        # and its fact sentence is rebuilt from the memory that remains.
        shared_edge = timed(lambda: mem.delete(story[0], user_id=USER))
        close_after = timed(mem.close)
        t0 = time.perf_counter()
        mem = SageMemory(folder, embedder="hashing")
        open_after = (time.perf_counter() - t0) * 1000
        count = mem.stats(user_id=USER)["memories"]
        mem.close()
        return {
            "memories": size,
            "file_mb": before_mb,
            "erase_now_mb": round(limit / 2**20),
            "vacuum_at_delete": before_mb * 2**20 <= limit,
            "vacuum_alone_ms": round(vacuum, 1),
            "delete_p50_ms": round(statistics.median(plain), 1),
            "delete_max_ms": round(max(plain), 1),
            "delete_shared_edge_ms": round(shared_edge, 1),
            "close_ms": round(close_ref, 1),
            "open_ms": round(open_ref, 1),
            "close_after_delete_ms": round(close_after, 1),
            "open_after_delete_ms": round(open_after, 1),
            "memories_left": count,
        }


def run(sizes: Sequence[int], deletes: int) -> dict[str, Any]:
    rng = random.Random(11)
    out: dict[str, Any] = {"sizes": []}
    for size in sizes:
        row = measure(size, deletes, rng)
        print(row, file=sys.stderr, flush=True)
        out["sizes"].append(row)
    out.update(
        deletes=deletes,
        embedder="hashing-256 (for speed; see the module docstring)",
        load_average=round(os.getloadavg()[0], 1),
        cpus=os.cpu_count(),
        when=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return out


def render(report: dict[str, Any]) -> str:
    """The README section, from a run's report and the saved runs (no measuring)."""
    lines = [table(report), ""]
    lines.append(
        f"{report['deletes']} filler deletes and one shared-fact delete per size; VACUUM alone: "
        "a plain VACUUM of a copy of the same file. The file is rewritten at each delete up to "
        f"{report['sizes'][0]['erase_now_mb']} MB, else once at close. Embedder: "
        f"{report['embedder']}. {report['when']}, load average {report['load_average']} on "
        f"{report['cpus']} CPUs shared with other work."
    )
    for path in sorted(RESULTS.parent.glob("delete_cost_*.json")):
        old = json.loads(path.read_text())
        name = path.stem.removeprefix("delete_cost_")
        lines += ["", f"Saved run `{name}` ({old['when']}):", "", table(old)]
    return "\n".join(lines)


def table(report: dict[str, Any]) -> str:
    lines = [
        "| memories | sage.db MB | rewrite at | VACUUM alone ms | delete p50 / max ms "
        "| delete of a shared fact ms | close / open ms, nothing erased "
        "| close / open ms after the deletes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["sizes"]:
        when = "delete" if r["vacuum_at_delete"] else "close"
        lines.append(
            f"| {r['memories']:,} | {r['file_mb']} | {when} | {r['vacuum_alone_ms']} "
            f"| {r['delete_p50_ms']} / "
            f"{r['delete_max_ms']} | {r['delete_shared_edge_ms']} | {r['close_ms']} / "
            f"{r['open_ms']} | {r['close_after_delete_ms']} / {r['open_after_delete_ms']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--deletes", type=int, default=5)
    ap.add_argument("--save-as", help="also keep this run as bench/results/delete_cost_<NAME>.json")
    ap.add_argument("--render", action="store_true", help="only rewrite the README section")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.render:
        report = json.loads(RESULTS.read_text())
    else:
        report = run(args.sizes, args.deletes)
    print(render(report))
    if args.no_write:
        return
    if not args.render:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=2) + "\n")
        if args.save_as:
            keep = RESULTS.with_name(f"delete_cost_{args.save_as}.json")
            keep.write_text(json.dumps(report, indent=2) + "\n")
    write_section(BENCH_README, NAME, COMMAND, render(report))


if __name__ == "__main__":
    main()
