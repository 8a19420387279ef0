"""The explorer on a 10k-node scope: how long each page call takes (the server's work).

    .venv/bin/python bench/ui_scale.py [--nodes 10000]

Builds one scope with N nodes (chunks of 500 via add_graph, each node linked to the previous
and to a random earlier one), then times the calls the page makes, through ExplorerApi (the
same functions the HTTP server calls), p50 over a few repeats.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from sage_memory import SageMemory
from sage_memory.types import EdgeSpec, NodeSpec
from sage_memory.ui.api import ExplorerApi


def build(mem: SageMemory, n: int, chunk: int = 500) -> None:
    rng = random.Random(7)
    for start in range(0, n, chunk):
        ids = range(start, min(n, start + chunk))
        nodes = [NodeSpec(f"k{i}", f"topic {i}", "Concept") for i in ids]
        edges = [EdgeSpec(f"k{i}", f"k{i - 1}", "RELATED_TO") for i in ids if i > start]
        edges += [
            EdgeSpec(f"k{i}", f"k{rng.randrange(start, i)}", "REFERENCES")
            for i in ids
            if i > start + 1
        ]
        mem.add_graph(f"notes {start}", nodes=nodes, edges=edges, user_id="big")


def timed(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder, SageMemory(folder, embedder="hashing") as mem:
        t = time.perf_counter()
        build(mem, args.nodes)
        print(f"built {mem.stats(user_id='big')} in {time.perf_counter() - t:.1f} s")
        api = ExplorerApi(mem, user_id="big")
        first_ms, _ = timed(lambda: ExplorerApi(mem, user_id="big").graph(), repeat=1)
        print(f"first whole-graph page (loads the scope, lays out 150): {first_ms:.0f} ms")
        api.graph()
        for name, fn in [
            ("graph page 1 (cached scope)", api.graph),
            ("graph page 2", lambda: api.graph(offset=150)),
            ("info (time stops)", api.info),
            ("search", lambda: api.search("topic 42")),
            ("node details", lambda: api.node("topic 42")),
            ("expand 1 hop", lambda: api.expand("topic 42")),
            ("stats", api.stats),
            ("review", api.review),
        ]:
            ms, out = timed(fn)
            shown = out.get("shown", "") if isinstance(out, dict) else ""
            print(f"{name:<30} p50 {ms:8.1f} ms  {shown}")
        at = mem.get_all(user_id="big")[len(mem.get_all(user_id="big")) // 2].created_at
        ms, out = timed(lambda: ExplorerApi(mem, user_id="big").graph(at=at), repeat=1)
        print(f"{'graph as_of (mid-history)':<30} once {ms:8.1f} ms  {out['shown']}")


if __name__ == "__main__":
    main()
