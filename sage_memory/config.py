"""One explicit configuration object, with named presets.

Nothing here reads the environment unless you call :meth:`SageConfig.from_env`. Configs are
frozen: derive a variant with :meth:`SageConfig.but` (or ``dataclasses.replace``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sage_memory.errors import ConfigError

#: Longest memory text accepted by ``add`` (characters). Longer input is a ValidationError:
#: split documents before adding them.
DEFAULT_MAX_TEXT_CHARS = 32_000


@dataclass(frozen=True, slots=True)
class ExtractConfig:
    """How text becomes nodes and edges."""

    enabled: bool = True
    #: "auto": the LLM extractor when an LLM is configured, else the rule extractor.
    mode: Literal["auto", "rules", "llm"] = "auto"
    #: Name similarity (0-1) above which an extracted entity is the same as an existing node.
    fuzzy_threshold: float = 0.92
    #: Cosine similarity of name embeddings above which two names are the same entity.
    embedding_threshold: float = 0.9
    #: Between this and the thresholds above a match is ambiguous: a new node + a merge candidate.
    ambiguous_threshold: float = 0.8
    #: How many existing node names an LLM prompt may show.
    max_context_nodes: int = 40
    #: User-defined node labels and relation types, added to the built-in schema.
    node_labels: tuple[str, ...] = ()
    relation_types: tuple[str, ...] = ()
    #: Relations where a new value expires the previous one (lives in, works at, status...).
    single_valued: tuple[str, ...] = ("LIVES_IN", "WORKS_AT", "HAS_STATUS", "HAS_ROLE", "PREFERS")
    #: Extra name aliases (lower case) merged with the built-in ones such as pd -> pandas.
    aliases: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RetrieveConfig:
    """How search finds, ranks and packs."""

    limit: int = 10
    #: Token budget of ``RetrievalResult.context``.
    context_tokens: int = 2000
    #: Named fusion weights; see ``sage_memory.retrieve.fusion.PRESETS``.
    preset: str = "balanced"
    hops: int = 2
    max_fanout: int = 50
    min_confidence: float = 0.0
    #: Seeds taken from each channel before fusion.
    seeds_per_channel: int = 30
    mmr_lambda: float = 0.8


@dataclass(frozen=True, slots=True)
class EvolveConfig:
    """How the memory changes with use. Operations not listed in ``auto_apply`` only suggest."""

    decay: float = 0.98
    learning_rate: float = 0.1
    min_weight: float = 0.1
    max_weight: float = 5.0
    #: Co-access count after which two nodes without an edge get an ASSOCIATED_WITH edge.
    associate_after: int = 3
    merge_auto_confidence: float = 0.97
    #: Operations that may apply without review.
    auto_apply: tuple[str, ...] = ("reinforce", "decay", "expire_conflicts")
    #: Run an evolution pass every N adds (0 = never automatically).
    every_n_adds: int = 0
    #: Cap on the items one run may touch, so each run stays cheap on big graphs.
    max_items_per_run: int = 5000
    #: Memories not accessed for this many days with salience below archive_salience are archived.
    archive_after_days: float = 180.0
    archive_salience: float = 0.2


@dataclass(frozen=True, slots=True)
class SageConfig:
    """Everything a :class:`~sage_memory.SageMemory` can be told.

    Attributes:
        embedder: "minilm" (local, default), "hashing", "hashing:<dim>" or "litellm:<model>".
        llm: a litellm model string (e.g. "ollama_chat/llama3.1") or None for rules only.
        vector_index: "auto" (Chroma for a folder, numpy in memory), "chroma" or "numpy".
        max_text_chars: the longest text ``add`` accepts.
    """

    embedder: str = "minilm"
    llm: str | None = None
    llm_kwargs: Mapping[str, Any] = field(default_factory=dict)
    vector_index: Literal["auto", "chroma", "numpy"] = "auto"
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS
    embed_batch_size: int = 64
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    retrieve: RetrieveConfig = field(default_factory=RetrieveConfig)
    evolve: EvolveConfig = field(default_factory=EvolveConfig)

    def __post_init__(self) -> None:
        if self.vector_index not in ("auto", "chroma", "numpy"):
            raise ConfigError(
                f"vector_index={self.vector_index!r} is unknown; use 'auto', 'chroma' or 'numpy'"
            )
        if not 1 <= self.max_text_chars <= 10_000_000:
            raise ConfigError(
                f"max_text_chars={self.max_text_chars} must be between 1 and 10,000,000"
            )
        if self.retrieve.context_tokens < 50:
            raise ConfigError(
                f"retrieve.context_tokens={self.retrieve.context_tokens} is too small;"
                " use 50 or more"
            )
        if self.retrieve.limit < 1:
            raise ConfigError(f"retrieve.limit={self.retrieve.limit} must be at least 1")

    def but(self, **changes: Any) -> SageConfig:
        """A copy with some fields changed: ``cfg.but(llm="ollama_chat/llama3.1")``."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str) -> SageConfig:
        """A named configuration: "default" or "fast" (the hashing embedder, for tests)."""
        if name == "default":
            return cls()
        if name == "fast":
            return cls(embedder="hashing")
        raise ConfigError(f"unknown preset {name!r}; choose 'default' or 'fast'")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SageConfig:
        """Read SAGE_EMBEDDER, SAGE_LLM and SAGE_VECTOR_INDEX; unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        changes: dict[str, Any] = {}
        if env.get("SAGE_EMBEDDER"):
            changes["embedder"] = env["SAGE_EMBEDDER"]
        if env.get("SAGE_LLM"):
            changes["llm"] = env["SAGE_LLM"]
        if env.get("SAGE_VECTOR_INDEX"):
            changes["vector_index"] = env["SAGE_VECTOR_INDEX"]
        return cls(**changes)
