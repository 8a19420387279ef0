"""Error analysis of the structure extractor on labelled sentences: why each edge was missed or
made wrongly.

Run from the repository root::

    .venv/bin/python bench/extraction_errors.py --data tests/data/blind/extraction_blind_1.jsonl
    .venv/bin/python bench/extraction_errors.py --data a.jsonl --show target:too_long

Edges are compared in the tolerant form of ``bench/extraction.py`` (lemmatised names,
near-synonym relations as one class). Each missed edge is paired with the closest wrong edge the
extractor made for the same item and the pair is given one kind:

* ``negation`` - same edge, the other polarity;
* ``direction`` - same relation, the two ends swapped;
* ``family`` - same two ends, another relation;
* ``source:HOW`` / ``target:HOW`` / ``both`` - same relation, one end (or both) named wrongly,
  HOW being ``too_long`` (the predicted name holds the expected one), ``too_short`` (the other way
  round), ``pronoun`` (a pronoun or a bare determiner was left) or ``other``;
* ``no_relation:STAGE`` - no predicted edge of that relation at all; STAGE is how far the
  relation's phrasings got in the sentence: ``unmatched`` (no phrasing of the relation matched),
  ``arguments`` (a phrasing matched but its arguments could not be read), ``guard`` (a guard of
  the extractor rejected it), ``settled`` (a more specific overlapping match won) or ``kept``
  (kept, yet no edge: a weak phrasing, a hypothetical, a retyped relation).

A wrong edge left unpaired is ``spurious`` (``spurious_nofact`` on an item labelled as stating
no fact). Counts are printed per family; ``--show KIND`` prints the items of one kind.
It prints only; it writes no results file (the figures of record come from bench/extraction.py).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extraction import (
    _SYNONYMS,
    DATA,
    Edge,
    expected_sets,
    load,
    memory_for,
    predicted_sets,
    tolerant,
)

from sage_memory.extract.base import ExtractionContext

_PRONOUNS = frozenset(
    [
        "it",
        "its",
        "they",
        "them",
        "he",
        "him",
        "she",
        "her",
        "we",
        "us",
        "i",
        "me",
        "you",
        "this",
        "that",
        "these",
        "those",
        "one",
        "which",
        "who",
    ]
)


def _how(predicted: str, expected: str) -> str:
    """How a predicted name differs from the expected one."""
    if predicted in _PRONOUNS or (
        predicted.split(maxsplit=1)[0] in _PRONOUNS and len(predicted.split()) == 1
    ):
        return "pronoun"
    p, e = f" {predicted} ", f" {expected} "
    if e in p:
        return "too_long"
    if p in e:
        return "too_short"
    return "other"


def classify(missed: Edge, extra: set[Edge]) -> tuple[str, Edge | None]:
    """The kind of one missed edge and the wrong edge it is paired with (None when unpaired)."""
    s, r, t, neg = missed
    for cand in extra:
        if cand == (s, r, t, not neg):
            return "negation", cand
    for cand in extra:
        if cand[:3] == (t, r, s):
            return "direction", cand
    for cand in extra:
        if {cand[0], cand[2]} == {s, t}:
            return "family", cand
    same = [c for c in extra if c[1] == r]
    for cand in same:
        if cand[0] == s:
            return f"target:{_how(cand[2], t)}", cand
        if cand[2] == t:
            return f"source:{_how(cand[0], s)}", cand
    if same:
        return "both", same[0]
    return "no_relation", None


def stages(extractor: object, item: dict) -> dict[str, str]:
    """How far each relation (tolerant class) got in the item's sentences (the furthest)."""
    from sage_memory.extract.base import ExtractionContext as Ctx
    from sage_memory.extract.chunk import tokenize
    from sage_memory.extract.clauses import settle
    from sage_memory.extract.structure import _pieces, _Reading

    order = ["unmatched", "arguments", "guard", "settled", "kept"]
    best: dict[str, str] = {}
    reading = _Reading(extractor, memory_for(item), Ctx(), item["text"])  # type: ignore[arg-type]
    matcher = extractor.matcher  # type: ignore[attr-defined]
    for piece in _pieces(item["text"]):
        toks = tokenize(piece, extractor.lexicon)  # type: ignore[attr-defined]
        raw = matcher.raw_matches(toks)
        readable = []
        reached: dict[int, str] = {}
        for m in raw:
            reached[id(m)] = "arguments"
            if matcher.read_arguments(m, toks):
                reached[id(m)] = "guard"
                if reading._reattach(m, toks) and reading._fits(m, toks):
                    reached[id(m)] = "settled"
                    readable.append(m)
        for m in settle(readable, toks):
            reached[id(m)] = "kept"
        for m in raw:
            rel = _SYNONYMS.get(m.phrase.relation, m.phrase.relation)
            if order.index(reached[id(m)]) > order.index(best.get(rel, "unmatched")):
                best[rel] = reached[id(m)]
    return best


def analyse(items: list[dict], show: str | None) -> None:
    """Run the extractor on ``items`` and print the error kinds per family."""
    from sage_memory.extract.structure import StructureExtractor

    extractor = StructureExtractor()
    per_family: dict[str, Counter[str]] = defaultdict(Counter)
    totals: Counter[str] = Counter()
    for item in items:
        delta = extractor.extract(memory_for(item), ExtractionContext())
        _, p_edges, _, _ = predicted_sets(delta)
        _, e_edges, _ = expected_sets(item)
        pred = {tolerant(e) for e in p_edges}
        exp = {tolerant(e) for e in e_edges}
        missed, extra = exp - pred, set(pred - exp)
        reached = stages(extractor, item) if missed else {}
        kinds: list[tuple[str, Edge | None, Edge | None]] = []
        for edge in sorted(missed):
            kind, pair = classify(edge, extra)
            if kind == "no_relation":
                kind += ":" + reached.get(edge[1], "unmatched")
            if pair is not None:
                extra.discard(pair)
            kinds.append((kind, edge, pair))
        for edge in sorted(extra):
            kind = "spurious_nofact" if item["family"] == "none" else "spurious"
            kinds.append((kind, None, edge))
        fam = item["family"]
        for kind, want, got in kinds:
            per_family[fam][kind] += 1
            totals[kind] += 1
            if show and (kind == show or kind.startswith(show + ":")):
                print(f"[{kind}] {item['id']}: {item['text']}")
                print(f"    expected {want}\n    got      {got}")
    columns = sorted(totals, key=lambda k: -totals[k])
    width = max(len(c) for c in columns) if columns else 8
    print(f"\n{'kind':<{width}}  total  " + "  ".join(f"{f[:9]:>9}" for f in sorted(per_family)))
    for kind in columns:
        cells = "  ".join(f"{per_family[f][kind]:>9}" for f in sorted(per_family))
        print(f"{kind:<{width}}  {totals[kind]:>5}  {cells}")


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments and print the analysis."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", type=Path, help="labelled JSONL (repeatable)")
    ap.add_argument("--show", help="print the items of one error kind (e.g. target:too_long)")
    args = ap.parse_args(argv)
    items = [item for p in args.data or [DATA] for item in load(p)]
    analyse(items, args.show)


if __name__ == "__main__":
    main()
