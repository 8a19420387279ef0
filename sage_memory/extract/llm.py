"""The LLM extractor: one chat call per memory, or per batch of up to eight memories.

Failure is normal with LLMs, so it is handled here rather than passed up: an unusable answer
gets one retry with the parser's complaint appended; if that fails too, or the model call
raises, the memories go to the fallback extractor (the rule extractor, which the engine passes
in) and ``GraphDelta.error`` says what failed. A memory is never lost to a bad answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from sage_memory.config import ExtractConfig
from sage_memory.entities.names import merge_aliases
from sage_memory.errors import ExtractionError
from sage_memory.extract.base import ExtractionContext, Extractor
from sage_memory.extract.parse import parse_extraction
from sage_memory.extract.prompts import (
    EXTRACTION_JSON_SCHEMA,
    EXTRACTION_PROMPT_VERSION,
    extraction_messages,
    repair_messages,
)
from sage_memory.llm.base import ChatModel, ChatResponse, Message
from sage_memory.schema import Schema
from sage_memory.types import GraphDelta, Memory

Item = tuple[Memory, ExtractionContext]

#: Most memories one call may carry: more makes answers long enough to be cut off.
MAX_BATCH = 8
#: Longest error text kept on a delta.
_MAX_ERROR_CHARS = 500


def _split_tokens(total: int, count: int) -> list[int]:
    """Share a call's tokens among its memories so that the shares add up to the total."""
    share, rest = divmod(total, count)
    return [share + (1 if i < rest else 0) for i in range(count)]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:_MAX_ERROR_CHARS]


class LLMExtractor:
    """Extract nodes and edges with a chat model, falling back to another extractor.

    Example:
        >>> from sage_memory.testing.fakes import ScriptedChatModel
        >>> llm = ScriptedChatModel(['{"memories": [{"index": 0, "nodes": [], "edges": []}]}'])
        >>> extractor = LLMExtractor(llm)

    Args:
        model: Any ChatModel (litellm, a LangChain/LlamaIndex adapter, a scripted fake).
        config: Labels, relations, aliases and the context-node budget; defaults apply if None.
        fallback: The extractor for memories the model could not handle. Without one such
            memories get an empty delta whose ``error`` says why.
        batch_size: Memories per call in :meth:`extract_many`, 1 to 8.
        max_concurrency: Calls :meth:`aextract_many` may have in flight at once.

    Attributes:
        prompt_version: The prompt version this extractor sends.
    """

    name = "llm"

    def __init__(
        self,
        model: ChatModel,
        config: ExtractConfig | None = None,
        fallback: Extractor | None = None,
        *,
        batch_size: int = MAX_BATCH,
        max_concurrency: int = 4,
    ) -> None:
        self.model = model
        self.config = config or ExtractConfig()
        self.fallback = fallback
        self.batch_size = max(1, min(MAX_BATCH, batch_size))
        self.max_concurrency = max(1, max_concurrency)
        self.prompt_version = EXTRACTION_PROMPT_VERSION
        self.schema = Schema.default(self.config.node_labels, self.config.relation_types)
        self._aliases = merge_aliases(self.config.aliases)

    def __repr__(self) -> str:
        return f"LLMExtractor(model={getattr(self.model, 'name', '?')!r})"

    # --- the steps shared by the sync and async paths ------------------------------------

    def _chunks(self, items: Sequence[Item]) -> list[Sequence[Item]]:
        return [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]

    def _messages(self, chunk: Sequence[Item]) -> list[Message]:
        return extraction_messages(chunk, self.schema, self.config.max_context_nodes)

    def _parse(self, response: ChatResponse, expected: int) -> list[GraphDelta | None]:
        return parse_extraction(
            response.text, schema=self.schema, expected=expected, aliases=self._aliases
        )

    def _fallback(self, items: Sequence[Item], reason: str) -> list[GraphDelta]:
        """Deltas for memories the model did not handle, each saying why."""
        reason = reason[:_MAX_ERROR_CHARS]
        if self.fallback is None:
            return [GraphDelta(error=f"llm extraction failed: {reason}") for _ in items]
        try:
            deltas = self.fallback.extract_many(items)
        except Exception as exc:  # a fallback must not lose the memory either
            return [
                GraphDelta(
                    error=f"llm extraction failed: {reason}; fallback "
                    f"{self.fallback.name!r} failed too: {_describe(exc)}"
                )
                for _ in items
            ]
        note = f"llm extraction failed: {reason}; used the {self.fallback.name!r} extractor"
        return [replace(d, error=f"{note}; {d.error}" if d.error else note) for d in deltas]

    def _finish(
        self,
        chunk: Sequence[Item],
        parsed: list[GraphDelta | None] | None,
        tokens: int,
        failure: str,
    ) -> list[GraphDelta]:
        """Complete a chunk's deltas: fallback for what is missing, tokens shared out."""
        if parsed is None:
            results = self._fallback(chunk, failure)
        else:
            missing = [i for i, delta in enumerate(parsed) if delta is None]
            backups = iter(
                self._fallback(
                    [chunk[i] for i in missing],
                    "the answer had no entry for this memory",
                )
                if missing
                else []
            )
            results = [delta if delta is not None else next(backups) for delta in parsed]
        shares = _split_tokens(tokens, len(chunk))
        return [
            replace(delta, tokens_used=delta.tokens_used + share)
            for delta, share in zip(results, shares, strict=True)
        ]

    # --- sync ----------------------------------------------------------------------------

    def _extract_chunk(self, chunk: Sequence[Item]) -> list[GraphDelta]:
        messages = self._messages(chunk)
        tokens, error = 0, ""
        for attempt in range(2):  # the first answer, then one retry on an unusable answer
            try:
                response = self.model.complete(messages, json_schema=EXTRACTION_JSON_SCHEMA)
            except Exception as exc:  # any backend failure: the memories still get extracted
                return self._finish(chunk, None, tokens, f"model call failed: {_describe(exc)}")
            tokens += response.tokens
            try:
                parsed = self._parse(response, len(chunk))
            except ExtractionError as exc:
                error = str(exc)
            else:
                return self._finish(chunk, parsed, tokens, "")
            if attempt == 0:
                messages = [*messages, *repair_messages(response.text, error)]
        return self._finish(chunk, None, tokens, f"unusable answer after one retry: {error}")

    def extract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        """Extract one memory with one model call (two if the first answer is unusable).

        Args:
            memory: The memory to extract.
            context: Existing nodes near it, shown to the model so it reuses their names.

        Returns:
            The proposed delta; ``error`` is set when the fallback (or nothing) was used.
        """
        return self._extract_chunk([(memory, context)])[0]

    def extract_many(self, items: Sequence[Item]) -> list[GraphDelta]:
        """Extract memories in batches of up to ``batch_size``, one model call per batch.

        Args:
            items: Memories with their contexts.

        Returns:
            One delta per item, in order. A batch's tokens are shared among its deltas.
        """
        return [delta for chunk in self._chunks(items) for delta in self._extract_chunk(chunk)]

    # --- async ---------------------------------------------------------------------------

    async def _aextract_chunk(self, chunk: Sequence[Item]) -> list[GraphDelta]:
        messages = self._messages(chunk)
        tokens, error = 0, ""
        for attempt in range(2):
            try:
                response = await self.model.acomplete(messages, json_schema=EXTRACTION_JSON_SCHEMA)
            except Exception as exc:
                return self._finish(chunk, None, tokens, f"model call failed: {_describe(exc)}")
            tokens += response.tokens
            try:
                parsed = self._parse(response, len(chunk))
            except ExtractionError as exc:
                error = str(exc)
            else:
                return self._finish(chunk, parsed, tokens, "")
            if attempt == 0:
                messages = [*messages, *repair_messages(response.text, error)]
        return self._finish(chunk, None, tokens, f"unusable answer after one retry: {error}")

    async def aextract(self, memory: Memory, context: ExtractionContext) -> GraphDelta:
        """Async :meth:`extract`, through ``ChatModel.acomplete``."""
        return (await self._aextract_chunk([(memory, context)]))[0]

    async def aextract_many(self, items: Sequence[Item]) -> list[GraphDelta]:
        """Async :meth:`extract_many`; up to ``max_concurrency`` batches in flight."""
        gate = asyncio.Semaphore(self.max_concurrency)

        async def run(chunk: Sequence[Item]) -> list[GraphDelta]:
            async with gate:
                return await self._aextract_chunk(chunk)

        chunks = await asyncio.gather(*(run(c) for c in self._chunks(items)))
        return [delta for chunk in chunks for delta in chunk]
