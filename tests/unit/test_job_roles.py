"""A job taken or lost "as" a role is the role held or given up, and a good time had is no
possession (sentences written for these tests, in our own words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory.extract import syntax
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.structure import StructureExtractor
from sage_memory.types import GraphDelta, Memory, Scope

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)

pytestmark = pytest.mark.skipif(not syntax.available(), reason="spaCy's English model absent")


def facts(text: str) -> set[tuple[str, str, str, bool]]:
    memory = Memory(
        id="t", text=text, scope=Scope(user_id="u"), timestamp=NOW, created_at=NOW, updated_at=NOW
    )
    delta: GraphDelta = StructureExtractor().extract(memory, ExtractionContext())
    by_key = {n.key: n.name.lower() for n in delta.nodes}
    return {(by_key[e.source], e.relation, by_key[e.target], e.negated) for e in delta.edges}


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Odile: I lost my job as a welder in March.", ("odile", "HAS_ROLE", "welder", True)),
        ("Odile: I quit my job as a courier.", ("odile", "HAS_ROLE", "courier", True)),
        ("Ferdi landed a job as a sous chef.", ("ferdi", "HAS_ROLE", "sous chef", False)),
    ],
)
def test_a_job_taken_or_lost_as_a_role(text: str, edge: tuple[str, str, str, bool]) -> None:
    assert edge in facts(text)


def test_a_good_time_is_no_possession() -> None:
    assert not facts("I had a great time at the fair.")
    assert ("u", "OWNS", "red canoe", False) in facts("I have a red canoe.")
