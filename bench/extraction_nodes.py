"""Node error analysis of the structure extractor on labelled sentences: which named things it
misses or names wrongly, per expected label and per cause.

Run from the repository root::

    .venv/bin/python bench/extraction_nodes.py --data tests/data/blind/extraction_blind_1.jsonl
    .venv/bin/python bench/extraction_nodes.py --data a.jsonl --show too_long

Names are compared in the tolerant form of ``bench/extraction.py`` (every word lemmatised). Each
expected node the extractor did not name is given one cause, against the predicted names of the
same item that it did not match:

* ``too_long`` - a predicted name holds the expected one as whole words ("porto last spring");
* ``too_short`` - the expected name holds a predicted one ("server" for "staging server");
* ``overlap`` - they share a content word, neither holds the other;
* ``absent`` - no predicted name shares a word with it (the fact was not read at all).

A predicted name left over is ``extra``. Per expected label it prints recall and, among the
names that matched, how often the predicted label is the expected one (and the labels it gave
instead). It prints only; it writes no results file.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extraction import DATA, expected_sets, lemma_name, load, memory_for, predicted_sets

from sage_memory.extract.base import ExtractionContext

_FUNCTION_WORDS = frozenset({"the", "a", "an", "of", "to", "in", "on", "for", "and", "with"})


def cause(expected: str, predicted: set[str]) -> tuple[str, str]:
    """The cause of one missed expected name and the predicted name it is paired with."""
    e = f" {expected} "
    for p in sorted(predicted, key=len):
        if e in f" {p} ":
            return "too_long", p
    for p in sorted(predicted, key=len, reverse=True):
        if f" {p} " in e:
            return "too_short", p
    words = set(expected.split()) - _FUNCTION_WORDS
    for p in sorted(predicted):
        if words & set(p.split()):
            return "overlap", p
    return "absent", ""


def analyse(items: list[dict], show: str | None) -> None:
    """Run the extractor on ``items`` and print node recall, label agreement and miss causes."""
    from sage_memory.extract.structure import StructureExtractor

    extractor = StructureExtractor()
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    label_ok: Counter[str] = Counter()
    confusions: dict[str, Counter[str]] = defaultdict(Counter)
    causes: dict[str, Counter[str]] = defaultdict(Counter)
    extra = 0
    for item in items:
        delta = extractor.extract(memory_for(item), ExtractionContext())
        p_nodes, _, p_labels, _ = predicted_sets(delta)
        e_nodes, _, e_labels = expected_sets(item)
        pred = {lemma_name(n): p_labels[n] for n in p_nodes}
        exp = {lemma_name(n): e_labels[n] for n in e_nodes}
        unmatched = set(pred) - set(exp)
        extra += len(unmatched)
        for name, label in exp.items():
            total[label] += 1
            if name in pred:
                found[label] += 1
                label_ok[label] += pred[name] == label
                if pred[name] != label:
                    confusions[label][pred[name]] += 1
                continue
            kind, pair = cause(name, unmatched)
            causes[label][kind] += 1
            if show and kind == show:
                print(f"[{kind}] {item['id']} {label}: want {name!r} got {pair!r}")
                print(f"    {item['text']}")
    kinds = ["too_long", "too_short", "overlap", "absent"]
    print(
        f"\n{'label':<13}{'n':>5}{'recall':>8}{'label ok':>10}  "
        + "".join(f"{k:>10}" for k in kinds)
        + "  labelled instead"
    )
    for label in sorted(total, key=lambda x: -total[x]):
        n, hit = total[label], found[label]
        ok = f"{label_ok[label] / hit:.2f}" if hit else "-"
        wrong = ", ".join(f"{k} {v}" for k, v in confusions[label].most_common(3))
        print(
            f"{label:<13}{n:>5}{hit / n:>8.2f}{ok:>10}  "
            + "".join(f"{causes[label][k]:>10}" for k in kinds)
            + f"  {wrong}"
        )
    all_n, all_hit = sum(total.values()), sum(found.values())
    sums = Counter[str]()
    for c in causes.values():
        sums.update(c)
    print(
        f"{'all':<13}{all_n:>5}{all_hit / max(all_n, 1):>8.2f}"
        f"{sum(label_ok.values()) / max(all_hit, 1):>10.2f}  "
        + "".join(f"{sums[k]:>10}" for k in kinds)
        + f"  extra predicted names {extra}"
    )


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments and print the analysis."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", type=Path, help="labelled JSONL (repeatable)")
    ap.add_argument("--show", help="print the items of one cause (too_long, absent, ...)")
    args = ap.parse_args(argv)
    items = [item for p in args.data or [DATA] for item in load(p)]
    analyse(items, args.show)


if __name__ == "__main__":
    main()
