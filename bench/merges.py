"""Precision of entity merges, end to end, on labelled pairs written blind.

tests/data/blind/merge_pairs.jsonl holds 225 pairs of mentions (pd / pandas, PosixPath /
WindowsPath, Paris / Marseille, a misspelt company name ...), each with two or three context
sentences per side and a label: the same thing or not, and which name a careful editor keeps.

For each pair, a fresh memory (offline defaults: rule extractor, MiniLM) takes both sides'
context sentences through ``add``; then ``evolve(dry_run=True, operations=["merge"])`` runs.
The merge pass runs with the display threshold at 0, so every candidate pair the scorer does
not rule out is recorded with its confidence. The system "says same" at a threshold when entity
resolution already made the two names one node at write time, or when the pair's confidence
is at least the threshold; precision and recall are printed at the default threshold
(``EvolveConfig.merge_suggest_confidence``) and at a sweep of others. Pairs where the extractor
did not produce a node under one of the names are counted apart ("not extracted"). Other merge
suggestions at the threshold in the same small memory (between names the pair is not about)
are counted as incidental.

Splits: pairs with odd numbers are ``dev`` (what merge scoring may be tuned on), even numbers
``heldout`` (never tuned on). Run: ``.venv/bin/python bench/merges.py`` (a few minutes).
Writes bench/results/merges.json and the ``merges-table`` section of bench/README.md;
``--render`` rewrites that section from the saved results without measuring.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import RESULTS, ROOT, stamp
from sections import BENCH_README, write_section

PAIRS = ROOT / "tests" / "data" / "blind" / "merge_pairs.jsonl"
NAME = "merges-table"
COMMAND = ".venv/bin/python bench/merges.py"


def split_of(pair: dict[str, Any], first_set: bool = True) -> str:
    """``dev`` / ``heldout`` by the id's number in the first set; any other set (a sealed one
    scored once, see ``--pairs``) is one split, ``blind``."""
    if not first_set:
        return "blind"
    return "dev" if int(pair["id"].rsplit("-", 1)[1]) % 2 else "heldout"


def judge_pair(pair: dict[str, Any], embedder: Any) -> dict[str, Any]:
    from sage_memory import NotFoundError, SageConfig, SageMemory
    from sage_memory.config import EvolveConfig
    from sage_memory.store.base import name_key

    # Every candidate the scorer does not rule out is reported with its confidence, so one
    # run gives precision and recall at any display threshold (see ``says_same``).
    config = SageConfig(evolve=EvolveConfig(merge_suggest_confidence=0.0))
    with SageMemory(embedder=embedder, config=config) as mem:
        when = datetime(2026, 1, 1, tzinfo=UTC)
        said: dict[str, set[str]] = {}
        for side in ("a", "b"):
            said[side] = set()
            for text in pair[side]["context"]:
                when += timedelta(hours=1)
                said[side].add(mem.add(text, user_id="u", timestamp=when).memory_id)
        graph = mem.graph(user_id="u")
        nodes = {}
        for side in ("a", "b"):
            try:
                found = mem.find_node(pair[side]["name"], user_id="u", exact=True)
            except NotFoundError:
                nodes[side] = None
                continue
            # Two nodes may share the name (jaguar the car, jaguar the cat): each side's node
            # is the one its own sentences support.
            key = name_key(pair[side]["name"])
            named = [n for n in graph.nodes if key in {name_key(x) for x in (n.name, *n.aliases)}]
            best = max(
                [found, *named],
                key=lambda n, mids=said[side]: (len(mids & set(n.memory_ids)), n.id == found.id),
            )
            # A node none of this side's sentences support was not extracted from this side.
            nodes[side] = best if said[side] & set(best.memory_ids) else None
        out: dict[str, Any] = {"id": pair["id"], "same": pair["same"], "kind": pair["kind"]}
        if nodes["a"] is None or nodes["b"] is None:
            out["outcome"] = "not extracted"
            return out
        if nodes["a"].id == nodes["b"].id:
            out["outcome"] = "merged at write"
            return out
        report = mem.evolve(user_id="u", dry_run=True, operations=["merge"])
        ids = {nodes["a"].id, nodes["b"].id}
        ours, incidental = None, []
        for s in report.suggestions:
            if s.op != "merge":
                continue
            payload_ids = {v for v in s.payload.values() if isinstance(v, str)}
            if ids <= payload_ids:
                ours = s
            else:
                incidental.append(round(s.confidence, 4))
        out["incidental"] = incidental
        out["outcome"] = "scored" if ours is not None else "ruled out"
        if ours is not None:
            out["confidence"] = round(ours.confidence, 4)
            keep = ours.payload.get("keep")
            if pair.get("better") in ("a", "b") and isinstance(keep, str):
                out["survivor_ok"] = keep == nodes[pair["better"]].id
        return out


def says_same(row: dict[str, Any], threshold: float) -> bool | None:
    """Whether the system shows the pair as one thing at ``threshold``: merged by entity
    resolution at write time, or suggested with at least that confidence. None: not judged."""
    if row["outcome"] == "not extracted":
        return None
    if "says_same" in row:  # runs saved before the threshold sweep
        return bool(row["says_same"])
    if row["outcome"] == "merged at write":
        return True
    return row.get("confidence", -1.0) >= threshold


def tally(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    said = [(r, says_same(r, threshold)) for r in rows]
    judged = [(r, s) for r, s in said if s is not None]
    tp = sum(1 for r, s in judged if s and r["same"])
    fp = sum(1 for r, s in judged if s and not r["same"])
    fn = sum(1 for r, s in judged if not s and r["same"])
    survivors = [r["survivor_ok"] for r, s in judged if s and r["same"] and "survivor_ok" in r]
    incidental = [
        c
        for r in rows
        for c in (r.get("incidental") if isinstance(r.get("incidental"), list) else [])
        if c >= threshold
    ]
    return {
        "pairs": len(rows),
        "judged": len(judged),
        "not_extracted": sum(1 for r in rows if r["outcome"] == "not extracted"),
        "outcomes": dict(Counter(r["outcome"] for r in rows)),
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "true_merges": tp,
        "false_merges": fp,
        "survivor_right": f"{sum(survivors)}/{len(survivors)}",
        "incidental_suggestions": len(incidental),
        "false_by_kind": dict(Counter(r["kind"] for r, s in judged if s and not r["same"])),
    }


def shown_threshold() -> float:
    from sage_memory.config import EvolveConfig

    return EvolveConfig().merge_suggest_confidence


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sage_memory.embed.minilm import default_embedder

    source = Path(args.pairs).resolve()
    first = source == PAIRS.resolve()
    pairs = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    if args.split:
        pairs = [p for p in pairs if split_of(p, first) == args.split]
    if args.limit:
        pairs = pairs[: args.limit]
    embedder = default_embedder()
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for pair in pairs:
        rows[split_of(pair, first)].append(judge_pair(pair, embedder))
    threshold = shown_threshold()
    every = [r for split in rows.values() for r in split]
    return {
        "pairs": len(pairs),
        "pairs_file": str(source.relative_to(ROOT)) if source.is_relative_to(ROOT) else str(source),
        "threshold": threshold,
        "splits": {name: tally(r, threshold) for name, r in sorted(rows.items())},
        "all": tally(every, threshold),
        "sweep": {str(t): tally(every, t) for t in SWEEP},
        "rows": every,
        **stamp(),
    }


#: Display thresholds the report shows precision and recall at (both splits together).
SWEEP = (0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95)


def table(report: dict[str, Any]) -> str:
    lines = [
        "| split | pairs | judged | precision | recall | false merges | survivor right "
        "| incidental suggestions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = dict(report["splits"])
    if "all" in report:
        rows["both"] = report["all"]
    for name, t in rows.items():
        lines.append(
            f"| {name} | {t['pairs']} | {t['judged']} | {t['precision']} | {t['recall']} | "
            f"{t['false_merges']} | {t['survivor_right']} | {t['incidental_suggestions']} |"
        )
    return "\n".join(lines)


def sweep_table(report: dict[str, Any]) -> str:
    lines = [
        "| shown from confidence | precision | recall | true / false merges |",
        "|---|---|---|---|",
    ]
    for t, s in report["sweep"].items():
        mark = " (default)" if float(t) == report["threshold"] else ""
        lines.append(
            f"| {t}{mark} | {s['precision']} | {s['recall']} | "
            f"{s['true_merges']} / {s['false_merges']} |"
        )
    return "\n".join(lines)


def render(report: dict[str, Any], saved: dict[str, dict[str, Any]]) -> str:
    """The README section, from a run's report and the saved runs (no measuring)."""
    source = report.get("pairs_file", "tests/data/blind/merge_pairs.jsonl")
    seen = (
        "looked at in earlier rounds, so now development data"
        if source.endswith("merge_pairs.jsonl")
        else "sealed until this run, its first scoring"
    )
    lines = [
        f"{report['pairs']} labelled pairs written blind ({source}) by a helper who never read "
        f"the code; {seen}. Each pair's context sentences go through `add` in a fresh memory, "
        'then a dry-run merge pass. "Judged" excludes pairs where the extractor made no node under '
        "one of the names (each side's node is the one its own sentences support). The system "
        "says *same* when entity resolution made the two names one node at write time, or "
        "when the merge pass scores the pair at least the display threshold "
        f"(`EvolveConfig.merge_suggest_confidence`, {report.get('threshold', 0.55)}). "
        f"Commit {report['commit']}, {report['when']}.",
        "",
        table(report),
        "",
    ]
    every = dict(report["splits"])
    if "all" in report:
        every["both"] = report["all"]
    for name, t in every.items():
        if t["false_by_kind"]:
            lines.append(f"False merges in {name}, by kind: {t['false_by_kind']}.")
    if "sweep" in report:
        lines += [
            "",
            "Precision and recall by display threshold (both splits; write-time merges count at "
            "every threshold):",
            "",
            sweep_table(report),
        ]
    if saved:
        lines += [
            "",
            "Saved runs `before` and `after` (2026-12-01) found each side's node by name alone, "
            "so a side whose sentences made no node under the name counted as merged with the "
            "other; they are not comparable with `before_session2` (the code before this "
            "session's changes, measured the current way) and later runs. `before_session3` is "
            "the code before the log-odds merge confidence, measured with the threshold sweep; "
            "`after_session3` the code with it.",
        ]
    for name, old in saved.items():
        lines.append("")
        lines.append(f"Saved run `{name}` (commit {old['commit']}, {old['when']}):")
        lines.append("")
        lines.append(table(old))
    return "\n".join(lines) + "\n"


def saved_runs() -> dict[str, dict[str, Any]]:
    return {
        p.stem.removeprefix("merges_"): json.loads(p.read_text())
        for p in sorted(RESULTS.glob("merges_*.json"))
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--split", choices=["dev", "heldout"], help="only this split (tune on dev)")
    ap.add_argument(
        "--pairs",
        default=str(PAIRS),
        help="the pairs file (default: the first set; another set is scored as one split)",
    )
    ap.add_argument("--save-as", help="also keep this run as bench/results/merges_<NAME>.json")
    ap.add_argument("--render", action="store_true", help="only rewrite the README section")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.render:
        write_section(BENCH_README, NAME, COMMAND, render(load(), saved_runs()))
        return
    report = run(args)
    print(table(report))
    print(sweep_table(report))
    for name, t in report["splits"].items():
        print(name, t["outcomes"], "false by kind:", t["false_by_kind"])
    if args.no_write:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "merges.json").write_text(json.dumps(report, indent=2) + "\n")
    if args.save_as:
        (RESULTS / f"merges_{args.save_as}.json").write_text(json.dumps(report, indent=2) + "\n")
    write_section(BENCH_README, NAME, COMMAND, render(report, saved_runs()))


def load() -> dict[str, Any]:
    """The last run's report (bench/results/merges.json)."""
    report: dict[str, Any] = json.loads((RESULTS / "merges.json").read_text())
    return report


if __name__ == "__main__":
    main()
