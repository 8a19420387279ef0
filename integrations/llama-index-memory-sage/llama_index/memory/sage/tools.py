"""SageMemoryToolSpec: the memory tools for LlamaIndex agents.

    tools = SageMemoryToolSpec(mem, user_id="alice").to_tool_list()
    agent = FunctionAgent(tools=tools, llm=llm)

Each tool has a sync and a native async form; the spec is bound to one scope, so the model
chooses what to look up, never whose memory it reads.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.tools.tool_spec.base import BaseToolSpec
from llama_index.memory.sage._common import async_engine_of, engine_of, scope_kwargs, subgraph_text

from sage_memory import Memory, NotFoundError

#: Shortest id prefix forget_memory accepts: the packed context cites memories by 8 characters.
MIN_ID_PREFIX = 8


class SageMemoryToolSpec(BaseToolSpec):
    """query_related_memories, explore_graph, save_memory and forget_memory for one scope."""

    spec_functions = [  # noqa: RUF012 - the attribute BaseToolSpec reads
        ("query_related_memories", "aquery_related_memories"),
        ("explore_graph", "aexplore_graph"),
        ("save_memory", "asave_memory"),
        ("forget_memory", "aforget_memory"),
    ]

    def __init__(
        self,
        sage: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
    ) -> None:
        engine_of(sage)
        if user_id is None and agent_id is None and run_id is None:
            raise ValueError("give the tools a scope: user_id=..., agent_id=... or run_id=...")
        self.sage = sage
        self.scope = scope_kwargs(user_id, agent_id, run_id)
        self.read_scope = scope_kwargs(user_id, agent_id, None if user_id or agent_id else run_id)
        self.infer = infer

    # -- query_related_memories ----------------------------------------------------------------
    def query_related_memories(self, query: str, limit: int = 5) -> str:
        """Search long-term memory for facts and past conversations related to a query.

        Returns current facts, relevant memories (with ids and dates) and outdated facts.

        Args:
            query: what to recall, in natural language.
            limit: how many memories to return (1 to 50).
        """
        result = engine_of(self.sage).search(query, limit=limit, **self.read_scope)
        return result.context or "No related memories found."

    async def aquery_related_memories(self, query: str, limit: int = 5) -> str:
        """Search long-term memory for facts and past conversations related to a query.

        Args:
            query: what to recall, in natural language.
            limit: how many memories to return (1 to 50).
        """
        result = await async_engine_of(self.sage).search(query, limit=limit, **self.read_scope)
        return result.context or "No related memories found."

    # -- explore_graph -------------------------------------------------------------------------
    def explore_graph(self, name: str, hops: int = 2) -> str:
        """Show what long-term memory knows around one entity: its relations, a few hops out.

        Args:
            name: the entity to start from (a person, project, tool...).
            hops: how many relations away to look (0 to 4).
        """
        try:
            graph = engine_of(self.sage).explore(name, hops=hops, **self.read_scope)
        except NotFoundError:
            return f"No entity named {name!r} in memory."
        return subgraph_text(graph)

    async def aexplore_graph(self, name: str, hops: int = 2) -> str:
        """Show what long-term memory knows around one entity: its relations, a few hops out.

        Args:
            name: the entity to start from (a person, project, tool...).
            hops: how many relations away to look (0 to 4).
        """
        return await asyncio.to_thread(self.explore_graph, name, hops)

    # -- save_memory ---------------------------------------------------------------------------
    def save_memory(self, text: str) -> str:
        """Save something worth remembering across conversations: a fact about the user, a
        preference, a decision, or how a task was solved.

        Args:
            text: the statement to remember, in one sentence.
        """
        res = engine_of(self.sage).add(
            text, source="tool:save_memory", infer=self.infer, **self.scope
        )
        return f"Saved memory {res.memory_id[:MIN_ID_PREFIX]}."

    async def asave_memory(self, text: str) -> str:
        """Save something worth remembering across conversations.

        Args:
            text: the statement to remember, in one sentence.
        """
        res = await async_engine_of(self.sage).add(
            text, source="tool:save_memory", infer=self.infer, **self.scope
        )
        return f"Saved memory {res.memory_id[:MIN_ID_PREFIX]}."

    # -- forget_memory -------------------------------------------------------------------------
    def _resolve(self, memory_id: str) -> Memory | None:
        mem = engine_of(self.sage)
        try:
            return mem.get(memory_id, **self.read_scope)
        except NotFoundError:
            pass
        ref = memory_id.strip().lower()
        if len(ref) < MIN_ID_PREFIX:
            return None
        # The packed context cites short ids; a scan of the scope finds the one they name, and
        # an ambiguous prefix forgets nothing.
        found = [
            m for m in mem.get_all(**self.read_scope, include_archived=True) if m.id.startswith(ref)
        ]
        return found[0] if len(found) == 1 else None

    def forget_memory(self, memory_id: str) -> str:
        """Permanently forget one memory (and the facts only it supported), e.g. when the user
        asks you to forget something or says it was wrong.

        Args:
            memory_id: the memory's id as cited by query_related_memories (8 characters do).
        """
        memory = self._resolve(memory_id)
        if memory is None:
            return f"No memory {memory_id!r} in this scope; nothing was forgotten."
        engine_of(self.sage).delete(memory.id, **self.read_scope)
        return f"Forgot memory {memory.id[:MIN_ID_PREFIX]}: {memory.text[:120]!r}."

    async def aforget_memory(self, memory_id: str) -> str:
        """Permanently forget one memory (and the facts only it supported).

        Args:
            memory_id: the memory's id as cited by query_related_memories (8 characters do).
        """
        return await asyncio.to_thread(self.forget_memory, memory_id)
