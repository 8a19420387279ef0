"""An MCP server (stdio) exposing sage_memory as the reference knowledge-graph memory server.

Tools with the reference server's names and argument shapes (so clients already prompted for it
work unchanged): create_entities, create_relations, add_observations, delete_entities,
delete_observations, delete_relations, read_graph, search_nodes, open_nodes; plus
query_related_memories (hybrid recall with a packed context) and explore_graph (k hops).

How the reference data model maps onto the graph memory
-------------------------------------------------------
- An entity is a node (its type kept as given in ``attributes["entity_type"]``, its label the
  closest built-in one). Creating it also stores a short declaration memory ("Alice (type:
  person)") that anchors the node's provenance.
- An observation is a memory whose provenance links the entity's node, stored and searched with
  its entity ("Alice: allergic to peanuts"), so a question about Alice finds what was observed
  of her; the observation as given is kept in ``metadata["observation"]`` and is what the
  reference tools show. An entity's observations are the texts of the memories that support its
  node (declarations and relation statements excepted), so a node learnt from conversation
  shows what was said about it.
- ``query_related_memories`` leaves out the declarations ("Alice (type: person)"): they state
  no fact and would take result slots.
- A relation is an edge, stated by a memory ("Alice works_at Acme"); its type is kept as given in
  ``attributes["relation_type"]`` and mapped to the closest built-in relation.
- Deleting forgets the memories that exist only for the deleted item and removes the graph item.

The scope is ``SAGE_MEMORY_USER`` (default ``"default"``) and the memory folder
``SAGE_MEMORY_PATH`` (default ``~/.sage_memory/mcp``; ``:memory:`` keeps nothing), or in server mode
``SAGE_MEMORY_URL`` (``postgresql://...``), which several clients can share at once. Embedder, LLM
and index come from ``SageConfig.from_env()`` (SAGE_EMBEDDER, SAGE_LLM, SAGE_VECTOR_INDEX).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

# pydantic needs typing_extensions' TypedDict on Python < 3.12 to build the output schemas.
from typing_extensions import TypedDict

from sage_memory import (
    Edge,
    EdgeSpec,
    Memory,
    Node,
    NodeSpec,
    NotFoundError,
    SageConfig,
    SageMemory,
    SageMemoryError,
)

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as _Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef,attr-defined,unused-ignore]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef,unused-ignore]

T = TypeVar("T")

#: ``metadata["mcp"]`` of the memories this server writes, by what they stand for.
ENTITY, OBSERVATION, RELATION = "entity", "observation", "relation"
DEFAULT_PATH = "~/.sage_memory/mcp"
INSTRUCTIONS = (
    "Long-term memory as a knowledge graph of entities (with observations) and relations. "
    "Use search_nodes/open_nodes/read_graph to look things up, query_related_memories to ask a "
    "question in natural language, and create_entities/create_relations/add_observations to "
    "remember. Relations should be in active voice."
)


# -- argument and result shapes (the reference server's) -----------------------------------------
class EntityIn(BaseModel):
    name: str = Field(description="The name of the entity")
    entityType: str = Field(description="The type of the entity")
    observations: list[str] = Field(
        default_factory=list,
        description="An array of observation contents associated with the entity",
    )


class RelationIn(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from", description="The name of the entity where the relation starts")
    to: str = Field(description="The name of the entity where the relation ends")
    relationType: str = Field(description="The type of the relation")


class ObservationIn(BaseModel):
    entityName: str = Field(description="The name of the entity to add the observations to")
    contents: list[str] = Field(description="An array of observation contents to add")


class DeletionIn(BaseModel):
    entityName: str = Field(description="The name of the entity containing the observations")
    observations: list[str] = Field(description="An array of observations to delete")


class Entity(TypedDict):
    name: str
    entityType: str
    observations: list[str]


Relation = TypedDict("Relation", {"from": str, "to": str, "relationType": str})


class KnowledgeGraph(TypedDict):
    entities: list[Entity]
    relations: list[Relation]


class CreatedEntities(TypedDict):
    entities: list[Entity]


class CreatedRelations(TypedDict):
    relations: list[Relation]


class AddedObservations(TypedDict):
    entityName: str
    addedObservations: list[str]


class ObservationResults(TypedDict):
    results: list[AddedObservations]


class Outcome(TypedDict):
    success: bool
    message: str


class MemoryRecord(TypedDict):
    id: str
    text: str
    score: float
    timestamp: str


class RelatedMemories(TypedDict):
    context: str
    memories: list[MemoryRecord]
    entities: list[str]


# -- the mapping onto the engine ------------------------------------------------------------------
class GraphMemory:
    """The reference server's operations on one scope of a SageMemory (synchronous)."""

    def __init__(self, mem: SageMemory, user_id: str = "default") -> None:
        self.mem = mem
        self.scope: dict[str, Any] = {"user_id": user_id}

    # reading helpers
    def _node(self, name: str) -> Node | None:
        try:
            return self.mem.find_node(name, exact=True, **self.scope)
        except NotFoundError:
            return None

    def _memories(self, ids: Iterable[str]) -> list[Memory]:
        out = []
        for mid in ids:
            try:
                out.append(self.mem.get(mid, **self.scope))
            except NotFoundError:
                continue
        return out

    @staticmethod
    def _observation(memory: Memory) -> str:
        """An observation as the client gave it (its memory's text also names the entity)."""
        given = memory.metadata.get("observation")
        return given if isinstance(given, str) else memory.text

    @classmethod
    def _observations(cls, memories: Iterable[Memory]) -> list[str]:
        return list(
            dict.fromkeys(
                cls._observation(m)
                for m in memories
                if m.metadata.get("mcp") not in (ENTITY, RELATION)
            )
        )

    @staticmethod
    def _entity_type(node: Node) -> str:
        value = node.attributes.get("entity_type")
        return value if isinstance(value, str) else node.label

    def _entity(self, node: Node, memories: Mapping[str, Memory] | None = None) -> Entity:
        if memories is None:
            found = self._memories(node.memory_ids)
        else:
            found = [memories[m] for m in node.memory_ids if m in memories]
        return {
            "name": node.name,
            "entityType": self._entity_type(node),
            "observations": self._observations(found),
        }

    @staticmethod
    def _relation_type(edge: Edge) -> str:
        kind = edge.attributes.get("relation_type")
        return kind if isinstance(kind, str) else edge.relation

    def _relations(self, edges: Iterable[Edge], names: Mapping[str, str]) -> list[Relation]:
        return [
            {
                "from": names.get(e.source_id, e.source_id),
                "to": names.get(e.target_id, e.target_id),
                "relationType": self._relation_type(e),
            }
            for e in edges
        ]

    def _graph(self, keep: Callable[[Node], bool] | None = None) -> KnowledgeGraph:
        graph = self.mem.graph(**self.scope)
        memories = {m.id: m for m in self.mem.get_all(**self.scope)}
        names = {n.id: n.name for n in graph.nodes}
        chosen = [n for n in graph.nodes if keep is None or keep(n)]
        ids = {n.id for n in chosen}
        edges = [e for e in graph.edges if keep is None or e.source_id in ids or e.target_id in ids]
        return {
            "entities": [self._entity(n, memories) for n in chosen],
            "relations": self._relations(edges, names),
        }

    # the reference tools
    def create_entities(self, entities: list[EntityIn]) -> CreatedEntities:
        created: list[Entity] = []
        for e in entities:
            if self._node(e.name) is not None or any(c["name"] == e.name for c in created):
                continue  # existing names are ignored, as in the reference server
            spec = NodeSpec("e", e.name, e.entityType, attributes={"entity_type": e.entityType})
            self.mem.add_graph(
                f"{e.name} (type: {e.entityType})",
                nodes=[spec],
                metadata={"mcp": ENTITY, "entity": e.name},
                source="mcp",
                **self.scope,
            )
            for text in dict.fromkeys(e.observations):
                self._observe(e.name, text)
            created.append(
                {
                    "name": e.name,
                    "entityType": e.entityType,
                    "observations": list(dict.fromkeys(e.observations)),
                }
            )
        return {"entities": created}

    def _observe(self, entity: str, text: str) -> None:
        # Stored with its entity: "allergic to peanuts" alone does not say whose allergy it is,
        # and neither the words nor the vector of a question about Alice would find it.
        self.mem.add_graph(
            f"{entity}: {text}",
            nodes=[NodeSpec("e", entity)],
            metadata={"mcp": OBSERVATION, "entity": entity, "observation": text},
            source="mcp",
            **self.scope,
        )

    def _edges_between(self, rel: RelationIn) -> list[Edge]:
        source = self._node(rel.from_)
        target = self._node(rel.to)
        if source is None or target is None:
            return []
        around = self.mem.explore(source.id, hops=1, **self.scope)
        return [
            e
            for e in around.edges
            if e.source_id == source.id
            and e.target_id == target.id
            and self._relation_type(e) == rel.relationType
        ]

    def create_relations(self, relations: list[RelationIn]) -> CreatedRelations:
        for r in relations:
            for name in (r.from_, r.to):
                if self._node(name) is None:
                    raise ValueError(f"Entity with name {name} not found")
        created: list[Relation] = []
        for r in relations:
            as_dict: Relation = {"from": r.from_, "to": r.to, "relationType": r.relationType}
            if as_dict in created or self._edges_between(r):
                continue  # duplicates are skipped, as in the reference server
            self.mem.add_graph(
                f"{r.from_} {r.relationType} {r.to}",
                nodes=[NodeSpec("s", r.from_), NodeSpec("t", r.to)],
                edges=[
                    EdgeSpec("s", "t", r.relationType, attributes={"relation_type": r.relationType})
                ],
                metadata={"mcp": RELATION, "from": r.from_, "to": r.to, "type": r.relationType},
                source="mcp",
                **self.scope,
            )
            created.append(as_dict)
        return {"relations": created}

    def add_observations(self, observations: list[ObservationIn]) -> ObservationResults:
        nodes = {}
        for o in observations:
            node = self._node(o.entityName)
            if node is None:
                raise ValueError(f"Entity with name {o.entityName} not found")
            nodes[o.entityName] = node
        results: list[AddedObservations] = []
        for o in observations:
            existing = set(self._observations(self._memories(nodes[o.entityName].memory_ids)))
            added = [c for c in dict.fromkeys(o.contents) if c not in existing]
            for text in added:
                self._observe(o.entityName, text)
            results.append({"entityName": o.entityName, "addedObservations": added})
        return {"results": results}

    def delete_entities(self, entity_names: list[str]) -> Outcome:
        missing = []
        for name in entity_names:
            node = self._node(name)
            if node is None:
                missing.append(name)
                continue
            # Forget the memories that exist only for this entity (its declaration, its
            # observations and the relations stated through this server), then the node.
            around = self.mem.explore(node.id, hops=1, **self.scope)
            owned = set(node.memory_ids) | {m for e in around.edges for m in e.memory_ids}
            for memory in self._memories(owned):
                meta = memory.metadata
                mine = meta.get("entity") == node.name or node.name in (
                    meta.get("from"),
                    meta.get("to"),
                )
                if meta.get("mcp") in (ENTITY, OBSERVATION, RELATION) and mine:
                    self.mem.delete(memory.id, **self.scope)
            if self._node(node.id) is not None:
                self.mem.delete_node(node.id, **self.scope)
        if not missing:
            return {"success": True, "message": "Entities deleted successfully"}
        done = len(entity_names) - len(missing)
        return {
            "success": True,
            "message": f"Deleted {done} of {len(entity_names)} entities. "
            f"Not found: {', '.join(missing)}",
        }

    def delete_observations(self, deletions: list[DeletionIn]) -> Outcome:
        deleted = requested = 0
        missing = []
        for d in deletions:
            requested += len(d.observations)
            node = self._node(d.entityName)
            if node is None:
                missing.append(d.entityName)
                continue
            unwanted = set(d.observations)
            for memory in self._memories(node.memory_ids):
                given = self._observation(memory)
                if given in unwanted and memory.metadata.get("mcp") not in (ENTITY, RELATION):
                    self.mem.delete(memory.id, **self.scope)
                    unwanted.discard(given)
                    deleted += 1
        if deleted == requested:
            return {"success": True, "message": "Observations deleted successfully"}
        message = f"Deleted {deleted} of {requested} observations."
        if missing:
            message += f" Entities not found: {', '.join(missing)}"
        return {"success": True, "message": message}

    def delete_relations(self, relations: list[RelationIn]) -> Outcome:
        deleted = 0
        for r in relations:
            edges = self._edges_between(r)
            for edge in edges:
                for memory in self._memories(edge.memory_ids):
                    if memory.metadata.get("mcp") == RELATION:
                        self.mem.delete(memory.id, **self.scope)
                with contextlib.suppress(NotFoundError):  # other memories may also state it
                    self.mem.delete_edge(edge.id, **self.scope)
            deleted += bool(edges)
        if deleted == len(relations):
            return {"success": True, "message": "Relations deleted successfully"}
        return {
            "success": True,
            "message": f"Deleted {deleted} of {len(relations)} relations. "
            "The rest matched nothing.",
        }

    def read_graph(self) -> KnowledgeGraph:
        return self._graph()

    def search_nodes(self, query: str) -> KnowledgeGraph:
        needle = query.casefold()
        memories = {m.id: m for m in self.mem.get_all(**self.scope)}

        def keep(node: Node) -> bool:
            texts = [node.name, self._entity_type(node), *node.aliases]
            texts += self._observations(memories[m] for m in node.memory_ids if m in memories)
            return any(needle in t.casefold() for t in texts)

        return self._graph(keep)

    def open_nodes(self, names: list[str]) -> KnowledgeGraph:
        wanted = {n.casefold() for n in names}
        return self._graph(lambda node: node.name.casefold() in wanted)

    # the extra tools
    def query_related_memories(self, query: str, limit: int = 5) -> RelatedMemories:
        # Declarations ("Alice (type: person)") state no fact: asked for twice as many, they are
        # left out so that facts fill the slots.
        result = self.mem.search(query, limit=2 * limit, **self.scope)
        hits = [h for h in result.memories if h.memory.metadata.get("mcp") != ENTITY][:limit]
        return {
            "context": result.context,
            "memories": [
                {"id": h.id, "text": h.text, "score": h.score, "timestamp": h.timestamp.isoformat()}
                for h in hits
            ],
            "entities": [h.name for h in result.nodes],
        }

    def explore_graph(
        self, name: str, hops: int = 2, relations: list[str] | None = None
    ) -> KnowledgeGraph:
        try:
            sub = self.mem.explore(name, hops=hops, relations=relations, **self.scope)
        except NotFoundError:
            return {"entities": [], "relations": []}
        names = {n.id: n.name for n in sub.nodes}
        return {
            "entities": [self._entity(n) for n in sub.nodes],
            "relations": self._relations(sub.edges, names),
        }


# -- the MCP server --------------------------------------------------------------------------------
def create_server(mem: SageMemory, *, user_id: str = "default", name: str = "sage-memory") -> Any:
    """An MCP server over ``mem`` for one user. Tools run the engine in worker threads."""
    graph = GraphMemory(mem, user_id)
    server = _Server(name, instructions=INSTRUCTIONS)

    async def run(fn: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.to_thread(fn, *args)
        except (ValueError, SageMemoryError) as exc:
            # An expected failure (unknown entity, invalid input): the model reads why.
            raise ToolError(str(exc)) from exc

    @server.tool(description="Create multiple new entities in the knowledge graph")
    async def create_entities(entities: list[EntityIn]) -> CreatedEntities:
        return await run(graph.create_entities, entities)

    @server.tool(
        description="Create multiple new relations between entities in the knowledge graph. "
        "Relations should be in active voice"
    )
    async def create_relations(relations: list[RelationIn]) -> CreatedRelations:
        return await run(graph.create_relations, relations)

    @server.tool(description="Add new observations to existing entities in the knowledge graph")
    async def add_observations(observations: list[ObservationIn]) -> ObservationResults:
        return await run(graph.add_observations, observations)

    @server.tool(
        description="Delete multiple entities and their associated relations from the "
        "knowledge graph"
    )
    async def delete_entities(
        entityNames: list[str],
    ) -> Outcome:
        return await run(graph.delete_entities, entityNames)

    @server.tool(description="Delete specific observations from entities in the knowledge graph")
    async def delete_observations(deletions: list[DeletionIn]) -> Outcome:
        return await run(graph.delete_observations, deletions)

    @server.tool(description="Delete multiple relations from the knowledge graph")
    async def delete_relations(relations: list[RelationIn]) -> Outcome:
        return await run(graph.delete_relations, relations)

    @server.tool(description="Read the entire knowledge graph")
    async def read_graph() -> KnowledgeGraph:
        return await run(graph.read_graph)

    @server.tool(description="Search for nodes in the knowledge graph based on a query")
    async def search_nodes(query: str) -> KnowledgeGraph:
        return await run(graph.search_nodes, query)

    @server.tool(description="Open specific nodes in the knowledge graph by their names")
    async def open_nodes(names: list[str]) -> KnowledgeGraph:
        return await run(graph.open_nodes, names)

    @server.tool(
        description="Ask long-term memory a question in natural language: hybrid (vector, "
        "keyword and graph) search returning a packed context with current facts, relevant "
        "memories and outdated facts"
    )
    async def query_related_memories(query: str, limit: int = 5) -> RelatedMemories:
        return await run(graph.query_related_memories, query, limit)

    @server.tool(
        description="The neighbourhood of one entity: the entities and relations up to `hops` "
        "relations away, optionally only along the given relation types"
    )
    async def explore_graph(
        name: str, hops: int = 2, relations: list[str] | None = None
    ) -> KnowledgeGraph:
        return await run(graph.explore_graph, name, hops, relations)

    return server


def memory_from_env(environ: Mapping[str, str] | None = None) -> tuple[SageMemory, str]:
    """The SageMemory and user id the environment names (see the module docstring)."""
    env = os.environ if environ is None else environ
    user = env.get("SAGE_MEMORY_USER") or "default"
    url = env.get("SAGE_MEMORY_URL")
    if url:
        return SageMemory(url=url, config=SageConfig.from_env(env)), user
    raw = env.get("SAGE_MEMORY_PATH") or DEFAULT_PATH
    path = None if raw == ":memory:" else Path(raw).expanduser()
    return SageMemory(path, config=SageConfig.from_env(env)), user


def main() -> None:
    """Console entry point: serve the memory over stdio."""
    mem, user = memory_from_env()
    try:
        create_server(mem, user_id=user).run()
    finally:
        mem.close()
