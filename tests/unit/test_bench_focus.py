"""bench/focus.py reads the documented shape and scores a tiny world of its own (this test's
fixture, not the blind data), with and without focus."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]

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
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_focus", ROOT / "bench" / "focus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_loader_reads_the_documented_shape(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(WORLD))
    [world] = bench().load(path)
    assert len(world["memories"]) == 4
    assert [c["focus"] for c in world["cases"]] == ["Project Kestrel", "Project Osprey"]
    assert world["cases"][1]["must_not_lead"] == ["translation review"]


def test_run_scores_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(WORLD["worlds"]))  # a bare list of worlds is read too
    b = bench()
    report = b.run(argparse.Namespace(data=str(path), embedder="hashing"))
    assert report["cases"] == 2 and report["focus_not_found"] == 0
    with_focus = report["summary"]["with focus"]
    without = report["summary"]["without focus"]
    assert with_focus["lead right"] == 100.0 and with_focus["lead clean"] == 100.0
    assert without["lead right"] == 50.0  # one answer for both foci: right for one only
    assert "| with focus |" in b.table(report)
