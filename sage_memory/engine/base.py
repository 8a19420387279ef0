"""What every part of the SageMemory facade shares: its wiring, its lock, its clock.

The facade is assembled from small parts (writes.py, reads.py, evolution.py, maintenance.py),
each a class over this base; :class:`~sage_memory.engine.core.SageMemory` inherits them all and
fills these attributes in ``__init__``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sage_memory.config import SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.errors import StorageError
from sage_memory.extract.base import Extractor
from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.llm.base import ChatModel
from sage_memory.schema import Schema
from sage_memory.store.base import GraphStore
from sage_memory.types import Change, Memory, Node, Vector

if TYPE_CHECKING:
    from sage_memory.engine.ingest import Ingestor
    from sage_memory.evolve.access import AccessRecorder
    from sage_memory.evolve.runner import EvolutionReport, Evolver, Triggers
    from sage_memory.retrieve import Retriever

Clock = Callable[[], datetime]
DB_FILE = "sage.db"
CHROMA_DIR = "chroma"
LOCK_FILE = ".lock"


class EngineBase:
    """The shared state (set by SageMemory.__init__) and the helpers all parts use."""

    config: SageConfig
    path: Path | None
    store: GraphStore
    index: VectorIndex
    embedder: Embedder
    llm: ChatModel | None
    extractor: Extractor
    schema: Schema
    retriever: Retriever
    _lock: threading.RLock
    _closed: bool
    _clock: Clock
    _ingestor: Ingestor
    _access: AccessRecorder
    _evolver: Evolver
    _triggers: Triggers

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this SageMemory is closed; open a new one")

    def now(self) -> datetime:
        """The engine's clock (UTC); injectable through ``SageMemory(clock=...)``."""
        return self._clock()

    def _sync_index(self, changes: Sequence[Change], vectors: Mapping[str, Vector]) -> None:
        """Mirror committed rows into the vector index (derived; repaired on open if this fails)."""
        upserts: dict[str, list[str]] = {}
        deletes: dict[str, list[str]] = {}
        for ch in changes:
            if ch.entity == "edge":
                continue
            coll = collection_name(ch.scope_key, ch.entity)
            if ch.after is None:
                deletes.setdefault(coll, []).append(ch.entity_id)
            elif ch.entity_id in vectors:
                upserts.setdefault(coll, []).append(ch.entity_id)
        for coll, ids in deletes.items():
            self.index.delete(coll, ids)
        for coll, ids in upserts.items():
            self.index.upsert(coll, ids, np.stack([vectors[i] for i in ids]))

    if TYPE_CHECKING:
        # Provided by the other parts; declared here so each part type-checks on its own.
        def history(self, memory_id: str) -> list[Change]: ...

        def _current_state(self, changes: Sequence[Change]) -> dict[str, dict[str, Any] | None]: ...

        def get(
            self,
            memory_id: str,
            *,
            user_id: str | None = None,
            agent_id: str | None = None,
            run_id: str | None = None,
        ) -> Memory: ...

        def find_node(
            self,
            name_or_id: str,
            *,
            user_id: str | None = None,
            agent_id: str | None = None,
            run_id: str | None = None,
            exact: bool = False,
        ) -> Node: ...

        def evolve(
            self,
            *,
            user_id: str | None = None,
            agent_id: str | None = None,
            run_id: str | None = None,
            dry_run: bool = False,
            operations: Sequence[str] | None = None,
        ) -> EvolutionReport: ...
