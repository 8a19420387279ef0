"""What every evolution step reads: the store, the index, the models and the configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sage_memory.config import EvolveConfig, SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.evolve.proposal import Proposal
from sage_memory.index.base import VectorIndex
from sage_memory.llm.base import ChatModel
from sage_memory.store.base import EvolvingStore


@dataclass(slots=True)
class EvolveContext:
    """The evolver's parts, shared by planning, the steps and the review queue.

    Attributes:
        store: The graph store (read; the evolver writes only its own state: cursors,
            metrics, the review queue).
        index: The vector index (nearest names for duplicates).
        embedder: Embeds new node names and edge contexts.
        config: The memory's configuration.
        llm: When set, community summaries and split names come from it.
        relations: Relation types the schema knows (for new-type discovery); grows as
            suggested types are accepted.
        aliases: The built-in name aliases merged with the configured ones.
    """

    store: EvolvingStore
    index: VectorIndex
    embedder: Embedder
    config: SageConfig
    llm: ChatModel | None
    relations: set[str]
    aliases: Mapping[str, str] = field(default_factory=dict)

    @property
    def cfg(self) -> EvolveConfig:
        """The evolution section of the configuration."""
        return self.config.evolve

    def auto(self, p: Proposal) -> bool:
        """Whether a proposal may apply without review under the configuration."""
        cfg = self.config.evolve
        if p.schema_change or p.needs_review or p.op not in cfg.auto_apply:
            return False
        return not (p.op == "merge" and p.confidence < cfg.merge_auto_confidence)
