"""Entity resolution and name normalisation: pure functions, checked case by case."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import match_key
from sage_memory.entities.resolution import (
    DEFAULT_LABEL,
    labels_compatible,
    name_similarity,
    resolve_entity,
)
from sage_memory.types import Node, NodeSpec, Scope

SCOPE = Scope(user_id="alice")
CONFIG = ExtractConfig()


def node(node_id: str, name: str, label: str = "Entity", *aliases: str, mentions: int = 0) -> Node:
    return Node(
        id=node_id,
        scope=SCOPE,
        name=name,
        label=label,
        aliases=aliases,
        memory_ids=tuple(f"m{i}" for i in range(mentions)),
    )


def spec(name: str, label: str = "Entity", *aliases: str) -> NodeSpec:
    return NodeSpec(key=name.lower(), name=name, label=label, aliases=aliases)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The  Pandas library!", "pandas library"),
        ("pd", "pandas"),
        ("PD.read_csv", "pandas.read_csv"),
        ("np.linalg.norm", "numpy.linalg.norm"),
        ("K8s", "kubernetes"),
        ("sklearn", "scikit-learn"),
        ("TF", "tensorflow"),
        ("js", "javascript"),
        ("Node.js", "node.js"),
        ("C++", "c++"),
        ("Vitamin A", "vitamin a"),  # only leading articles go
        ("pandas.", "pandas"),
        ("Ｐａｎｄａｓ", "pandas"),  # full-width letters
        ("!!!", ""),
    ],
)
def test_match_key(raw: str, expected: str) -> None:
    assert match_key(raw) == expected


def test_user_aliases_extend_and_override() -> None:
    aliases = {"Big Apple": "New York City", "pd": "pandas-dev"}
    assert match_key("the big apple", aliases) == "new york city"
    assert match_key("pd", aliases) == "pandas-dev"
    assert match_key("np", aliases) == "numpy"


def test_exact_match_ignores_case_punctuation_and_articles() -> None:
    found = resolve_entity(
        spec("the Eiffel Tower", "Place"),
        [node("n1", "Louvre", "Place"), node("n2", "Eiffel tower!", "Place")],
        config=CONFIG,
    )
    assert (found.node_id, found.method, found.score) == ("n2", "exact", 1.0)


def test_alias_match_builtin_and_node_aliases() -> None:
    found = resolve_entity(spec("pd", "Tool"), [node("n1", "pandas", "Tool")], config=CONFIG)
    assert (found.node_id, found.method) == ("n1", "alias")

    found = resolve_entity(
        spec("Bob", "Person"), [node("n1", "Robert Smith", "Person", "Bob")], config=CONFIG
    )
    assert (found.node_id, found.method) == ("n1", "alias")

    found = resolve_entity(
        spec("Robert Smith", "Person", "Bobby"),
        [node("n1", "Bobby", "Person")],
        config=CONFIG,
    )
    assert (found.node_id, found.method) == ("n1", "alias")


def test_dotted_alias_match() -> None:
    found = resolve_entity(
        spec("pd.read_csv", "Tool"),
        [node("n1", "pandas", "Tool"), node("n2", "pandas.read_csv", "Tool")],
        config=CONFIG,
    )
    assert (found.node_id, found.method) == ("n2", "alias")


def test_config_aliases_are_used() -> None:
    config = ExtractConfig(aliases={"pg": "postgresql"})
    found = resolve_entity(spec("PG", "Tool"), [node("n1", "PostgreSQL", "Tool")], config=config)
    assert (found.node_id, found.method) == ("n1", "alias")
    assert (
        resolve_entity(
            spec("PG", "Tool"), [node("n1", "PostgreSQL", "Tool")], config=CONFIG
        ).node_id
        is None
    )


def test_fuzzy_match_above_threshold() -> None:
    found = resolve_entity(
        spec("Kubernetes cluster", "Tool"),
        [node("n1", "kubernetes clusters", "Tool"), node("n2", "Docker", "Tool")],
        config=CONFIG,
    )
    assert (found.node_id, found.method) == ("n1", "fuzzy")
    assert CONFIG.fuzzy_threshold <= found.score < 1.0

    reordered = resolve_entity(
        spec("Smith, John", "Person"), [node("n1", "John Smith", "Person")], config=CONFIG
    )
    assert (reordered.node_id, reordered.method) == ("n1", "fuzzy")


def test_different_numbers_never_fuzzy_merge() -> None:
    assert name_similarity("python 3.11", "python 3.12") < CONFIG.fuzzy_threshold
    found = resolve_entity(
        spec("Python 3.11", "Tool"), [node("n1", "Python 3.12", "Tool")], config=CONFIG
    )
    assert found.node_id is None
    assert found.ambiguous == (("n1", found.ambiguous[0][1]),)  # but worth a review


def test_embedding_match() -> None:
    base = np.array([1.0, 0.0, 0.0])
    vectors = {"n1": np.array([0.99, 0.1, 0.0]), "n2": np.array([0.0, 1.0, 0.0])}
    found = resolve_entity(
        spec("NYC", "Place"),
        [node("n1", "New York City", "Place"), node("n2", "Boston", "Place")],
        spec_vector=base,
        candidate_vectors=vectors,
        config=CONFIG,
    )
    assert (found.node_id, found.method) == ("n1", "embedding")
    assert found.score == pytest.approx(0.99 / np.hypot(0.99, 0.1))


def test_ambiguous_creates_nothing_but_reports_candidates() -> None:
    vectors = {"n1": np.array([0.85, np.sqrt(1 - 0.85**2)]), "n2": np.array([0.0, 1.0])}
    found = resolve_entity(
        spec("Acme Corp", "Organization"),
        [node("n1", "Acme Holdings", "Organization"), node("n2", "Globex", "Organization")],
        spec_vector=np.array([1.0, 0.0]),
        candidate_vectors=vectors,
        config=CONFIG,
    )
    assert found.node_id is None
    assert found.method is None
    assert [nid for nid, _ in found.ambiguous] == ["n1"]
    assert CONFIG.ambiguous_threshold <= found.ambiguous[0][1] < CONFIG.embedding_threshold


def test_incompatible_labels_never_match() -> None:
    assert not labels_compatible("Person", "Tool")
    assert labels_compatible("Tool", "Resource")
    assert labels_compatible("Entity", "Person")
    assert labels_compatible("Person", "concept")
    found = resolve_entity(
        spec("Jordan", "Person"),
        [node("n1", "Jordan", "Place")],
        spec_vector=np.array([1.0, 0.0]),
        candidate_vectors={"n1": np.array([1.0, 0.0])},
        config=CONFIG,
    )
    assert found == type(found)(None)
    # An unknown kind (Entity) may still match a known one.
    assert (
        resolve_entity(spec("Jordan"), [node("n1", "Jordan", "Place")], config=CONFIG).node_id
        == "n1"
    )


def test_duplicates_pick_a_stable_winner_and_report_the_rest() -> None:
    nodes = [
        node("b", "Pandas", "Tool", mentions=1),
        node("a", "pandas", "Entity", mentions=5),
        node("c", "pandas", "Tool", mentions=3),
    ]
    first = resolve_entity(spec("pandas", "Tool"), nodes, config=CONFIG)
    second = resolve_entity(spec("pandas", "Tool"), nodes[::-1], config=CONFIG)
    assert first == second
    assert first.node_id == "c"  # same label first, then the better-attested node
    assert {nid for nid, _ in first.ambiguous} == {"a", "b"}


def test_no_candidates_or_no_name() -> None:
    assert resolve_entity(spec("anything"), [], config=CONFIG).node_id is None
    assert resolve_entity(spec("???"), [node("n1", "x")], config=CONFIG).node_id is None


def test_a_slot_default_label_joins_the_same_name_of_another_kind() -> None:
    org = node("o1", "Acme Labs", "Organization", mentions=2)
    guessed = dataclasses.replace(spec("Acme Labs", "Person"), label_default=True)
    assert resolve_entity(guessed, [org], config=CONFIG).node_id == "o1"
    # shown to be a person (not a slot's guess): another thing of the same name
    assert resolve_entity(spec("Acme Labs", "Person"), [org], config=CONFIG).node_id is None
    # a default never merges kinds by likeness alone, nor offers them for review
    near = dataclasses.replace(spec("Acme Lab", "Person"), label_default=True)
    res = resolve_entity(near, [org], config=CONFIG)
    assert res.node_id is None and not res.ambiguous
    # a node whose own label was only a default takes a shown kind of the same name
    owner = dataclasses.replace(node("p1", "Acme Labs", "Person"), attributes={DEFAULT_LABEL: True})
    assert resolve_entity(spec("Acme Labs", "Organization"), [owner], config=CONFIG).node_id == "p1"
