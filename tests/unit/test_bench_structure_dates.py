"""bench/structure.py reads an ``as_of`` given as ISO-8601 or as a date written out, and says
which value it could not read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.conftest import load_bench


def _bench() -> object:
    return load_bench("structure.py")


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
