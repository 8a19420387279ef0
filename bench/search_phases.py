"""Where a search's wall time goes, stage by stage, per kind of query, on a kept scale folder.

    .venv/bin/python bench/search_phases.py --folder F [--queries 100]

``F`` is a folder from ``bench/scale.py --keep``; a copy of it is opened (the folder itself is
not changed). The scale benchmark's queries run through ``search(limit=10)`` after a few
warm-up queries, and the retriever's stages (dense seeds, graph gathering, the associative walk,
ranking with its current-value pass, the structure answer) are timed by wrapping the functions
the retriever calls, without a profiler's overhead. Prints, per query template (names made
``X``), how many queries, the mean and the worst wall time and each stage's mean; then the
slowest queries. Latencies are for comparing stages with each other in one run: the machine
may be shared (the load average is printed). Writes nothing.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from scale import USER, queries

#: The retriever's stages, as the names it calls them by (module, function).
STAGES = (
    ("retriever", "dense_seeds"),
    ("retriever", "gather"),
    ("retriever", "recall"),
    ("retriever", "rank_memories"),
    ("ranking", "_current_first"),
    ("retriever", "structure_view"),
)


def _timed(spent: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - started

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, required=True, help="a folder from scale.py --keep")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--slowest", type=int, default=8)
    args = ap.parse_args()

    from sage_memory import SageMemory
    from sage_memory.retrieve import ranking, retriever

    modules = {"retriever": retriever, "ranking": ranking}
    spent: dict[str, float] = {}
    for module, name in STAGES:
        setattr(modules[module], name, _timed(spent, name, getattr(modules[module], name)))

    work = Path(tempfile.mkdtemp(prefix="search-phases-"))
    try:
        shutil.copytree(args.folder, work / "f")
        mem = SageMemory(work / "f")
        qs = queries(args.warm + args.queries)
        for q in qs[: args.warm]:
            mem.search(q, user_id=USER, limit=10)
        load = os.getloadavg()[0]
        rows: list[tuple[float, str, dict[str, float]]] = []
        for q in qs[args.warm :]:
            spent.clear()
            started = time.perf_counter()
            mem.search(q, user_id=USER, limit=10)
            rows.append((time.perf_counter() - started, q, dict(spent)))
        mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    names = [name for _, name in STAGES]
    print(f"load {load:.1f}; {len(rows)} queries; ms (stage means; _current_first is in rank)")
    print(
        f"{'template':38} {'n':>3} {'mean':>6} {'max':>6} "
        + " ".join(f"{n[:10]:>10}" for n in names)
    )
    by_template: dict[str, list[tuple[float, str, dict[str, float]]]] = defaultdict(list)
    for row in rows:
        by_template[re.sub(r"\b[A-Z][a-z]+\b", "X", row[1])].append(row)
    for template, group in sorted(by_template.items(), key=lambda kv: -max(r[0] for r in kv[1])):
        mean = sum(r[0] for r in group) / len(group) * 1000
        worst = max(r[0] for r in group) * 1000
        stages = [sum(r[2].get(n, 0.0) for r in group) / len(group) * 1000 for n in names]
        print(
            f"{template[:38]:38} {len(group):>3} {mean:>6.0f} {worst:>6.0f} "
            + " ".join(f"{s:>10.1f}" for s in stages)
        )
    print("slowest:")
    for took, q, stage in sorted(rows, key=lambda r: -r[0])[: args.slowest]:
        parts = " ".join(f"{n}={stage.get(n, 0.0) * 1000:.0f}" for n in names)
        print(f"  {took * 1000:6.0f} {q[:40]:40} {parts}")


if __name__ == "__main__":
    main()
