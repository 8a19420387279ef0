"""One fusion setting on the union of the retrieval benchmarks (for choosing weights).

Ingests LoCoMo dev, the HotpotQA subset, BEAM dev and the structure worlds once into folders
under ``--stores`` (reused by later runs), then scores named weight variants on all of them with
the same stores and queries, so a setting is chosen on the union, never on one data set:

- LoCoMo dev: overall and multi-hop R@10 (bench/locomo.py's protocol);
- HotpotQA subset: R@5 (bench/documents.py);
- BEAM dev: R@10 over messages (bench/beam.py);
- structure worlds: evidence R@10 and answer in context (bench/structure.py).

Run: ``PYTHONPATH=. .venv/bin/python bench/sweep.py --variants default rrf`` (first run: the
ingests, about 15 minutes on a shared 2-core machine; later runs a minute or two per variant).
The per-data-set figures that the README quotes come from the data sets' own scripts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import beam
import documents
import locomo
import structure
from common import CachedMiniLM, Doc, Probe, Tally, sage_run, searcher

#: Named changes to the default weights (``dataclasses.replace`` keyword arguments).
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "rrf": {"mode": "rrf"},
    "no graph": {"graph": 0.0, "entity": 0.0},
    "bfs": {"walk": False},
    "dense+lexical": {"neighbour": 0.0, "author": 0.0, "time": 0.0, "graph": 0.0, "entity": 0.0},
    "no neighbour": {"neighbour": 0.0},
    "no author": {"author": 0.0},
    "no mmr": {"config_mmr": 1.0},
    "no hop": {"assoc_take": 0},
}


@dataclasses.dataclass
class Corpus:
    """One data set's stores and probes."""

    name: str
    runs: list[tuple[Any, list[Any]]]  # (SageRun, probes) per store
    score: Callable[[list[tuple[Any, list[Any]]], Any], dict[str, float]]


def _open(folder: Path, docs: list[Doc], emb: CachedMiniLM, user_id: str) -> Any:
    """A store with ``docs``: reopened from ``folder`` when an earlier run built it."""
    from common import SageRun

    from sage_memory import SageMemory

    ids = folder / "ids.json"
    if ids.exists():
        mem = SageMemory(folder / "sage", embedder=emb, read_only=True)
        return SageRun(mem, user_id, json.loads(ids.read_text()), 0.0)
    run = sage_run(docs, emb, folder / "sage", user_id=user_id)
    ids.write_text(json.dumps(run.by_memory))
    print(f"ingested {folder.name}: {len(docs)} in {run.ingest_s:.0f} s", file=sys.stderr)
    return run


def _ids(run: Any, res: Any) -> list[str]:
    return [run.by_memory[h.id] for h in res.memories if h.id in run.by_memory]


def load_corpora(
    root: Path, emb: CachedMiniLM, only: set[str], beam_chats: set[str]
) -> list[Corpus]:
    loaders: dict[str, Callable[[], Corpus]] = {
        "locomo": lambda: _locomo(root, emb),
        "hotpot": lambda: _hotpot(root, emb),
        "beam": lambda: _beam(root, emb, beam_chats),
        "structure": lambda: _structure(root, emb),
    }
    return [load() for name, load in loaders.items() if not only or name in only]


def _locomo(root: Path, emb: CachedMiniLM) -> Corpus:
    runs = []
    for conv in locomo.load():
        docs = [Doc(t.dia_id, t.text, t.when) for t in conv.turns]
        emb.warm([d.text for d in docs])
        run = _open(root / "locomo" / conv.sample_id, docs, emb, conv.sample_id)
        probes = [Probe(q.text, q.evidence, locomo.CATEGORIES[q.category]) for q in conv.questions]
        runs.append((run, probes))

    def score(runs: list[tuple[Any, list[Any]]], w: Any) -> dict[str, float]:
        t = Tally((10,))
        for run, probes in runs:
            for p in probes:
                t.add(p, _ids(run, searcher(run, w)(p.text, 20)))
        s = t.summary()
        return {"locomo R@10": s["overall"]["R@10"], "locomo multi-hop": s["multi-hop"]["R@10"]}

    return Corpus("locomo", runs, score)


def _hotpot(root: Path, emb: CachedMiniLM) -> Corpus:
    docs, probes = documents.load_hotpot()
    emb.warm([d.text for d in docs])
    run = _open(root / "hotpot", docs, emb, "bench")

    def score(runs: list[tuple[Any, list[Any]]], w: Any) -> dict[str, float]:
        t = Tally((5,))
        for run, probes in runs:
            for p in probes:
                t.add(p, _ids(run, searcher(run, w)(p.text, 10)))
        return {"hotpot R@5": t.summary()["overall"]["R@5"]}

    return Corpus("hotpot", [(run, probes)], score)


def _beam(root: Path, emb: CachedMiniLM, wanted: set[str]) -> Corpus:
    runs = []
    chats = sorted((p for p in beam.BEAM.iterdir() if p.is_dir()), key=lambda p: int(p.name))
    for chat in [c for c in chats if not wanted or c.name in wanted]:
        docs, probes = beam.load_chat(chat)
        emb.warm([d.text for d in docs])
        runs.append((_open(root / "beam" / chat.name, docs, emb, f"chat-{chat.name}"), probes))

    def score(runs: list[tuple[Any, list[Any]]], w: Any) -> dict[str, float]:
        t = Tally((10,))
        for run, probes in runs:
            for p in probes:
                t.add(p, beam.dedupe_messages(_ids(run, searcher(run, w)(p.text, 20)))[:10])
        return {"beam R@10": t.summary()["overall"]["R@10"]}

    return Corpus("beam", runs, score)


def _structure(root: Path, emb: CachedMiniLM) -> Corpus:
    worlds = structure.load_worlds()
    docs = structure.ingest_order(worlds, structure.SEED)
    emb.warm([d.text for d in docs])
    run = _open(root / "structure", docs, emb, "teams")
    questions = [q for w in worlds for q in w["questions"]]

    def score(runs: list[tuple[Any, list[Any]]], w: Any) -> dict[str, float]:
        t = Tally((10,))
        hit: list[bool] = []
        for run, qs in runs:
            for q in qs:
                res = searcher(run, w)(q["question"], 10, structure.parse_time(q.get("as_of")))
                hit.append(structure.answered(res.context, q))
                if q.get("evidence"):
                    probe = Probe(q["question"], frozenset(q["evidence"]), q["type"])
                    t.add(probe, _ids(run, res))
        return {
            "structure R@10": t.summary()["overall"]["R@10"],
            "structure in context": round(100 * sum(hit) / len(hit), 1),
        }

    return Corpus("structure", [(run, questions)], score)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--stores", default="/tmp/sage-sweep", help="folder of the reusable stores")
    ap.add_argument("--only", nargs="*", default=[], help="locomo hotpot beam structure")
    ap.add_argument("--beam-chats", nargs="*", default=[], help="BEAM chat names (default all)")
    ap.add_argument("--variants", nargs="*", default=["default"])
    ap.add_argument("--set", nargs="*", default=[], help="extra variant: name=value ...")
    args = ap.parse_args(argv)
    emb = CachedMiniLM()
    corpora = load_corpora(Path(args.stores), emb, set(args.only), set(args.beam_chats))
    variants = {name: VARIANTS[name] for name in args.variants}
    if args.set:
        variants[" ".join(args.set)] = {
            k: (
                v == "True"
                if v in ("True", "False")
                else v
                if v.isalpha()
                else int(v)
                if v.isdigit()
                else float(v)
            )
            for k, v in (s.split("=", 1) for s in args.set)
        }
    for name, changes in variants.items():
        row: dict[str, float] = {}
        changes = dict(changes)
        mmr = changes.pop("config_mmr", None)
        for c in corpora:
            configs = [run.mem.retriever.config for run, _ in c.runs]
            for run, _ in c.runs:
                if mmr is not None:
                    run.mem.retriever.config = dataclasses.replace(configs[0], mmr_lambda=mmr)
            base = c.runs[0][0].mem.retriever.weights
            row.update(c.score(c.runs, dataclasses.replace(base, **changes)))
            for (run, _), cfg in zip(c.runs, configs, strict=True):
                run.mem.retriever.config = cfg
        print(json.dumps({"variant": name, **row}), flush=True)
    for c in corpora:
        for run, _ in c.runs:
            run.mem.close()


if __name__ == "__main__":
    main()
