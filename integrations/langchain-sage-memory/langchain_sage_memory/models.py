"""Bring your own LangChain model: a chat model or embeddings serving sage_memory.

    mem = SageMemory(llm=SageChatModel(ChatOllama(model="llama3.1")),
                     embedder=SageEmbedder(OllamaEmbeddings(model="nomic-embed-text")))

The adapters satisfy sage_memory's ``ChatModel`` and ``Embedder`` protocols; the engine never
imports LangChain.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langchain_sage_memory._common import message_text
from sage_memory import BridgedEmbedder, ChatResponse, Message

_ROLES: dict[str, type[BaseMessage]] = {
    "system": SystemMessage,
    "user": HumanMessage,
    "human": HumanMessage,
    "assistant": AIMessage,
    "ai": AIMessage,
}


def _model_name(model: object) -> str:
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


class SageChatModel:
    """A LangChain chat model as sage_memory's ChatModel (for LLM extraction).

    Args:
        model: any ``BaseChatModel`` (ChatOpenAI, ChatOllama, ChatAnthropic...).
        structured_output: when the engine asks for JSON with a schema, use the model's
            ``with_structured_output`` (for models that support it well); by default the schema
            is not sent and the prompt's own JSON instructions are relied on.
        name: the name reported to the engine; defaults to ``langchain:<model name>``.
    """

    def __init__(
        self, model: BaseChatModel, *, structured_output: bool = False, name: str | None = None
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise TypeError(f"expected a LangChain BaseChatModel, got {type(model).__name__}")
        self.model = model
        self.structured_output = structured_output
        self.name = name or f"langchain:{_model_name(model)}"

    @staticmethod
    def _messages(messages: Sequence[Message]) -> list[BaseMessage]:
        out = []
        for m in messages:
            role = m.get("role", "user")
            cls = _ROLES.get(role)
            if cls is None:
                raise ValueError(f"message role {role!r} is not one of {sorted(_ROLES)}")
            out.append(cls(content=m.get("content", "")))
        return out

    def _runnable(self, json_schema: Mapping[str, Any] | None) -> Any:
        if json_schema is not None and self.structured_output:
            return self.model.with_structured_output(dict(json_schema))
        return self.model

    @staticmethod
    def _response(result: Any) -> ChatResponse:
        if not isinstance(result, BaseMessage):  # structured output: a dict
            return ChatResponse(text=json.dumps(result))
        usage = getattr(result, "usage_metadata", None) or {}
        return ChatResponse(
            text=message_text(result.content),
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
        )

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        return self._response(self._runnable(json_schema).invoke(self._messages(messages)))

    async def acomplete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        result = await self._runnable(json_schema).ainvoke(self._messages(messages))
        return self._response(result)


class SageEmbedder(BridgedEmbedder):
    """LangChain ``Embeddings`` as sage_memory's Embedder (L2-normalised float32).

    The width is learnt from one probe embedding on first use unless ``dim`` is given. Keep
    ``name`` stable: a memory folder refuses to reopen with an embedder of another name.
    """

    def __init__(
        self, embeddings: Embeddings, *, name: str | None = None, dim: int | None = None
    ) -> None:
        if not isinstance(embeddings, Embeddings):
            raise TypeError(f"expected LangChain Embeddings, got {type(embeddings).__name__}")
        self.embeddings = embeddings
        super().__init__(name or f"langchain:{_model_name(embeddings)}", dim)

    def _documents(self, texts: list[str]) -> list[list[float]]:
        return self.embeddings.embed_documents(texts)

    def _query(self, text: str) -> list[float]:
        return self.embeddings.embed_query(text)
