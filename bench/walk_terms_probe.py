"""Probe: LoCoMo evidence recall for several retrieval weightings over one ingest.

Each conversation is ingested once (as bench/locomo.py does), then every variant (a dict of
``Weights`` changes) answers all its questions on the same store: R@5/10/20 overall, multi-hop
R@10 and the CPU time of its searches. Comparing variants on one store removes ingest noise
and costs one ingest instead of one per variant. Run:
``PYTHONPATH=. python bench/walk_terms_probe.py --variants '{}' '{"graph": 0.3}'``.

A graph-only variant (``{"dense": 0, "lexical": 0, "entity": 0, "author": 0, "neighbour": 0,
"graph": 1, "assoc_take": 0}``) ranks by the walk's mass alone: what the walk finds by itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CachedMiniLM
from locomo import DATA, Tally, ingested, load


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--variants", nargs="+", default=["{}", '{"graph": 0.0, "entity": 0.0}'])
    args = ap.parse_args()
    variants = [json.loads(v) for v in args.variants]
    convs = load(Path(args.data))
    emb = CachedMiniLM()
    tallies: dict[str, Tally] = defaultdict(Tally)
    took: dict[str, float] = defaultdict(float)
    for conv, _, ablated in ingested(convs, emb, prefix="sage-probe-"):
        for changes in variants:
            name = json.dumps(changes)
            run = ablated(changes)
            t0 = time.process_time()
            for q in conv.questions:
                tallies[name].add(q, run(q.text, 20), 0.0)
            took[name] += time.process_time() - t0
    for name, t in tallies.items():
        s = t.summary()
        print(
            f"{name:40s} all R@10 {s['overall']['R@10']:5.1f}  multi-hop R@10"
            f" {s['multi-hop']['R@10']:5.1f}  R@5 {s['overall']['R@5']:5.1f}"
            f"  R@20 {s['overall']['R@20']:5.1f}  cpu {took[name]:.1f}s"
        )


if __name__ == "__main__":
    main()
