"""Precision of latent-association suggestions on small labelled graphs written blind.

bench/data/latent/latent_pairs.jsonl holds one small graph per line, written by a helper who
never read the code: ``{"id", "graph": [[src, REL, dst], ...], "a", "b", "label", "why"}``.
``label`` says whether a careful reader would link ``a`` and ``b`` (not linked in the graph).

For each line, a fresh in-memory SageMemory (offline defaults: MiniLM names) gets the graph
through the public ``add_graph`` (one call per triple), then
``evolve(dry_run=True, operations=["suggest_links"])`` runs. The system "says linked" when one
of the suggestions joins the nodes named ``a`` and ``b``. Suggestions between other nodes are
counted apart (they are not labelled). Nothing here is tuned on the file: the first run is kept
as it came (``--save-as first_run``).

Run: ``.venv/bin/python bench/latent.py [--data FILE] [--save-as NAME]``. Writes
bench/results/latent.json (and latent_<NAME>.json) and its section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import RESULTS, ROOT, stamp
from sections import BENCH_README
from sections import write_section as write_marked

DATA = ROOT / "bench" / "data" / "latent" / "latent_pairs.jsonl"
SECTION = "## Latent associations (blind graphs)"


def build(mem: Any, graph: list[list[str]]) -> None:
    """Write the triples through the public API, one small memory each."""
    from sage_memory.types import EdgeSpec, NodeSpec

    for src, rel, dst in graph:
        mem.add_graph(
            f"{src} {rel} {dst}",
            nodes=[NodeSpec("s", src), NodeSpec("d", dst)],
            edges=[EdgeSpec("s", "d", rel)],
            user_id="u",
        )


def judge(item: dict[str, Any], embedder: Any) -> dict[str, Any]:
    from sage_memory import NotFoundError, SageMemory

    out: dict[str, Any] = {"id": item["id"], "label": bool(item["label"])}
    with SageMemory(embedder=embedder) as mem:
        try:
            build(mem, item["graph"])
        except Exception as exc:  # a graph the API refuses is reported, not skipped silently
            out.update(outcome="not built", error=f"{type(exc).__name__}: {exc}")
            return out
        try:
            a = mem.find_node(item["a"], user_id="u", exact=True)
            b = mem.find_node(item["b"], user_id="u", exact=True)
        except NotFoundError as exc:
            out.update(outcome="node missing", error=str(exc))
            return out
        report = mem.evolve(user_id="u", dry_run=True, operations=["suggest_links"])
        links = [s for s in report.suggestions if s.op == "suggest_links"]
        ours = [s for s in links if {s.payload.get("a"), s.payload.get("b")} == {a.id, b.id}]
        out["says_linked"] = bool(ours)
        out["other_suggestions"] = len(links) - len(ours)
        out["outcome"] = "suggested" if ours else "not suggested"
        if ours:
            out["confidence"] = ours[0].confidence
            out["evidence"] = ours[0].evidence
    return out


def tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [r for r in rows if "says_linked" in r]
    tp = sum(1 for r in judged if r["says_linked"] and r["label"])
    fp = sum(1 for r in judged if r["says_linked"] and not r["label"])
    fn = sum(1 for r in judged if not r["says_linked"] and r["label"])
    return {
        "items": len(rows),
        "judged": len(judged),
        "positives": sum(1 for r in judged if r["label"]),
        "outcomes": dict(Counter(r["outcome"] for r in rows)),
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "true_links": tp,
        "false_links": fp,
        "other_suggestions": sum(r.get("other_suggestions", 0) for r in judged),
    }


def run(data: Path, limit: int) -> dict[str, Any]:
    from sage_memory.embed.minilm import default_embedder

    items = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    if limit:
        items = items[:limit]
    embedder = default_embedder()
    rows = [judge(item, embedder) for item in items]
    return {"data": str(data.relative_to(ROOT)) if data.is_relative_to(ROOT) else str(data),
            "summary": tally(rows), "rows": rows, **stamp()}  # fmt: skip


def table(report: dict[str, Any]) -> str:
    t = report["summary"]
    return "\n".join(
        [
            "| items | judged | positives | precision | recall | false links "
            "| suggestions between other nodes |",
            "|---|---|---|---|---|---|---|",
            f"| {t['items']} | {t['judged']} | {t['positives']} | {t['precision']} | "
            f"{t['recall']} | {t['false_links']} | {t['other_suggestions']} |",
        ]
    )


def section(report: dict[str, Any], saved: dict[str, dict[str, Any]]) -> str:
    lines = [
        SECTION,
        "",
        f"Small labelled graphs written by a helper who never read the code ({report['data']});"
        " each graph goes in through `add_graph`, then a dry-run `suggest_links` pass; a pair"
        " counts as suggested when a suggestion joins its two nodes. Commit "
        f"{report['commit']}, {report['when']}.",
        "",
        "    .venv/bin/python bench/latent.py",
        "",
        table(report),
    ]
    outcomes = report["summary"]["outcomes"]
    lines += ["", f"Outcomes: {outcomes}."]
    for name, old in saved.items():
        lines += [
            "",
            f"Saved run `{name}` (commit {old['commit']}, {old['when']}):",
            "",
            table(old),
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--save-as", help="also keep this run as bench/results/latent_<NAME>.json")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="only rewrite the README section from saved results",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        publish(json.loads((RESULTS / "latent.json").read_text()))
        return
    report = run(args.data.resolve(), args.limit)
    print(table(report))
    print("outcomes:", report["summary"]["outcomes"])
    if args.no_write:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latent.json").write_text(json.dumps(report, indent=2) + "\n")
    if args.save_as:
        (RESULTS / f"latent_{args.save_as}.json").write_text(json.dumps(report, indent=2) + "\n")
    publish(report)


def publish(report: dict[str, Any]) -> None:
    """The README section, between markers naming this script (bench/sections.py)."""
    saved = {
        p.stem.removeprefix("latent_"): json.loads(p.read_text())
        for p in sorted(RESULTS.glob("latent_*.json"))
    }
    write_marked(BENCH_README, "latent", "bench/latent.py", section(report, saved))


if __name__ == "__main__":
    main()
