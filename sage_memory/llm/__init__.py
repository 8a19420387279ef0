"""The LLM port and how to get a model for it.

Importing this package does not import litellm (that costs seconds); the litellm backend loads
on its first call.
"""

from __future__ import annotations

from typing import Any

from sage_memory.errors import ConfigError
from sage_memory.llm.base import ChatModel, ChatResponse, Message

__all__ = ["ChatModel", "ChatResponse", "Message", "make_chat_model"]

_LITELLM_PREFIX = "litellm:"


def make_chat_model(spec: str | ChatModel | None, **kwargs: Any) -> ChatModel | None:
    """The ChatModel a configuration names.

    Args:
        spec: ``None`` (no LLM: the caller uses the rule extractor), a ready ChatModel (returned
            as is), or a litellm model string such as ``"gpt-4o-mini"`` or
            ``"ollama_chat/llama3.1"``; a ``"litellm:"`` prefix is accepted and removed.
        **kwargs: Options for :class:`~sage_memory.llm.litellm.LiteLLMChatModel`
            (``temperature``, ``timeout``, ``num_retries``, ``api_base``, ``api_key``...).

    Returns:
        The model, or ``None`` when ``spec`` is ``None``.

    Raises:
        ConfigError: ``spec`` is empty, of the wrong type, or a ChatModel given with kwargs.
        DependencyError: a model string was given but litellm is not installed.
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        model = spec.removeprefix(_LITELLM_PREFIX).strip()
        if not model:
            raise ConfigError(
                f"llm={spec!r} names no model; pass a litellm model string such as "
                "'gpt-4o-mini' or 'ollama_chat/llama3.1', or None for no LLM"
            )
        from sage_memory.llm.litellm import LiteLLMChatModel

        return LiteLLMChatModel(model, **kwargs)
    if isinstance(spec, ChatModel):
        if kwargs:
            raise ConfigError(
                f"options {sorted(kwargs)} were given with a ready ChatModel {spec!r}; "
                "configure the model object itself instead"
            )
        return spec
    raise ConfigError(
        f"llm={spec!r} ({type(spec).__name__}) is not a model: pass a litellm model string, "
        "an object with complete()/acomplete() and a name (the ChatModel protocol), or None"
    )
