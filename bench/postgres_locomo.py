"""LoCoMo dev evidence recall on PostgreSQL beside the embedded folder: same turns, same search.

    .venv/bin/python bench/postgres_locomo.py                        # every conversation
    .venv/bin/python bench/postgres_locomo.py --conversations conv-26  # one

Each conversation's turns go through ``add_many`` into two memories built alike (same config,
embedder and extractor): an embedded folder (SQLite + Chroma) and a PostgreSQL schema
(pgserver's PostgreSQL 16 + pgvector). Every question of categories 1-4 is searched in both;
the script reports evidence Recall@k of each and how many questions got the same ranked turns.
The protocol is bench/locomo.py's (turn text, session dates, user_id = the sample id). The
hashing embedder by default (``--embedder minilm`` for the model): the comparison is about the
backends, and both sides always share one embedder. Both memories also get the same sequence
of record ids (:func:`same_ids`): entity resolution breaks its last ties by node id, a random
uuid4, so two builds of one memory, even two folders, can link a name differently. Results:
bench/results/postgres_locomo.json and the section in bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parent / "results" / "postgres_locomo.json"


def recall(found: list[str], evidence: frozenset[str], k: int) -> float:
    return len(evidence & set(found[:k])) / len(evidence) if evidence else 0.0


@contextlib.contextmanager
def same_ids(seed: int) -> Iterator[None]:
    """Record ids from a seeded generator while the block runs (``new_id`` draws from it)."""
    import sage_memory.types as types_module

    rng = random.Random(seed)
    real = types_module.uuid
    types_module.uuid = SimpleNamespace(  # type: ignore[assignment]
        uuid4=lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    )
    try:
        yield
    finally:
        types_module.uuid = real


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", nargs="*", help="sample ids (default: all)")
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument(
        "--readme-only", action="store_true", help="write the section from the saved results"
    )
    args = ap.parse_args()
    if args.readme_only:
        from common import write_section

        saved = json.loads(RESULTS.read_text())
        write_section("## Server mode: LoCoMo recall on PostgreSQL", _with_markers(readme(saved)))
        return
    from common import stamp, write_section
    from locomo import DATA, KS, _NoExtraction, load, rule_extractor_available

    from sage_memory import SageMemory

    convs = load(DATA)
    if args.conversations:
        convs = [c for c in convs if c.sample_id in set(args.conversations)]
    infer = rule_extractor_available()
    base = os.environ.get("SAGE_TEST_POSTGRES_URL")
    server = None
    if not base:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="sagebench"), cleanup_mode="delete")
        base = server.get_uri()
    sep = "&" if "?" in base else "?"
    k = max(KS)
    sums: dict[str, dict[int, float]] = {"folder": dict.fromkeys(KS, 0.0), "postgres": {}}
    sums["postgres"] = dict.fromkeys(KS, 0.0)
    questions = same = 0
    differing: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="sage-pglocomo-") as tmp:
            for conv in convs:
                found: dict[str, list[list[str]]] = {}
                for name, where in (
                    ("folder", {"path": Path(tmp) / conv.sample_id}),
                    ("postgres", {"url": f"{base}{sep}schema=l_{uuid.uuid4().hex[:8]}"}),
                ):
                    extractor = None if infer else _NoExtraction()
                    path = where.pop("path", None)
                    with same_ids(len(conv.turns)):
                        mem = SageMemory(path, embedder=args.embedder, extractor=extractor, **where)
                        results = mem.add_many(
                            [{"text": t.text, "timestamp": t.when} for t in conv.turns],
                            user_id=conv.sample_id,
                            infer=infer,
                            batch_size=256,
                        )
                    turn_of = {
                        r.memory_id: t.dia_id for r, t in zip(results, conv.turns, strict=True)
                    }
                    found[name] = [
                        [
                            turn_of[h.id]
                            for h in mem.search(q.text, user_id=conv.sample_id, limit=k).memories
                        ]
                        for q in conv.questions
                    ]
                    mem.close()
                for i, q in enumerate(conv.questions):
                    questions += 1
                    if found["folder"][i] == found["postgres"][i]:
                        same += 1
                    else:
                        differing.append(f"{conv.sample_id}: {q.text}")
                    for name, total in sums.items():
                        for kk in KS:
                            total[kk] += recall(found[name][i], q.evidence, kk)
                print(conv.sample_id, questions, same, flush=True)
    finally:
        if server is not None:
            server.cleanup()
    res: dict[str, Any] = {
        "conversations": [c.sample_id for c in convs],
        "questions": questions,
        "embedder": args.embedder,
        "extractor": "rules" if infer else "none",
        "recall": {
            name: {f"R@{kk}": round(100 * v / max(questions, 1), 1) for kk, v in s.items()}
            for name, s in sums.items()
        },
        "same_ranking": same,
        "differing": differing,
        **stamp(),
    }
    print(json.dumps(res, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")
    if not args.no_readme:
        write_section("## Server mode: LoCoMo recall on PostgreSQL", _with_markers(readme(res)))


def readme(r: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {name} | " + " | ".join(str(v) for v in r["recall"][name].values()) + " |"
        for name in ("folder", "postgres")
    )
    heads = " | ".join(r["recall"]["folder"])
    convs = ", ".join(r["conversations"])
    listed = (
        "The questions whose rankings differ are listed in `bench/results/postgres_locomo.json`."
        if "differing" in r
        else "This run did not record which questions differ."
    )
    return f"""## Server mode: LoCoMo recall on PostgreSQL

    .venv/bin/python bench/postgres_locomo.py [--conversations ID ...]

LoCoMo dev evidence recall (bench/locomo.py's protocol) with the same turns, config, extractor
({r["extractor"]}) and embedder ({r["embedder"]}; the comparison is about the backends) in an
embedded folder and on PostgreSQL; conversations: {convs}; {r["questions"]} questions. Commit
{r["commit"]}, {r["when"]}.

| backend | {heads} |
|---|{"---|" * len(r["recall"]["folder"])}
{rows}

The same ranked turns (top {max(int(k[2:]) for k in r["recall"]["folder"])}) for \
{r["same_ranking"]} of {r["questions"]} questions. Both backends score the lexical channel with
BM25 from the scope's own postings (the same terms and weights), read equal candidates in the
same order, and here get the same record ids (entity resolution breaks its last ties by node id,
a random uuid4 otherwise). {listed} Not traced yet; the likely cause is
the dense channel: Chroma's HNSW and pgvector round cosine distances differently (in the sixth
decimal), which can swap two near-equal hits.
"""


def _with_markers(text: str) -> str:
    """The section under its heading between generated-section markers (bench/sections.py)."""
    from sections import marked

    heading, _, body = text.partition("\n")
    return marked(heading, "postgres-locomo", "bench/postgres_locomo.py", body)


if __name__ == "__main__":
    main()
