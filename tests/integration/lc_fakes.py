"""A scripted LangChain chat model: the only fake in the LangChain/LangGraph tests (a real model
would need the network). It plays back a script and records every prompt it was given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Step = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(BaseChatModel):
    """Answers call n with ``script[n]``: a message, a string, or a function of the prompt.

    ``bind_tools`` returns the model itself, so ``create_agent`` can drive it; the tool calls
    come from the script.
    """

    script: list[Any]
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        n = len(self.calls)
        if n > len(self.script):
            raise AssertionError(f"call {n} but the script has {len(self.script)} steps")
        step = self.script[n - 1]
        out = step(list(messages)) if callable(step) else step
        message = AIMessage(content=out) if isinstance(out, str) else out
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    )


def last_tool_result(messages: Sequence[BaseMessage]) -> str:
    for m in reversed(messages):
        if isinstance(m, ToolMessage):
            return str(m.content)
    raise AssertionError("the model was not given a tool result")


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    """Everything a model call saw, as one string."""
    return "\n".join(f"{m.type}: {m.content}" for m in messages)
