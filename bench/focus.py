"""Focus: the same question asked under two foci; the focused world's facts must lead.

The data (bench/data/focus/focus_worlds.json) is written by a helper who never read the code
(blind): worlds, each with its memories (near-twin projects, tasks or customers whose details
share names) and questions, each asked under two foci with what must come back
(``must_include``) and what must not come first (``must_not_lead``). Expected shape:

    {"worlds": [{"id": "w1",
                 "memories": ["text", ...] | [{"text": "...", "timestamp": "...?"}, ...],
                 "questions": [{"question": "...",
                                "foci": [{"focus": "...", "must_include": ["..."],
                                          "must_not_lead": ["..."]}, ...]}]}]}

(a top-level list of worlds, and ``asks`` / ``variants`` for ``foci``, are read too; a
question with ``focus`` / ``must_include`` of its own is one case.) Each world is ingested
into a scope of its own with the offline defaults (rule extractor, MiniLM).

Per case (a question under one focus), over the memory hits of ``search(question,
limit=K)``:
- ``lead right``: the first memory contains a ``must_include`` string;
- ``lead clean``: the first memory contains no ``must_not_lead`` string;
- ``included@K``: share of the ``must_include`` strings found in the top K memories;
- ``in context``: share of the ``must_include`` strings found in the packed context.
Matching is case- and space-insensitive on words. Every case runs twice on the same store:
without a focus (the plain search: one answer for both foci) and with ``focus=...``.

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

from common import HERE, RESULTS, CachedMiniLM, stamp, write_section

DATA = HERE / "data" / "focus" / "focus_worlds.json"
SECTION = "## Focus (blind near-twin worlds)"
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
    """The worlds, each as {id, memories: [{text, timestamp?}], cases: [{question, focus,
    must_include, must_not_lead}]}."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    worlds = raw.get("worlds", []) if isinstance(raw, Mapping) else raw
    out = []
    for n, w in enumerate(worlds):
        memories = []
        for m in w.get("memories", []):
            item = {"text": m} if isinstance(m, str) else dict(m)
            if item.get("text", "").strip():
                memories.append(item)
        cases = []
        for q in w.get("questions", []):
            text = q.get("question") or q.get("text") or ""
            variants = next((q[k] for k in VARIANT_KEYS if isinstance(q.get(k), list)), [q])
            for v in variants:
                focus = strings(v.get("focus"))
                if not text.strip() or not focus:
                    continue
                cases.append(
                    {
                        "question": text,
                        "focus": focus[0] if len(focus) == 1 else focus,
                        "must_include": strings(v.get("must_include")),
                        "must_not_lead": strings(v.get("must_not_lead")),
                    }
                )
        out.append({"id": str(w.get("id", n)), "memories": memories, "cases": cases})
    return out


def when(item: Mapping[str, Any]) -> datetime | None:
    value = item.get("timestamp") or item.get("when") or item.get("date")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def score(res: Any, case: Mapping[str, Any]) -> dict[str, float]:
    texts = [h.text for h in res.memories[:K]]
    first = texts[0] if texts else ""
    must, never = case["must_include"], case["must_not_lead"]
    return {
        "lead_right": float(any(contains(first, s) for s in must)) if must else float("nan"),
        "lead_clean": float(not any(contains(first, s) for s in never)),
        "included": (
            sum(any(contains(t, s) for t in texts) for s in must) / len(must)
            if must
            else float("nan")
        ),
        "in_context": (
            sum(contains(res.context, s) for s in must) / len(must) if must else float("nan")
        ),
    }


def mean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]  # NaN: the case had nothing to check
    return round(100 * statistics.fmean(kept), 1) if kept else float("nan")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sage_memory import SageMemory

    worlds = load(Path(args.data))
    emb: Any = CachedMiniLM() if args.embedder == "minilm" else args.embedder
    if isinstance(emb, CachedMiniLM):
        emb.warm([m["text"] for w in worlds for m in w["memories"]])
    rows: dict[str, list[dict[str, float]]] = {"without focus": [], "with focus": []}
    ms: dict[str, list[float]] = {"without focus": [], "with focus": []}
    unresolved = 0
    per_case = []
    with SageMemory(embedder=emb) as mem:
        for w in worlds:
            user = f"world-{w['id']}"
            items = [
                {"text": m["text"], **({"timestamp": t} if (t := when(m)) else {})}
                for m in w["memories"]
            ]
            mem.add_many(items, user_id=user)
            for case in w["cases"]:
                entry: dict[str, Any] = {"world": w["id"], "question": case["question"]}
                for label, focus in (("without focus", ()), ("with focus", case["focus"])):
                    started = time.perf_counter()
                    res = mem.search(case["question"], user_id=user, limit=K, focus=focus)
                    ms[label].append((time.perf_counter() - started) * 1000)
                    got = score(res, case)
                    rows[label].append(got)
                    entry[label] = got
                    if label == "with focus" and not res.focus:
                        unresolved += 1
                per_case.append(entry)
    summary = {
        label: {
            "lead right": mean(r["lead_right"] for r in rs),
            "lead clean": mean(r["lead_clean"] for r in rs),
            f"included@{K}": mean(r["included"] for r in rs),
            "in context": mean(r["in_context"] for r in rs),
            "search ms p50": round(statistics.median(ms[label]), 1) if ms[label] else None,
        }
        for label, rs in rows.items()
    }
    return {
        **stamp(),
        "data": str(Path(args.data).relative_to(HERE.parent))
        if Path(args.data).resolve().is_relative_to(HERE.parent)
        else str(args.data),
        "embedder": args.embedder,
        "worlds": len(worlds),
        "cases": len(rows["with focus"]),
        "focus_not_found": unresolved,
        "k": K,
        "summary": summary,
        "per_case": per_case,
    }


def table(report: Mapping[str, Any]) -> str:
    cols = ["lead right", "lead clean", f"included@{K}", "in context", "search ms p50"]
    lines = [
        "| search | " + " | ".join(cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for label, row in report["summary"].items():
        lines.append(f"| {label} | " + " | ".join(str(row[c]) for c in cols) + " |")
    return "\n".join(lines)


def section(report: Mapping[str, Any], title: str) -> str:
    return (
        f"{SECTION}\n\n"
        f"{title}. Generated by `bench/focus.py` at {report['when']} (commit {report['commit']}) "
        f"on `{report['data']}`: {report['worlds']} worlds, {report['cases']} cases (a question "
        f"under one focus); embedder {report['embedder']}; the focus named no node in "
        f"{report['focus_not_found']} cases. The data was written by a helper who never read "
        "the code; nothing was tuned on it. Percentages over cases; `lead right`: the first "
        "memory holds a `must_include` string; `lead clean`: it holds no `must_not_lead` "
        f"string; `included@{K}` / `in context`: share of the `must_include` strings in the top "
        f"{K} memories / the packed context. Latency on a shared 2-core machine, side by side "
        "in one run.\n\n" + table(report) + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hashing")
    parser.add_argument("--save-as", help="also write bench/results/focus_<NAME>.json")
    parser.add_argument(
        "--title", default="First run, as it came", help="the README section's first words"
    )
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args()
    report = run(args)
    RESULTS.mkdir(exist_ok=True)
    body = json.dumps(report, indent=2)
    (RESULTS / "focus.json").write_text(body + "\n")
    if args.save_as:
        (RESULTS / f"focus_{args.save_as}.json").write_text(body + "\n")
    print(table(report))
    if not args.no_readme:
        write_section(SECTION, section(report, args.title))


if __name__ == "__main__":
    main()
