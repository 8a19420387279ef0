"""A relation's guess at what its ends are never splits a name the graph already knows.

"X owns Y" supposes a person owner; when X is already known as an organization, the owner is
that organization, not a second node of the same name. And two roles one sentence states ("a
producer and an engineer") hold together: neither ends the other, nor an earlier statement of
one of them. Through the public API, the offline structure extractor, SQLite and Chroma in a
temporary folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sage_memory import SageConfig, SageMemory


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp).replace(tzinfo=UTC)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[SageMemory]:
    mem = SageMemory(tmp_path / "mem", embedder="hashing", config=SageConfig(vector_index="chroma"))
    yield mem
    mem.close()


def _labels(mem: SageMemory, name: str) -> list[str]:
    return sorted(n.label for n in mem.graph(user_id="u").nodes if n.name == name)


def _edges(mem: SageMemory, *, include_expired: bool = False) -> set[tuple[str, str, str]]:
    g = mem.graph(user_id="u", include_expired=include_expired)
    names = {n.id: n.name for n in g.nodes}
    return {
        (names[e.source_id], e.relation, names[e.target_id])
        for e in g.edges
        if include_expired or e.valid_to is None
    }


@pytest.mark.parametrize("first", ["works at", "is the owner of"])
def test_an_owner_known_as_an_organization_stays_one_node(folder: SageMemory, first: str) -> None:
    texts = {
        "works at": ["Priya works at Vantor Labs.", "Vantor Labs owns the staging server."],
        "is the owner of": ["Vantor Labs owns the staging server.", "Priya works at Vantor Labs."],
    }[first]
    for k, text in enumerate(texts):
        folder.add(text, user_id="u", timestamp=_at(f"2026-03-0{k + 1}"))
    assert _labels(folder, "Vantor Labs") == ["Organization"]
    assert {("Priya", "WORKS_AT", "Vantor Labs"), ("Vantor Labs", "OWNS", "staging server")} <= (
        _edges(folder)
    )
    hit = folder.search("what does Vantor Labs own?", user_id="u", limit=5)
    assert any("staging server" in h.memory.text for h in hit.memories)


def test_a_default_label_joins_the_name_an_earlier_mention_gave_a_kind(
    folder: SageMemory,
) -> None:
    # "works at Quillmere" is read as a mention at an organization; the owner slot's guess
    # (a person) yields to it: one node, the organization.
    folder.add("Dana joined Quillmere as a tester.", user_id="u", timestamp=_at("2026-03-01"))
    folder.add("Quillmere owns the build farm.", user_id="u", timestamp=_at("2026-03-02"))
    labels = _labels(folder, "Quillmere")
    assert len(labels) == 1, labels
    assert labels != ["Person"]


def test_two_roles_stated_together_are_both_current(folder: SageMemory) -> None:
    folder.add("Tomas Reyes is a producer.", user_id="u", timestamp=_at("2026-02-01T09:00"))
    folder.add(
        "Tomas Reyes is a producer and an engineer.",
        user_id="u",
        timestamp=_at("2026-02-01T15:00"),
    )
    current = _edges(folder)
    assert ("Tomas Reyes", "HAS_ROLE", "producer") in current
    assert ("Tomas Reyes", "HAS_ROLE", "engineer") in current


def test_a_role_stated_later_on_its_own_still_replaces_the_pair(folder: SageMemory) -> None:
    folder.add(
        "Tomas Reyes is a producer and an engineer.", user_id="u", timestamp=_at("2026-02-01")
    )
    folder.add("Tomas Reyes is a teacher now.", user_id="u", timestamp=_at("2026-06-01"))
    current = {e for e in _edges(folder) if e[1] == "HAS_ROLE"}
    assert current == {("Tomas Reyes", "HAS_ROLE", "teacher")}
    assert ("Tomas Reyes", "HAS_ROLE", "engineer") in _edges(folder, include_expired=True)
