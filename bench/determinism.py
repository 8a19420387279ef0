"""Does a folder rebuilt from the same inputs answer the same? Ingest one structure set twice
(same order, same embeddings; only the random ids differ) and compare every question's packed
context and ranked memories.

    .venv/bin/python bench/determinism.py [--data bench/data/structure] [--show 3]

Prints how many of the questions' contexts differ, and the first few diffs. Writes nothing.
"""

from __future__ import annotations

import argparse
import difflib
import tempfile
from pathlib import Path

import structure as sb  # bench/structure.py: the set loader, ingest order and embedder cache


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(sb.WORLDS), help="a structure set's folder")
    ap.add_argument("--show", type=int, default=3, help="diffs to print")
    args = ap.parse_args()
    worlds = sb.load_worlds(Path(args.data))
    docs = sb.ingest_order(worlds, sb.SEED)
    emb = sb.CachedMiniLM()
    emb.warm([d.text for d in docs])
    questions = [q for w in worlds for q in w["questions"]]
    runs: list[list[tuple[str, list[str | None]]]] = []
    with tempfile.TemporaryDirectory(prefix="sage-determinism-") as tmp:
        for k in range(2):
            sage = sb.sage_run(docs, emb, Path(tmp) / f"run{k}", user_id="teams")
            rows = []
            for q in questions:
                kw = {}
                if q.get("as_of"):
                    kw["as_of"] = sb.parse_time(q["as_of"])
                if q.get("focus"):
                    kw["focus"] = q["focus"]
                res = sage.result(q["question"], 10, **kw)
                rows.append((res.context, [sage.by_memory.get(h.id) for h in res.memories]))
            sage.mem.close()
            runs.append(rows)
    differ = [(q["id"], a, b) for q, a, b in zip(questions, *runs, strict=True) if a != b]
    print(
        f"{args.data}: {len(questions)} questions, contexts differing between two ingests: "
        f"{len(differ)} (ranked memories differing: {sum(a[1] != b[1] for _, a, b in differ)})"
    )
    for qid, a, b in differ[: args.show]:
        print(f"== {qid}")
        diff = difflib.unified_diff(a[0].splitlines(), b[0].splitlines(), lineterm="", n=1)
        print("\n".join(list(diff)[:30]))


if __name__ == "__main__":
    main()
