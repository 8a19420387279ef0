"""bench/focus.py reads the documented shape and scores a tiny world of its own (this test's
fixture, not the blind data), with and without focus."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import ModuleType

from tests.conftest import load_bench

KESTREL, OSPREY = "Project Kestrel", "Project Osprey"
WORLD = {
    "worlds": [
        {
            "id": "twins",
            "memories": [
                "Project Kestrel is a recipe website built with Django.",
                {"text": "Project Osprey is a recipe website built with Flask."},
                "In Kestrel, the release step waits for the translation review.",
                {"text": "In Osprey, the release step waits for the load test.",
                 "timestamp": "2026-05-01T10:00:00Z"},
            ],
            "questions": [
                {
                    "question": "what does the release step wait for?",
                    "foci": [
                        {"focus": KESTREL, "must_include": ["translation review"],
                         "must_not_lead": ["load test"]},
                        {"focus": OSPREY, "must_include": ["load test"],
                         "must_not_lead": ["translation review"]},
                    ],
                },
                {"question": "no focus here", "must_include": ["x"]},
            ],
        }
    ]
}  # fmt: skip


def bench() -> ModuleType:
    return load_bench("focus.py")


#: The blind set's layout (top-level questions naming their world), with this test's own text.
PAIRS = {
    "worlds": [
        {"id": "k", "name": KESTREL, "twin_of": "o", "memories": [
            {"id": "k1", "text": "Project Kestrel kickoff.", "timestamp": "2026-05-01T09:00:00Z"},
            {"id": "k2", "text": "The release step waits for the translation review."},
        ]},
        {"id": "o", "name": OSPREY, "twin_of": "k", "memories": [
            {"id": "o1", "text": "Project Osprey kickoff.", "timestamp": "2026-05-01T10:00:00Z"},
            {"id": "o2", "text": "The release step waits for the load test."},
        ]},
    ],
    "questions": [
        {"id": "q1", "pair": "p", "world_id": "k", "focus": KESTREL,
         "question": "what does the release step wait for?",
         "must_include": ["translation review"], "must_not_lead": ["load test"],
         "evidence": ["k2"], "link": "unanchored"},
        {"id": "q2", "pair": "p", "world_id": "o", "focus": OSPREY,
         "question": "what does the release step wait for?",
         "must_include": ["load test"], "must_not_lead": ["translation review"],
         "evidence": ["o2"], "link": "unanchored"},
    ],
}  # fmt: skip


def test_loader_reads_both_shapes(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(WORLD))
    [group] = bench().load(path)
    assert len(group["worlds"][0]["memories"]) == 4
    assert [c["focus"] for c in group["cases"]] == [KESTREL, OSPREY]
    assert group["cases"][1]["must_not_lead"] == ["translation review"]
    path.write_text(json.dumps(PAIRS))
    [pair] = bench().load(path)
    assert [w["id"] for w in pair["worlds"]] == ["k", "o"]  # twins share one scope
    assert [c["evidence"] for c in pair["cases"]] == [["k2"], ["o2"]]


def test_run_scores_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(PAIRS))
    b = bench()
    report = b.run(argparse.Namespace(data=str(path), embedder="hashing"))
    assert report["cases"] == 2 and report["worlds"] == 2
    sessions = report["modes"]["sessions"]
    assert sessions["focus_not_found"] == 0
    with_focus = sessions["summary"]["with focus"]
    without = sessions["summary"]["without focus"]
    # the answers name no project: only the session they came in tells them apart
    assert with_focus["lead right"] == 100.0 and with_focus["evidence R@5"] == 100.0
    assert without["lead right"] == 50.0  # one answer for both foci: right for one only
    assert with_focus["by link"]["unanchored"]["n"] == 2
    assert "| sessions | with focus |" in b.table(report)
    assert "unanchored" in b.link_table(report)
