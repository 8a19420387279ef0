"""GraphML import: our export round-trips; another tool's GraphML maps clearly or fails clearly."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from sage_memory import SageMemory, ValidationError
from sage_memory.types import EdgeSpec, NodeSpec


def graph_of(path: Path) -> tuple[dict[str, dict], dict[tuple[str, str, str], dict]]:
    g = nx.read_graphml(path, force_multigraph=True)
    return dict(g.nodes(data=True)), {(a, b, k): d for a, b, k, d in g.edges(keys=True, data=True)}


def test_export_load_export_gives_the_same_graph(tmp_path: Path) -> None:
    first, second = tmp_path / "a.graphml", tmp_path / "b.graphml"
    with SageMemory(embedder="hashing") as mem:
        mem.add_graph(
            "Ines works at Quarry Labs in Ghent",
            nodes=[
                NodeSpec("i", "Ines", "Person", aliases=("Inès",)),
                NodeSpec("q", "Quarry Labs"),
            ],
            edges=[EdgeSpec("i", "q", "WORKS_AT", fact="Ines works at Quarry Labs")],
            user_id="u",
        )
        mem.add("Tomas lives in Ghent.", user_id="v")
        written = mem.export(first, format="graphml")
    with SageMemory.load(first, embedder="hashing") as copy:
        assert copy.find_node("Inès", user_id="u").name == "Ines"  # aliases came back
        assert copy.export(second, format="graphml") == written
    assert graph_of(first) == graph_of(second)


def test_a_foreign_graphml_maps_its_attributes(tmp_path: Path) -> None:
    g = nx.MultiDiGraph()
    g.add_node("n0", label="Ada Lovelace", type="person", born=1815)
    g.add_node("n1", name="Analytical Engine", colour="brass")
    g.add_edge("n0", "n1", label="wrote notes on", weight=2.5)
    path = tmp_path / "other.graphml"
    nx.write_graphml(g, path)
    with pytest.raises(ValidationError, match="user_id"):
        SageMemory.load(path, embedder="hashing")
    with SageMemory.load(path, embedder="hashing", user_id="u") as mem:
        ada = mem.find_node("Ada Lovelace", user_id="u")
        assert ada.label == "Person"
        assert ada.attributes["born"] == 1815 and ada.attributes["graphml_id"] == "n0"
        engine = mem.find_node("Analytical Engine", user_id="u")
        assert engine.attributes["colour"] == "brass"
        (hit,) = mem.neighbors(ada.id, user_id="u")
        assert hit.node.id == engine.id
        edge = mem.graph(user_id="u").edges[0]
        assert edge.relation == "RELATED_TO"
        assert edge.attributes["original_relation"] == "wrote notes on"
        assert edge.weight == 2.5


def test_a_broken_graphml_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.graphml"
    path.write_text("<?xml version='1.0'?><graphml><graph><node id='a'></graph>")
    with pytest.raises(ValidationError, match="not a readable GraphML"):
        SageMemory.load(path, embedder="hashing", user_id="u")
