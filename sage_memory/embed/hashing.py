"""A model-free embedder: feature hashing of words and character trigrams.

Meant for tests and tiny set-ups: no weights, no dependencies beyond numpy, identical vectors in
every process and on every machine (the hash is BLAKE2b, never Python's salted ``hash()``).
Texts that share words or word fragments get a positive cosine ("learning" and "learned" share
the trigrams of "learn"), but there is no semantics: synonyms do not meet.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from sage_memory.errors import ConfigError, ValidationError
from sage_memory.types import Vector

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")
# Whole words carry more meaning than any one of their fragments.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
# The empty text (or one without word characters) gets this single feature, so every row stays
# unit length as the Embedder protocol promises.
_EMPTY_FEATURE = "\x00empty"


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str) -> int:
    """Stable 64-bit hash of one feature."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, person=b"sage-hash").digest()
    return int.from_bytes(digest, "little")


def _features(text: str) -> list[tuple[str, float]]:
    feats: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        feats.append(("w:" + word, _WORD_WEIGHT))
        # Boundary marks let "cat" and "concatenate" differ at the edges.
        padded = f"<{word}>"
        feats.extend(("c:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return feats or [(_EMPTY_FEATURE, 1.0)]


class HashingEmbedder:
    """Signed feature hashing of word unigrams and character trigrams, L2-normalised.

    Each feature adds ``+weight`` or ``-weight`` (the sign comes from the hash, so collisions
    tend to cancel rather than pile up) to bucket ``hash % dim``.

    Args:
        dim: Vector width; at least 8.
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ConfigError(f"HashingEmbedder dim={dim!r} must be an integer >= 8, e.g. 256")
        self._dim = dim

    @property
    def name(self) -> str:
        """``hashing-<dim>``: vectors of different widths never share an index."""
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        """Vector width."""
        return self._dim

    def _vector(self, text: str, out: Vector) -> None:
        for feature, weight in _features(text):
            h = _bucket(feature)
            # Low bits pick the bucket, the top bit picks the sign: independent parts of the hash.
            out[h % self._dim] += weight if h >> 63 else -weight
        norm = float(np.linalg.norm(out))
        if norm > 0.0:  # every bucket can cancel out, however unlikely
            out /= np.float32(norm)

    def embed(self, texts: Sequence[str]) -> Vector:
        """Embed a batch of texts.

        Args:
            texts: The texts; "" is allowed. Order is preserved.

        Returns:
            Array of shape (len(texts), dim), float32, unit rows.

        Raises:
            ValidationError: ``texts`` is a single string or holds a non-string.
        """
        if isinstance(texts, str):
            raise ValidationError(
                "embed() takes a sequence of texts, got one str; use embed_query(text) or "
                "embed([text])"
            )
        items = list(texts)
        out = np.zeros((len(items), self._dim), dtype=np.float32)
        for row, text in enumerate(items):
            if not isinstance(text, str):
                raise ValidationError(
                    f"embed() takes strings only, got {type(text).__name__}: {text!r:.80}"
                )
            self._vector(text, out[row])
        return out

    def embed_query(self, text: str) -> Vector:
        """Embed one text; returns shape (dim,)."""
        if not isinstance(text, str):
            raise ValidationError(f"embed_query() takes a str, got {type(text).__name__}")
        out = np.zeros(self._dim, dtype=np.float32)
        self._vector(text, out)
        return out

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"
