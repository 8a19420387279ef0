"""Embedding backends behind the :class:`Embedder` port.

=====================  ==========================================================  =========
spec                   backend                                                     needs
=====================  ==========================================================  =========
``"minilm"``           all-MiniLM-L6-v2 (onnxruntime, else numpy), 384-d, offline  weights
``"hashing[:<dim>]"``  feature hashing of words and trigrams (tests, no model)     nothing
``"litellm:<model>"``  any litellm embedding model (remote or Ollama)              litellm
=====================  ==========================================================  =========

Importing this package loads neither ``tokenizers``, ``safetensors`` nor ``litellm``: each
backend imports its heavy dependencies on first use.
"""

from __future__ import annotations

import inspect

from sage_memory.embed.base import Embedder
from sage_memory.embed.hashing import HashingEmbedder
from sage_memory.embed.litellm import LiteLLMEmbedder
from sage_memory.embed.minilm import MiniLMEmbedder, default_embedder
from sage_memory.errors import ConfigError
from sage_memory.types import Vector

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "LiteLLMEmbedder",
    "MiniLMEmbedder",
    "Vector",
    "default_embedder",
    "make_embedder",
]

_ACCEPTED = (
    "'minilm' (default, offline all-MiniLM-L6-v2), 'hashing' or 'hashing:<dim>' (model-free, "
    "for tests), 'litellm:<model>' (e.g. 'litellm:text-embedding-3-small'), or an Embedder "
    "instance"
)


def _hashing(spec: str, dim_text: str) -> HashingEmbedder:
    try:
        dim = int(dim_text)
    except ValueError:
        raise ConfigError(
            f"embedder {spec!r}: {dim_text!r} is not an integer width; use e.g. 'hashing:256'"
        ) from None
    return HashingEmbedder(dim)


def _is_embedder(obj: object) -> bool:
    # Not isinstance(obj, Embedder): on Python 3.11 that reads every member, so it would run
    # properties, and LiteLLMEmbedder.dim may send a request to learn its width.
    return all(
        inspect.getattr_static(obj, member, None) is not None
        for member in ("name", "dim", "embed", "embed_query")
    )


def make_embedder(spec: str | Embedder = "minilm") -> Embedder:
    """Build an embedder from a short spec string, or pass an Embedder through unchanged.

    The ``name`` of every built-in embedder is also accepted as a spec (``"all-MiniLM-L6-v2"``,
    ``"hashing-256"``, ``"litellm:<model>"``), so a stored name rebuilds the same embedder.

    Args:
        spec: ``"minilm"``, ``"hashing"``, ``"hashing:<dim>"``, ``"litellm:<model>"``, or an
            object that satisfies :class:`Embedder`.

    Returns:
        The embedder. ``"minilm"`` returns the process-wide shared instance
        (:func:`default_embedder`), so its weights load once.

    Raises:
        ConfigError: The spec is not one of the accepted values.
    """
    if not isinstance(spec, str):
        if _is_embedder(spec):
            return spec
        raise ConfigError(
            f"embedder {spec!r} ({type(spec).__name__}) is neither a spec string nor an "
            f"Embedder (name, dim, embed, embed_query); accepted: {_ACCEPTED}"
        )
    text = spec.strip()
    lowered = text.lower()
    if lowered in ("minilm", "all-minilm-l6-v2"):
        return default_embedder()
    if lowered == "hashing":
        return HashingEmbedder()
    for prefix in ("hashing:", "hashing-"):
        if lowered.startswith(prefix):
            return _hashing(spec, text[len(prefix) :].strip())
    if lowered.startswith("litellm:"):
        model = text[len("litellm:") :].strip()
        if model:
            return LiteLLMEmbedder(model)
        raise ConfigError(
            f"embedder {spec!r} names no model; use e.g. 'litellm:text-embedding-3-small'"
        )
    raise ConfigError(f"unknown embedder {spec!r}; accepted: {_ACCEPTED}")
