"""Where a relation's argument ends: the words the structure extractor keeps in a name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.structure import StructureExtractor
from sage_memory.types import Memory, Scope

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)


def edges(text: str) -> set[tuple[str, str, str, bool]]:
    memory = Memory(
        id="t",
        text=text,
        scope=Scope(agent_id="t"),
        timestamp=NOW,
        created_at=NOW,
        updated_at=NOW,
    )
    delta = StructureExtractor().extract(memory, ExtractionContext())
    assert delta.error is None
    names = {n.key: n.name.lower() for n in delta.nodes}
    return {(names[e.source], e.relation, names[e.target], e.negated) for e in delta.edges}


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        # a time word the parse hangs on a noun says which thing, not when
        (
            "The night shift relies on the backup pump.",
            ("night shift", "DEPENDS_ON", "backup pump", False),
        ),
        (
            "The Friday market is part of the harbour festival.",
            ("friday market", "PART_OF", "harbour festival", False),
        ),
        ("Omar hates afternoon meetings.", ("omar", "DISLIKES", "afternoon meeting", False)),
    ],
)
def test_a_time_word_that_modifies_a_noun_stays_in_the_name(
    text: str, edge: tuple[str, str, str, bool]
) -> None:
    assert edge in edges(text)


def test_a_time_phrase_of_the_clause_still_leaves_the_name() -> None:
    assert ("release", "BLOCKED_BY", "review", False) in edges(
        "Monday the release was held up by the review."
    )


def test_a_plural_possessive_stays_in_the_name() -> None:
    assert ("ines", "MEMBER_OF", "weaver guild", False) in edges(
        "Ines belongs to the weavers' guild."
    )


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        # a gerund the dictionary lacks opens the sentence: a task, not a name
        (
            "Resealing the bath fixed the damp patch.",
            ("damp patch", "SOLVED_BY", "reseal the bath", False),
        ),
        # a prefixed verb keeps its whole stem in the base form
        (
            "Retiling the hallway requires a tile cutter.",
            ("retile the hallway", "REQUIRES", "tile cutter", False),
        ),
    ],
)
def test_a_task_is_named_by_the_base_form_of_its_verb(
    text: str, edge: tuple[str, str, str, bool]
) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        # a possessive inside a proper name ("St. Cuthbert's Hospice") is part of that name
        (
            "Li works as a porter at St. Cuthbert's Hospice.",
            ("li", "WORKS_AT", "st. cuthbert hospice", False),
        ),
        ("Dev sings in the Fishermen's Choir.", ("dev", "MEMBER_OF", "fishermen choir", False)),
    ],
)
def test_a_possessive_inside_a_proper_name_stays(
    text: str, edge: tuple[str, str, str, bool]
) -> None:
    assert edge in edges(text)


def test_a_possessor_of_a_name_of_its_own_is_still_dropped() -> None:
    # "Qlint" is a name of its own, not a common noun capitalised in an institution's name
    assert ("lab", "USES", "qlint", False) in edges("The lab uses Zorvik's Qlint.")


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        # how far a setting moved is a quantity, not part of the task's name
        (
            "Shortening the rope by 2 m fixed the sagging.",
            ("sagging", "SOLVED_BY", "shorten the rope", False),
        ),
        (
            "Raising the buffer to 8k stopped the dropouts.",
            ("dropout", "SOLVED_BY", "raise the buffer", False),
        ),
        # a version (or a bare number) is the value the task sets: it stays
        (
            "Pinning requests to 2.31 fixed the import error.",
            ("import error", "SOLVED_BY", "pin requests to 2.31", False),
        ),
    ],
)
def test_a_measure_after_a_task_is_no_part_of_its_name(
    text: str, edge: tuple[str, str, str, bool]
) -> None:
    assert edge in edges(text)
