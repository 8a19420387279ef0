"""LangChain tools over a sage_memory graph: query, explore, save, forget.

Each tool is bound to one scope when it is created: the model chooses what to look up, never
whose memory it reads. Every tool returns ``(content, artifact)``: text for the model, and the
structured result (ids, scores, nodes, edges) for the application.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from langchain_sage_memory._common import (
    async_engine_of,
    engine_of,
    hit_record,
    read_scope,
    scope_kwargs,
    subgraph_record,
    subgraph_text,
)
from sage_memory import (
    AddResult,
    AsyncSageMemory,
    Memory,
    NotFoundError,
    RetrievalResult,
    SageMemory,
    Subgraph,
)

ResponseFormat = Literal["content", "content_and_artifact"]

#: Shortest id prefix forget_memory accepts: the packed context cites memories by 8 characters.
MIN_ID_PREFIX = 8


class _SageTool(BaseTool):
    """Fields every sage tool shares: the engine and the scope it is bound to."""

    sage: Any = Field(exclude=True)
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    recall_across_runs: bool = True
    response_format: ResponseFormat = "content_and_artifact"
    handle_tool_error: bool = True

    def _write_scope(self) -> dict[str, Any]:
        return scope_kwargs(self.user_id, self.agent_id, self.run_id)

    def _read_scope(self) -> dict[str, Any]:
        return read_scope(
            self.user_id, self.agent_id, self.run_id, recall_across_runs=self.recall_across_runs
        )


# -- query_related_memories ------------------------------------------------------------------
class QueryMemoriesInput(BaseModel):
    query: str = Field(description="What to recall, in natural language.")
    limit: int = Field(default=5, ge=1, le=50, description="How many memories to return.")


class QueryRelatedMemoriesTool(_SageTool):
    """Hybrid recall (vectors, keywords and the graph) with a packed, cited context."""

    name: str = "query_related_memories"
    description: str = (
        "Search long-term memory for facts and past conversations related to a query. Returns "
        "current facts, relevant memories (with ids and dates) and outdated facts as history."
    )
    args_schema: type[BaseModel] = QueryMemoriesInput

    def _format(self, result: RetrievalResult) -> tuple[str, list[dict[str, Any]]]:
        artifact = [hit_record(h) for h in result.memories]
        return (result.context or "No related memories found."), artifact

    def _run(
        self, query: str, limit: int = 5, run_manager: CallbackManagerForToolRun | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        result = engine_of(self.sage).search(query, limit=limit, **self._read_scope())
        return self._format(result)

    async def _arun(
        self,
        query: str,
        limit: int = 5,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[dict[str, Any]]]:
        result = await async_engine_of(self.sage).search(query, limit=limit, **self._read_scope())
        return self._format(result)


# -- explore_graph ---------------------------------------------------------------------------
class ExploreGraphInput(BaseModel):
    name: str = Field(description="The entity to start from: a name as it appears in memory.")
    hops: int = Field(default=2, ge=0, le=4, description="How many relations away to look.")
    relations: list[str] | None = Field(
        default=None, description="Only follow these relation types, e.g. ['DEPENDS_ON']."
    )


class ExploreGraphTool(_SageTool):
    """The neighbourhood of one entity in the memory graph."""

    name: str = "explore_graph"
    description: str = (
        "Show what long-term memory knows around one entity (a person, project, tool...): "
        "its relations to other entities, a few hops out."
    )
    args_schema: type[BaseModel] = ExploreGraphInput

    def _explore(self, name: str, hops: int, relations: list[str] | None) -> Subgraph | None:
        try:
            # Like recall, exploring spans the scope's runs unless recall_across_runs is off
            # (then the engine shows only what this run's memories support).
            return engine_of(self.sage).explore(
                name, hops=hops, relations=relations, **self._read_scope()
            )
        except NotFoundError:
            return None

    @staticmethod
    def _format(name: str, graph: Subgraph | None) -> tuple[str, dict[str, Any]]:
        if graph is None:
            return f"No entity named {name!r} in memory.", {"start": [], "nodes": [], "edges": []}
        return subgraph_text(graph), subgraph_record(graph)

    def _run(
        self,
        name: str,
        hops: int = 2,
        relations: list[str] | None = None,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        return self._format(name, self._explore(name, hops, relations))

    async def _arun(
        self,
        name: str,
        hops: int = 2,
        relations: list[str] | None = None,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        import asyncio

        graph = await asyncio.to_thread(self._explore, name, hops, relations)
        return self._format(name, graph)


# -- save_memory -----------------------------------------------------------------------------
class SaveMemoryInput(BaseModel):
    text: str = Field(description="The fact, preference or event to remember, in one sentence.")
    kind: Literal["knowledge", "experience"] = Field(
        default="knowledge",
        description="'knowledge' for facts and preferences, 'experience' for what was done "
        "and how it went.",
    )


class SaveMemoryTool(_SageTool):
    """Remember one statement (it is extracted into the graph)."""

    name: str = "save_memory"
    description: str = (
        "Save something worth remembering across conversations: a fact about the user, a "
        "preference, a decision, or how a task was solved."
    )
    args_schema: type[BaseModel] = SaveMemoryInput
    infer: bool = True

    @staticmethod
    def _format(res: AddResult) -> tuple[str, dict[str, Any]]:
        note = f" (extraction failed: {res.extraction_error})" if res.extraction_error else ""
        content = (
            f"Saved memory {res.memory_id[:MIN_ID_PREFIX]}: {len(res.node_ids)} entities, "
            f"{len(res.edge_ids)} relations{note}."
        )
        return content, {
            "memory_id": res.memory_id,
            "node_ids": list(res.node_ids),
            "edge_ids": list(res.edge_ids),
            "expired_edge_ids": list(res.expired_edge_ids),
        }

    def _run(
        self,
        text: str,
        kind: Literal["knowledge", "experience"] = "knowledge",
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        res = engine_of(self.sage).add(
            text, kind=kind, source="tool:save_memory", infer=self.infer, **self._write_scope()
        )
        return self._format(res)

    async def _arun(
        self,
        text: str,
        kind: Literal["knowledge", "experience"] = "knowledge",
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        res = await async_engine_of(self.sage).add(
            text, kind=kind, source="tool:save_memory", infer=self.infer, **self._write_scope()
        )
        return self._format(res)


# -- forget_memory ---------------------------------------------------------------------------
class ForgetMemoryInput(BaseModel):
    memory_id: str = Field(
        description="The id of the memory to forget, as cited by query_related_memories "
        "(the 8-character form is enough)."
    )


class ForgetMemoryTool(_SageTool):
    """Forget one memory and what only it supported. Forgetting twice is not an error."""

    name: str = "forget_memory"
    description: str = (
        "Permanently forget one memory (and the facts that only it supported), for example "
        "when the user asks you to forget something or says it was wrong."
    )
    args_schema: type[BaseModel] = ForgetMemoryInput

    def _resolve(self, memory_id: str) -> Memory | None:
        mem = engine_of(self.sage)
        scope = self._read_scope()
        try:
            return mem.get(memory_id, **scope)
        except NotFoundError:
            pass
        ref = memory_id.strip().lower()
        if len(ref) < MIN_ID_PREFIX:
            return None
        # Models see short ids in the packed context; find the one memory they name. A scan
        # of the scope: forgetting is rare, and ambiguity must not delete the wrong memory.
        found = [m for m in mem.get_all(**scope, include_archived=True) if m.id.startswith(ref)]
        return found[0] if len(found) == 1 else None

    def _forget(self, memory_id: str) -> tuple[str, dict[str, Any]]:
        memory = self._resolve(memory_id)
        if memory is None:
            return (
                f"No memory {memory_id!r} in this scope; nothing was forgotten.",
                {"memory_id": memory_id, "forgotten": False},
            )
        engine_of(self.sage).delete(memory.id, **self._read_scope())
        return (
            f"Forgot memory {memory.id[:MIN_ID_PREFIX]}: {memory.text[:120]!r}.",
            {"memory_id": memory.id, "forgotten": True, "text": memory.text},
        )

    def _run(
        self, memory_id: str, run_manager: CallbackManagerForToolRun | None = None
    ) -> tuple[str, dict[str, Any]]:
        return self._forget(memory_id)

    async def _arun(
        self, memory_id: str, run_manager: AsyncCallbackManagerForToolRun | None = None
    ) -> tuple[str, dict[str, Any]]:
        import asyncio

        return await asyncio.to_thread(self._forget, memory_id)


def create_memory_tools(
    mem: SageMemory | AsyncSageMemory,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    include: tuple[str, ...] = (
        "query_related_memories",
        "explore_graph",
        "save_memory",
        "forget_memory",
    ),
) -> list[BaseTool]:
    """The four memory tools, bound to one scope.

    Args:
        mem: the engine.
        user_id, agent_id, run_id: the scope the tools read and write (at least one).
        include: the tool names to return, to leave out e.g. ``forget_memory``.
    """
    engine_of(mem)  # fail early on a wrong object
    if user_id is None and agent_id is None and run_id is None:
        raise ValueError("give the tools a scope: user_id=..., agent_id=... or run_id=...")
    classes: dict[str, type[_SageTool]] = {
        "query_related_memories": QueryRelatedMemoriesTool,
        "explore_graph": ExploreGraphTool,
        "save_memory": SaveMemoryTool,
        "forget_memory": ForgetMemoryTool,
    }
    unknown = sorted(set(include) - set(classes))
    if unknown:
        raise ValueError(f"unknown memory tools {unknown}; choose from {sorted(classes)}")
    scope: dict[str, Any] = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return [classes[name](sage=mem, **scope) for name in include]
