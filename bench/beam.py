"""Long technical chats: BEAM's ten 100K-tier dev conversations.

Protocol (../shared/data/README.md): every message (or chunk of at most 8,000 characters) is
one memory "<role>: <content>" (the " ->-> i,j" marker stripped), timestamped with the latest
time anchor seen so far plus 10 minutes per message (from 2024-01-01 when none); one scope per
chat. For each probing question with source ids (abstention has none): evidence Recall@k over
message ids, k = 5, 10, 20; for knowledge updates also "current first": the updated message
ranks above the original one among the top 20 (or the original is absent and the update is
present; a question naming one message as both is left out, as no order can satisfy it).
SageMemory (offline defaults) beside BM25, dense MiniLM and their RRF fusion.

Run: ``.venv/bin/python bench/beam.py`` (several minutes; vectors cached under bench/.cache/).
Writes bench/results/beam.json and its section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
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
    SageRun,
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

BEAM = DATA / "beam_dev"
KS = (5, 10, 20)
CHUNK = 8000
SECTION = "## Long technical chats (BEAM dev)"
_MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")
ABLATIONS: dict[str, dict[str, Any]] = {
    **GRAPH_ABLATIONS,
    "without neighbouring turns": {"neighbour": 0.0},
}


def anchor_time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text.strip(), "%B-%d-%Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def load_chat(folder: Path) -> tuple[list[Doc], list[Probe]]:
    """Messages as docs (id "<message id>" or "<message id>#<chunk>") and the probes."""
    batches = json.loads((folder / "chat.json").read_text())
    docs: list[Doc] = []
    clock = datetime(2024, 1, 1, tzinfo=UTC)
    for batch in batches:
        for turn in batch["turns"]:
            for msg in turn:
                anchor = anchor_time(msg.get("time_anchor") or "")
                if anchor is not None and anchor > clock:
                    clock = anchor
                clock += timedelta(minutes=10)
                content = (
                    _MARKER.sub("", msg["content"]) if msg["role"] == "user" else msg["content"]
                )
                pieces = [content[i : i + CHUNK] for i in range(0, len(content), CHUNK)] or [""]
                for j, piece in enumerate(pieces):
                    if not piece.strip():
                        continue
                    doc_id = str(msg["id"]) if j == 0 else f"{msg['id']}#{j}"
                    docs.append(Doc(doc_id, f"{msg['role']}: {piece}", clock))
    probes: list[Probe] = []
    for category, questions in json.loads((folder / "probing_questions.json").read_text()).items():
        for q in questions:
            src = q.get("source_chat_ids")
            if not src:
                continue
            groups = src if isinstance(src, dict) else {"all": src}
            ids = frozenset(str(i) for ids in groups.values() for i in ids)
            extra = {k: [str(i) for i in v] for k, v in groups.items()}
            probes.append(Probe(q["question"], ids, category, extra))
    return docs, probes


def _sage(docs: list[Doc], emb: CachedMiniLM, folder: Path, name: str, keep: str | None) -> Any:
    """The chat's SageMemory: ingested into ``folder``, or with ``keep`` (``--stores``) the
    store a former run left there, reopened (the retrieval of two commits whose ingestion is
    the same compared on the same stores, without ingesting again)."""
    user = f"chat-{name}"
    ids = folder / "ids.json"
    if keep and ids.exists():
        from sage_memory import SageMemory

        return SageRun(
            SageMemory(folder / "db", embedder=emb), user, json.loads(ids.read_text()), 0
        )
    run = sage_run(docs, emb, folder / "db" if keep else folder, user_id=user)
    if keep:
        ids.write_text(json.dumps(run.by_memory))
    return run


def bm25_index(docs: list[Doc]) -> Any:
    """The BM25 baseline's index, whose scores ``--gap`` reads."""
    from sage_memory.store.lexical import BM25Index

    index = BM25Index()
    for d in docs:
        index.add(d.id, d.text)
    return index


def message_of(doc_id: str) -> str:
    return doc_id.split("#", 1)[0]


def dedupe_messages(found: list[str]) -> list[str]:
    """Chunks count as their message: keep each message's first rank."""
    return list(dict.fromkeys(message_of(d) for d in found))


def well_posed(probe: Probe) -> bool:
    """Whether "current first" can be decided: the update and the original are different
    messages. Two of the twenty dev questions name the same message as both (chat 8's remote
    days, chat 9's consultant session), so no ranking can put one above the other; they are
    left out of the measure and counted apart."""
    updated, original = probe.extra.get("updated_info", []), probe.extra.get("original_info", [])
    return bool(updated) and bool(original) and not set(updated) & set(original)


def current_first(probe: Probe, found: list[str]) -> bool:
    updated, original = probe.extra.get("updated_info", []), probe.extra.get("original_info", [])
    rank = {d: i for i, d in reversed(list(enumerate(found)))}
    best_new = min((rank[i] for i in updated if i in rank), default=None)
    best_old = min((rank[i] for i in original if i in rank), default=None)
    return best_new is not None and (best_old is None or best_new < best_old)


@dataclass
class Gap:
    """Where search loses what dense finds (``--gap``): the evidence dense ranks in its top
    ``k`` and search does not ("lost"), and the memories search ranks above them that are
    neither evidence nor in dense's top ``k`` ("above"), each with its dense rank and its
    BM25 score over the query's best (the plain BM25 baseline's, a stand-in for search's
    lexical channel). A memory past dense's list ranks one past its end."""

    k: int = 10
    lost: list[tuple[int, float]] = field(default_factory=list)
    above: list[tuple[int, float]] = field(default_factory=list)
    kept: list[tuple[int, float]] = field(default_factory=list)

    def add(
        self, probe: Probe, found: list[str], dense: list[str], bm25: list[tuple[str, float]]
    ) -> None:
        best = max((s for _, s in bm25), default=0.0) or 1.0
        lexical = {message_of(d): s / best for d, s in reversed(bm25)}

        def row(m: str) -> tuple[int, float]:
            return (dense.index(m) + 1 if m in dense else len(dense) + 1, lexical.get(m, 0.0))

        top, near = found[: self.k], dense[: self.k]
        lost = [m for m in near if m in probe.evidence and m not in top]
        self.kept += [row(m) for m in top if m in probe.evidence]
        self.lost += [row(m) for m in lost]
        if lost:
            last = max(found.index(m) if m in found else len(found) for m in lost)
            self.above += [
                row(m) for m in found[:last] if m not in probe.evidence and m not in near
            ]

    def lines(self) -> list[str]:
        out = [f"gap at {self.k} (median dense rank, mean BM25 of the query's best):"]
        for name, rows in (("lost", self.lost), ("above", self.above), ("kept", self.kept)):
            if rows:
                rank = statistics.median(r for r, _ in rows)
                lex = statistics.fmean(x for _, x in rows)
                out.append(f"  {name}: {len(rows)} hits, dense rank {rank}, bm25 {lex:.2f}")
        return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    emb = CachedMiniLM()
    tallies: dict[str, Tally] = defaultdict(lambda: Tally(KS))
    updates: dict[str, list[bool]] = defaultdict(list)
    ill_posed: set[str] = set()
    ablation: dict[str, Tally] = defaultdict(lambda: Tally(KS))
    gap = Gap()
    chats = sorted((p for p in BEAM.iterdir() if p.is_dir()), key=lambda p: int(p.name))
    if args.chats:
        chats = [c for c in chats if c.name in set(args.chats)]
    k = max(KS)
    n_docs = 0
    with tempfile.TemporaryDirectory(prefix="sage-beam-") as tmp:
        for chat in chats:
            docs, probes = load_chat(chat)
            n_docs += len(docs)
            vecs = emb.warm([d.text for d in docs])
            sage = _sage(docs, emb, Path(args.stores or tmp) / chat.name, chat.name, args.stores)
            bm25 = bm25_system(docs)
            dense = dense_system(docs, emb, vecs)
            systems = [sage.system(), bm25, dense, rrf_system(bm25, dense)]
            words = bm25_index(docs) if args.gap else None
            for p in probes:
                seen: dict[str, list[str]] = {}
                for s in systems:
                    raw, ms = timed(s.search, p.text, k + 10)
                    found = dedupe_messages(raw)[:k]
                    tallies[s.name].add(p, found, ms)
                    seen[s.name] = found
                    if p.category == "knowledge_update":
                        if well_posed(p):
                            updates[s.name].append(current_first(p, found))
                        else:
                            ill_posed.add(p.text)
                if words is not None:
                    gap.add(p, seen["sage"], seen["dense"], words.search(p.text, 200))
            if not args.no_ablations:
                for name, changes in ABLATIONS.items():
                    search = ablated(sage, changes)
                    for p in probes:
                        ablation[name].add(p, dedupe_messages(search(p.text, k + 10))[:k])
            for s in systems:
                s.close()
            print(
                f"chat {chat.name}: {len(docs)} memories, {len(probes)} questions", file=sys.stderr
            )
    if args.gap:
        print("\n".join(gap.lines()), file=sys.stderr)
    results = {name: t.summary() for name, t in tallies.items()}
    for name, flags in updates.items():
        results[name]["current_first_pct"] = round(100 * sum(flags) / max(1, len(flags)), 1)
        results[name]["current_first_n"] = len(flags)
    return {
        "dataset": f"BEAM 100K dev chats {', '.join(c.name for c in chats)}",
        "memories": n_docs,
        "questions": sum(t["overall"]["n"] for t in [results["sage"]]),
        "results": results,
        "ablations": {name: t.summary() for name, t in ablation.items()},
        "current_first_left_out": sorted(ill_posed),
        **stamp(),
    }


def overall_table(report: dict[str, Any]) -> str:
    rows = [
        "| system | R@5 | R@10 | R@20 | knowledge update: current first | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, res in report["results"].items():
        o, lat = res["overall"], res.get("latency_ms", {})
        rows.append(
            f"| {name} | {o['R@5']} | {o['R@10']} | {o['R@20']} | "
            f"{res.get('current_first_pct', '-')}% of {res.get('current_first_n', 0)} | "
            f"{lat.get('p50', '-')} | {lat.get('p95', '-')} |"
        )
    return "\n".join(rows)


def section(report: dict[str, Any]) -> str:
    lines = [
        SECTION,
        "",
        f"{report['dataset']} ({report['memories']} memories, {report['questions']} questions "
        "with source ids), protocol in ../shared/data/README.md. Evidence recall over message "
        "ids (chunks count as their message). Commit "
        f"{report['commit']}, {report['when']}.",
        "",
        "    .venv/bin/python bench/beam.py",
        "",
        overall_table(report),
        "",
        "Current first: the message the question names as the update ranks above the one it "
        "names as the original among the top 20 (or the original is absent and the update "
        f"present); {len(report.get('current_first_left_out', []))} knowledge-update questions "
        "name the same message as both and are left out of it.",
        "",
        "Per category (R@5/10/20):",
        "",
        recall_table(
            {
                n: {c: v for c, v in r.items() if isinstance(v, dict)}
                for n, r in report["results"].items()
            },
            KS,
        ),
        "",
    ]
    saved = saved_runs("beam", _describe)
    if saved:
        lines += ["Runs kept side by side (sage and dense R@10, sage current first):", "", *saved]
        lines.append("")
    if report["ablations"]:
        lines += [
            "Ablations (same stores, one part off), overall R@5/10/20: "
            + "; ".join(
                f"{name} {'/'.join(str(r['overall'][f'R@{k}']) for k in KS)}"
                for name, r in report["ablations"].items()
            ),
            "",
        ]
    return "\n".join(lines)


def _describe(d: dict[str, Any]) -> str:
    res = d["results"]
    text = (
        f"sage R@10 {res['sage']['overall']['R@10']}, dense R@10 "
        f"{res['dense']['overall']['R@10']}, current first {res['sage']['current_first_pct']}%"
    )
    for name in GRAPH_ABLATIONS:
        if name in d.get("ablations", {}):
            text += f"; {name} R@10 {d['ablations'][name]['overall']['R@10']}"
    return text


def write_readme(report: dict[str, Any]) -> None:
    """This benchmark's section of bench/README.md, between generated-section markers."""
    from sections import BENCH_README, write_section

    write_section(BENCH_README, "beam-recall", ".venv/bin/python bench/beam.py", section(report))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--chats", nargs="*", help="chat folder names (default: all ten)")
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument(
        "--stores",
        help="keep each chat's store in this folder and reuse it on the next run (ingest once)",
    )
    ap.add_argument(
        "--gap",
        action="store_true",
        help="print where search loses the hits dense finds (dense rank, BM25 share)",
    )
    ap.add_argument("--save-as", help="also keep this run as bench/results/beam_<NAME>.json")
    args = ap.parse_args(argv)
    report = run(args)
    print(overall_table(report))
    for name, res in report["ablations"].items():
        print(f"{name}: {res['overall']}")
    if not args.no_write:
        save_report("beam", report, args.save_as)
        write_readme(report)


if __name__ == "__main__":
    main()
