"""A ChatModel backed by litellm: OpenAI, Anthropic, Ollama, vLLM and ~100 other providers.

litellm is imported lazily, on the first call, because ``import litellm`` costs seconds and
(unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is set) fetches a price list over the network. We set
that variable's default just before the import so an offline machine does not wait on it.

Retries are ours, not litellm's: in litellm 1.110 its ``num_retries`` stacks with the provider
SDK's own retries (N retries give 2N+1 attempts), so we always pass ``num_retries=0`` and retry
transient errors here, a predictable ``num_retries + 1`` attempts.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from sage_memory.errors import DependencyError, require
from sage_memory.llm.base import ChatResponse, Message

_INSTALL = "pip install litellm"
#: Longest pause between two attempts, seconds.
_MAX_BACKOFF = 10.0


def _import_litellm() -> ModuleType:
    """Import litellm with the offline-friendly default set first."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise DependencyError(
            f"LiteLLMChatModel needs the package 'litellm'; install it with: {_INSTALL}"
        ) from exc
    return litellm


def _transient_errors(litellm: ModuleType) -> tuple[type[BaseException], ...]:
    """Errors worth another attempt: the server or the network hiccuped, not our request."""
    names = (
        "Timeout",
        "APIConnectionError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
    )
    found = tuple(getattr(litellm, n) for n in names if isinstance(getattr(litellm, n, None), type))
    return (*found, TimeoutError, ConnectionError)


def _to_chat_response(response: Any) -> ChatResponse:
    """Read the text and token usage out of a litellm ``ModelResponse``."""
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        content = None
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None) or 0
    completion = getattr(usage, "completion_tokens", None) or 0
    return ChatResponse(
        text=content if isinstance(content, str) else "",
        input_tokens=int(prompt),
        output_tokens=int(completion),
    )


class LiteLLMChatModel:
    """Any litellm model string behind the :class:`~sage_memory.llm.base.ChatModel` port.

    Example:
        >>> llm = LiteLLMChatModel("ollama_chat/llama3.1", api_base="http://localhost:11434")
        >>> llm.complete([{"role": "user", "content": "hi"}]).text  # doctest: +SKIP

    Args:
        model: A litellm model string such as ``"gpt-4o-mini"``, ``"ollama_chat/llama3.1"`` or
            ``"hosted_vllm/Qwen/Qwen2.5-7B-Instruct"``.
        temperature: Sampling temperature; 0 keeps extraction repeatable.
        timeout: Seconds one attempt may take.
        num_retries: Extra attempts after a transient error (timeout, connection, rate limit,
            5xx). Total attempts are ``num_retries + 1``.
        retry_backoff: Seconds before the first retry; doubles on each further retry (capped
            at 10 s). 0 retries at once.
        **kwargs: Passed to ``litellm.completion`` unchanged: ``api_base``, ``api_key``,
            ``max_tokens``, ``drop_params``, ``mock_response`` (for offline tests)...

    Raises:
        DependencyError: litellm is not installed.
    """

    def __init__(
        self,
        model: str,
        *,
        temperature: float = 0.0,
        timeout: float = 60,
        num_retries: int = 0,
        retry_backoff: float = 0.5,
        **kwargs: Any,
    ) -> None:
        # find_spec only: fail at construction when litellm is missing, without paying the
        # multi-second import until the first call.
        require("litellm", _INSTALL)
        if num_retries < 0:
            raise ValueError(f"num_retries={num_retries} must be 0 or more")
        self.model = model
        self.name = model
        self.temperature = temperature
        self.timeout = timeout
        self.num_retries = num_retries
        self.retry_backoff = max(0.0, retry_backoff)
        self.kwargs: dict[str, Any] = dict(kwargs)

    def __repr__(self) -> str:
        return f"LiteLLMChatModel({self.model!r})"

    def _request(
        self, messages: Sequence[Message], json_schema: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            **self.kwargs,
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.temperature,
            "timeout": self.timeout,
            "num_retries": 0,  # see the module docstring: our loop, not litellm's 2N+1
        }
        if json_schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": str(json_schema.get("title", "response")),
                    "schema": dict(json_schema),
                    # Not strict: strict mode rejects optional keys and many local servers do
                    # not implement it; the caller validates the JSON anyway.
                    "strict": False,
                },
            }
        return request

    def _delay(self, attempt: int) -> float:
        return float(min(_MAX_BACKOFF, self.retry_backoff * (2**attempt)))

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        """One chat completion, retrying transient errors ``num_retries`` times.

        Args:
            messages: Chat messages, ``{"role": ..., "content": ...}``.
            json_schema: A JSON schema the answer should follow; sent as an OpenAI-style
                ``response_format``. The answer is still text: parse and validate it.

        Returns:
            The answer text and its token usage.
        """
        litellm = _import_litellm()
        transient = _transient_errors(litellm)
        request = self._request(messages, json_schema)
        for attempt in range(self.num_retries + 1):
            try:
                return _to_chat_response(litellm.completion(**request))
            except transient:
                if attempt == self.num_retries:
                    raise
                time.sleep(self._delay(attempt))
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def acomplete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        """Async :meth:`complete`: ``litellm.acompletion`` and ``asyncio.sleep`` between tries."""
        if "litellm" in sys.modules:
            litellm = _import_litellm()
        else:
            # The first import takes seconds of CPU; keep it off the event loop.
            litellm = await asyncio.to_thread(_import_litellm)
        transient = _transient_errors(litellm)
        request = self._request(messages, json_schema)
        for attempt in range(self.num_retries + 1):
            try:
                return _to_chat_response(await litellm.acompletion(**request))
            except transient:
                if attempt == self.num_retries:
                    raise
                await asyncio.sleep(self._delay(attempt))
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
