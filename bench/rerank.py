"""The LLM rerank stage's mechanics: its cost (calls, tokens, added latency) and its effect,
with SCRIPTED FAKE models. No real LLM runs here: these figures are not the quality of any
model; they show what the stage costs and what it can and cannot change.

Corpus: the first LoCoMo dev conversation(s) (../shared/data/locomo_dev.json, every turn one
memory, the retrieval protocol of bench/locomo.py), MiniLM and the rule extractor. Each
question is searched once per mode on the same store:

- ``off``: no rerank stage (the fused order, stage 2);
- ``fake: keep``: the model answers the order it was given (cost of the stage, no effect);
- ``fake: oracle``: the model knows the benchmark's evidence and puts those candidates first:
  the ceiling of any reranker over this candidate pool (it can only reorder what stages 1-2
  found, within ``rerank_candidates`` and ``rerank_tokens``);
- ``fake: garbage``: the model answers prose; the stage must keep the fused order;
- ``fake: slow``: the model answers after twice ``rerank_timeout_s``; the stage must give up
  at the timeout and keep the fused order.

Tokens are the fake's count (about four characters a token), for the prompt the stage builds.
Latency is measured side by side in one run on a shared machine: read the ratios.

Run: ``.venv/bin/python bench/rerank.py`` (writes bench/results/rerank.json and its section of
bench/README.md); ``--questions N`` caps the questions, ``--embedder hashing`` is quicker.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import RESULTS, CachedMiniLM, percentiles, stamp
from locomo import load
from sections import BENCH_README, write_section

from sage_memory import RetrieveConfig, SageConfig, SageMemory
from sage_memory.llm.base import ChatResponse, Message
from sage_memory.testing.fakes import ScriptedChatModel

SECTION = "## LLM rerank stage: mechanics with fake models"
COMMAND = ".venv/bin/python bench/rerank.py"
KS = (5, 10)
TIMEOUT_S = 0.2

Answer = Callable[[Sequence[Message]], str]


def candidates(messages: Sequence[Message]) -> list[str]:
    return [c["text"] for c in json.loads(messages[-1]["content"])["candidates"]]


def keep(messages: Sequence[Message]) -> str:
    return json.dumps({"order": list(range(len(candidates(messages))))})


def garbage(messages: Sequence[Message]) -> str:
    return "Here are the memories, best first: the second one, then the first."


def slow(messages: Sequence[Message]) -> str:
    time.sleep(2 * TIMEOUT_S)
    return keep(messages)


def oracle(evidence_texts: Callable[[], set[str]]) -> Answer:
    """Evidence candidates first (it knows what the current question's evidence says)."""

    def answer(messages: Sequence[Message]) -> str:
        wanted = evidence_texts()
        shown = candidates(messages)
        # a candidate line is "[date] (kind) text"; match the memory text's start
        good = [i for i, c in enumerate(shown) if any(w[:80] in c for w in wanted)]
        return json.dumps({"order": good + [i for i in range(len(shown)) if i not in good]})

    return answer


class Switch:
    """The engine's rerank model: it passes each call to the current mode's scripted fake."""

    name = "switch"

    def __init__(self) -> None:
        self.current: ScriptedChatModel | None = None

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        assert self.current is not None, "no mode chosen"
        return self.current.complete(messages, json_schema=json_schema)

    async def acomplete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        return self.complete(messages, json_schema=json_schema)


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load()[: args.conversations]
    emb: Any = CachedMiniLM() if args.embedder == "minilm" else args.embedder
    if isinstance(emb, CachedMiniLM):
        emb.warm([t.text for c in convs for t in c.turns])
    current: dict[str, set[str]] = {"evidence": set()}
    modes: dict[str, Answer | None] = {
        "off": None,
        "fake: keep": keep,
        "fake: oracle": oracle(lambda: current["evidence"]),
        "fake: garbage": garbage,
        "fake: slow": slow,
    }
    questions = [(c, q) for c in convs for q in c.questions][: args.questions]
    models = {m: ScriptedChatModel([a] * len(questions), name=m) for m, a in modes.items() if a}
    config = SageConfig(retrieve=RetrieveConfig(rerank_timeout_s=TIMEOUT_S))
    rows: dict[str, dict[str, Any]] = {
        m: {"recall": {k: [] for k in KS}, "ms": [], "status": Counter(), "tin": [], "tout": []}
        for m in modes
    }
    mems = {}
    by_memory: dict[str, str] = {}
    switch = Switch()
    for c in convs:
        mem = SageMemory(config=config, embedder=emb, reranker=switch)
        added = mem.add_many(
            [{"text": t.text, "timestamp": t.when} for t in c.turns], user_id=c.sample_id
        )
        by_memory.update((r.memory_id, t.dia_id) for r, t in zip(added, c.turns, strict=True))
        mems[c.sample_id] = mem
    text_of = {t.dia_id: t.text for c in convs for t in c.turns}
    try:
        for c, q in questions:
            mem = mems[c.sample_id]
            current["evidence"] = {text_of[e] for e in q.evidence if e in text_of}
            for mode in modes:
                switch.current = models.get(mode)  # one store, the same questions
                started = time.perf_counter()
                res = mem.search(q.text, user_id=c.sample_id, limit=max(KS), rerank=mode != "off")
                row = rows[mode]
                row["ms"].append((time.perf_counter() - started) * 1000)
                found = [by_memory.get(h.id) for h in res.memories]
                for k in KS:
                    row["recall"][k].append(len(q.evidence & set(found[:k])) / len(q.evidence))
                if res.rerank is not None:
                    row["status"][res.rerank.status] += 1
                    row["tin"].append(res.rerank.input_tokens)
                    row["tout"].append(res.rerank.output_tokens)
    finally:
        for mem in mems.values():
            mem.close()
    base = statistics.median(rows["off"]["ms"])
    summary = {}
    for mode, row in rows.items():
        n = len(row["ms"])
        calls = len(models[mode].calls) if mode in models else 0
        summary[mode] = {
            **{f"R@{k}": round(100 * statistics.fmean(row["recall"][k]), 1) for k in KS},
            "calls per search": round(calls / n, 2) if n else 0,
            "input tokens per search": round(statistics.fmean(row["tin"]), 1) if row["tin"] else 0,
            "output tokens per search": (
                round(statistics.fmean(row["tout"]), 1) if row["tout"] else 0
            ),
            "latency ms": percentiles(row["ms"]),
            "p50 vs off": round(statistics.median(row["ms"]) / base, 2),
            "status": dict(row["status"]),
        }
    return {
        **stamp(),
        "embedder": args.embedder,
        "conversations": [c.sample_id for c in convs],
        "questions": len(questions),
        "rerank_candidates": config.retrieve.rerank_candidates,
        "rerank_tokens": config.retrieve.rerank_tokens,
        "rerank_timeout_s": TIMEOUT_S,
        "summary": summary,
    }


def table(report: dict[str, Any]) -> str:
    cols = [
        *(f"R@{k}" for k in KS),
        "calls per search",
        "input tokens per search",
        "output tokens per search",
    ]
    lines = [
        "| mode | " + " | ".join(cols) + " | latency p50 ms | p50 vs off | outcome |",
        "|---|" + "---|" * (len(cols) + 3),
    ]
    for mode, row in report["summary"].items():
        status = ", ".join(f"{k} {v}" for k, v in sorted(row["status"].items())) or "-"
        lines.append(
            f"| {mode} | "
            + " | ".join(str(row[c]) for c in cols)
            + f" | {row['latency ms']['p50']} | {row['p50 vs off']} | {status} |"
        )
    return "\n".join(lines)


def section(report: dict[str, Any]) -> str:
    return (
        "**Mechanics, not model quality: every model here is a scripted fake.** Generated by "
        f"`bench/rerank.py` at {report['when']} (commit {report['commit']}): "
        f"{report['questions']} LoCoMo dev questions of {', '.join(report['conversations'])} "
        f"(evidence recall, the protocol of bench/locomo.py), embedder {report['embedder']}; "
        f"the stage shows at most {report['rerank_candidates']} candidates within "
        f"{report['rerank_tokens']} tokens and waits {report['rerank_timeout_s']} s. `keep` "
        "answers the order given (the stage's cost), `oracle` knows the evidence (the ceiling "
        "of any reranker over this candidate pool), `garbage` answers prose and `slow` answers "
        "after the timeout (both must keep the fused order). With the stage on, stage 2 keeps "
        "a wider pool (`rerank_candidates`) for it, so its diversity pick (MMR) sees more "
        "candidates: that alone moves `keep`, `garbage` and `slow` slightly away from `off`. "
        "Tokens by the fake's count (about "
        "four characters a token). Latency side by side in one run on a shared 2-core machine: "
        "read the ratios.\n\n" + table(report) + "\n"
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
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hashing")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument(
        "--readme-only", action="store_true", help="rewrite the section from the last results"
    )
    args = parser.parse_args()
    if args.readme_only:
        report = json.loads((RESULTS / "rerank.json").read_text())
        publish("rerank-table", COMMAND, SECTION, section(report))
        return
    report = run(args)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "rerank.json").write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))
    if not args.no_readme:
        publish("rerank-table", COMMAND, SECTION, section(report))


if __name__ == "__main__":
    main()
