"""Test doubles shared by the tests, the benchmarks and users' own tests.

:class:`ScriptedChatModel` plays back a script of answers, one per call, and records what it was
asked, so a test can drive the LLM extractor (or any ChatModel user) offline and deterministically:
a fake only for what cannot run in a test (a paid or remote LLM). :class:`NoGraphExtractor` is a
real, minimal Extractor that proposes nothing, so only what a test states shapes the graph;
:class:`ManualClock` is a clock a test moves by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sage_memory.extract.base import ExtractionContext
from sage_memory.llm.base import ChatResponse, Message
from sage_memory.types import GraphDelta, Memory

#: One scripted answer: the text to return, an exception to raise, or a function of the messages.
ScriptStep = str | BaseException | Callable[[Sequence[Message]], str]


class ScriptExhaustedError(AssertionError):
    """The code under test made more LLM calls than the script has answers.

    An AssertionError on purpose: it is a failed expectation of the test, not a runtime error
    of sage_memory.
    """


def fake_token_count(text: str) -> int:
    """The fake tokenizer: four characters a token, as a rough English average."""
    return len(text) // 4


class ScriptedChatModel:
    """A ChatModel that answers from a script, in order, and records every call.

    Example:
        >>> llm = ScriptedChatModel(['{"memories": []}', TimeoutError("slow")])
        >>> llm.complete([{"role": "user", "content": "hi"}]).text
        '{"memories": []}'
        >>> len(llm.calls)
        1

    Args:
        responses: One step per expected call: a string is returned as the answer, an exception
            is raised, a callable gets the messages and returns the answer (to answer based on
            the prompt, or to raise conditionally).
        name: The model name reported through the ChatModel protocol.

    Attributes:
        calls: The messages of every call so far, copied, in order.
        schemas: The ``json_schema`` argument of every call, in order.
    """

    def __init__(self, responses: Sequence[ScriptStep], *, name: str = "scripted") -> None:
        self.name = name
        self._script: list[ScriptStep] = list(responses)
        self._next = 0
        self.calls: list[list[dict[str, str]]] = []
        self.schemas: list[Mapping[str, Any] | None] = []

    @property
    def remaining(self) -> int:
        """How many scripted answers have not been used yet."""
        return len(self._script) - self._next

    def _answer(
        self, messages: Sequence[Message], json_schema: Mapping[str, Any] | None
    ) -> ChatResponse:
        recorded = [dict(m) for m in messages]
        self.calls.append(recorded)
        self.schemas.append(json_schema)
        if self._next >= len(self._script):
            last = recorded[-1]["content"][:200] if recorded else ""
            raise ScriptExhaustedError(
                f"ScriptedChatModel got call #{len(self.calls)} but its script has only "
                f"{len(self._script)} answer(s); add an answer or expect fewer calls. "
                f"Last message of the extra call: {last!r}"
            )
        step = self._script[self._next]
        self._next += 1
        if isinstance(step, BaseException):
            raise step
        text = step if isinstance(step, str) else step(recorded)
        prompt = "".join(m.get("content", "") for m in recorded)
        return ChatResponse(
            text=text,
            input_tokens=fake_token_count(prompt),
            output_tokens=fake_token_count(text),
        )

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        """Return (or raise) the next scripted answer."""
        return self._answer(messages, json_schema)

    async def acomplete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None
    ) -> ChatResponse:
        """Async :meth:`complete`; shares the same script and call log."""
        return self._answer(messages, json_schema)


class NoGraphExtractor:
    """An Extractor that proposes nothing: the graph is exactly what a test adds with
    ``add_graph`` (or none at all), while memories are still stored and searchable."""

    name = "no-graph"

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        return GraphDelta()

    def extract_many(self, items: Sequence[tuple[Memory, ExtractionContext]]) -> list[GraphDelta]:
        return [GraphDelta() for _ in items]


class ManualClock:
    """A clock for ``SageMemory(clock=...)`` that stands still until a test moves it.

    Example:
        >>> from datetime import UTC, datetime
        >>> clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
        >>> clock.advance(days=2)
        >>> clock().day
        3
    """

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        """Move on by a :class:`~datetime.timedelta` given as keywords (``days=2``)."""
        self.now += timedelta(**delta)
