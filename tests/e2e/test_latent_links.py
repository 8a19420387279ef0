"""Latent associations: unlinked nodes that share neighbours are suggested for review, with
their evidence; accepting writes an edge that search follows; undo removes it."""

from __future__ import annotations

from sage_memory import SageMemory
from sage_memory.types import EdgeSpec, NodeSpec


def facts(mem: SageMemory, triples: list[tuple[str, str, str]]) -> None:
    for a, rel, b in triples:
        mem.add_graph(
            f"{a} {rel.lower().replace('_', ' ')} {b}",
            nodes=[NodeSpec("a", a), NodeSpec("b", b)],
            edges=[EdgeSpec("a", "b", rel)],
            user_id="u",
        )


def test_shared_neighbours_make_a_reviewable_undoable_link() -> None:
    with SageMemory(embedder="hashing") as mem:
        facts(
            mem,
            [
                ("Ines", "WORKS_AT", "Quarry Labs"),
                ("Ines", "LIVES_IN", "Ghent"),
                ("Tomas", "WORKS_AT", "Quarry Labs"),
                ("Tomas", "LIVES_IN", "Ghent"),
                ("Ghent", "PART_OF", "Belgium"),
            ],
        )
        report = mem.evolve(user_id="u", operations=["suggest_links"])
        links = [s for s in report.suggestions if s.op == "suggest_links"]
        pairs = {frozenset(s.evidence["common_neighbours"]) for s in links}
        assert frozenset({"Quarry Labs", "Ghent"}) in pairs
        (ines_tomas,) = [
            s for s in links if set(s.evidence["common_neighbours"]) == {"Quarry Labs", "Ghent"}
        ]
        assert ines_tomas.evidence["adamic_adar"] > 0
        assert not any(p.applied for p in report.proposed if p.op == "suggest_links")
        assert ines_tomas in mem.review(user_id="u")

        changes = mem.accept(ines_tomas.id)
        ines = mem.find_node("Ines", user_id="u")
        near = {h.node.name for h in mem.neighbors(ines.id, user_id="u")}
        assert "Tomas" in near
        found = mem.search("Ines", user_id="u")
        assert any(h.edge.relation == "POSSIBLY_RELATED_TO" for h in found.edges)
        mem.undo(changes[0].batch_id)
        near = {h.node.name for h in mem.neighbors(ines.id, user_id="u")}
        assert "Tomas" not in near


def test_one_shared_neighbour_alone_is_not_enough() -> None:
    with SageMemory(embedder="hashing") as mem:
        facts(mem, [("Ines", "WORKS_AT", "Quarry Labs"), ("Quarry Labs", "LOCATED_IN", "Ghent")])
        report = mem.evolve(user_id="u", operations=["suggest_links"])
        assert not [s for s in report.suggestions if s.op == "suggest_links"]
