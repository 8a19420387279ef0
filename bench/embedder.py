"""numpy vs onnxruntime MiniLM: start-up, one-query latency and batch-32 throughput, one run.

    .venv/bin/python bench/embedder.py [--repeats 30]

Prints medians (the CPU is shared: repeat and compare within one run only).
"""

from __future__ import annotations

import argparse
import statistics
import time

from sage_memory.embed.minilm import MiniLMEmbedder

QUERY = "where does Alice live now?"
BATCH = [f"Note {i}: the user asked about topic {i} and the agent answered." for i in range(32)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    for backend in ("numpy", "onnx"):
        embedder = MiniLMEmbedder(backend=backend)
        start = time.perf_counter()
        embedder.embed(["warm up"])
        startup = time.perf_counter() - start
        one, batch = [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            embedder.embed_query(QUERY)
            one.append(time.perf_counter() - t)
            t = time.perf_counter()
            embedder.embed(BATCH)
            batch.append(time.perf_counter() - t)
        b = statistics.median(batch)
        q = statistics.median(one)
        print(
            f"{backend:6s} start-up {startup:6.2f} s  one query p50 {q * 1e3:6.2f} ms"
            f"  batch-32 p50 {b * 1e3:7.1f} ms ({32 / b:6.0f} texts/s)"
        )


if __name__ == "__main__":
    main()
