"""bench/throughput.py measures what it says: the real corpus or a clear stop, side by side."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import throughput  # noqa: E402


def test_a_missing_locomo_file_stops_the_run_instead_of_going_synthetic(tmp_path: Path) -> None:
    missing = tmp_path / "locomo_dev.json"
    with pytest.raises(SystemExit, match="--allow-synthetic"):
        throughput.corpus(20, missing)
    texts = throughput.corpus(20, missing, allow_synthetic=True)
    assert len(texts) == 20
    assert throughput.describe_corpus(texts, missing) == (
        "no LoCoMo turns + 20 synthetic sentences"
    )


def test_the_corpus_names_its_locomo_turns(tmp_path: Path) -> None:
    locomo = tmp_path / "locomo.json"
    turns = [{"speaker": "A", "text": "hello there"}, {"speaker": "B", "text": "hi"}]
    locomo.write_text(json.dumps([{"conversation": {"session_1": turns}}]))
    texts = throughput.corpus(5, locomo)
    assert texts[:2] == ["A: hello there", "B: hi"]
    assert throughput.describe_corpus(texts, locomo) == (
        f"2 LoCoMo dev turns from {locomo} + 3 synthetic sentences"
    )


class Clock:
    """A stand-in system that records the order it is called in (the harness, not the store)."""

    def __init__(self, name: str, log: list[str], cost: float) -> None:
        self.name, self.log, self.cost = name, log, cost

    def warm(self) -> None:
        pass

    def bulk(self, texts: list[str]) -> float:
        self.log.append(f"{self.name}:bulk")
        return self.cost * len(texts)

    def add(self, text: str) -> float:
        self.log.append(f"{self.name}:add")
        return self.cost

    def search(self, query: str) -> float:
        self.log.append(f"{self.name}:search")
        return self.cost

    def close(self) -> dict[str, object]:
        return {}


def test_systems_take_turns_and_ratios_are_medians_of_rounds() -> None:
    log: list[str] = []
    a, b = Clock("a", log, 0.02), Clock("b", log, 0.01)
    rows = throughput.interleaved([a, b], ["t"] * 8, ["s"] * 4, ["q"] * 4, rounds=2, warmup=0)
    bulk = [e for e in log if e.endswith("bulk")]
    assert bulk == ["a:bulk", "b:bulk", "b:bulk", "a:bulk"]  # the order turns each round
    adds = [e for e in log if e.endswith("add")]
    firsts = [adds[i] for i in range(0, len(adds), 2)]
    assert firsts == ["a:add", "b:add", "b:add", "a:add"]  # and call by call, in turn
    assert all({adds[i], adds[i + 1]} == {"a:add", "b:add"} for i in range(0, len(adds), 2))
    assert rows[0]["ratio_to_chroma"]["search_p95"] == pytest.approx(2.0)
    assert rows[0]["ratio_to_chroma"]["bulk_per_s"] == pytest.approx(0.5)
    assert len(rows[0]["rounds"]["add_p50"]) == 2
