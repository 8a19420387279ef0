"""bench/structure.py reads an ``as_of`` given as ISO-8601 or as a date written out, and says
which value it could not read."""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> object:
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(
        "bench_structure", ROOT / "bench" / "structure.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2025-11-02", datetime(2025, 11, 2)),
        ("2025-11-02T08:30:00Z", datetime(2025, 11, 2, 8, 30, tzinfo=UTC)),
        ("November 2, 2025", datetime(2025, 11, 2)),
        ("02 November 2025", datetime(2025, 11, 2)),
        ("2 Nov 2025", datetime(2025, 11, 2)),
        ("Nov 02, 2025", datetime(2025, 11, 2)),
    ],
)
def test_as_of_dates_are_read_in_common_forms(written: str, expected: datetime) -> None:
    assert _bench().parse_time(written) == expected  # type: ignore[attr-defined]


def test_an_unreadable_as_of_names_itself() -> None:
    with pytest.raises(ValueError, match="the week after"):
        _bench().parse_time("the week after")  # type: ignore[attr-defined]
