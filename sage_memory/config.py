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
    #: "auto": the LLM extractor when an LLM is configured, else the offline structure
    #: extractor (``extract/structure.py``: phrase structure and a relation lexicon kept as
    #: data). "structure": that extractor even when an LLM is configured. "patterns" (or its
    #: older name "rules"): the older trigger-pattern extractor (``extract/rules.py``).
    mode: Literal["auto", "structure", "patterns", "rules", "llm"] = "auto"
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
    #: A new value of a single-valued relation whose confidence is lower than the standing
    #: fact's by more than this does not replace it: both are kept, the new one as a competing
    #: claim (a CONTRADICTS edge and a review item).
    contradiction_margin: float = 0.4
    #: Extra name aliases (lower case) merged with the built-in ones such as pd -> pandas.
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: Memories whose write-time salience (``sage_memory.extract.salience``) is below this make
    #: no nodes or edges: greetings, thanks, "haha yes". They are still stored and searchable.
    graph_min_salience: float = 0.12
    #: Per memory kind ("knowledge", "experience"): a memory scoring below is stored archived,
    #: out of search (dense and lexical), yet still returned by ``get``,
    #: ``get_all(include_archived=True)`` and ``export``. Empty: every memory is searchable.
    min_salience: Mapping[str, float] = field(default_factory=dict)


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
    seeds_per_channel: int = 20
    mmr_lambda: float = 0.8
    #: Focus (README "Focus"): the score a memory gains at proximity 1 to the focus.
    focus_weight: float = 0.3
    #: Facts the focus reaches out (its bounded neighbourhood).
    focus_hops: int = 2
    #: With no focus given, infer one from the last ``focus_recent`` memories of the same run
    #: (run_id): the nodes most of them mention. False: never infer.
    infer_focus: bool = True
    focus_recent: int = 5
    #: The optional LLM rerank (README "Cascade retrieval"): off by default; one call per
    #: search at most, over the best ``rerank_candidates`` memories written within
    #: ``rerank_tokens`` tokens; after ``rerank_timeout_s`` seconds the search keeps its
    #: stage-2 order.
    rerank: bool = False
    rerank_candidates: int = 20
    rerank_tokens: int = 1500
    rerank_timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class EvolveConfig:
    """How the memory changes with use. Operations not listed in ``auto_apply`` only suggest."""

    #: Edge weights: w <- clip(w * decay**days_unused + co_access * learning_rate, min, max).
    decay: float = 0.98
    learning_rate: float = 0.1
    min_weight: float = 0.1
    max_weight: float = 5.0
    #: Co-access count after which two nodes without an edge get an ASSOCIATED_WITH edge.
    associate_after: int = 3
    merge_auto_confidence: float = 0.97
    #: Operations that may apply without review (see ``sage_memory.evolve.run.OPERATIONS``).
    #: Structural and schema changes (merge, split, summarize, relation upgrades) suggest only.
    auto_apply: tuple[str, ...] = (
        "reinforce",
        "associate",
        "decay",
        "expire_conflicts",
        "archive",
        "remove_orphans",
    )
    #: Run an evolution pass every N adds (0 = never automatically).
    every_n_adds: int = 0
    #: Cap on the items one run may touch, so each run stays cheap on big graphs.
    max_items_per_run: int = 5000
    #: Memories not accessed for this many days with salience below archive_salience are archived.
    archive_after_days: float = 180.0
    archive_salience: float = 0.2
    #: Merge candidates scoring at least this are queued for review.
    merge_suggest_confidence: float = 0.55
    #: Run a pass when a scope's node count grew by this many percent since the last run (0 = off).
    every_growth_percent: float = 0.0
    #: Opt-in background thread: run a pass over every scope this often, in seconds (0 = off).
    schedule_seconds: float = 0.0
    #: Co-access weight of the items one search returned together (low: a search returning
    #: something is weak evidence, and must not keep reinforcing its own results).
    retrieved_weight: float = 0.25
    #: Co-access weight of an item marked used (feedback), paired with its search's nodes.
    feedback_weight: float = 3.0
    #: Nodes of each search recorded in the access log (the best ones).
    access_top_nodes: int = 5
    #: Access-log entries older than this many days are pruned by the hygiene pass.
    access_retention_days: float = 365.0


def _number(name: str, value: object, lo: float, hi: float, *, integer: bool = False) -> None:
    """Fail fast on a setting of the wrong type or out of range, naming the accepted range."""
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not lo <= value <= hi:
        what = "an integer" if integer else "a number"
        exclusive = 0 < lo < 1e-6  # "above 0" reads better than a tiny lower bound
        span = "above 0" if exclusive else f"from {lo:,}"
        if hi != float("inf"):
            span += f" and at most {hi:,}" if exclusive else f" to {hi:,}"
        raise ConfigError(f"{name}={value!r} must be {what} {span}")


def _names(name: str, value: object) -> None:
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{name}={value!r} must be a tuple of strings, e.g. ('LIVES_IN',) - note the comma"
        )


def _check_settings(cfg: SageConfig) -> None:
    """Types and ranges of every numeric and list setting (SageConfig.__post_init__)."""
    for name, sub, cls in (
        ("extract", cfg.extract, ExtractConfig),
        ("retrieve", cfg.retrieve, RetrieveConfig),
        ("evolve", cfg.evolve, EvolveConfig),
    ):
        if not isinstance(sub, cls):
            raise ConfigError(f"{name}={sub!r} must be an {cls.__name__}, e.g. {cls.__name__}()")
    if not isinstance(cfg.embedder, str):
        raise ConfigError(f"embedder={cfg.embedder!r} must be a spec string such as 'minilm'")
    if cfg.llm is not None and not isinstance(cfg.llm, str):
        raise ConfigError(f"llm={cfg.llm!r} must be a litellm model string or None")
    if not isinstance(cfg.llm_kwargs, Mapping):
        raise ConfigError(f"llm_kwargs={cfg.llm_kwargs!r} must be a dict of litellm arguments")
    inf = float("inf")
    ex, rt, ev = cfg.extract, cfg.retrieve, cfg.evolve
    if ex.mode not in ("auto", "structure", "patterns", "rules", "llm"):
        raise ConfigError(
            f"extract.mode={ex.mode!r} is unknown; use 'auto', 'patterns' (alias 'rules'), "
            "'structure' or 'llm'"
        )
    _number("max_text_chars", cfg.max_text_chars, 1, 10_000_000, integer=True)
    _number("embed_batch_size", cfg.embed_batch_size, 1, 100_000, integer=True)
    for field_name in (
        "fuzzy_threshold",
        "embedding_threshold",
        "ambiguous_threshold",
        "contradiction_margin",
    ):
        _number(f"extract.{field_name}", getattr(ex, field_name), 0, 1)
    _number("extract.graph_min_salience", ex.graph_min_salience, 0, 1)
    if not isinstance(ex.min_salience, Mapping):
        raise ConfigError(
            f"extract.min_salience={ex.min_salience!r} must be a dict of kind -> salience,"
            " e.g. {'knowledge': 0.1}"
        )
    for kind, floor in ex.min_salience.items():
        if kind not in ("knowledge", "experience"):
            raise ConfigError(
                f"extract.min_salience has unknown kind {kind!r}; use 'knowledge' or 'experience'"
            )
        _number(f"extract.min_salience[{kind!r}]", floor, 0, 1)
    _number("extract.max_context_nodes", ex.max_context_nodes, 0, 10_000, integer=True)
    for field_name in ("node_labels", "relation_types", "single_valued"):
        _names(f"extract.{field_name}", getattr(ex, field_name))
    _number("retrieve.limit", rt.limit, 1, 10_000, integer=True)
    _number("retrieve.context_tokens", rt.context_tokens, 50, 10_000_000, integer=True)
    _number("retrieve.hops", rt.hops, 0, 6, integer=True)
    _number("retrieve.max_fanout", rt.max_fanout, 1, inf, integer=True)
    _number("retrieve.seeds_per_channel", rt.seeds_per_channel, 1, inf, integer=True)
    _number("retrieve.min_confidence", rt.min_confidence, 0, 1)
    _number("retrieve.mmr_lambda", rt.mmr_lambda, 0, 1)
    _number("retrieve.focus_weight", rt.focus_weight, 0, 10)
    _number("retrieve.focus_hops", rt.focus_hops, 0, 4, integer=True)
    _number("retrieve.focus_recent", rt.focus_recent, 1, 100, integer=True)
    _number("retrieve.rerank_candidates", rt.rerank_candidates, 2, 200, integer=True)
    _number("retrieve.rerank_tokens", rt.rerank_tokens, 50, 1_000_000, integer=True)
    _number("retrieve.rerank_timeout_s", rt.rerank_timeout_s, 0.001, 3600)
    for flag in ("infer_focus", "rerank"):
        if not isinstance(getattr(rt, flag), bool):
            raise ConfigError(f"retrieve.{flag}={getattr(rt, flag)!r} must be True or False")
    _number("evolve.decay", ev.decay, 1e-9, 1)
    _number("evolve.merge_auto_confidence", ev.merge_auto_confidence, 0, 1)
    _number("evolve.max_items_per_run", ev.max_items_per_run, 1, inf, integer=True)
    _number("evolve.every_n_adds", ev.every_n_adds, 0, inf, integer=True)
    _names("evolve.auto_apply", ev.auto_apply)


@dataclass(frozen=True, slots=True)
class SageConfig:
    """Everything a :class:`~sage_memory.SageMemory` can be told.

    Attributes:
        embedder: "minilm" (local, default), "hashing", "hashing:<dim>" or "litellm:<model>".
        llm: a litellm model string (e.g. "ollama_chat/llama3.1") or None for rules only.
        vector_index: "auto" (a folder serves partitions of up to 20,000 vectors exactly from
            SQLite and mirrors larger ones into Chroma; numpy in memory), "chroma" (every
            partition mirrored into Chroma) or "numpy".
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
        _check_settings(self)
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
