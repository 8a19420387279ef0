"""The README's benchmark summary is exactly what bench/summary.py makes from bench/results."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import load_bench

ROOT = Path(__file__).resolve().parents[2]


def test_readme_benchmark_table_is_generated_from_results() -> None:
    summary = load_bench("summary.py")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert summary.render() in readme, "rerun: .venv/bin/python bench/summary.py"
