"""Multi-hop retrieval over documents: HotpotQA (HippoRAG's 100-question subset).

Protocol (../shared/data/README.md): every passage is one memory "<title>: <text>" in one scope
(994 passages); for each of the 100 questions, Recall@k of its supporting passages, k = 2, 5, 10.
SageMemory runs with its offline defaults (rule extractor, MiniLM, SQLite + Chroma in a
folder); BM25, dense MiniLM and their reciprocal-rank fusion run beside it over the same texts
and vectors. Ablations switch one channel of SageMemory off on the same store.

Run: ``.venv/bin/python bench/documents.py`` (a few minutes; the passage vectors are cached
under bench/.cache/). Writes bench/results/documents.json and its section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import (
    DATA,
    GRAPH_ABLATIONS,
    CachedMiniLM,
    Doc,
    Probe,
    Tally,
    ablated,
    bm25_system,
    dense_system,
    recall_table,
    rrf_system,
    sage_run,
    save_report,
    saved_runs,
    stamp,
    timed,
)

HOTPOT = DATA / "hotpotqa_subset"
KS = (2, 5, 10)
SECTION = "## Multi-hop documents (HotpotQA subset)"
ABLATIONS: dict[str, dict[str, Any]] = {
    **GRAPH_ABLATIONS,
    "without lexical": {"lexical": 0.0},
    "without dense": {"dense": 0.0},
}


def load_hotpot(folder: Path = HOTPOT) -> tuple[list[Doc], list[Probe]]:
    corpus = json.loads((folder / "hotpotqa_corpus.json").read_text())
    docs = [Doc(title, f"{title}: {''.join(sents).strip()}") for title, sents in corpus.items()]
    probes = []
    for q in json.loads((folder / "hotpotqa_questions.json").read_text()):
        titles = frozenset(t for t, _ in q["supporting_facts"] if t in corpus)
        if titles:
            probes.append(Probe(q["question"], titles, q.get("type", "all")))
    return docs, probes


def run(args: argparse.Namespace) -> dict[str, Any]:
    docs, probes = load_hotpot()
    if args.limit:
        probes = probes[: args.limit]
    emb = CachedMiniLM()
    vecs = emb.warm([d.text for d in docs])
    tallies: dict[str, Tally] = defaultdict(lambda: Tally(KS))
    with tempfile.TemporaryDirectory(prefix="sage-docs-") as tmp:
        sage = sage_run(docs, emb, Path(tmp) / "sage", infer=not args.no_extract)
        stats = sage.mem.stats(user_id=sage.user_id)
        bm25 = bm25_system(docs)
        dense = dense_system(docs, emb, vecs)
        systems = [sage.system(), bm25, dense, rrf_system(bm25, dense)]
        k = max(KS)
        for p in probes[:3]:  # warm-up
            for s in systems:
                s.search(p.text, k)
        for p in probes:
            for s in systems:
                found, ms = timed(s.search, p.text, k)
                tallies[s.name].add(p, found, ms)
        ablation = {}
        if not args.no_ablations:
            for name, changes in ABLATIONS.items():
                t = Tally(KS)
                search = ablated(sage, changes)
                for p in probes:
                    t.add(p, search(p.text, k))
                ablation[name] = t.summary()
        for s in systems:
            s.close()
    return {
        "dataset": "HotpotQA, HippoRAG's 100-question subset (994 passages)",
        "questions": len(probes),
        "extraction": "none (infer=False)" if args.no_extract else "rule extractor",
        "ingest_s": round(sage.ingest_s, 1),
        "graph": {"nodes": stats["nodes"], "edges": stats["edges"]},
        "results": {name: t.summary() for name, t in tallies.items()},
        "ablations": ablation,
        **stamp(),
    }


def section(report: dict[str, Any]) -> str:
    lines = [
        SECTION,
        "",
        f"{report['dataset']}: {report['questions']} questions, every passage one memory in one "
        "scope, Recall@2/5/10 of the supporting passages (protocol: ../shared/data/README.md). "
        f"SageMemory: offline defaults, extraction {report['extraction']} "
        f"({report['graph']['nodes']} nodes, {report['graph']['edges']} edges, ingest "
        f"{report['ingest_s']} s). Baselines over the same passages and vectors. "
        f"Commit {report['commit']}, {report['when']}.",
        "",
        "    .venv/bin/python bench/documents.py",
        "",
        recall_table(report["results"], KS),
        "",
    ]
    saved = saved_runs("documents", _describe)
    if saved:
        lines += ["Runs kept side by side (sage R@2/5/10; graph ablations R@5):", "", *saved, ""]
    if report["ablations"]:
        lines += [
            "Ablations (same store, one channel off):",
            "",
            recall_table(
                {"sage (all parts)": report["results"]["sage"], **report["ablations"]}, KS
            ),
            "",
        ]
    return "\n".join(lines)


def _describe(d: dict[str, Any]) -> str:
    o = d["results"]["sage"]["overall"]
    text = "/".join(str(o[f"R@{k}"]) for k in KS)
    for name in GRAPH_ABLATIONS:
        if name in d.get("ablations", {}):
            text += f"; {name} R@5 {d['ablations'][name]['overall']['R@5']}"
    return text


def write_readme(report: dict[str, Any]) -> None:
    """This benchmark's section of bench/README.md, between generated-section markers."""
    from sections import BENCH_README, write_section

    write_section(
        BENCH_README, "hotpotqa-recall", ".venv/bin/python bench/documents.py", section(report)
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=0, help="first N questions only")
    ap.add_argument("--no-extract", action="store_true", help="store passages with infer=False")
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--save-as", help="also keep this run as bench/results/documents_<NAME>.json")
    args = ap.parse_args(argv)
    report = run(args)
    print(recall_table(report["results"], KS))
    for name, res in report["ablations"].items():
        print(f"{name}: {res['overall']}")
    if not args.no_write:
        save_report("documents", report, args.save_as)
        write_readme(report)


if __name__ == "__main__":
    main()
