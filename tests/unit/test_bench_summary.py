"""The README's benchmark summary is exactly what bench/summary.py makes from bench/results."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_benchmark_table_is_generated_from_results() -> None:
    spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "bench" / "summary.py")
    assert spec is not None and spec.loader is not None
    summary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(summary)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert summary.render() in readme, "rerun: .venv/bin/python bench/summary.py"
