"""Focus: the same question asked under two foci; the focused world's facts must lead.

The data (bench/data/focus/focus_worlds.json, a copy of the blind set) was written by a helper
who never read the code: near-twin worlds (same kind of project, same task and tool names,
different answers) and questions, each asked twice with identical wording, once under each
twin's name as the focus. Its shape:

    {"worlds": [{"id", "name", "twin_of", "memories": [{"id", "text", "timestamp", ...}]}],
     "questions": [{"id", "pair", "world_id", "focus", "question", "must_include": [...],
                    "must_not_lead": [...], "evidence": [memory ids], "link": ...}]}

(``link`` says how an answer memory is tied to its world: it names it, shares a world-unique
name with a memory that does ("anchored"), or neither ("unanchored": only the conversation it
came in tells). A file of worlds that carry their own ``questions`` with ``foci`` is read too.)

The twins of a pair go into one scope, so they compete; each world's memories come in as one
session (``run_id`` = the world's id), as an agent would have talked about one project at a
time. A second ingestion without sessions (one stream) shows what the session context adds.

Per case (a question under one focus), over ``search(question, limit=K)``:
- ``in context``: share of the ``must_include`` strings in the packed context (the data's own
  criterion);
- ``ranked right``: every ``must_include`` string is in the context before any
  ``must_not_lead`` string (which may be absent);
- ``lead right`` / ``lead wrong``: the first memory holds a ``must_include`` /
  ``must_not_lead`` string;
- ``evidence R@K``: share of the ``evidence`` memories among the top K memories.
Matching is case- and space-insensitive on words. Each case runs without a focus (the plain
search: one answer for both twins) and with ``focus=`` the world's name, on the same store.

Run: ``.venv/bin/python bench/focus.py`` (writes bench/results/focus.json and its section of
bench/README.md; ``--save-as first_run`` keeps a copy as bench/results/focus_first_run.json).
``--data PATH`` reads another file; ``--embedder hashing`` is quicker, for trying the script.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import HERE, RESULTS, CachedMiniLM, stamp
from sections import BENCH_README, write_section

DATA = HERE / "data" / "focus" / "focus_worlds.json"
SECTION = "## Focus (blind near-twin worlds)"
COMMAND = ".venv/bin/python bench/focus.py --save-as first_run"
K = 5
VARIANT_KEYS = ("foci", "asks", "variants")


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def contains(haystack: str, needle: str) -> bool:
    return bool(norm(needle)) and f" {norm(needle)} " in f" {norm(haystack)} "


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def load(path: Path) -> list[dict[str, Any]]:
    """Scopes to ingest, each {id, worlds: [{id, memories: [{id, text, timestamp?}]}],
    cases: [{question, focus, must_include, must_not_lead, evidence, link}]}."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    worlds = raw.get("worlds", []) if isinstance(raw, Mapping) else raw
    top = raw.get("questions") if isinstance(raw, Mapping) else None
    out: dict[str, dict[str, Any]] = {}
    group_of: dict[str, str] = {}
    for n, w in enumerate(worlds):
        wid = str(w.get("id", n))
        twin = w.get("twin_of")
        key = "+".join(sorted([wid, str(twin)])) if twin else wid
        group_of[wid] = key
        memories = []
        for i, m in enumerate(w.get("memories", [])):
            item = {"text": m} if isinstance(m, str) else dict(m)
            item.setdefault("id", f"{wid}:{i}")
            if str(item.get("text", "")).strip():
                memories.append(item)
        group = out.setdefault(key, {"id": key, "worlds": [], "cases": []})
        group["worlds"].append({"id": wid, "memories": memories})
        for q in w.get("questions", []) if top is None else []:
            variants = next((q[k] for k in VARIANT_KEYS if isinstance(q.get(k), list)), [q])
            group["cases"] += [case(q, v) for v in variants]
    for q in top or []:
        key = group_of.get(str(q.get("world_id")))
        if key is not None:
            out[key]["cases"].append(case(q, q))
    for group in out.values():
        group["cases"] = [c for c in group["cases"] if c["question"].strip() and c["focus"]]
    return list(out.values())


def case(q: Mapping[str, Any], v: Mapping[str, Any]) -> dict[str, Any]:
    focus = strings(v.get("focus"))
    return {
        "question": str(q.get("question") or q.get("text") or ""),
        "focus": focus[0] if len(focus) == 1 else focus,
        "must_include": strings(v.get("must_include")),
        "must_not_lead": strings(v.get("must_not_lead")),
        "evidence": strings(v.get("evidence")),
        "link": str(v.get("link") or "all"),
    }


def when(item: Mapping[str, Any]) -> datetime | None:
    value = item.get("timestamp") or item.get("when") or item.get("date")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def first_at(text: str, needles: Iterable[str]) -> int | None:
    spots = [f" {norm(text)} ".find(f" {norm(n)} ") for n in needles if norm(n)]
    found = [p for p in spots if p >= 0]
    return min(found) if found else None


def score(res: Any, c: Mapping[str, Any], ids: Mapping[str, str]) -> dict[str, float]:
    texts = [h.text for h in res.memories[:K]]
    first = texts[0] if texts else ""
    must, never = c["must_include"], c["must_not_lead"]
    nan = float("nan")
    in_ctx = [contains(res.context, s) for s in must]
    wrong = first_at(res.context, never)
    last_right = max(
        (p for s in must if (p := first_at(res.context, [s])) is not None), default=None
    )
    found = {ids.get(h.id) for h in res.memories[:K]}
    evidence = c["evidence"]
    return {
        "in_context": sum(in_ctx) / len(in_ctx) if must else nan,
        "ranked_right": (
            float(
                all(in_ctx) and (wrong is None or (last_right is not None and last_right < wrong))
            )
            if must
            else nan
        ),
        "lead_right": float(any(contains(first, s) for s in must)) if must else nan,
        "lead_wrong": float(any(contains(first, s) for s in never)) if never else nan,
        "evidence": len(set(evidence) & found) / len(evidence) if evidence else nan,
    }


def mean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]  # NaN: the case had nothing to check
    return round(100 * statistics.fmean(kept), 1) if kept else float("nan")


METRICS = {
    "in context": "in_context",
    "ranked right": "ranked_right",
    "lead right": "lead_right",
    "lead wrong": "lead_wrong",
    f"evidence R@{K}": "evidence",
}


def run_mode(groups: list[dict[str, Any]], emb: Any, sessions: bool) -> dict[str, Any]:
    """Ingest every group (with or without sessions) and ask every case both ways."""
    from sage_memory import SageMemory

    rows: list[dict[str, Any]] = []
    ms: dict[str, list[float]] = {"without focus": [], "with focus": []}
    unresolved = 0
    with SageMemory(embedder=emb) as mem:
        for g in groups:
            user = f"pair-{g['id']}"
            ids: dict[str, str] = {}
            for w in g["worlds"]:
                items = [
                    {"text": m["text"], **({"timestamp": t} if (t := when(m)) else {})}
                    for m in w["memories"]
                ]
                run = w["id"] if sessions else None
                added = mem.add_many(items, user_id=user, run_id=run)
                ids.update(
                    (r.memory_id, m["id"]) for r, m in zip(added, w["memories"], strict=True)
                )
            for c in g["cases"]:
                row: dict[str, Any] = {
                    "group": g["id"],
                    "question": c["question"],
                    "link": c["link"],
                }
                for label, focus in (("without focus", ()), ("with focus", c["focus"])):
                    started = time.perf_counter()
                    res = mem.search(c["question"], user_id=user, limit=K, focus=focus)
                    ms[label].append((time.perf_counter() - started) * 1000)
                    row[label] = score(res, c, ids)
                    if label == "with focus" and not res.focus:
                        unresolved += 1
                rows.append(row)
    links = sorted({r["link"] for r in rows})
    summary: dict[str, Any] = {}
    for label in ("without focus", "with focus"):
        summary[label] = {name: mean(r[label][key] for r in rows) for name, key in METRICS.items()}
        summary[label]["search ms p50"] = (
            round(statistics.median(ms[label]), 1) if ms[label] else None
        )
        summary[label]["by link"] = {
            link: {
                "n": sum(r["link"] == link for r in rows),
                "in context": mean(r[label]["in_context"] for r in rows if r["link"] == link),
                "ranked right": mean(r[label]["ranked_right"] for r in rows if r["link"] == link),
            }
            for link in links
        }
    return {"summary": summary, "focus_not_found": unresolved, "per_case": rows}


def run(args: argparse.Namespace) -> dict[str, Any]:
    groups = load(Path(args.data))
    emb: Any = CachedMiniLM() if args.embedder == "minilm" else args.embedder
    if isinstance(emb, CachedMiniLM):
        emb.warm([m["text"] for g in groups for w in g["worlds"] for m in w["memories"]])
    data = Path(args.data).resolve()
    return {
        **stamp(),
        "data": str(data.relative_to(HERE.parent))
        if data.is_relative_to(HERE.parent)
        else str(data),
        "embedder": args.embedder,
        "groups": len(groups),
        "worlds": sum(len(g["worlds"]) for g in groups),
        "cases": sum(len(g["cases"]) for g in groups),
        "k": K,
        "modes": {
            "sessions": run_mode(groups, emb, sessions=True),
            "one stream": run_mode(groups, emb, sessions=False),
        },
    }


def table(report: Mapping[str, Any]) -> str:
    cols = [*METRICS, "search ms p50"]
    lines = [
        "| ingestion | search | " + " | ".join(cols) + " |",
        "|---|---|" + "---|" * len(cols),
    ]
    for mode, res in report["modes"].items():
        for label, row in res["summary"].items():
            cells = " | ".join(str(row[c]) for c in cols)
            lines.append(f"| {mode} | {label} | {cells} |")
    return "\n".join(lines)


def link_table(report: Mapping[str, Any]) -> str:
    res = report["modes"]["sessions"]["summary"]
    links = list(res["with focus"]["by link"])
    lines = [
        "| answer memory | n | in context (no focus / focus) | ranked right (no focus / focus) |",
        "|---|---|---|---|",
    ]
    for link in links:
        a, b = res["without focus"]["by link"][link], res["with focus"]["by link"][link]
        lines.append(
            f"| {link} | {b['n']} | {a['in context']} / {b['in context']} "
            f"| {a['ranked right']} / {b['ranked right']} |"
        )
    return "\n".join(lines)


def section(report: Mapping[str, Any], title: str) -> str:
    missing = {m: r["focus_not_found"] for m, r in report["modes"].items()}
    return (
        f"{title}. Generated by `bench/focus.py` at {report['when']} (commit {report['commit']}) "
        f"on `{report['data']}`: {report['worlds']} worlds in {report['groups']} twin pairs, "
        f"{report['cases']} cases (a question under one focus; each question is asked under "
        f"both twins' names); embedder {report['embedder']}, rule extractor. The data was "
        "written by a helper who never read the code; nothing was tuned on it (its layout and "
        "its `about` rules were read to write this script and to ingest each world as a "
        "session; no memory, question or answer text was read). Percentages "
        "over cases: `in context`: share of the `must_include` strings in the packed context; "
        "`ranked right`: all of them, before any `must_not_lead` string (the twin's answer); "
        "`lead right` / `lead wrong`: the first memory holds a `must_include` / "
        f"`must_not_lead` string; `evidence R@{K}`: share of the evidence memories in the top "
        f"{K}. Ingestion `sessions`: each world's memories as one run (run_id); `one stream`: "
        f"no run ids. Focus names matching nothing: {missing}. Latency on a shared 2-core "
        "machine, side by side in one run.\n\n"
        + table(report)
        + "\n\nBy how the answer memory is tied to its world (ingestion `sessions`):\n\n"
        + link_table(report)
        + "\n"
    )


def publish(name: str, command: str, heading: str, body: str) -> None:
    """Write ``body`` between the markers of section ``name`` under ``heading`` in
    bench/README.md (bench/sections.py), adding the heading the first time."""
    if f"<!-- {name}:start" not in BENCH_README.read_text(encoding="utf-8"):
        text = BENCH_README.read_text(encoding="utf-8").rstrip()
        BENCH_README.write_text(f"{text}\n\n{heading}\n", encoding="utf-8")
    write_section(BENCH_README, name, command, body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hashing")
    parser.add_argument("--save-as", help="also write bench/results/focus_<NAME>.json")
    parser.add_argument(
        "--title",
        default="A later run",
        help="the README section's first words (the first run used 'First run, as it came')",
    )
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument(
        "--readme-only",
        metavar="RESULTS",
        help="rewrite the section from a results file (e.g. bench/results/focus_first_run.json)",
    )
    args = parser.parse_args()
    if args.readme_only:
        report = json.loads(Path(args.readme_only).read_text())
        publish("focus-table", COMMAND, SECTION, section(report, args.title))
        return
    report = run(args)
    RESULTS.mkdir(exist_ok=True)
    body = json.dumps(report, indent=2)
    (RESULTS / "focus.json").write_text(body + "\n")
    if args.save_as:
        (RESULTS / f"focus_{args.save_as}.json").write_text(body + "\n")
    print(table(report))
    if not args.no_readme:
        publish("focus-table", COMMAND, SECTION, section(report, args.title))


if __name__ == "__main__":
    main()
