"""numpy vs onnxruntime MiniLM: start-up, one-query latency and batch-32 throughput, one run.

    .venv/bin/python bench/embedder.py [--repeats 30]

Start-up is measured in fresh processes (import, load, first vector): numpy, onnx with an
empty model cache (the graph is built from the weights and written), and onnx with the cached
file. Latencies are interleaved (numpy, onnx, numpy, ...) so both see the same machine load;
medians are printed, with the onnx / numpy ratio. The CPU may be shared: compare within a run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

from sage_memory.embed.minilm import MiniLMEmbedder

QUERY = "where does Alice live now?"
BATCH = [f"Note {i}: the user asked about topic {i} and the agent answered." for i in range(32)]

_START = """
import sys, time
t = time.perf_counter()
from sage_memory.embed.minilm import MiniLMEmbedder
e = MiniLMEmbedder(backend=sys.argv[1], cache_dir=sys.argv[2])
e.embed_query("warm up")
print(time.perf_counter() - t)
"""


def start_up(backend: str, cache_dir: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _START, backend, cache_dir],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        starts = {
            "numpy": start_up("numpy", cache),
            "onnx, empty cache": start_up("onnx", cache),
            "onnx, cached model": start_up("onnx", cache),
        }
        embedders = {b: MiniLMEmbedder(backend=b, cache_dir=cache) for b in ("numpy", "onnx")}
        for e in embedders.values():
            e.embed(["warm up"])
        one: dict[str, list[float]] = {b: [] for b in embedders}
        batch: dict[str, list[float]] = {b: [] for b in embedders}
        for _ in range(args.repeats):
            for backend, embedder in embedders.items():
                t = time.perf_counter()
                embedder.embed_query(QUERY)
                one[backend].append(time.perf_counter() - t)
                t = time.perf_counter()
                embedder.embed(BATCH)
                batch[backend].append(time.perf_counter() - t)
    for name, seconds in starts.items():
        print(f"start-up (new process, first vector) {name:20s} {seconds:6.2f} s")
    q = {b: statistics.median(v) for b, v in one.items()}
    b32 = {b: statistics.median(v) for b, v in batch.items()}
    for backend in embedders:
        print(
            f"{backend:6s} one query p50 {q[backend] * 1e3:6.2f} ms  batch-32 p50 "
            f"{b32[backend] * 1e3:7.1f} ms ({32 / b32[backend]:5.0f} texts/s)"
        )
    print(
        f"onnx / numpy: one query {q['onnx'] / q['numpy']:.2f}x, "
        f"batch-32 {b32['onnx'] / b32['numpy']:.2f}x (below 1: onnx faster)"
    )


if __name__ == "__main__":
    main()
