"""Write-time salience on LoCoMo dev: graph size and evidence recall with and without it.

Same protocol as bench/locomo.py (every turn one memory, one store per conversation, evidence
Recall@k over the questions of categories 1-4), run once per variant over the same turns and
the same cached MiniLM vectors:

- ``off``: no graph gate and no ranking prior (``graph_min_salience=0``,
  ``salience_prior=0``): every turn is extracted, as before salience existed;
- ``default``: the defaults: turns scoring below ``ExtractConfig.graph_min_salience`` make no
  nodes or edges, and the small salience prior counts in ranking;
- ``default + index gate``: also ``min_salience={"knowledge": 0.1}``: such turns are stored
  archived, out of search.

It prints (and writes) nodes, edges, how many turns fell under the gate, the spread of the
scores, and recall. Run: ``.venv/bin/python bench/salience.py`` (several minutes). Writes
bench/results/salience.json and its section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import (
    RESULTS,
    CachedMiniLM,
    Doc,
    Probe,
    Tally,
    ablated,
    sage_run,
    stamp,
)
from locomo import CATEGORIES, DATA, load
from sections import BENCH_README
from sections import write_section as write_marked

SECTION = "## Write-time salience (LoCoMo dev)"
KS = (5, 10, 20)


def variants() -> dict[str, Any]:
    from sage_memory.config import ExtractConfig, SageConfig

    return {
        "off": (ExtractConfig(graph_min_salience=0.0), 0.0),
        "default": (ExtractConfig(), None),
        "default + index gate": (ExtractConfig(min_salience={"knowledge": 0.1}), None),
    }, SageConfig


def run_variant(convs: list[Any], emb: CachedMiniLM, extract: Any, prior: float | None) -> dict:
    from sage_memory.config import SageConfig

    tally = Tally(KS)
    nodes = edges = memories = under_gate = archived = 0
    buckets: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="sage-salience-") as tmp:
        for conv in convs:
            docs = [Doc(t.dia_id, t.text, t.when) for t in conv.turns]
            emb.warm([d.text for d in docs])
            run = sage_run(docs, emb, Path(tmp) / conv.sample_id, user_id=conv.sample_id,
                           config=SageConfig(extract=extract))  # fmt: skip
            mem = run.mem
            # the "off" variant also drops the ranking prior (same store, same queries)
            search = run.search if prior is None else ablated(run, {"salience_prior": prior})
            stats = mem.stats(user_id=conv.sample_id)
            nodes += stats["nodes"]
            edges += stats["edges"]
            for m in mem.get_all(user_id=conv.sample_id, include_archived=True, limit=None):
                memories += 1
                under_gate += m.salience < extract.graph_min_salience
                archived += m.archived
                buckets[f"{min(int(m.salience * 10), 9) / 10:.1f}"] += 1
            for q in conv.questions:
                probe = Probe(q.text, q.evidence, CATEGORIES[q.category])
                tally.add(probe, search(q.text, max(KS)))
            mem.close()
    return {
        "memories": memories,
        "nodes": nodes,
        "edges": edges,
        "below_graph_gate": under_gate,
        "archived": archived,
        "salience_histogram": dict(sorted(buckets.items())),
        "recall": tally.summary(),
    }


def table(report: dict[str, Any]) -> str:
    lines = [
        "| variant | memories | nodes | edges | no graph (small talk) | archived "
        "| overall R@5/10/20 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, v in report["variants"].items():
        r = v["recall"]["overall"]
        lines.append(
            f"| {name} | {v['memories']} | {v['nodes']} | {v['edges']} | {v['below_graph_gate']}"
            f" | {v['archived']} | {r['R@5']}/{r['R@10']}/{r['R@20']} |"
        )
    return "\n".join(lines)


def section(report: dict[str, Any]) -> str:
    hist = report["variants"]["default"]["salience_histogram"]
    return "\n".join(
        [
            SECTION,
            "",
            "LoCoMo dev turns, one memory each (bench/locomo.py's protocol), offline defaults; "
            "`off` has no graph gate and no salience prior, `default` is the shipped "
            "configuration, `default + index gate` adds `min_salience={'knowledge': 0.1}`. "
            f"Commit {report['commit']}, {report['when']}, on a shared 2-core machine.",
            "",
            "    .venv/bin/python bench/salience.py",
            "",
            table(report),
            "",
            "Write-time salience of the turns (default variant), by tenth: "
            + ", ".join(f"{k}: {n}" for k, n in hist.items())
            + ".",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--conversations", nargs="*", help="only these sample ids")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="only rewrite the README section from saved results",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        publish(json.loads((RESULTS / "salience.json").read_text()))
        return
    convs = load(Path(args.data))
    if args.conversations:
        convs = [c for c in convs if c.sample_id in set(args.conversations)]
    emb = CachedMiniLM()
    found, _ = variants()
    report: dict[str, Any] = {"variants": {}, **stamp()}
    for name, (extract, prior) in found.items():
        report["variants"][name] = run_variant(convs, emb, extract, prior)
        print(name, {k: v for k, v in report["variants"][name].items() if k != "recall"},
              report["variants"][name]["recall"]["overall"], flush=True)  # fmt: skip
    print(table(report))
    if args.no_write:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "salience.json").write_text(json.dumps(report, indent=2) + "\n")
    publish(report)


def publish(report: dict[str, Any]) -> None:
    """The README section, between markers naming this script (bench/sections.py)."""
    write_marked(BENCH_README, "salience", "bench/salience.py", section(report))


if __name__ == "__main__":
    main()
