"""Diagnosis: where LoCoMo evidence that the top 10 misses sits in the search's channels.

Each conversation is ingested once (as bench/locomo.py does). For every evidence turn of a
question (default: multi-hop) that is not in sage's top 10, it reports whether the turn is
ranked 11-50 by sage itself (in the candidate pool: fusion lost it), or where the channels
put it: dense top 20 / top 100, lexical top 20 / top 100, the associative walk's mass (the
graph channel), one neighbouring turn away from a top-10 hit; "nowhere" means seeding and
expansion never reach it. Run: ``PYTHONPATH=. python bench/multihop_pool.py [--category 1]``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CachedMiniLM
from locomo import CATEGORIES, DATA, ingested, load

DEEP = 100


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--category", type=int, default=1, help="LoCoMo category (1 = multi-hop)")
    ap.add_argument("--weights", default="{}", help="Weights changes (JSON) for the search")
    args = ap.parse_args()
    import dataclasses
    import json

    from sage_memory.retrieve.graph import Ask, gather, recall
    from sage_memory.retrieve.query import analyze
    from sage_memory.retrieve.seeds import dense_seeds, word_seeds
    from sage_memory.types import Scope

    convs = load(Path(args.data))
    emb = CachedMiniLM()
    where: Counter[str] = Counter()
    nodes: Counter[bool] = Counter()  # missed evidence turns with / without a graph node
    total = 0
    for conv, sage, ablated in ingested(convs, emb, prefix="sage-pool-"):
        run = ablated(json.loads(args.weights))
        turn_of = {t.dia_id: i for i, t in enumerate(conv.turns)}
        mem = sage.close.__self__  # the SageMemory behind the system
        ret = mem.retriever
        scope = Scope(conv.sample_id)
        for q in conv.questions:
            if q.category != args.category:
                continue
            ranked = run(q.text, 50)
            top10 = set(ranked[:10])
            missed = [e for e in q.evidence if e not in top10]
            total += len(q.evidence)
            where["in top 10"] += len(q.evidence) - len(missed)
            if not missed:
                continue
            plan = analyze(q.text, mem.now())
            qvec = emb.embed_query(q.text)
            dense = dense_seeds(ret.index, scope, qvec, k=DEEP)
            words = word_seeds(ret.store, scope, q.text, phrases=plan.phrases, k=DEEP)
            w = dataclasses.replace(ret.weights, **json.loads(args.weights))
            ask = Ask(ret.store, scope, plan, qvec, w, 10, None, mem.now())
            g = gather(ask, words, ret.index, ret.config)
            recall(ask, g, dense[:20], words.memories[:20], ret.config)
            names = mem_names(mem, conv)
            d_rank = {names[i]: r for r, (i, _) in enumerate(dense) if i in names}
            l_rank = {names[i]: r for r, (i, _) in enumerate(words.scored) if i in names}
            walked = {names[i] for i, v in g.walk.items() if v > 0 and i in names}
            near_top = {
                conv.turns[j].dia_id
                for e in top10
                if e in turn_of
                for j in (turn_of[e] - 1, turn_of[e] + 1)
                if 0 <= j < len(conv.turns)
            }
            ids = {d: m for m, d in names.items()}
            held = ret.store.memory_nodes(scope, [ids[e] for e in missed if e in ids])
            for e in missed:
                if e not in turn_of:
                    where["not a turn"] += 1
                    continue
                nodes[bool(held.get(ids.get(e, ""), ()))] += 1
                if e in ranked:
                    where["ranked 11-50 (fusion loses it)"] += 1
                elif d_rank.get(e, DEEP) < 20 or l_rank.get(e, DEEP) < 20:
                    where["channel top 20, not final 50"] += 1
                elif e in walked:
                    where["walk mass only"] += 1
                elif d_rank.get(e, DEEP) < DEEP or l_rank.get(e, DEEP) < DEEP:
                    where["channel top 21-100 only"] += 1
                elif e in near_top:
                    where["neighbour of a top-10 hit"] += 1
                else:
                    where["nowhere"] += 1
    print(f"{CATEGORIES[args.category]}: {total} evidence turns")
    for k, v in where.most_common():
        print(f"  {k:36s} {v:4d}  {100 * v / total:5.1f}%")
    missed = sum(nodes.values()) or 1
    print(f"missed turns supporting any graph node: {nodes[True]} of {missed}")


_NAMES: dict[int, dict[str, str]] = {}


def mem_names(mem, conv) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """memory id -> dia id, from the store's texts (each turn's text is one memory)."""
    key = id(mem)
    if key not in _NAMES:
        by_text: dict[str, list[str]] = {}
        for t in conv.turns:
            by_text.setdefault(t.text, []).append(t.dia_id)
        out = {}
        for m in mem.get_all(user_id=conv.sample_id, limit=100000):
            ids = by_text.get(m.text)
            if ids:
                out[m.id] = ids[0]
        _NAMES[key] = out
    return _NAMES[key]


if __name__ == "__main__":
    main()
