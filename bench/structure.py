"""Structure questions over many near-twin worlds in one scope.

The data (bench/data/structure/*.json) was written by helpers who had not read the extractor or
the retriever, from the format in bench/data/structure/SPEC.md: small team or family histories
(plans, blockers, requirements, taxonomies, causes, changing facts), in near-twin pairs that
share task and tool names, a third of them ingested in shuffled order. Every world goes into
ONE scope, so twins compete.

Per question:
- ``answer in context``: every answer string (mode "all") or one of them ("any") appears in
  ``search(...).context`` (case- and space-insensitive);
- ``evidence R@10``: share of the evidence memories among the top 10 memory hits;
- ``current first`` (current_value and as_of questions): the first memory hit that states any
  of the values (current or former) states the current one.
Baselines (BM25, dense MiniLM, their RRF fusion) get the same evidence recall, and "answer in
context" over the text of their top 10 memories.

Run: ``.venv/bin/python bench/structure.py`` (writes bench/results/structure.json and its
section of bench/README.md; ``--save-as first-run`` keeps a copy of a run's results under its
own name; ``--misses prerequisites,taxonomy_levels`` prints each failed question of those
types with where its chain breaks in the graph: see structure_misses.py).
"""

from __future__ import annotations

import argparse
import inspect
import json
import random
import re
import sys
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import (
    GRAPH_ABLATIONS,
    HERE,
    RESULTS,
    CachedMiniLM,
    Doc,
    Probe,
    Tally,
    ablated_results,
    bm25_system,
    dense_system,
    percentiles,
    rrf_system,
    sage_run,
    stamp,
    write_section,
)
from sections import marked
from structure_misses import Misses

WORLDS = HERE / "data" / "structure"
SECTION = "## Structure questions (blind worlds)"
K = 10
SEED = 20261201


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def contains(haystack: str, needle: str) -> bool:
    return f" {norm(needle)} " in f" {norm(haystack)} "


def answered(text: str, q: dict[str, Any]) -> bool:
    answers = [a for a in q["answers"] if a.strip()]
    if not answers:
        return False
    hits = [contains(text, a) for a in answers]
    return all(hits) if q.get("mode", "all") == "all" else any(hits)


#: Written dates a world file may give for ``as_of`` (the SPEC does not fix a format; ISO first).
DATE_FORMATS = ("%B %d, %Y", "%d %B %Y", "%b %d, %Y", "%d %b %Y")


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        pass
    for fmt in DATE_FORMATS:  # a date as written: the day's start, like an ISO date
        try:
            return datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
    raise ValueError(f"as_of {value!r}: not ISO-8601 nor a date like 'March 7, 2026'")


def load_worlds(folder: Path = WORLDS) -> list[dict[str, Any]]:
    worlds: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        items = json.loads(path.read_text())
        # a set may keep other JSON beside its worlds (a writer's list of names): only
        # world objects count
        worlds.extend(
            w for w in items if isinstance(w, dict) and "memories" in w and "questions" in w
        )
    return worlds


def ingest_order(worlds: list[dict[str, Any]], seed: int) -> list[Doc]:
    """Worlds in a random order; inside a world, time order unless it is marked shuffled."""
    rng = random.Random(seed)
    order = list(worlds)
    rng.shuffle(order)
    docs: list[Doc] = []
    for w in order:
        mems = sorted(w["memories"], key=lambda m: m["timestamp"])
        if w.get("shuffled"):
            rng.shuffle(mems)
        docs.extend(Doc(m["id"], m["text"], parse_time(m["timestamp"])) for m in mems)
    return docs


def first_value(texts: list[str], q: dict[str, Any]) -> str | None:
    values = [v for v in [q.get("current"), *q.get("former", [])] if v]
    for text in texts:
        for v in values:
            if contains(text, v):
                return v
    return None


def miss_report(q: dict[str, Any], found: list[str], text_of: dict[str, str]) -> str:
    """One failed current-value question: the hits that state a value, and why it failed."""
    values = [v for v in [q.get("current"), *q.get("former", [])] if v]
    lines = [f"MISS [{q['type']}] {q['question']!r} as_of={q.get('as_of')}"]
    lines.append(f"  current={q['current']!r} former={q.get('former', [])!r}")
    at = {i: r for r, i in enumerate(found)}
    # the evidence memories stating the current value (a twin world may state it too)
    evidence = set(q.get("evidence") or text_of)
    current_ids = [i for i in text_of if i in evidence and contains(text_of[i], q["current"])]
    ranks = sorted(at[i] for i in current_ids if i in at)
    if not ranks:
        why = "no hit states the current value (its memory is outside the top 10)"
    else:
        why = f"the current value's first hit is at rank {ranks[0] + 1}, below a former value's"
    lines.append(f"  why: {why}; evidence={sorted(q.get('evidence') or [])}")
    for r, i in enumerate(found):
        said = [v for v in values if contains(text_of[i], v)]
        tag = ("CUR " if q["current"] in said else "OLD ") if said else "    "
        ev = "*" if i in (q.get("evidence") or []) else " "
        lines.append(f"  {r + 1:2d} {tag}{ev}{i}: {text_of[i][:150]!r}")
    for i in current_ids:
        if i not in at:
            lines.append(f"  -- current stated by {i} (not in top {K}): {text_of[i][:150]!r}")
    return "\n".join(lines)


def _current_first(
    q: dict[str, Any], found: list[str], text_of: dict[str, str], misses: bool
) -> bool:
    """Whether the first hit stating a value states the current one (printing a miss)."""
    ok = first_value([text_of[i] for i in found], q) == q["current"]
    if misses and not ok:
        print(miss_report(q, found, text_of))
    return ok


def run(args: argparse.Namespace) -> dict[str, Any]:
    worlds = load_worlds(Path(args.data))
    docs = ingest_order(worlds, args.seed)
    text_of = {d.id: d.text for d in docs}
    questions = [q for w in worlds for q in w["questions"]]
    world_of = {q["id"]: w.get("world_id", "?") for w in worlds for q in w["questions"]}
    emb = CachedMiniLM()
    vecs = emb.warm([d.text for d in docs])
    by_type: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    recall: dict[str, Tally] = defaultdict(lambda: Tally((K,)))
    current: dict[str, list[bool]] = defaultdict(list)
    latency: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sage-structure-") as tmp:
        sage = sage_run(docs, emb, Path(tmp) / "sage", user_id="teams")
        stats = sage.mem.stats(user_id="teams")
        takes_focus = "focus" in inspect.signature(sage.mem.search).parameters
        bm25 = bm25_system(docs)
        dense = dense_system(docs, emb, vecs)
        baselines = [bm25, dense, rrf_system(bm25, dense)]
        misses = Misses(sage.mem, "teams", args.misses)
        import time

        for q in questions:
            evidence = frozenset(q.get("evidence") or [])
            probe = Probe(q["question"], evidence, q["type"]) if evidence else None
            kw: dict[str, Any] = {}
            if q.get("as_of"):
                kw["as_of"] = parse_time(q["as_of"])
            if q.get("focus") and takes_focus:
                kw["focus"] = q["focus"]
            t0 = time.perf_counter()
            res = sage.result(q["question"], K, **kw)
            latency.append((time.perf_counter() - t0) * 1000)
            found = [sage.by_memory[h.id] for h in res.memories if h.id in sage.by_memory]
            ok = answered(res.context, q)
            by_type["sage"][q["type"]].append(ok)
            misses.note(q, ok, res.context, world_of[q["id"]])
            if probe:
                recall["sage"].add(probe, found)
            if q.get("current"):
                current["sage"].append(_current_first(q, found, text_of, q["type"] in args.misses))
            for s in baselines:
                top = s.search(q["question"], K)
                by_type[s.name][q["type"]].append(answered("\n".join(text_of[i] for i in top), q))
                if probe:
                    recall[s.name].add(probe, top)
                if q.get("current"):
                    current[s.name].append(
                        first_value([text_of[i] for i in top], q) == q["current"]
                    )
        misses.summary()
        ablations: dict[str, dict[str, Any]] = {}
        if not args.no_ablations:
            for name, changes in GRAPH_ABLATIONS.items():
                search = ablated_results(sage, changes)
                hits: list[bool] = []
                cur: list[bool] = []
                t = Tally((K,))
                for q in questions:
                    at = parse_time(q["as_of"]) if q.get("as_of") else None
                    res = search(q["question"], K, as_of=at)
                    found = [sage.by_memory[h.id] for h in res.memories if h.id in sage.by_memory]
                    hits.append(answered(res.context, q))
                    if q.get("evidence"):
                        t.add(Probe(q["question"], frozenset(q["evidence"]), q["type"]), found)
                    if q.get("current"):
                        cur.append(first_value([text_of[i] for i in found], q) == q["current"])
                ablations[name] = {
                    "answer_in_context_pct": round(100 * sum(hits) / len(hits), 1),
                    "evidence_R@10": t.summary()["overall"]["R@10"],
                    "current_first_pct": round(100 * sum(cur) / max(1, len(cur)), 1),
                }
        sage.mem.close()
    systems: dict[str, Any] = {}
    for name, types in by_type.items():
        flat = [x for v in types.values() for x in v]
        systems[name] = {
            "answer_in_context_pct": round(100 * sum(flat) / len(flat), 1),
            "evidence_R@10": recall[name].summary()["overall"]["R@10"],
            "current_first_pct": round(100 * sum(current[name]) / max(1, len(current[name])), 1),
            "current_first_n": len(current[name]),
            "by_type": {t: round(100 * sum(v) / len(v), 1) for t, v in sorted(types.items())},
        }
    return {
        "worlds": len(worlds),
        "memories": len(docs),
        "questions": len(questions),
        "graph": {"nodes": stats["nodes"], "edges": stats["edges"]},
        "ingest_s": round(sage.ingest_s, 1),
        "focus_passed": takes_focus,
        "latency_ms": percentiles(latency),
        "results": systems,
        "ablations": ablations,
        "data": _shown(Path(args.data)),
        "primary": Path(args.data).resolve() == WORLDS.resolve(),
        **stamp(),
    }


def _shown(path: Path) -> str:
    """The data folder as the README shows it: relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(HERE.parent))
    except ValueError:
        return str(path)


def tables(report: dict[str, Any]) -> str:
    res = report["results"]
    rows = [
        "| system | answer in context | evidence R@10 | current value first |",
        "|---|---|---|---|",
    ]
    for name, r in res.items():
        rows.append(
            f"| {name} | {r['answer_in_context_pct']}% | {r['evidence_R@10']} | "
            f"{r['current_first_pct']}% of {r['current_first_n']} |"
        )
    types = sorted({t for r in res.values() for t in r["by_type"]})
    rows += ["", "Answer in context by question type:", ""]
    rows.append("| type | " + " | ".join(res) + " |")
    rows.append("|---|" + "---|" * len(res))
    for t in types:
        rows.append(f"| {t} | " + " | ".join(f"{r['by_type'].get(t, '-')}" for r in res.values()))
    return "\n".join(rows)


def section(
    report: dict[str, Any],
    saved: dict[str, dict[str, Any]],
    heading: str = SECTION,
    marker: str = "structure-worlds",
) -> str:
    data = report.get("data", "bench/data/structure")
    command = ".venv/bin/python bench/structure.py" + (
        "" if heading == SECTION else f" --data {data} --save-as NAME"
    )
    lines = [
        f"{report['worlds']} worlds ({report['memories']} memories, {report['questions']} "
        f"questions) in one scope, written blind ({data}/). SageMemory: offline "
        f"defaults ({report['graph']['nodes']} nodes, {report['graph']['edges']} edges; search "
        f"p50 {report['latency_ms']['p50']} ms, p95 {report['latency_ms']['p95']} ms); focus "
        f"given to search: {'yes' if report['focus_passed'] else 'no (not supported)'}. Commit "
        f"{report['commit']}, {report['when']}.",
        "",
        "    " + command,
        "",
        tables(report),
        "",
    ]
    if report.get("ablations"):
        lines += [
            "Ablations (same store and questions, one part changed; focus not passed):",
            "",
            "| variant | answer in context | evidence R@10 | current value first |",
            "|---|---|---|---|",
        ]
        for name, r in report["ablations"].items():
            lines.append(
                f"| {name} | {r['answer_in_context_pct']}% | {r['evidence_R@10']} | "
                f"{r['current_first_pct']}% |"
            )
        lines.append("")
    for name, old in saved.items():
        s = old["results"]["sage"]
        lines.append(
            f"Saved run `{name}` (commit {old['commit']}, {old['when']}): sage answer in context "
            f"{s['answer_in_context_pct']}%, evidence R@10 {s['evidence_R@10']}, current first "
            f"{s['current_first_pct']}%."
        )
    return marked(heading, marker, command, "\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(WORLDS))
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--save-as", help="also keep this run as bench/results/structure_<NAME>.json")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument(
        "--misses",
        type=lambda v: [t for t in v.split(",") if t],
        default=[],
        metavar="TYPE[,TYPE]",
        help="print each failed question of these types: its answers, the context's structure\n"
        "section and where the chain breaks in the graph (see structure_misses.py); for\n"
        "current_value and as_of, its top hits and why the current value did not lead",
    )
    args = ap.parse_args(argv)
    report = run(args)
    print(tables(report))
    for name, res in report["ablations"].items():
        print(f"{name}: {res}")
    if args.no_write:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=2) + "\n"
    if not report["primary"]:
        # Another world set (a sealed one scored once): its own result file and section, so
        # the development worlds' figures and their saved runs stay as they are.
        name = args.save_as or Path(args.data).name
        (RESULTS / f"structure-other_{name}.json").write_text(text)
        heading = f"## Structure questions, other worlds: `{name}`"
        marker = "structure-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        write_section(heading, section(report, {}, heading, marker))
        return
    (RESULTS / "structure.json").write_text(text)
    if args.save_as:
        (RESULTS / f"structure_{args.save_as}.json").write_text(text)
    saved = {
        p.stem.removeprefix("structure_"): json.loads(p.read_text())
        for p in sorted(RESULTS.glob("structure_*.json"))
    }
    write_section(SECTION, section(report, saved))


if __name__ == "__main__":
    main()
