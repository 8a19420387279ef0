"""bench/beam.py's ``--gap`` tally: evidence dense has in its top k and search does not is
"lost", the non-evidence memories search ranks above it that dense's top k lacks are "above",
each with its dense rank and its BM25 share of the query's best."""

from __future__ import annotations

from types import ModuleType

from tests.conftest import load_bench


def _load() -> ModuleType:
    return load_bench("beam.py")


def test_gap_counts_lost_evidence_and_what_search_put_above_it() -> None:
    beam = _load()
    # A budget-app chat: the question's answer is in messages 7 and 9.
    probe = beam.Probe(
        "which currency did I pick?", frozenset({"7", "9"}), "information_extraction"
    )
    dense = ["7", "3", "9", "4"]  # dense finds both in its top 3
    found = ["7", "12", "15", "3", "9"]  # search keeps 7, ranks 9 fifth
    # BM25 per chunk; a message counts by its best chunk ("15#1" below "15").
    bm25 = [("12", 8.0), ("15", 6.0), ("15#1", 1.0), ("7", 4.0), ("9", 2.0)]
    gap = beam.Gap(k=3)
    gap.add(probe, found, dense, bm25)
    assert gap.lost == [(3, 0.25)]  # 9: dense rank 3, BM25 a quarter of the best
    # 12 and 15 rank above it, neither evidence nor in dense's top 3; 3 is in dense's top 3.
    assert gap.above == [(5, 1.0), (5, 0.75)]
    assert gap.kept == [(1, 0.5)]
    assert gap.lines()[1].startswith("  lost: 1 hits, dense rank 3")


def test_gap_adds_nothing_above_when_search_keeps_dense_hits() -> None:
    beam = _load()
    probe = beam.Probe("q", frozenset({"1"}), "all")
    gap = beam.Gap(k=2)
    gap.add(probe, ["1", "2"], ["1", "5"], [("1", 3.0)])
    assert (gap.lost, gap.above, gap.kept) == ([], [], [(1, 1.0)])
