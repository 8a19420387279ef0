"""The ChatModel port: the one way sage_memory talks to an LLM.

Any litellm model, or a LangChain / LlamaIndex model through the adapters, can stand behind it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass(frozen=True, slots=True)
class ChatResponse:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@runtime_checkable
class ChatModel(Protocol):
    name: str

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        """One chat completion. ``json_schema`` asks for structured JSON output when the
        backend supports it; callers must still parse and validate the text."""
        ...

    async def acomplete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse: ...
