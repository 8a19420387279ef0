"""Set-up shared by the integration tests: how to open a memory, and a small known graph."""

from __future__ import annotations

from pathlib import Path

from sage_memory import SageMemory
from sage_memory.types import EdgeSpec, NodeSpec


def open_memory(path: Path | None = None) -> SageMemory:
    """A SageMemory with the default extractor and the fast hashing embedder."""
    return SageMemory(path, embedder="hashing")


def seed_graph(mem: SageMemory, user_id: str = "alice") -> None:
    """A small known graph: Alice works on Orion, which uses Neo4j and depends on Kafka."""
    mem.add_graph(
        "Alice works on the Orion project, a graph database service.",
        nodes=[NodeSpec("a", "Alice", "Person"), NodeSpec("o", "Orion", "Project")],
        edges=[EdgeSpec("a", "o", "works on", fact="Alice works on Orion")],
        user_id=user_id,
    )
    mem.add_graph(
        "Orion uses Neo4j and depends on Kafka.",
        nodes=[NodeSpec("o", "Orion"), NodeSpec("n", "Neo4j", "Tool"), NodeSpec("k", "Kafka")],
        edges=[EdgeSpec("o", "n", "uses"), EdgeSpec("o", "k", "depends on")],
        user_id=user_id,
    )
    mem.add("Alice prefers green tea in the afternoon.", user_id=user_id)


#: Two near-twin projects whose tasks share names (for the focus option of the adapters).
TWINS = (
    "Project Kestrel is a recipe website built with Django.",
    "Project Osprey is a recipe website built with Flask.",
    "In Kestrel, the release step waits for the translation review.",
    "In Osprey, the release step waits for the load test.",
)


def seed_twins(mem: SageMemory, user_id: str = "alice") -> None:
    for text in TWINS:
        mem.add(text, user_id=user_id)


def leads(context: str, first: str, second: str) -> bool:
    """Whether ``first`` comes before ``second`` in a packed context (both present)."""
    return first in context and second in context and context.index(first) < context.index(second)
