"""Where the graph could add recall on LoCoMo: what each retrieval channel finds that the word
and vector channels do not, and whether the evidence of a multi-hop question is linked at all.

    PYTHONHASHSEED=0 .venv/bin/python bench/graph_reach.py [--conversations conv-26 ...]

The same stores and searches as ``bench/locomo.py`` (rule extractor, default preset,
``limit=10``). The retriever's steps are observed by wrapping the functions it calls (as
``bench/search_phases.py`` does); nothing in the search changes. Prints, per question category:

1. channels: Recall@10 of each channel's own top 10 (the fused ranking, the dense and lexical
   seeds, the associative walk's PageRank mass, that mass on the memories that were not walk
   seeds, the concept links), and its *novel* Recall@10: evidence in that top 10 which neither
   the dense nor the lexical top 10 holds, the only recall a graph channel can add;
2. graph candidates against the cut: the share of questions whose evidence sits at each rank
   of the fused ranking (8 to 12), beside the share for the first, second and third walk or
   concept candidate outside the fused top 10. A graph candidate can improve Recall@10 by
   taking rank 10 only when its share beats rank 10's;
3. links between evidence: for each pair of evidence turns of one multi-hop question, whether
   they share an entity node (one two to a hundred memories support, the walk's links),
   a content word at most :data:`SPECIFIC_DF` turns hold (concept links), or the speaker.

Writes nothing.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from locomo import CATEGORIES, CachedMiniLM, load  # noqa: E402

#: Ranks of the fused list compared with the graph's best candidates outside its top 10.
CUT_RANKS = range(7, 12)
#: Graph candidates outside the fused top 10 whose evidence share is printed.
OUTSIDE = 3
#: A content word held by at most this many turns of a conversation is specific enough to link.
SPECIFIC_DF = 30
K = 10


def _observe(seen: dict[str, Any]) -> Callable[[], None]:
    """Wrap the retriever's ranking step and the walk to record what they saw; returns undo."""
    import sage_memory.retrieve.graph as graph_mod
    import sage_memory.retrieve.retriever as retriever_mod
    from sage_memory.retrieve.ppr import settled

    rank, associate, concepts = (
        retriever_mod.rank_memories,
        graph_mod.associate,
        graph_mod.concept_scores,
    )

    @functools.wraps(rank)
    def rank_spy(ask: Any, dense: Any, lexical: Any, g: Any, *a: Any, **kw: Any) -> Any:
        seen.update(dense=[m for m, _ in dense], lexical=[m for m, _ in lexical])
        return rank(ask, dense, lexical, g, *a, **kw)

    @functools.wraps(associate)
    def walk_spy(graph: Any, seeds: Mapping[str, float]) -> Any:
        scaled, result = associate(graph, seeds)
        est = settled(result)
        seen["walk"] = scaled
        seen["beyond seeds"] = {
            k[2:]: v for k, v in est.items() if k.startswith("m:") and k not in seeds
        }
        return scaled, result

    @functools.wraps(concepts)
    def concept_spy(*a: Any, **kw: Any) -> Any:
        seen["concept"] = out = concepts(*a, **kw)
        return out

    retriever_mod.rank_memories = rank_spy
    graph_mod.associate = walk_spy
    graph_mod.concept_scores = concept_spy

    def undo() -> None:
        retriever_mod.rank_memories = rank
        graph_mod.associate = associate
        graph_mod.concept_scores = concepts

    return undo


def _best(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda m: (-scores[m], m))


def _pct(values: list[float]) -> float:
    return round(100 * statistics.fmean(values), 1) if values else 0.0


def _pair_links(
    conv: Any,
    mem: Any,
    by_memory: Mapping[str, str],
    top: Mapping[str, set[str]],
    tally: Counter[str],
    rivals: list[int],
) -> None:
    """Count how the evidence turns of each multi-hop question are linked to each other.

    ``top``: each question's fused top 10 (turn ids). For a pair one of whose turns is in it
    and the other not, but which share a specific content word and a speaker, ``rivals``
    gets how many other turns of that speaker hold the pair's rarest shared word: the rank a
    link from the found turn could give the missed one at best."""
    from sage_memory.retrieve.concepts import concept_words
    from sage_memory.store.lexical import terms
    from sage_memory.types import Scope

    store, scope = mem.retriever.store, Scope(conv.sample_id)
    mid_of = {d: m for m, d in by_memory.items()}
    text = {t.dia_id: t.text for t in conv.turns}
    nodes_of = store.memory_nodes(scope, list(by_memory))
    wanted = {n for ns in nodes_of.values() for n in ns}
    support = {n.id: len(n.memory_ids) for n in store.get_nodes(scope.partition, list(wanted))}

    def linking(dia: str) -> set[str]:
        return {n for n in nodes_of.get(mid_of[dia], []) if 2 <= support.get(n, 0) <= 100}

    stems = {
        d: {s for w in concept_words(t, set()) for s in list(terms(w))[:1]} for d, t in text.items()
    }
    df = Counter(s for held in stems.values() for s in held)
    tally["turns"] += len(text)
    tally["turns with an entity node"] += sum(1 for m in by_memory if nodes_of.get(m))
    tally["turns with a shared entity node"] += sum(1 for d in text if linking(d))
    for q in conv.questions:
        if q.category != 1:
            continue
        for a, b in itertools.combinations(sorted(e for e in q.evidence if e in mid_of), 2):
            tally["evidence pairs"] += 1
            tally["pairs sharing an entity node"] += bool(linking(a) & linking(b))
            shared = {s for s in stems[a] & stems[b] if df[s] <= SPECIFIC_DF}
            tally[f"pairs sharing a content word (<= {SPECIFIC_DF} turns)"] += bool(shared)
            speaker = text[a].split(":")[0]
            same = speaker == text[b].split(":")[0]
            tally["pairs said by one speaker"] += same
            found = top.get(q.text, set())
            if shared and same and (a in found) != (b in found):
                tally["pairs, one found, sharing a word and the speaker"] += 1
                rivals.append(
                    min(
                        sum(
                            1
                            for d, held in stems.items()
                            if w in held and d not in (a, b) and text[d].split(":")[0] == speaker
                        )
                        for w in shared
                    )
                )


Tallies = dict[str, dict[Any, list[float]]]


def _tally(
    q: Any,
    channels: Mapping[str, list[str]],
    by_memory: Mapping[str, str],
    recall: Tallies,
    at_rank: Tallies,
) -> None:
    """Add one question's channel recalls and the evidence around the fused cut."""
    words = set(channels["dense"][:K]) | set(channels["lexical"][:K])
    fused = channels["fused"]
    cats = (q.category, "all")

    def share(ids: list[str]) -> float:
        return len(q.evidence & {by_memory[m] for m in ids}) / len(q.evidence)

    for name, ids in channels.items():
        for c in cats:
            recall[name][c].append(share(ids[:K]))
            recall[f"{name} (novel)"][c].append(share([m for m in ids[:K] if m not in words]))
    for r in CUT_RANKS:
        for c in cats:
            at_rank[f"fused rank {r + 1}"][c].append(share(fused[r : r + 1]))
    for name in ("walk", "walk beyond its seeds", "concept links"):
        outside = [m for m in channels[name] if m not in fused[:K]]
        for i in range(OUTSIDE):
            for c in cats:
                at_rank[f"{name}, candidate {i + 1} outside"][c].append(share(outside[i : i + 1]))


def run(args: argparse.Namespace) -> None:
    from sage_memory import SageMemory
    from sage_memory.config import SageConfig

    convs = load()
    if args.conversations:
        convs = [c for c in convs if c.sample_id in set(args.conversations)]
    emb = CachedMiniLM()
    seen: dict[str, Any] = {}
    undo = _observe(seen)
    recall: Tallies = defaultdict(lambda: defaultdict(list))
    at_rank: Tallies = defaultdict(lambda: defaultdict(list))
    links: Counter[str] = Counter()
    top: dict[str, set[str]] = {}
    rivals: list[int] = []
    try:
        with tempfile.TemporaryDirectory(prefix="sage-reach-") as tmp:
            for conv in convs:
                emb.warm([t.text for t in conv.turns])
                mem = SageMemory(Path(tmp) / conv.sample_id, config=SageConfig(), embedder=emb)
                done = mem.add_many(
                    [{"text": t.text, "timestamp": t.when} for t in conv.turns],
                    user_id=conv.sample_id,
                    infer=True,
                    batch_size=256,
                )
                by_memory = {r.memory_id: t.dia_id for r, t in zip(done, conv.turns, strict=True)}
                for q in conv.questions:
                    seen.clear()
                    found = mem.search(q.text, user_id=conv.sample_id, limit=2 * K)
                    fused = [h.id for h in found.memories]
                    channels = {
                        "fused": fused,
                        "dense": seen.get("dense", []),
                        "lexical": seen.get("lexical", []),
                        "walk": _best(seen.get("walk", {})),
                        "walk beyond its seeds": _best(seen.get("beyond seeds", {})),
                        "concept links": _best(seen.get("concept", {})),
                    }
                    _tally(q, channels, by_memory, recall, at_rank)
                    top[q.text] = {by_memory[m] for m in fused[:K]}
                _pair_links(conv, mem, by_memory, top, links, rivals)
                top.clear()
                mem.close()
                print(f"{conv.sample_id}: {len(conv.questions)} questions", file=sys.stderr)
    finally:
        undo()
    cols = [*CATEGORIES, "all"]
    names = [CATEGORIES[c] if isinstance(c, int) else "overall" for c in cols]
    head = "| | " + " | ".join(names) + " |"
    rule = "|---" * (len(cols) + 1) + "|"
    print(f"\nRecall@{K} of each channel's top {K} (novel: not in the dense or lexical top {K})")
    print(head + "\n" + rule)
    for name, by_cat in recall.items():
        print(f"| {name} | " + " | ".join(str(_pct(by_cat[c])) for c in cols) + " |")
    print("\nShare of questions whose evidence is at a rank (fused) or a graph candidate (%)")
    print(head + "\n" + rule)
    for name, by_cat in at_rank.items():
        print(f"| {name} | " + " | ".join(str(_pct(by_cat[c])) for c in cols) + " |")
    print("\nLinks between the evidence turns of multi-hop questions")
    for name, n in links.items():
        print(f"- {name}: {n}")
    if rivals:
        q = statistics.quantiles(rivals, n=4)
        print(
            "- other turns of the speaker holding the rarest shared word, for those pairs: "
            f"median {statistics.median(rivals)}, quartiles {q[0]} / {q[2]}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", nargs="*", help="sample ids (default: all)")
    run(ap.parse_args())


if __name__ == "__main__":
    main()
