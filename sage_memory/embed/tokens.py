"""Token counters: how many tokens a text costs in a prompt, for the context budget.

A :data:`TokenCounter` is any ``str -> int``; one that also has ``many(texts)`` counts a batch
in one call. The engine chooses the counter and passes it to the retriever, so retrieval never
assumes an embedder. The documented default, :func:`default_counter`, is the MiniLM WordPiece
tokenizer when its files are installed (a fair proxy for chat models' BPE tokenizers on
English text), else :func:`approx_tokens`, about four characters a token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters per token) when no tokenizer is at hand."""
    return max(1, (len(text) + 3) // 4)


class WordPieceCounter:
    """Counts tokens with the MiniLM WordPiece tokenizer (offline), one text or a batch."""

    #: Lines remembered; the same memory lines come back query after query.
    CACHE_SIZE = 20_000

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer
        self._known: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        n = self._known.get(text)
        if n is None:
            n = len(self._tok.encode(text, add_special_tokens=False).ids)
            self._remember(text, n)
        return n

    def _remember(self, text: str, n: int) -> None:
        if len(self._known) >= self.CACHE_SIZE:
            self._known.clear()  # crude, but bounded and rarely hit
        self._known[text] = n

    def many(self, texts: Sequence[str]) -> list[int]:
        """Counts of many texts; unseen ones go to the tokenizer in one call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._known))
        if len(todo) > 8:
            for text, enc in zip(
                todo, self._tok.encode_batch(todo, add_special_tokens=False), strict=True
            ):
                self._remember(text, len(enc.ids))
        return [self(t) for t in texts]


def default_counter() -> TokenCounter:
    """The MiniLM WordPiece tokenizer when its files are installed, else an estimate."""
    try:
        from sage_memory.embed.minilm import default_embedder

        # The shared embedder's own tokenizer (untruncated, unpadded): a search that embeds
        # its query with the default model has loaded it already, so it is not read twice.
        return WordPieceCounter(default_embedder().tokenizer())
    except Exception:  # missing weights: an estimate is better than failing a search
        return approx_tokens


def count_all(count: TokenCounter, texts: Sequence[str]) -> list[int]:
    """Token counts of ``texts``, batched when the counter can batch."""
    many = getattr(count, "many", None)
    if callable(many):
        return list(many(texts))
    return [count(t) for t in texts]


class LazyCounter:
    """A counter built on first use, so opening an engine loads no tokenizer."""

    def __init__(self, make: Callable[[], TokenCounter]) -> None:
        self._make = make
        self._counter: TokenCounter | None = None

    def _get(self) -> TokenCounter:
        if self._counter is None:
            self._counter = self._make()
        return self._counter

    def __call__(self, text: str) -> int:
        return self._get()(text)

    def many(self, texts: Sequence[str]) -> list[int]:
        """Counts of many texts, batched when the built counter can batch."""
        return count_all(self._get(), texts)
