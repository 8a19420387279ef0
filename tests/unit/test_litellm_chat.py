"""LiteLLMChatModel against litellm's own ``mock_response``: no network, real litellm code."""

from __future__ import annotations

import os

# Must precede the first ``import litellm`` (here or in the code under test): without it the
# import fetches a price list over the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from sage_memory.errors import ConfigError, DependencyError
from sage_memory.llm import ChatModel, ChatResponse, make_chat_model
from sage_memory.llm.litellm import LiteLLMChatModel
from sage_memory.testing.fakes import ScriptedChatModel

litellm = pytest.importorskip("litellm")

# litellm's pydantic models warn about their own TypedDicts on first use; not our concern.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

MODEL = "openai/gpt-4o-mini"
HELLO = [{"role": "user", "content": "Say hi"}]
SCHEMA = {"title": "greeting", "type": "object", "properties": {"text": {"type": "string"}}}


def spy(
    monkeypatch: pytest.MonkeyPatch, name: str, fail: list[BaseException] | None = None
) -> list[dict[str, Any]]:
    """Wrap ``litellm.<name>`` to record each call's kwargs; raise ``fail`` items first."""
    real: Callable[..., Any] = getattr(litellm, name)
    seen: list[dict[str, Any]] = []
    pending = list(fail or [])

    def record(**kwargs: Any) -> Any:
        seen.append(kwargs)
        if pending:
            raise pending.pop(0)
        return real(**kwargs)

    if name == "acompletion":

        async def arecord(**kwargs: Any) -> Any:
            seen.append(kwargs)
            if pending:
                raise pending.pop(0)
            return await real(**kwargs)

        monkeypatch.setattr(litellm, name, arecord)
    else:
        monkeypatch.setattr(litellm, name, record)
    return seen


def rate_limited() -> BaseException:
    error: BaseException = litellm.RateLimitError("slow down", llm_provider="openai", model=MODEL)
    return error


def test_complete_with_mock_response() -> None:
    llm = LiteLLMChatModel(MODEL, mock_response="hello there")
    response = llm.complete(HELLO)
    assert isinstance(llm, ChatModel)
    assert isinstance(response, ChatResponse)
    assert response.text == "hello there"
    assert response.input_tokens > 0
    assert response.output_tokens > 0
    assert response.tokens == response.input_tokens + response.output_tokens
    assert llm.name == MODEL


async def test_acomplete_with_mock_response(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy(monkeypatch, "acompletion")
    llm = LiteLLMChatModel(MODEL, mock_response='{"text": "hi"}')
    response = await llm.acomplete(HELLO, json_schema=SCHEMA)
    assert response.text == '{"text": "hi"}'
    assert len(seen) == 1  # the async API, not the sync one in a thread


def test_json_schema_and_options_are_passed_through(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy(monkeypatch, "completion")
    llm = LiteLLMChatModel(
        MODEL, temperature=0.3, timeout=5, api_base="http://127.0.0.1:9", mock_response="{}"
    )
    llm.complete(HELLO, json_schema=SCHEMA)
    llm.complete(HELLO)
    with_schema, without = seen
    assert with_schema["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "greeting", "schema": SCHEMA, "strict": False},
    }
    assert "response_format" not in without
    assert with_schema["model"] == MODEL
    assert with_schema["messages"] == HELLO
    assert with_schema["temperature"] == 0.3
    assert with_schema["timeout"] == 5
    assert with_schema["api_base"] == "http://127.0.0.1:9"
    assert with_schema["num_retries"] == 0  # never litellm's stacked 2N+1 retries


def test_transient_errors_are_retried_by_our_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy(monkeypatch, "completion", fail=[rate_limited(), rate_limited()])
    llm = LiteLLMChatModel(MODEL, num_retries=2, retry_backoff=0, mock_response="ok")
    assert llm.complete(HELLO).text == "ok"
    assert len(seen) == 3  # num_retries + 1 attempts, exactly


def test_retries_run_out(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy(monkeypatch, "completion", fail=[rate_limited(), rate_limited()])
    llm = LiteLLMChatModel(MODEL, num_retries=1, retry_backoff=0, mock_response="ok")
    with pytest.raises(litellm.RateLimitError):
        llm.complete(HELLO)
    assert len(seen) == 2


def test_non_transient_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = litellm.BadRequestError("bad schema", model=MODEL, llm_provider="openai")
    seen = spy(monkeypatch, "completion", fail=[bad])
    llm = LiteLLMChatModel(MODEL, num_retries=3, retry_backoff=0, mock_response="ok")
    with pytest.raises(litellm.BadRequestError):
        llm.complete(HELLO)
    assert len(seen) == 1


async def test_async_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy(monkeypatch, "acompletion", fail=[rate_limited()])
    llm = LiteLLMChatModel(MODEL, num_retries=1, retry_backoff=0, mock_response="ok")
    assert (await llm.acomplete(HELLO)).text == "ok"
    assert len(seen) == 2


def test_import_does_not_load_litellm() -> None:
    code = (
        "import sys, sage_memory.llm, sage_memory.llm.litellm, sage_memory.extract.llm;"
        "m = sage_memory.llm.make_chat_model('openai/gpt-4o-mini');"
        "print('litellm' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


def test_missing_litellm_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def no_litellm(name: str, *args: Any) -> Any:
        return None if name == "litellm" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", no_litellm)
    with pytest.raises(DependencyError, match="pip install litellm"):
        LiteLLMChatModel(MODEL)
    with pytest.raises(ImportError):  # DependencyError is an ImportError too
        make_chat_model(MODEL)


def test_make_chat_model() -> None:
    assert make_chat_model(None) is None
    model = make_chat_model("litellm:ollama_chat/llama3.1", timeout=3)
    assert isinstance(model, LiteLLMChatModel)
    assert model.model == "ollama_chat/llama3.1"
    assert model.timeout == 3
    fake = ScriptedChatModel([])
    assert make_chat_model(fake) is fake
    with pytest.raises(ConfigError, match="names no model"):
        make_chat_model("  ")
    with pytest.raises(ConfigError, match="configure the model object"):
        make_chat_model(fake, timeout=3)
    with pytest.raises(ConfigError, match="not a model"):
        make_chat_model(42)  # type: ignore[arg-type]
