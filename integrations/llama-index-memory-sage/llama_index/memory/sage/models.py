"""Bring your own LlamaIndex model: an LLM or embedding model serving sage_memory.

mem = SageMemory(llm=SageChatModel(Ollama(model="llama3.1")),
                 embedder=SageEmbedder(OllamaEmbedding(model_name="nomic-embed-text")))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from sage_memory import BridgedEmbedder, ChatResponse, Message

_ROLES = {
    "system": MessageRole.SYSTEM,
    "user": MessageRole.USER,
    "assistant": MessageRole.ASSISTANT,
}


class SageChatModel:
    """A LlamaIndex LLM as sage_memory's ChatModel (for LLM extraction).

    The JSON schema the engine may ask for is not sent (LlamaIndex LLMs have no common way to
    take one); the extraction prompt states the format and the engine parses and repairs.
    """

    def __init__(self, llm: LLM, *, name: str | None = None) -> None:
        if not isinstance(llm, LLM):
            raise TypeError(f"expected a LlamaIndex LLM, got {type(llm).__name__}")
        self.llm = llm
        self.name = name or f"llama-index:{llm.metadata.model_name}"

    @staticmethod
    def _messages(messages: Sequence[Message]) -> list[ChatMessage]:
        out = []
        for m in messages:
            role = _ROLES.get(m.get("role", "user"))
            if role is None:
                raise ValueError(f"message role {m.get('role')!r} is not one of {sorted(_ROLES)}")
            out.append(ChatMessage(role=role, content=m.get("content", "")))
        return out

    @staticmethod
    def _response(raw: Any) -> ChatResponse:
        usage = getattr(raw, "raw", None)
        usage = usage.get("usage") if isinstance(usage, Mapping) else None
        usage = usage if isinstance(usage, Mapping) else {}
        return ChatResponse(
            text=raw.message.content or "",
            input_tokens=int(usage.get("prompt_tokens", 0) or 0),
            output_tokens=int(usage.get("completion_tokens", 0) or 0),
        )

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        return self._response(self.llm.chat(self._messages(messages)))

    async def acomplete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        return self._response(await self.llm.achat(self._messages(messages)))


class SageEmbedder(BridgedEmbedder):
    """A LlamaIndex embedding model as sage_memory's Embedder (L2-normalised float32).

    Keep ``name`` stable: a memory folder refuses to reopen with an embedder of another name.
    """

    def __init__(
        self, embed_model: BaseEmbedding, *, name: str | None = None, dim: int | None = None
    ) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise TypeError(
                f"expected a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
            )
        self.embed_model = embed_model
        super().__init__(name or f"llama-index:{embed_model.model_name}", dim)

    def _documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_model.get_text_embedding_batch(texts)

    def _query(self, text: str) -> list[float]:
        return self.embed_model.get_query_embedding(text)
