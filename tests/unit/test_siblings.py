"""Siblings: names one distinctive word apart are two things; a typo or an inflection is not."""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import merge_aliases
from sage_memory.entities.resolution import resolve_entity
from sage_memory.entities.siblings import are_siblings, distinctive_difference, edit_distance
from sage_memory.evolve import duplicates
from sage_memory.types import Node, NodeSpec, Scope

T0 = datetime(2026, 3, 1, tzinfo=UTC)
S = Scope(user_id="u")


def node(nid: str, name: str, label: str = "Concept") -> Node:
    return Node(id=nid, scope=S, name=name, label=label, created_at=T0, updated_at=T0)


def test_a_swap_of_two_letters_is_one_edit() -> None:
    assert edit_distance("corporatoin", "corporation") == 1
    assert edit_distance("iterable", "iterator") == 3


def test_family_members_differ_in_one_whole_word() -> None:
    assert distinctive_difference("PosixPath", "WindowsPath") == ("posix", "windows")
    assert distinctive_difference("numbers.Real", "numbers.Complex") == ("real", "complex")
    assert distinctive_difference("typing.Iterable", "typing.Iterator") == ("iterable", "iterator")


def test_typos_inflections_and_modifiers_are_not_siblings() -> None:
    assert distinctive_difference("Acme Corporatoin", "Acme Corporation") is None
    assert distinctive_difference("colour palette", "color palette") is None
    assert distinctive_difference("file paths", "file path") is None
    assert distinctive_difference("deep learning", "learning") is None
    assert not are_siblings(["pd"], ["pandas"])  # no shared word: not this check's call


def test_an_alias_naming_the_same_thing_defeats_the_sibling_verdict() -> None:
    assert are_siblings(["PosixPath"], ["WindowsPath"])
    assert not are_siblings(["PosixPath", "WindowsPath"], ["WindowsPath"])


def test_suggestions_skip_siblings_but_keep_typos() -> None:
    aliases = merge_aliases()
    a, b = node("a", "typing.Iterable"), node("b", "typing.Iterator")
    assert (
        duplicates.merge_score(a, b, aliases=aliases, neighbours_a=["x"], neighbours_b=["x"])
        is None
    )
    c, d = node("c", "Acme Corporatoin"), node("d", "Acme Corporation")
    scored = duplicates.merge_score(c, d, aliases=aliases)
    assert scored is not None and scored[0] >= 0.9


def test_unlike_names_tied_the_same_way_to_one_parent_are_siblings() -> None:
    aliases = merge_aliases()
    a, b = node("a", "Paris", "Place"), node("b", "Marseille", "Place")
    tie = [("LOCATED_IN", True, "fr")]
    other = [("LOCATED_IN", True, "es")]
    assert (
        duplicates.merge_score(
            a,
            b,
            aliases=aliases,
            neighbours_a=["fr", "x"],
            neighbours_b=["fr", "x"],
            typed_a=tie,
            typed_b=tie,
        )
        is None
    )
    # Without the common typed tie the shared neighbours still count as evidence.
    assert (
        duplicates.merge_score(
            a,
            b,
            aliases=aliases,
            neighbours_a=["fr", "x"],
            neighbours_b=["fr", "x"],
            typed_a=tie,
            typed_b=other,
        )
        is not None
    )


def test_write_time_resolution_keeps_siblings_apart() -> None:
    existing = node("n1", "typing.Iterable")
    found = resolve_entity(
        NodeSpec("k", "typing.Iterator", "Concept"),
        [existing],
        config=ExtractConfig(fuzzy_threshold=0.8),
    )
    assert found.node_id is None
    typo = resolve_entity(
        NodeSpec("k", "typing.Iterabel", "Concept"),
        [existing],
        config=ExtractConfig(fuzzy_threshold=0.8),
    )
    assert typo.node_id == "n1"


def test_a_qualified_and_a_bare_name_under_one_parent_stay_candidates() -> None:
    a, b = node("a", "collections.OrderedDict"), node("b", "OrderedDict")
    tie = [("PART_OF", True, "stdlib")]
    scored = duplicates.merge_score(
        a,
        b,
        aliases=merge_aliases(),
        neighbours_a=["stdlib", "x"],
        neighbours_b=["stdlib", "x"],
        typed_a=tie,
        typed_b=tie,
    )
    assert scored is not None
