"""SageMemoryBlock: sage_memory as a long-term block of LlamaIndex's ``Memory``.

    memory = Memory.from_defaults(session_id="s1", memory_blocks=[SageMemoryBlock(sage=mem,
                                                                                user_id="alice")])

On every read the block returns the engine's packed context for the latest user message. Writes
reach it when ``Memory`` flushes old turns out of its short-term queue (past ``token_limit *
chat_history_token_ratio``); each flushed message is stored with the session as its run. For
write-through of every turn use :class:`~llama_index.memory.sage.SageChatMemory` instead.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.memory.sage._common import (
    async_engine_of,
    engine_of,
    last_user_text,
    scope_kwargs,
    to_remember,
)

#: Rough characters per token, for trimming a context that must shrink.
CHARS_PER_TOKEN = 4


class SageMemoryBlock(BaseMemoryBlock[str]):
    """Long-term recall from a sage_memory graph, as a ``Memory`` block.

    Attributes:
        sage: the SageMemory (or AsyncSageMemory).
        user_id: whose memory; None uses the ``Memory``'s session id as the user (memory per
            session). With a user id, sessions become runs and recall spans all of them.
        agent_id: the agent part of the scope (optional).
        limit, context_tokens: how many memories to rank and the context's token budget.
        infer: run the extractor on flushed messages.
        focus: what the conversation is about (node names or ids): recall leans towards what
            is near it (README "Focus").
    """

    name: str = "sage_memory"
    description: str | None = "Long-term memory: facts and past conversations about the user."
    sage: Any = Field(exclude=True)
    user_id: str | None = None
    agent_id: str | None = None
    limit: int = 8
    context_tokens: int = 800
    infer: bool = True
    focus: str | list[str] | None = None

    def _user(self, session_id: str | None) -> str | None:
        return self.user_id if self.user_id is not None else session_id

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = last_user_text(messages)
        user = self._user(block_kwargs.get("session_id"))
        if not query.strip() or (user is None and self.agent_id is None):
            return ""
        result = await async_engine_of(self.sage).search(
            query,
            **scope_kwargs(user, self.agent_id, None),
            limit=self.limit,
            context_tokens=self.context_tokens,
            focus=self.focus,
        )
        return result.context

    async def _aput(self, messages: list[ChatMessage]) -> None:
        by_session: dict[str | None, list[ChatMessage]] = {}
        for m in messages:
            by_session.setdefault(m.additional_kwargs.get("session_id"), []).append(m)
        mem = async_engine_of(self.sage)
        for session, group in by_session.items():
            turn = to_remember(group)
            user = self._user(session)
            if not turn or (user is None and self.agent_id is None):
                continue
            run = session if self.user_id is not None else None
            await mem.add(turn, **scope_kwargs(user, self.agent_id, run), infer=self.infer)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        # The context is packed best-first, so dropping lines from the end loses the least.
        budget = len(content) - tokens_to_truncate * CHARS_PER_TOKEN
        lines, kept, used = content.splitlines(), [], 0
        for line in lines:
            if used + len(line) + 1 > budget:
                break
            kept.append(line)
            used += len(line) + 1
        body = [line for line in kept if not line.startswith("## ")]
        return "\n".join(kept) if body else None

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        engine_of(self.sage)  # fail at construction, not at the first read
