"""Direct graph edits: add_graph, delete_node, delete_edge, graph, scopes, find_node(exact)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import EdgeSpec, NodeSpec


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[SageMemory]:
    m = SageMemory(tmp_path / "mem", embedder="hashing", extractor=NoGraphExtractor())
    yield m
    m.close()


def alice_works_at_acme(mem: SageMemory, relation: str = "works at") -> str:
    res = mem.add_graph(
        "Alice works at Acme",
        nodes=[NodeSpec("a", "Alice", "Person"), NodeSpec("b", "Acme", "Organization")],
        edges=[EdgeSpec("a", "b", relation)],
        user_id="u1",
        metadata={"via": "test"},
    )
    return res.memory_id


def test_add_graph_writes_memory_nodes_and_edge_in_one_batch(mem: SageMemory) -> None:
    mid = alice_works_at_acme(mem)
    g = mem.graph(user_id="u1")
    assert sorted(n.name for n in g.nodes) == ["Acme", "Alice"]
    assert {n.label for n in g.nodes} == {"Person", "Organization"}
    (edge,) = g.edges
    assert edge.relation == "WORKS_AT"
    assert edge.memory_ids == (mid,)
    assert all(n.memory_ids == (mid,) for n in g.nodes)
    memory = mem.get(mid)
    assert memory.extraction == "skipped"
    assert memory.metadata == {"via": "test"}
    batches = {c.batch_id for c in mem.history(mid) + mem.history(edge.id)}
    assert len(batches) == 1


def test_undo_of_add_graph_removes_everything_it_wrote(mem: SageMemory) -> None:
    mid = alice_works_at_acme(mem)
    (batch,) = {c.batch_id for c in mem.history(mid)}
    mem.undo(batch)
    assert mem.graph(user_id="u1").nodes == ()
    with pytest.raises(NotFoundError):
        mem.get(mid)


def test_nodes_resolve_by_exact_name_only(mem: SageMemory) -> None:
    first = alice_works_at_acme(mem)
    second = mem.add_graph(
        "alice likes tea; Alicia is her sister",
        nodes=[NodeSpec("x", "alice"), NodeSpec("y", "Alicia")],
        user_id="u1",
    ).memory_id
    names = sorted(n.name for n in mem.graph(user_id="u1").nodes)
    assert names == ["Acme", "Alice", "Alicia"]  # case-folded match, no fuzzy merge
    alice = mem.find_node("Alice", user_id="u1", exact=True)
    assert alice.memory_ids == (first, second)
    assert alice.label == "Person"  # an existing node keeps its label


def test_restating_a_current_edge_adds_evidence_not_a_duplicate(mem: SageMemory) -> None:
    m1 = alice_works_at_acme(mem)
    m2 = alice_works_at_acme(mem, relation="works for")  # a synonym of the same relation
    (edge,) = mem.graph(user_id="u1").edges
    assert edge.memory_ids == (m1, m2)


def test_unknown_relation_keeps_its_original_name(mem: SageMemory) -> None:
    alice_works_at_acme(mem, relation="mentors interns at")
    (edge,) = mem.graph(user_id="u1").edges
    assert edge.relation == "RELATED_TO"
    assert edge.attributes["original_relation"] == "mentors interns at"


def test_add_graph_rejects_edges_to_unlisted_nodes(mem: SageMemory) -> None:
    with pytest.raises(ValidationError, match="not among the nodes"):
        mem.add_graph(
            "Alice knows Bob",
            nodes=[NodeSpec("a", "Alice")],
            edges=[EdgeSpec("a", "b", "knows")],
            user_id="u1",
        )
    with pytest.raises(ValidationError, match="empty"):
        mem.add_graph("x", nodes=[NodeSpec("a", "  ")], user_id="u1")
    assert mem.get_all(user_id="u1") == []


def test_delete_node_removes_its_edges_keeps_memories_and_can_be_undone(
    mem: SageMemory,
) -> None:
    mid = alice_works_at_acme(mem)
    changes = mem.delete_node("acme", user_id="u1")
    assert {c.entity for c in changes} == {"node", "edge"}
    g = mem.graph(user_id="u1")
    assert [n.name for n in g.nodes] == ["Alice"]
    assert g.edges == ()
    assert mem.get(mid).text == "Alice works at Acme"
    mem.undo(changes[0].batch_id)
    assert len(mem.graph(user_id="u1").edges) == 1
    # The restored node is searchable again: its vector came back with it.
    assert mem.explore("Acme", user_id="u1", hops=1).node(changes[-1].entity_id)


def test_delete_edge_and_not_found(mem: SageMemory) -> None:
    alice_works_at_acme(mem)
    (edge,) = mem.graph(user_id="u1").edges
    mem.delete_edge(edge.id, user_id="u1")
    assert mem.graph(user_id="u1").edges == ()
    assert len(mem.graph(user_id="u1").nodes) == 2
    with pytest.raises(NotFoundError):
        mem.delete_edge(edge.id, user_id="u1")
    with pytest.raises(NotFoundError):
        mem.delete_node("Nobody", user_id="u1")


def test_find_node_exact_skips_the_lexical_fallback(mem: SageMemory) -> None:
    alice_works_at_acme(mem)
    assert mem.find_node("Acme Corporation", user_id="u1").name == "Acme"
    with pytest.raises(NotFoundError):
        mem.find_node("Acme Corporation", user_id="u1", exact=True)


def test_graph_is_scoped_and_hides_expired_edges(mem: SageMemory) -> None:
    alice_works_at_acme(mem)
    mem.add_graph(
        "Alice lived in Paris until 2020",
        nodes=[NodeSpec("a", "Alice"), NodeSpec("p", "Paris", "Place")],
        edges=[EdgeSpec("a", "p", "lives in", valid_to=datetime(2020, 1, 1, tzinfo=UTC))],
        user_id="u1",
    )
    assert [e.relation for e in mem.graph(user_id="u1").edges] == ["WORKS_AT"]
    assert len(mem.graph(user_id="u1", include_expired=True).edges) == 2
    mem.add_graph("Bob", nodes=[NodeSpec("b", "Bob")], user_id="u2")
    assert [n.name for n in mem.graph(user_id="u2").nodes] == ["Bob"]
    assert {s.user_id for s in mem.scopes()} == {"u1", "u2"}


def test_graph_edits_survive_reopening(tmp_path: Path) -> None:
    with SageMemory(tmp_path / "m", embedder="hashing", extractor=NoGraphExtractor()) as mem:
        alice_works_at_acme(mem)
    with SageMemory(tmp_path / "m", embedder="hashing", extractor=NoGraphExtractor()) as mem:
        g = mem.graph(user_id="u1")
        assert len(g.nodes) == 2
        assert len(g.edges) == 1
        hits = mem.search("where does Alice work?", user_id="u1")
        assert hits.memories[0].text == "Alice works at Acme"
        assert "WORKS_AT" in hits.context
