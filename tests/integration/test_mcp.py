"""The MCP server through a real MCP client: in process (every tool), and over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from sage_memory_mcp import create_server
from support import open_memory

from sage_memory import SageMemory

REFERENCE_TOOLS = {
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
}


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content
    assert result.structured_content is not None, f"{tool} returned no structured content"
    return result.structured_content


def names(graph: dict[str, Any]) -> list[str]:
    return sorted(e["name"] for e in graph["entities"])


def triples(graph: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(r["from"], r["relationType"], r["to"]) for r in graph["relations"]}


async def test_every_tool_through_an_in_process_client(memory: SageMemory) -> None:
    async with Client(create_server(memory, user_id="alice")) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == REFERENCE_TOOLS | {"query_related_memories", "explore_graph"}
        assert all(t.output_schema for t in listed.values())  # typed results
        relation_args = listed["create_relations"].input_schema["$defs"]["RelationIn"]
        assert set(relation_args["properties"]) == {"from", "to", "relationType"}

        created = await call(
            client,
            "create_entities",
            {
                "entities": [
                    {"name": "Alice", "entityType": "person", "observations": ["Speaks Dutch"]},
                    {"name": "Acme", "entityType": "organization", "observations": []},
                    {"name": "Alice", "entityType": "person", "observations": []},
                ]
            },
        )
        assert names(created) == ["Acme", "Alice"]
        again = await call(
            client, "create_entities", {"entities": [{"name": "Acme", "entityType": "company"}]}
        )
        assert again == {"entities": []}  # existing names are ignored

        relations = {"relations": [{"from": "Alice", "to": "Acme", "relationType": "works_at"}]}
        assert await call(client, "create_relations", relations) == relations
        assert await call(client, "create_relations", relations) == {"relations": []}
        bad = await client.call_tool(
            "create_relations",
            {"relations": [{"from": "Alice", "to": "Nobody", "relationType": "knows"}]},
        )
        assert bad.is_error
        assert "Nobody" in bad.content[0].text

        added = await call(
            client,
            "add_observations",
            {"observations": [{"entityName": "Alice", "contents": ["Likes tea", "Speaks Dutch"]}]},
        )
        assert added == {"results": [{"entityName": "Alice", "addedObservations": ["Likes tea"]}]}
        missing = await client.call_tool(
            "add_observations", {"observations": [{"entityName": "Zed", "contents": ["x"]}]}
        )
        assert missing.is_error

        graph = await call(client, "read_graph")
        alice = next(e for e in graph["entities"] if e["name"] == "Alice")
        assert alice == {
            "name": "Alice",
            "entityType": "person",
            "observations": ["Speaks Dutch", "Likes tea"],
        }
        assert triples(graph) == {("Alice", "works_at", "Acme")}

        found = await call(client, "search_nodes", {"query": "tea"})
        assert names(found) == ["Alice"]
        assert triples(found) == {("Alice", "works_at", "Acme")}  # one end in the result
        by_type = await call(client, "search_nodes", {"query": "ORGANIZATION"})
        assert names(by_type) == ["Acme"]
        opened = await call(client, "open_nodes", {"names": ["Acme", "Ghost"]})
        assert names(opened) == ["Acme"]

        related = await call(client, "query_related_memories", {"query": "does Alice like tea?"})
        assert "Alice: Likes tea" in [m["text"] for m in related["memories"]]
        assert "Likes tea" in related["context"]
        around = await call(client, "explore_graph", {"name": "Acme", "hops": 1})
        assert names(around) == ["Acme", "Alice"]
        assert await call(client, "explore_graph", {"name": "Ghost"}) == {
            "entities": [],
            "relations": [],
        }

        deleted = await call(
            client,
            "delete_observations",
            {"deletions": [{"entityName": "Alice", "observations": ["Likes tea", "Nope"]}]},
        )
        assert deleted == {"success": True, "message": "Deleted 1 of 2 observations."}
        gone = await call(client, "delete_relations", relations)
        assert gone["message"] == "Relations deleted successfully"
        assert triples(await call(client, "read_graph")) == set()

        await call(client, "create_relations", relations)
        removed = await call(client, "delete_entities", {"entityNames": ["Acme", "Ghost"]})
        assert removed["message"] == "Deleted 1 of 2 entities. Not found: Ghost"
        graph = await call(client, "read_graph")
        assert names(graph) == ["Alice"]
        assert triples(graph) == set()
        assert graph["entities"][0]["observations"] == ["Speaks Dutch"]

    # What MCP wrote is ordinary memory: the other adapters and the engine see it.
    texts = [m.text for m in memory.get_all(user_id="alice")]
    assert "Alice: Speaks Dutch" in texts
    assert not any("Likes tea" in t for t in texts)
    assert not any("Acme" in t for t in texts)


async def test_observations_of_nodes_learnt_elsewhere(memory: SageMemory) -> None:
    from sage_memory.types import NodeSpec

    memory.add_graph("Bob plays go on Sundays.", nodes=[NodeSpec("b", "Bob")], user_id="alice")
    async with Client(create_server(memory, user_id="alice")) as client:
        graph = await call(client, "open_nodes", {"names": ["bob"]})
        assert graph["entities"] == [
            {"name": "Bob", "entityType": "Entity", "observations": ["Bob plays go on Sundays."]}
        ]
    async with Client(create_server(memory, user_id="someone-else")) as client:
        assert await call(client, "read_graph") == {"entities": [], "relations": []}


async def test_observations_are_found_by_questions_about_their_entity(
    memory: SageMemory,
) -> None:
    """Regression: an observation was stored as given ("allergic to peanuts"), so a question
    naming the entity did not find it, and the entity-type declarations took the result slots.
    Distractors about other people keep the ranking honest."""
    people = ["Bob", "Carol", "Dan", "Erin", "Finn", "Gus"]
    entities = [
        {"name": "Alice", "entityType": "person", "observations": ["allergic to peanuts"]},
        *({"name": p, "entityType": "person", "observations": [f"likes {p.lower()}'s garden"]}
          for p in people),
        {"name": "Peanut Butter", "entityType": "food", "observations": ["sold in jars"]},
    ]  # fmt: skip
    async with Client(create_server(memory, user_id="alice")) as client:
        await call(client, "create_entities", {"entities": entities})
        related = await call(
            client, "query_related_memories", {"query": "what can Alice not eat?", "limit": 3}
        )
        texts = [m["text"] for m in related["memories"]]
        assert texts[0] == "Alice: allergic to peanuts"
        assert not [t for t in texts if "(type:" in t]  # declarations take no slot
        graph = await call(client, "open_nodes", {"names": ["Alice"]})
        assert graph["entities"][0]["observations"] == ["allergic to peanuts"]  # as given


@pytest.mark.slow
async def test_console_command_serves_over_stdio(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("sage-memory-mcp")
    env = {
        **os.environ,
        "SAGE_MEMORY_PATH": str(tmp_path / "mcp"),
        "SAGE_MEMORY_USER": "alice",
        "SAGE_EMBEDDER": "hashing",
    }
    params = StdioServerParameters(command=str(script), args=[], env=env)
    async with Client(params) as client:
        kim = {"name": "Kim", "entityType": "person", "observations": ["Runs marathons"]}
        await call(client, "create_entities", {"entities": [kim]})
        found = await call(client, "search_nodes", {"query": "marathon"})
        assert names(found) == ["Kim"]
    with open_memory(tmp_path / "mcp") as mem:  # the data is in the folder the env named
        assert [m.text for m in mem.get_all(user_id="alice")][-1] == "Kim: Runs marathons"
