"""SageConversationMemory: sage_memory behind LangChain's legacy chain memory interface.

For ``ConversationChain`` and ``LLMChain`` (langchain-classic). Instead of a raw transcript, each
turn gets the graph context the engine packs for the new input (current facts, relevant past
turns, history), and each finished turn is written back.

New code should prefer ``create_agent`` with :class:`~langchain_sage_memory.SageMemoryMiddleware`:
LangChain deprecated the legacy memory classes (removal planned for 2.0).
"""

from __future__ import annotations

from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_core.messages import BaseMessage, SystemMessage
from pydantic import Field

from langchain_sage_memory._common import (
    async_engine_of,
    engine_of,
    message_text,
    read_scope,
    scope_kwargs,
)


class SageConversationMemory(BaseMemory):
    """Chain memory backed by a sage_memory graph.

    Example:
        .. code-block:: python

            from langchain_classic.chains import ConversationChain
            mem = SageMemory("./memory")
            memory = SageConversationMemory(sage=mem, user_id="alice")
            chain = ConversationChain(llm=llm, memory=memory)

    Attributes:
        sage: the SageMemory (or AsyncSageMemory) to read and write.
        user_id, agent_id, run_id: the scope; ``run_id`` tags this conversation's turns.
        memory_key: the prompt variable that receives the context (``"history"``, as
            ConversationChain's prompt expects).
        input_key / output_key: which chain input is the user's message and which output is
            the answer; when unset, the only non-memory input and the only output are used.
        return_messages: give a list of messages (one system message holding the context)
            instead of a string, for chat prompt templates with a MessagesPlaceholder.
        limit / context_tokens: how many memories to rank and the context's token budget.
        recall_across_runs: search every run of the scope (True) or only ``run_id``.
        infer: run the extractor on saved turns (builds the graph); False stores text only.
        focus: what the conversation is about (node names or ids): recall leans towards what
            is near it (README "Focus").
    """

    sage: Any = Field(exclude=True)
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    memory_key: str = "history"
    input_key: str | None = None
    output_key: str | None = None
    return_messages: bool = False
    limit: int = 8
    context_tokens: int = 1000
    recall_across_runs: bool = True
    infer: bool = True
    focus: str | list[str] | None = None

    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key]

    # -- helpers -------------------------------------------------------------------------------
    def _input_text(self, inputs: dict[str, Any]) -> str:
        if self.input_key is not None:
            return message_text(inputs.get(self.input_key))
        # Chains pass the memory's own variables back in, and "stop" is a control key.
        keys = [k for k in inputs if k not in (*self.memory_variables, "stop")]
        if len(keys) != 1:
            raise ValueError(
                f"cannot tell which input is the user's message among {keys}; "
                "set input_key=... on SageConversationMemory"
            )
        return message_text(inputs[keys[0]])

    def _output_text(self, outputs: dict[str, Any]) -> str:
        if self.output_key is not None:
            return message_text(outputs.get(self.output_key))
        if len(outputs) != 1:
            raise ValueError(
                f"the chain returned several outputs {sorted(outputs)}; set output_key=..."
            )
        return message_text(next(iter(outputs.values())))

    def _variables(self, context: str) -> dict[str, Any]:
        if self.return_messages:
            messages: list[BaseMessage] = [SystemMessage(content=context)] if context else []
            return {self.memory_key: messages}
        return {self.memory_key: context}

    def _turn(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[dict[str, str]]:
        turn = [
            {"role": "user", "content": self._input_text(inputs)},
            {"role": "assistant", "content": self._output_text(outputs)},
        ]
        return [m for m in turn if m["content"].strip()]

    def _search_kwargs(self) -> dict[str, Any]:
        scope = read_scope(
            self.user_id, self.agent_id, self.run_id, recall_across_runs=self.recall_across_runs
        )
        kwargs = {**scope, "limit": self.limit, "context_tokens": self.context_tokens}
        if self.focus is not None:
            kwargs["focus"] = self.focus
        return kwargs

    # -- BaseMemory ----------------------------------------------------------------------------
    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._input_text(inputs)
        if not query.strip():
            return self._variables("")
        result = engine_of(self.sage).search(query, **self._search_kwargs())
        return self._variables(result.context)

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._input_text(inputs)
        if not query.strip():
            return self._variables("")
        result = await async_engine_of(self.sage).search(query, **self._search_kwargs())
        return self._variables(result.context)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        turn = self._turn(inputs, outputs)
        if turn:
            engine_of(self.sage).add(
                turn, **scope_kwargs(self.user_id, self.agent_id, self.run_id), infer=self.infer
            )

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        turn = self._turn(inputs, outputs)
        if turn:
            await async_engine_of(self.sage).add(
                turn, **scope_kwargs(self.user_id, self.agent_id, self.run_id), infer=self.infer
            )

    def clear(self) -> None:
        """Forget this memory's scope: the run's turns when ``run_id`` is set, else everything
        of the user/agent (deletion is final)."""
        engine_of(self.sage).delete_all(**scope_kwargs(self.user_id, self.agent_id, self.run_id))

    async def aclear(self) -> None:
        await async_engine_of(self.sage).delete_all(
            **scope_kwargs(self.user_id, self.agent_id, self.run_id)
        )
