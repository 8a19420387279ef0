"""Embeddings from any provider litellm supports (OpenAI, Azure, Cohere, Ollama, Bedrock...).

litellm is imported inside the call that needs it, never at module import: importing it costs
seconds and, unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is set first, fetches a price list over the
network.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from sage_memory.embed.base import unit_rows
from sage_memory.errors import ConfigError, DependencyError, ExtractionError, ValidationError
from sage_memory.types import Vector

__all__ = ["LiteLLMEmbedder"]


def _litellm_embedding() -> Callable[..., Any]:
    # Must be set before the first import of litellm, which otherwise downloads its model cost
    # map at import time; setdefault keeps a user's explicit choice.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise DependencyError(
            "LiteLLMEmbedder needs the package 'litellm'; install it with: pip install litellm"
        ) from exc
    embedding: Callable[..., Any] = litellm.embedding
    return embedding


def _field(item: Any, key: str) -> Any:
    # litellm returns Embedding objects, some providers plain dicts.
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def _as_vector(raw: Any) -> Vector:
    if isinstance(raw, str):  # encoding_format="base64": little-endian float32 bytes
        return np.frombuffer(base64.b64decode(raw), dtype="<f4").astype(np.float32)
    return np.asarray(raw, dtype=np.float32)


class LiteLLMEmbedder:
    """Embeds texts through ``litellm.embedding`` and L2-normalises the result.

    Args:
        model: A litellm model string, e.g. ``"text-embedding-3-small"`` or
            ``"ollama/nomic-embed-text"``.
        dim: Expected vector width. When None it is learned from the first response; reading
            :attr:`dim` before any call then sends one short probe request (note that on
            Python 3.11 ``isinstance(x, Embedder)`` reads ``dim``: pass ``dim`` to avoid it).
        batch_size: Most texts per request.
        **kwargs: Passed to every ``litellm.embedding`` call (``api_base``, ``api_key``,
            ``dimensions``, ``timeout``...).
    """

    def __init__(
        self, model: str, dim: int | None = None, batch_size: int = 64, **kwargs: Any
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(
                f"LiteLLMEmbedder model={model!r} must be a non-empty litellm model name, "
                "e.g. 'text-embedding-3-small'"
            )
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ConfigError(f"LiteLLMEmbedder dim={dim!r} must be a positive integer or None")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"LiteLLMEmbedder batch_size={batch_size!r} must be an integer >= 1")
        self._model = model.strip()
        self._dim = dim
        self._batch_size = batch_size
        self._kwargs = kwargs
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``litellm:<model>``; also the spec that rebuilds it with ``make_embedder``."""
        return f"litellm:{self._model}"

    @property
    def dim(self) -> int:
        """Vector width, learned from the provider (with one probe request) if not given."""
        if self._dim is None:
            self._request(["dimension probe"])
        assert self._dim is not None  # set by _request or it raised
        return self._dim

    def _request(self, batch: list[str]) -> Vector:
        embedding = _litellm_embedding()
        # Providers reject empty input strings; a lone space embeds as "nothing" as well.
        inputs = [text if text.strip() else " " for text in batch]
        response = embedding(model=self._model, input=inputs, **self._kwargs)
        data = list(_field(response, "data") or [])
        if len(data) != len(batch):
            raise ExtractionError(
                f"litellm model {self._model!r} returned {len(data)} embeddings for "
                f"{len(batch)} inputs; check the model name and that it is an embedding model"
            )
        # Sort by the index field when the provider gives one: order is not guaranteed.
        indices = [_field(item, "index") for item in data]
        if all(isinstance(i, int) for i in indices) and sorted(indices) == list(range(len(data))):
            data = [item for _, item in sorted(zip(indices, data, strict=True), key=lambda p: p[0])]
        rows = [_as_vector(_field(item, "embedding")) for item in data]
        widths = {row.shape for row in rows}
        if len(widths) != 1 or rows[0].ndim != 1 or rows[0].shape[0] == 0:
            raise ExtractionError(
                f"litellm model {self._model!r} returned vectors of shapes {sorted(widths)}; "
                "expected one non-empty width for all inputs"
            )
        width = int(rows[0].shape[0])
        with self._lock:
            if self._dim is None:
                self._dim = width
        if width != self._dim:
            raise ConfigError(
                f"litellm model {self._model!r} returned {width}-wide vectors but dim={self._dim}"
                f"; pass dim={width} (or dim=None to learn it), or a 'dimensions' argument the "
                "provider supports"
            )
        return unit_rows(np.stack(rows))

    def embed(self, texts: Sequence[str]) -> Vector:
        """Embed a batch of texts, ``batch_size`` per request.

        Args:
            texts: The texts; order is preserved.

        Returns:
            Array of shape (len(texts), dim), float32, unit rows.

        Raises:
            ValidationError: ``texts`` is a single string or holds a non-string.
            DependencyError: litellm is not installed.
            ExtractionError: The provider answered with an unusable payload.
        """
        if isinstance(texts, str):
            raise ValidationError(
                "embed() takes a sequence of texts, got one str; use embed_query(text) or "
                "embed([text])"
            )
        items = list(texts)
        for item in items:
            if not isinstance(item, str):
                raise ValidationError(
                    f"embed() takes strings only, got {type(item).__name__}: {item!r:.80}"
                )
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(items[start : start + self._batch_size])
            for start in range(0, len(items), self._batch_size)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def embed_query(self, text: str) -> Vector:
        """Embed one text; returns shape (dim,)."""
        if not isinstance(text, str):
            raise ValidationError(f"embed_query() takes a str, got {type(text).__name__}")
        vector: Vector = self._request([text])[0]
        return vector

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder(model={self._model!r}, dim={self._dim!r})"
