"""Does keeping vectors at half precision change what dense search finds?

SQLite keeps each vector as float16 (768 bytes at 384 dimensions instead of 1,536); an index
rebuilt after a crash or from a backup, and every partition served exactly from SQLite, search
those. This embeds the chat turns of ``bench/scale.py`` (N of them) and its queries with the
default MiniLM embedder, and compares an exact top-10 over the float32 vectors with the same
search over them rounded to float16 (and, for comparison, to int8 with a scale per vector):

- the cosine of each rounded vector to its original (the smallest over all N);
- how many queries keep the same top-10 set, and the same order;
- how many rankings differ by more than a near-tie: the float32 scores of the two top-10s,
  rank by rank, differ by more than ``--tie`` (a swap of two memories whose scores differ by
  less is a tie broken another way).

    .venv/bin/python bench/vector_precision.py               # N = 10,000, 200 queries

Writes bench/results/vector_precision.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scale import queries, turns  # noqa: E402

from sage_memory.embed import make_embedder  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "vector_precision.json"


def _int8(x: np.ndarray) -> np.ndarray:
    scale = np.abs(x).max(axis=1, keepdims=True) / 127
    rounded: np.ndarray = np.round(x / scale).astype(np.int8).astype(np.float32) * scale
    return rounded


def compare(
    x: np.ndarray, rounded: np.ndarray, q: np.ndarray, tie: float, width: int
) -> dict[str, Any]:
    """Top-10 agreement of exact search over ``x`` and over ``rounded``, query by query."""
    same_set = same_order = beyond_tie = 0
    overlap = 0
    for row in q:
        exact = x @ row
        a = np.argsort(-exact, kind="stable")[:10]
        b = np.argsort(-(rounded @ row), kind="stable")[:10]
        same_set += set(a) == set(b)
        same_order += bool((a == b).all())
        overlap += len(set(a) & set(b))
        beyond_tie += bool(np.abs(exact[a] - exact[b]).max() > tie)
    cos = (x * rounded).sum(axis=1) / np.linalg.norm(rounded, axis=1)
    return {
        "min_cosine_to_float32": float(cos.min()),
        "same_top10_set": same_set,
        "same_top10_order": same_order,
        "mean_top10_overlap": overlap / len(q),
        "rankings_beyond_a_tie": beyond_tie,
        "bytes_per_vector": width,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="chat turns embedded")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--tie", type=float, default=1e-4, help="score gap that counts as a tie")
    args = ap.parse_args()
    embedder = make_embedder("minilm")
    t = time.perf_counter()
    x = np.asarray(embedder.embed([item["text"] for item in turns(args.n)]), dtype=np.float32)
    q = np.stack([embedder.embed_query(text) for text in queries(args.queries)])
    embed_s = time.perf_counter() - t
    half = x.astype(np.float16).astype(np.float32)
    result = {
        "when": time.strftime("%Y-%m-%d"),
        "commit": subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short=10", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
        ).stdout.strip(),
        "n": args.n,
        "queries": args.queries,
        "tie": args.tie,
        "embedder": embedder.name,
        "embed_s": embed_s,
        "float16": compare(x, half, q, args.tie, 2 * x.shape[1]),
        "int8": compare(x, _int8(x), q, args.tie, x.shape[1] + 4),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
