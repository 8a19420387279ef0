"""What a search reads from SQLite, stage by stage, on a kept scale folder.

    .venv/bin/python bench/search_reads.py --folder F [--queries 30]

``F`` is a folder from ``bench/scale.py --keep``; a copy of it is opened. The scale benchmark's
queries run through ``search(limit=10)``; for each of the retriever's stages this counts the
SQL statements it runs, the SQLite virtual-machine steps they take (a progress handler called
every 100 steps: the work the database does, whatever the wall clock's load) and the lexical
posting rows scored. Run it on two sizes: a count that grows with the folder is a read whose
cost depends on the scope's size, not on what the query touches. Work runs in one thread
(the retriever's helper thread is replaced by a synchronous one) so each count has one stage.
Writes nothing.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from scale import USER, queries

#: Stages as (module, function name) the way their callers look them up; nested stages count
#: on their own (the innermost one running gets the work).
STAGES = (
    ("retriever", "word_seeds"),
    ("retriever", "dense_seeds"),
    ("retriever", "mention_links"),
    ("graph", "mention_links"),
    ("retriever", "gather"),
    ("graph", "associate"),
    ("graph", "concept_scores"),
    ("retriever", "rank_memories"),
    ("ranking", "_current_first"),
    ("retriever", "structure_view"),
    ("retriever", "lead_memories"),
)
STEP = 100


class _Now:
    """Runs submitted work at once, in the calling thread."""

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed back through the future, as a pool would
            done.set_exception(exc)
        return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--term-postings", type=int, help="try another lexical read bound")
    args = ap.parse_args()

    from sage_memory import SageMemory
    from sage_memory.retrieve import graph, ranking, retriever
    from sage_memory.store import sqlite_postings

    stack = ["other"]
    sql: dict[str, int] = defaultdict(int)
    steps: dict[str, int] = defaultdict(int)
    postings: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)

    def staged(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*a: Any, **kw: Any) -> Any:
            stack.append(name)
            calls[name] += 1
            try:
                return fn(*a, **kw)
            finally:
                stack.pop()

        return run

    modules = {"retriever": retriever, "ranking": ranking, "graph": graph}
    for module, name in STAGES:
        setattr(modules[module], name, staged(name, getattr(modules[module], name)))
    scores = sqlite_postings._scores

    def counted_scores(rows: list[Any], *a: Any) -> Any:
        postings[stack[-1]] += len(rows)
        return scores(rows, *a)

    sqlite_postings._scores = counted_scores  # type: ignore[assignment]
    if args.term_postings is not None:
        sqlite_postings.TERM_POSTINGS = args.term_postings

    work = Path(tempfile.mkdtemp(prefix="search-reads-"))
    try:
        shutil.copytree(args.folder, work / "f")
        mem = SageMemory(work / "f")
        engine_retriever = mem._ctx.retriever
        engine_retriever._worker = _Now  # type: ignore[method-assign]
        db = mem._ctx.store._db

        def on_sql(_: str) -> None:
            sql[stack[-1]] += 1

        def on_step() -> int:
            steps[stack[-1]] += STEP
            return 0

        qs = queries(args.queries + 3)
        for q in qs[:3]:
            mem.search(q, user_id=USER, limit=10)
        db.set_trace_callback(on_sql)
        db.set_progress_handler(on_step, STEP)
        for c in (sql, steps, postings, calls):
            c.clear()
        for q in qs[3:]:
            mem.search(q, user_id=USER, limit=10)
        db.set_trace_callback(None)
        db.set_progress_handler(None, STEP)
        mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    n = args.queries
    print(f"{args.folder}: per search, mean of {n} queries")
    print(f"{'stage':16} {'calls':>6} {'SQL':>7} {'VM steps':>10} {'postings':>9}")
    names = ["other", *dict.fromkeys(name for _, name in STAGES)]
    for name in names:
        print(
            f"{name:16} {calls[name] / n:>6.1f} {sql[name] / n:>7.1f} "
            f"{steps[name] / n:>10.0f} {postings[name] / n:>9.0f}"
        )
    print(
        f"{'total':16} {'':>6} {sum(sql.values()) / n:>7.1f} {sum(steps.values()) / n:>10.0f}"
        f" {sum(postings.values()) / n:>9.0f}"
    )


if __name__ == "__main__":
    main()
