"""SageMemory: the facade over the four stages (extract, store, retrieve, evolve).

It owns the wiring (store, vector index, embedder, extractor, retriever) and the write path:

    add -> validate -> embed -> extract (outside the lock) -> plan in a unit of work
        -> one SQLite transaction (rows + journal) -> vector index sync

SQLite is the source of truth; the vector index is derived and repaired from it on open.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import numpy as np

from sage_memory.config import SageConfig
from sage_memory.embed import make_embedder
from sage_memory.embed.base import Embedder
from sage_memory.engine.ingest import Ingestor, support_removal
from sage_memory.engine.inputs import Episode, check_unicode, episodes_from
from sage_memory.engine.journal import Batch, inverse
from sage_memory.engine.unit import UnitOfWork
from sage_memory.errors import (
    ConfigError,
    NotFoundError,
    SageMemoryError,
    StorageError,
    ValidationError,
)
from sage_memory.extract.base import ExtractionContext, Extractor
from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.llm.base import ChatModel
from sage_memory.schema import Schema
from sage_memory.store.base import GraphStore, Vector
from sage_memory.types import (
    AddResult,
    Change,
    Edge,
    EdgeSpec,
    GraphDelta,
    Memory,
    MemoryKind,
    Node,
    NodeSpec,
    RetrievalResult,
    Scope,
    Subgraph,
    Suggestion,
    as_utc,
    new_id,
    utcnow,
)

if TYPE_CHECKING:
    from sage_memory.evolve.history import MemoryAsOf
    from sage_memory.evolve.runner import EvolutionReport
    from sage_memory.types import EdgeHit, NodeHit

Clock = Callable[[], datetime]
DB_FILE = "sage.db"
CHROMA_DIR = "chroma"
LOCK_FILE = ".lock"


class _FolderLock:
    """An exclusive advisory lock on the memory folder: one process owns it at a time.

    Chroma's embedded client is not process-safe, so a second process gets a clear error
    instead of a corrupted index.
    """

    def __init__(self, folder: Path) -> None:
        self._file: IO[str] | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks, single process only
            return
        fh = open(folder / LOCK_FILE, "a+")  # noqa: SIM115 - held open for the lock's lifetime
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            fh.seek(0)
            owner = fh.read().strip() or "another process"
            fh.close()
            raise StorageError(
                f"{folder} is in use by {owner}. One process owns a memory folder at a time: "
                "close the other SageMemory, or open a copy of the folder."
            ) from exc
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        self._file = fh

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class SageMemory:
    """Graph-structured long-term memory for LLM agents.

    Args:
        path: a folder for the embedded persistent store (SQLite + Chroma), created if needed;
            None keeps everything in memory.
        config: a :class:`SageConfig` (defaults work offline).
        embedder: an :class:`Embedder` or a spec string; overrides ``config.embedder``.
        llm: a :class:`ChatModel` or a litellm model string; enables the LLM extractor.
        extractor: a custom :class:`Extractor`; overrides the default choice.
        clock: returns "now" (UTC); inject one in tests of time-dependent behaviour.

    Example:
        >>> mem = SageMemory()
        >>> r = mem.add("Alice lives in Paris", user_id="alice")
        >>> mem.search("where does alice live?", user_id="alice").memories[0].text
        'Alice lives in Paris'
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        config: SageConfig | None = None,
        embedder: Embedder | str | None = None,
        llm: ChatModel | str | None = None,
        extractor: Extractor | None = None,
        store: GraphStore | None = None,
        index: VectorIndex | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config or SageConfig()
        if not isinstance(self.config, SageConfig):
            raise ConfigError(f"config must be a SageConfig, got {type(self.config).__name__}")
        self._clock = clock or utcnow
        self.path = None if path is None else Path(path)
        self._lock = threading.RLock()
        self._folder_lock: _FolderLock | None = None
        self._closed = False
        if self.path is not None:
            self._open_folder(self.path)
        try:
            self.store = store or self._default_store()
            self.embedder = make_embedder(embedder or self.config.embedder)
            self.index = index or self._default_index()
            self._check_embedder()
            self.llm = self._make_llm(llm)
            self.schema = Schema.default(
                self.config.extract.node_labels, self.config.extract.relation_types
            )
            self.extractor = extractor or self._default_extractor()
            self._ingestor = Ingestor(self.index, self.embedder, self.schema, self.config.extract)
            from sage_memory.retrieve import Retriever

            self.retriever = Retriever(self.store, self.index, self.embedder, self.config.retrieve)
            self._reconcile_or_rebuild(own_index=index is None)
            self._wire_evolver()
        except BaseException:
            self._release()
            raise

    def _wire_evolver(self) -> None:
        """The access log, the evolver (logic in sage_memory/evolve/) and its triggers."""
        from sage_memory.evolve.access import AccessRecorder
        from sage_memory.evolve.runner import Evolver, Schedule, Triggers

        self._access = AccessRecorder(self.store, self.config.evolve)
        self._evolver = Evolver(
            self.store,
            self.index,
            self.embedder,
            self.config,
            llm=self.llm,
            relations=self.schema.relation_types,
        )
        self._learn_relations()
        self._triggers = Triggers(self.store, self.config)
        self._schedule: Schedule | None = None
        if self.config.evolve.schedule_seconds > 0:
            self._schedule = Schedule(self.config.evolve.schedule_seconds, self.evolve)
            self._schedule.start()

    def _learn_relations(self) -> None:
        """Add relation types accepted from the review queue to the schema."""
        learned = frozenset(self._evolver.learned_relations()) - self.schema.relation_types
        if learned:
            self.schema = Schema(self.schema.node_labels, self.schema.relation_types | learned)
            self._ingestor.schema = self.schema

    # -- wiring ----------------------------------------------------------------------------
    def _open_folder(self, path: Path) -> None:
        if path.exists() and not path.is_dir():
            raise StorageError(f"{path} is a file; SageMemory(path=...) needs a folder")
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise StorageError(
                f"cannot write to {path}: {exc.strerror or exc}. Choose a folder you can write to."
            ) from exc
        self._folder_lock = _FolderLock(path)

    def _default_store(self) -> GraphStore:
        if self.path is None:
            from sage_memory.store.memory import InMemoryGraphStore

            return InMemoryGraphStore()
        from sage_memory.store.sqlite import SQLiteGraphStore

        return SQLiteGraphStore(self.path / DB_FILE)

    def _default_index(self) -> VectorIndex:
        kind = self.config.vector_index
        if kind == "auto":
            kind = "numpy" if self.path is None else "chroma"
        if kind == "numpy":
            from sage_memory.index.numpy import NumpyVectorIndex

            return NumpyVectorIndex()
        from sage_memory.index.chroma import ChromaVectorIndex

        chroma_path = None if self.path is None else self.path / CHROMA_DIR
        # Chroma's default ef_search (100) found about half of the true top-10 on random
        # vectors and 95% on clustered ones; 200 lifts that at about 1 ms more per query.
        hnsw = {"ef_search": 200, "ef_construction": 200, "max_neighbors": 32}
        try:
            return ChromaVectorIndex(chroma_path, hnsw=hnsw)
        except StorageError as exc:
            if chroma_path is None or not chroma_path.is_dir():
                raise
            self._discard_index(chroma_path, exc)
            return ChromaVectorIndex(chroma_path, hnsw=hnsw)

    @staticmethod
    def _discard_index(folder: Path, exc: Exception) -> None:
        """Delete a damaged index folder: it is derived data, rebuilt from SQLite."""
        import shutil
        import warnings

        warnings.warn(
            f"the vector index in {folder} is damaged ({exc}); rebuilding it from the SQLite "
            "store, which holds every vector",
            RuntimeWarning,
            stacklevel=4,
        )
        shutil.rmtree(folder)

    def _check_embedder(self) -> None:
        signature = f"{self.embedder.name}:{self.embedder.dim}"
        stored = self.store.get_meta("embedder")
        if stored is None:
            self.store.set_meta("embedder", signature)
        elif stored != signature:
            raise ConfigError(
                f"this memory was embedded with {stored}, not {signature}; vectors of two models "
                f"cannot be mixed. Open it with embedder={stored.rsplit(':', 1)[0]!r}, or export "
                "it and load the export with the new embedder."
            )

    def _make_llm(self, llm: ChatModel | str | None) -> ChatModel | None:
        spec = llm if llm is not None else self.config.llm
        if spec is None:
            return None
        from sage_memory.llm import make_chat_model

        return make_chat_model(spec, **dict(self.config.llm_kwargs))

    def _default_extractor(self) -> Extractor:
        mode = self.config.extract.mode
        if mode == "llm" and self.llm is None:  # checked first: a config error fails fast
            raise ConfigError("extract.mode='llm' needs an LLM: pass llm=... or config.llm")
        from sage_memory.extract.rules import RuleExtractor

        rules = RuleExtractor(self.config.extract)
        if self.llm is not None and mode in ("auto", "llm"):
            from sage_memory.extract.llm import LLMExtractor

            return LLMExtractor(self.llm, self.config.extract, fallback=rules)
        return rules

    def _reconcile_or_rebuild(self, *, own_index: bool) -> None:
        """Reconcile; if our own on-disk index fails while doing so, rebuild it from scratch."""
        try:
            self._reconcile_index()
        except StorageError as exc:
            folder = None if self.path is None else self.path / CHROMA_DIR
            if not own_index or folder is None or not folder.is_dir():
                raise
            self.index.close()
            self._discard_index(folder, exc)
            self.index = self._default_index()
            self._ingestor.index = self.index
            self.retriever.index = self.index
            self._reconcile_index()

    def _reconcile_index(self) -> None:
        """Make the derived vector index agree with SQLite (after a crash, or a lost index)."""
        clean = self.store.get_meta("clean_shutdown") != "0"
        for scope in self.store.partitions():
            for entity in ("memory", "node"):
                coll = collection_name(scope.key, entity)
                truth = self.store.vector_ids(scope, entity)  # type: ignore[arg-type]
                if clean and len(truth) == self.index.count(coll):
                    continue
                present = self.index.ids(coll)
                missing = sorted(truth - present)
                for i in range(0, len(missing), 1000):
                    chunk = missing[i : i + 1000]
                    vecs = self.store.get_vectors(chunk)
                    ids = [c for c in chunk if c in vecs]
                    if ids:
                        self.index.upsert(coll, ids, np.stack([vecs[c] for c in ids]))
                extra = sorted(present - truth)
                if extra:
                    self.index.delete(coll, extra)
        if self.store.persistent:
            self.store.set_meta("clean_shutdown", "0")

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Flush and release the folder. Safe to call twice."""
        schedule = getattr(self, "_schedule", None)
        if schedule is not None:
            schedule.stop()  # outside the lock: a scheduled pass holds it while it runs
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(SageMemoryError, OSError):
                self._access.flush()
            if self.store.persistent:
                with contextlib.suppress(SageMemoryError, OSError):
                    self.store.set_meta("clean_shutdown", "1")
            self._release()

    def _release(self) -> None:
        closers = (getattr(self, n, None) for n in ("retriever", "index", "store"))
        for closer in closers:
            if closer is not None:
                with contextlib.suppress(Exception):
                    closer.close()
        if self._folder_lock is not None:
            self._folder_lock.release()
            self._folder_lock = None

    def __enter__(self) -> SageMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("this SageMemory is closed; open a new one")

    def now(self) -> datetime:
        return self._clock()

    # -- writing ---------------------------------------------------------------------------
    def add(
        self,
        data: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: MemoryKind | None = None,
        source: str | None = None,
        infer: bool = True,
    ) -> AddResult:
        """Remember a text, a chat message or a list of messages.

        The text is stored and embedded, then (unless ``infer=False``) turned into nodes and
        edges. If extraction fails the memory is still stored, with the failure recorded on it.
        A list of messages becomes one memory per message; the result describes the first, and
        ``memory_ids`` lists all.

        Returns:
            AddResult with the memory id, the nodes and edges it created or touched, the facts it
            expired, the journal change ids and the LLM tokens used.
        """
        self._check_open()
        scope = Scope(user_id, agent_id, run_id)
        episodes = episodes_from(
            data,
            max_chars=self.config.max_text_chars,
            timestamp=timestamp,
            metadata=metadata,
            kind=kind,
            source=source,
        )
        results = self._add_episodes(episodes, scope, infer=infer)
        if len(results) == 1:
            return results[0]
        first = results[0]
        return dataclasses.replace(
            first,
            memory_ids=tuple(r.memory_id for r in results),
            node_ids=tuple(dict.fromkeys(n for r in results for n in r.node_ids)),
            edge_ids=tuple(dict.fromkeys(e for r in results for e in r.edge_ids)),
            change_ids=tuple(c for r in results for c in r.change_ids),
            tokens_used=sum(r.tokens_used for r in results),
        )

    def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
        progress: bool = False,
        batch_size: int | None = None,
    ) -> list[AddResult]:
        """Remember many items with batched embedding and extraction.

        Items are strings or dicts ``{text, timestamp?, metadata?, kind?, source?, role?}``.
        Each batch is one transaction: a batch that returned is durable.
        """
        self._check_open()
        scope = Scope(user_id, agent_id, run_id)
        size = batch_size or self.config.embed_batch_size
        if size < 1:
            raise ValidationError(f"batch_size={size} must be at least 1")
        episodes: list[Episode] = []
        for i, item in enumerate(items):
            try:
                episodes.extend(episodes_from(item, max_chars=self.config.max_text_chars))
            except ValidationError as exc:
                raise ValidationError(f"item {i}: {exc}") from exc
        bar = _progress(len(episodes), progress)
        results: list[AddResult] = []
        try:
            for start in range(0, len(episodes), size):
                chunk = episodes[start : start + size]
                results.extend(self._add_episodes(chunk, scope, infer=infer))
                bar(len(chunk))
        finally:
            bar(0, done=True)
        return results

    def _add_episodes(
        self, episodes: Sequence[Episode], scope: Scope, *, infer: bool
    ) -> list[AddResult]:
        now = self.now()
        memories = []
        for ep in episodes:
            ep_scope = scope if ep.run_id is None else dataclasses.replace(scope, run_id=ep.run_id)
            memories.append(
                Memory(
                    id=new_id(),
                    text=ep.text,
                    scope=ep_scope,
                    timestamp=ep.timestamp or now,
                    created_at=now,
                    updated_at=now,
                    kind=ep.kind or "knowledge",
                    source=ep.source,
                    role=ep.role,
                    metadata=dict(ep.metadata or {}),
                    extraction="pending" if infer else "skipped",
                )
            )
        vectors = self.embedder.embed([m.text for m in memories])
        deltas = self._extract(memories, vectors) if infer else [None] * len(memories)
        self._ingestor.prepare(deltas)
        with self._lock:
            self._check_open()
            uow = UnitOfWork(self.store, Batch("extractor" if infer else "user", "add", now))
            outcomes = []
            for memory, vec, delta in zip(memories, vectors, deltas, strict=True):
                outcomes.append(self._plan_add(uow, memory, vec, delta, now))
            changes = uow.commit()
            self._sync_index(changes, uow.vectors)
        if self._triggers.after_add(scope, len(memories)):  # every N adds / growth by X%
            self.evolve(user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id)
        change_ids = tuple(c.id for c in changes)
        return [
            AddResult(
                memory_id=mem.id,
                memory=mem,
                memory_ids=(mem.id,),
                node_ids=tuple(out.node_ids),
                edge_ids=tuple(out.edge_ids),
                expired_edge_ids=tuple(out.expired_edge_ids),
                change_ids=change_ids,
                tokens_used=0 if delta is None else delta.tokens_used,
                extraction_error=mem.extraction_error,
            )
            for (mem, out), delta in zip(outcomes, deltas, strict=True)
        ]

    def _extract(self, memories: Sequence[Memory], vectors: Vector) -> list[GraphDelta | None]:
        items = []
        for memory, vec in zip(memories, vectors, strict=True):
            items.append((memory, ExtractionContext(nearby_nodes=self._nearby_nodes(memory, vec))))
        try:
            return list(self.extractor.extract_many(items))
        except Exception as exc:  # an extractor bug must never lose the memories
            return [GraphDelta(error=f"{type(exc).__name__}: {exc}") for _ in memories]

    def _nearby_nodes(self, memory: Memory, vec: Vector) -> list[Node]:
        scope = memory.scope.partition
        k = self.config.extract.max_context_nodes
        hits = self.index.query(collection_name(scope.key, "node"), vec, k)
        return self.store.get_nodes(scope, [nid for nid, _ in hits])

    def _plan_add(
        self,
        uow: UnitOfWork,
        memory: Memory,
        vec: Vector,
        delta: GraphDelta | None,
        now: datetime,
    ) -> tuple[Memory, Any]:
        from sage_memory.engine.ingest import IngestOutcome

        if delta is not None:
            memory = dataclasses.replace(
                memory,
                kind=delta.kind or memory.kind,
                salience=memory.salience if delta.salience is None else delta.salience,
                event_time=delta.event_time,
                extraction="failed" if delta.error and not delta.nodes else "ok",
                extraction_error=delta.error,
            )
        uow.put(memory, vec)
        if delta is None or not delta.nodes:
            return memory, IngestOutcome()
        saved = uow.snapshot()
        try:
            return memory, self._ingestor.apply(uow, memory, delta, now)
        except Exception as exc:  # keep the memory, drop its half-planned graph writes
            uow.restore(saved)
            failed = dataclasses.replace(
                memory, extraction="failed", extraction_error=f"{type(exc).__name__}: {exc}"
            )
            uow.put(failed, vec)
            return failed, IngestOutcome()

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

    def update(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
    ) -> AddResult:
        """Replace a memory's text; what only the old text supported is removed, the new text
        is extracted again. Journaled as one batch (undo restores the old text and graph)."""
        self._check_open()
        old = self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        episodes = episodes_from(text, max_chars=self.config.max_text_chars)
        now = self.now()
        memory = dataclasses.replace(
            old, text=episodes[0].text, updated_at=now, extraction="pending" if infer else "skipped"
        )
        vec = self.embedder.embed([memory.text])
        delta = self._extract([memory], vec)[0] if infer else None
        with self._lock:
            self._check_open()
            # A delete or another update may have landed during extraction: plan against the
            # stored row, and never bring a deleted memory back.
            stored = self.store.get_memories(old.scope, [old.id])
            if not stored:
                raise NotFoundError(f"memory {memory_id!r} was deleted while being updated")
            old = stored[0]
            memory = dataclasses.replace(
                old, text=memory.text, updated_at=now, extraction=memory.extraction
            )
            uow = UnitOfWork(self.store, Batch("user", f"update {memory_id}", now))
            nodes, edges = self.store.derived_from(old.scope.partition, old.id)
            support_removal(uow, old, nodes, edges, now)
            memory, out = self._plan_add(uow, memory, vec[0], delta, now)
            changes = uow.commit()
            self._sync_index(changes, uow.vectors)
        return AddResult(
            memory_id=memory.id,
            memory=memory,
            memory_ids=(memory.id,),
            node_ids=tuple(out.node_ids),
            edge_ids=tuple(out.edge_ids),
            expired_edge_ids=tuple(out.expired_edge_ids),
            change_ids=tuple(c.id for c in changes),
            tokens_used=0 if delta is None else delta.tokens_used,
            extraction_error=memory.extraction_error,
        )

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> None:
        """Forget a memory and everything derived only from it (nodes, edges, vectors, and the
        journal entries that held its text). Deletion is final: it cannot be undone."""
        self._check_open()
        memory = self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        self._forget([memory])

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> int:
        """Forget every memory of a scope (and the graph derived from them). Returns the count."""
        self._check_open()
        scope = Scope(user_id, agent_id, run_id)
        # Under the write lock throughout: a concurrent add must land wholly before or after,
        # never between the listing and the collection drop (its vector would be dropped).
        with self._lock:
            whole = scope.run_id is None or scope.partition.run_id is not None
            if whole:  # the index first, for the reason given in _forget
                for entity in ("memory", "node"):
                    self.index.drop(collection_name(scope.partition.key, entity))
            memories = self.store.list_memories(scope, include_archived=True)
            self._forget(memories)
            if whole:
                # The whole partition goes: also nodes and edges no memory supports any more.
                part = scope.partition
                uow = UnitOfWork(self.store, Batch("user", "delete_all", self.now()))
                for edge in self.store.list_edges(part):
                    uow.remove(edge)
                for node in self.store.list_nodes(part):
                    uow.remove(node)
                changes = uow.commit()
                self._sync_index(changes, {})
                # The whole partition journal, not only these changes: rows removed earlier (by
                # undo, update, merges) live on there with their old text.
                journaled = {c.entity_id for _, c in self.store.journal(scope=part)}
                self.store.purge_journal([*{c.entity_id for c in changes} | journaled])
                self._access.flush()
                self.store.purge_evolver_state(part)
                for entity in ("memory", "node"):
                    self.index.drop(collection_name(part.key, entity))
        return len(memories)

    def _forget(self, memories: Sequence[Memory]) -> None:
        now = self.now()
        with self._lock:
            stale = self._removed_earlier(memories)  # before the journal forgets the memories
            uow = UnitOfWork(self.store, Batch("user", "delete", now))
            for memory in memories:
                nodes, edges = self.store.derived_from(memory.scope.partition, memory.id)
                support_removal(uow, memory, nodes, edges, now)
                uow.remove(memory)
            changes = uow.changes()
            # Vectors go before the rows: a crash in between leaves rows without vectors, which
            # reconciliation restores. The other order could leave vectors of a partition that
            # SQLite no longer lists, which reconciliation never revisits.
            self._sync_index([c for c in changes if c.after is None], {})
            if changes:
                self.store.apply(changes, uow.vectors)
            gone = {c.entity_id for c in changes if c.after is None}
            # The journal must not keep the text of what the user asked to forget, nor the
            # evolver its notes (access log, review queue) about what went.
            self.store.purge_journal(sorted(gone | stale))
            self._access.flush()
            for part in {m.scope.partition.key: m.scope.partition for m in memories}.values():
                self.store.purge_evolver_state(part, sorted(gone | stale))

    def _removed_earlier(self, memories: Sequence[Memory]) -> set[str]:
        """Rows written in the same batches as ``memories`` that no longer exist (an update or
        an undo removed them): only the journal remembers their text, so it must forget it."""
        batches = {c.batch_id for m in memories for _, c in self.store.journal(entity_id=m.id)}
        stale: set[str] = set()
        for batch in batches:
            for _, change in self.store.journal(batch_id=batch):
                if change.entity_id not in stale and not self._current_state([change]).get(
                    change.entity_id
                ):
                    stale.add(change.entity_id)
        return stale

    # -- reading ---------------------------------------------------------------------------
    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Memory:
        """One memory by id. With a scope, a memory of another scope is not found."""
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError(f"memory_id must be a non-empty string, got {memory_id!r}")
        if user_id is None and agent_id is None and run_id is None:
            found = self.store.find_memory(memory_id)
        else:
            hits = self.store.get_memories(Scope(user_id, agent_id, run_id), [memory_id])
            found = hits[0] if hits else None
        if found is None:
            raise NotFoundError(f"no memory with id {memory_id!r} in this scope")
        return found

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        include_archived: bool = False,
    ) -> list[Memory]:
        """Memories of a scope in time order."""
        scope = Scope(user_id, agent_id, run_id)
        return self.store.list_memories(
            scope, limit=limit, offset=offset, include_archived=include_archived
        )

    def history(self, memory_id: str) -> list[Change]:
        """The journal of one memory, node or edge id: every change, oldest first."""
        return [c for _, c in self.store.journal(entity_id=memory_id)]

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        as_of: datetime | None = None,
        context_tokens: int | None = None,
    ) -> RetrievalResult:
        """Hybrid search: ranked memories, graph nodes and edges, and a packed context."""
        self._check_open()
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty; ask something, e.g. 'where does alice live?'")
        if len(query) > self.config.max_text_chars:
            raise ValidationError(
                f"query has {len(query):,} characters; the limit is {self.config.max_text_chars:,}"
            )
        check_unicode(query, "query")
        for name, value in (("limit", limit), ("context_tokens", context_tokens)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValidationError(f"{name}={value!r} must be an integer or None")
            if value is not None and value < 1:
                raise ValidationError(f"{name}={value} must be at least 1 (None: the default)")
        if as_of is not None and not isinstance(as_of, datetime):
            raise ValidationError(f"as_of={as_of!r} must be a datetime or None")
        scope = Scope(user_id, agent_id, run_id)
        result = self.retriever.search(
            query,
            scope,
            limit=limit or self.config.retrieve.limit,
            as_of=as_of,
            context_tokens=context_tokens or self.config.retrieve.context_tokens,
            now=self.now(),
        )
        self._access.record_search(result, self.now())  # buffered; the evolver learns from it
        return result

    def explore(
        self,
        name_or_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        hops: int = 2,
        relations: Sequence[str] | None = None,
        include_expired: bool = False,
        max_nodes: int = 200,
    ) -> Subgraph:
        """The subgraph around a node (found by id, exact name/alias, or best lexical match)."""
        asked = Scope(user_id, agent_id, run_id)
        scope = asked.partition
        if not isinstance(hops, int) or isinstance(hops, bool) or not 0 <= hops <= 6:
            raise ValidationError(f"hops={hops!r}: use an integer from 0 to 6")
        # Naming a run inside a user/agent partition shows only what that run's memories
        # support (Scope's contract), not the graph other sessions built.
        run_memories: set[str] | None = None
        if asked.run_id is not None and scope.run_id is None:
            run_memories = {m.id for m in self.store.list_memories(asked, include_archived=True)}

        def visible(item: Node | Edge) -> bool:
            return run_memories is None or not run_memories.isdisjoint(item.memory_ids)

        start = self.find_node(name_or_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        if not visible(start):
            raise NotFoundError(f"no node named or with id {name_or_id!r} in this run")
        rels = [self.schema.map_relation(r)[0] for r in relations] if relations else None
        nodes: dict[str, Node] = {start.id: start}
        edges: dict[str, Edge] = {}
        frontier = [start.id]
        for _ in range(hops):
            if not frontier or len(nodes) >= max_nodes:
                break
            found = self.store.edges_of(scope, frontier, relations=rels)
            nxt: list[str] = []
            for e in found:
                if (not include_expired and not e.is_current()) or not visible(e):
                    continue
                edges[e.id] = e
                for nid in (e.source_id, e.target_id):
                    if nid not in nodes and nid not in nxt and len(nodes) + len(nxt) < max_nodes:
                        nxt.append(nid)
            for n in self.store.get_nodes(scope, nxt):
                if visible(n):
                    nodes[n.id] = n
            frontier = [n for n in nxt if n in nodes]
        kept = {e.id: e for e in edges.values() if e.source_id in nodes and e.target_id in nodes}
        return Subgraph(scope, (start.id,), tuple(nodes.values()), tuple(kept.values()))

    def find_node(
        self,
        name_or_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        exact: bool = False,
    ) -> Node:
        """A node by id, by exact name or alias, or (unless ``exact``) by the best lexical match
        of its name."""
        scope = Scope(user_id, agent_id, run_id).partition
        if not isinstance(name_or_id, str) or not name_or_id.strip():
            raise ValidationError("give a node name or id to explore from")
        by_id = self.store.get_nodes(scope, [name_or_id])
        if by_id:
            return by_id[0]
        from sage_memory.extract.names import merge_aliases, normalize_name

        norm = normalize_name(name_or_id, merge_aliases(self.config.extract.aliases), builtin=False)
        named = self.store.find_nodes(scope, [name_or_id, norm])
        if named:
            return max(named, key=lambda n: (len(n.memory_ids), n.salience))
        lexical = [] if exact else self.store.search_text(scope, name_or_id, entity="node", limit=1)
        if lexical:
            return self.store.get_nodes(scope, [lexical[0][0]])[0]
        raise NotFoundError(f"no node named or with id {name_or_id!r} in this scope")

    # -- structure queries (logic in sage_memory.retrieve.structure) -----------------------
    def predecessors(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What comes before ``task`` (PRECEDES into it, its BLOCKED_BY / DEPENDS_ON targets),
        nearest first; ``transitive=True`` walks back up to 10 steps. Each hit's ``why`` names
        the fact and the status."""
        from sage_memory.retrieve import structure as st

        node = self.find_node(task, user_id=user_id, agent_id=agent_id, run_id=run_id)
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        steps = st.predecessors(store, node.scope, node.id, transitive=transitive, at=as_of)
        return st.node_hits(store, node.scope, steps)

    def successors(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What comes after ``task``, nearest first (see :meth:`predecessors`)."""
        from sage_memory.retrieve import structure as st

        node = self.find_node(task, user_id=user_id, agent_id=agent_id, run_id=run_id)
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        steps = st.successors(store, node.scope, node.id, transitive=transitive, at=as_of)
        return st.node_hits(store, node.scope, steps)

    def requirements(
        self,
        task: str,
        *,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """What ``task`` needs: its REQUIRES, DEPENDS_ON, BLOCKED_BY and USES targets."""
        from sage_memory.retrieve import structure as st

        node = self.find_node(task, user_id=user_id, agent_id=agent_id, run_id=run_id)
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        steps = st.requirements(store, node.scope, node.id, at=as_of)
        return st.node_hits(store, node.scope, steps)

    def next_steps(
        self,
        project_or_task: str,
        *,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """The unfinished plan, what to do first at the front: for a project its open tasks
        (ready ones first, in order); for a task its open predecessors, itself, what follows."""
        from sage_memory.retrieve import structure as st

        node = self.find_node(project_or_task, user_id=user_id, agent_id=agent_id, run_id=run_id)
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        steps = st.next_steps(store, node.scope, node.id, at=as_of)
        return st.node_hits(store, node.scope, steps)

    def path_between(
        self,
        source: str,
        target: str,
        *,
        max_hops: int = 4,
        relations: Sequence[str] | None = None,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[EdgeHit]:
        """A shortest chain of current facts between two nodes (either direction); [] if none
        within ``max_hops``."""
        from sage_memory.retrieve import structure as st

        a = self.find_node(source, user_id=user_id, agent_id=agent_id, run_id=run_id)
        b = self.find_node(target, user_id=user_id, agent_id=agent_id, run_id=run_id)
        rels = [self.schema.map_relation(r)[0] for r in relations] if relations else None
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        edges = st.path(store, a.scope, a.id, b.id, max_hops=max_hops, relations=rels, at=as_of)
        return st.edge_hits(store, a.scope, edges)

    def neighbors(
        self,
        node: str,
        *,
        relations: Sequence[str] | None = None,
        direction: Literal["out", "in", "both"] = "both",
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Nodes one current fact away, through ``relations`` (all when None)."""
        from sage_memory.retrieve import structure as st

        if direction not in ("out", "in", "both"):
            raise ValidationError(f"direction={direction!r}: use 'out', 'in' or 'both'")
        start = self.find_node(node, user_id=user_id, agent_id=agent_id, run_id=run_id)
        rels = [self.schema.map_relation(r)[0] for r in relations] if relations else None
        store = st.reader(self.store, Scope(user_id, agent_id, run_id))
        steps = st.neighbors(
            store, start.scope, start.id, relations=rels, direction=direction, at=as_of
        )
        return st.node_hits(store, start.scope, steps)

    def stats(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Counts for a scope, or for the whole store when no scope is given."""
        if user_id is None and agent_id is None and run_id is None:
            scopes = self.store.partitions()
        else:
            scopes = [Scope(user_id, agent_id, run_id)]
        memories = nodes = edges = 0
        for s in scopes:
            memories += self.store.count_memories(s)
            n, e = self.store.count_graph(s.partition)
            nodes, edges = nodes + n, edges + e
        return {
            "scopes": len(scopes),
            "memories": memories,
            "nodes": nodes,
            "edges": edges,
            "embedder": f"{self.embedder.name}:{self.embedder.dim}",
            "extractor": getattr(self.extractor, "name", type(self.extractor).__name__),
            "path": None if self.path is None else str(self.path),
            # graph quality as the last evolution run measured it (None before any run)
            "quality": self._evolver.quality([s.partition for s in scopes]),
        }

    # -- direct graph edits (logic in engine/graph_edit.py) --------------------------------
    def add_graph(
        self,
        text: str,
        *,
        nodes: Sequence[NodeSpec],
        edges: Sequence[EdgeSpec] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
        kind: MemoryKind | None = None,
    ) -> AddResult:
        """Remember ``text`` together with the nodes and edges it states, as given.

        No extractor runs: each node is the existing node of that exact name or alias, or a new
        one; each edge links two of ``nodes`` by their ``key``. Journaled as one batch.
        """
        from sage_memory.engine.graph_edit import add_graph

        self._check_open()
        scope = Scope(user_id, agent_id, run_id)
        return add_graph(
            self,
            text,
            nodes,
            edges,
            scope,
            timestamp=timestamp,
            metadata=metadata,
            source=source,
            kind=kind,
        )

    def delete_node(
        self, name_or_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Change]:
        """Remove a node (by id or exact name) and its edges; undoable. Memories stay."""
        from sage_memory.engine.graph_edit import delete_node

        node = self.find_node(name_or_id, user_id=user_id, agent_id=agent_id, exact=True)
        return delete_node(self, node)

    def delete_edge(
        self, edge_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Change]:
        """Remove one edge by id; undoable. Its nodes and memories stay."""
        from sage_memory.engine.graph_edit import delete_edge

        found = self.store.get_edges(Scope(user_id, agent_id).partition, [edge_id])
        if not found:
            raise NotFoundError(f"no edge with id {edge_id!r} in this scope")
        return delete_edge(self, found[0])

    def graph(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_expired: bool = False,
    ) -> Subgraph:
        """Every node and (current, unless ``include_expired``) edge of a scope's graph."""
        from sage_memory.engine.graph_edit import whole_graph

        return whole_graph(self, Scope(user_id, agent_id), include_expired=include_expired)

    def scopes(self) -> list[Scope]:
        """Every scope partition (user_id, agent_id) that holds memories or graph items."""
        return self.store.partitions()

    # -- evolution (logic in sage_memory/evolve/) -----------------------------------------
    def feedback(
        self,
        ids: str | Sequence[str],
        *,
        used: bool = True,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        result: RetrievalResult | None = None,
    ) -> str:
        """Say which memories or nodes were actually used (``used=False``: were useless).

        Feedback counts more than being returned by a search. It is paired with the nodes of
        ``result``, or else of the scope's last search within the hour, so the evolver learns
        which answers go with which questions. Returns the access event id.
        """
        self._check_open()
        items = [ids] if isinstance(ids, str) else list(ids)
        if not items or not all(isinstance(i, str) and i for i in items):
            raise ValidationError("feedback needs one or more memory or node ids")
        scope = Scope(user_id, agent_id, run_id)
        event = self._access.record_feedback(scope, items, used=used, at=self.now(), result=result)
        return event.id

    def evolve(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        dry_run: bool = False,
        operations: Sequence[str] | None = None,
    ) -> EvolutionReport:
        """One bounded evolution pass over a scope (every scope when none is given).

        Reinforces and decays edge weights from the access log, settles clear conflicts, finds
        duplicates, communities and relation patterns, archives stale memories and removes
        orphans. What ``config.evolve.auto_apply`` allows is applied as one journal batch
        (``undo(report.batch_id)`` reverts it); the rest is queued for :meth:`review`.
        ``dry_run=True`` writes nothing and reports what would happen.
        """
        self._check_open()
        if user_id is None and agent_id is None and run_id is None:
            scopes = self.store.partitions()
        else:
            scopes = [Scope(user_id, agent_id, run_id).partition]
        with self._lock:
            self._check_open()
            self._access.flush()
            now = self.now()
            uow = UnitOfWork(self.store, Batch("evolver", "evolve", now))
            run = self._evolver.plan(
                uow, scopes, now=now, batch_id=uow.batch.id, dry_run=dry_run, operations=operations
            )
            changes = [] if dry_run else uow.commit()
            self._sync_index(changes, uow.vectors)
            return self._evolver.finish(run, len(changes))

    def review(
        self, *, user_id: str | None = None, agent_id: str | None = None, status: str = "open"
    ) -> list[Suggestion]:
        """The review queue: suggestions the evolver may not apply on its own, oldest first."""
        scope = None if user_id is None and agent_id is None else Scope(user_id, agent_id)
        return self.store.list_suggestions(scope, status=status)

    def accept(self, suggestion_id: str) -> list[Change]:
        """Apply a suggestion (planned again on the graph as it is now) as one batch.

        Returns the changes; ``undo(changes[0].batch_id)`` reverts them.
        """
        self._check_open()
        with self._lock:
            now = self.now()
            uow = UnitOfWork(self.store, Batch("user", f"accept {suggestion_id}", now))
            suggestion, _ = self._evolver.accept(uow, suggestion_id, now)
            changes = uow.commit()
            self._sync_index(changes, uow.vectors)
            self.store.set_suggestion_status([suggestion.id], "accepted", now, uow.batch.id)
            self._learn_relations()
            return changes

    def reject(self, suggestion_id: str) -> Suggestion:
        """Drop a suggestion from the queue; the same suggestion is not made again."""
        self._check_open()
        suggestion = self._evolver.get_suggestion(suggestion_id)
        self.store.set_suggestion_status([suggestion.id], "rejected", self.now())
        return self._evolver.get_suggestion(suggestion_id)

    def merge(
        self,
        keep: str,
        other: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Change]:
        """Merge node ``other`` into node ``keep`` (names or ids): every edge is re-pointed and
        the names kept as aliases. One batch; ``undo(changes[0].batch_id)`` restores both."""
        from sage_memory.evolve.proposal import apply_to
        from sage_memory.evolve.review import manual_merge

        self._check_open()
        kept = self.find_node(keep, user_id=user_id, agent_id=agent_id)
        gone = self.find_node(other, user_id=user_id, agent_id=agent_id)
        with self._lock:
            now = self.now()
            uow = UnitOfWork(self.store, Batch("user", f"merge {gone.id} into {kept.id}", now))
            apply_to(uow, manual_merge(uow, kept, gone, now))
            changes = uow.commit()
            self._sync_index(changes, uow.vectors)
            return changes

    def as_of(self, at: datetime) -> MemoryAsOf:
        """A read-only view of the whole memory as it was at system time ``at``, rebuilt from
        the journal: get, get_all, search, explore, find_node, graph, stats, history, export."""
        from sage_memory.evolve.history import MemoryAsOf, snapshot_store
        from sage_memory.index.numpy import NumpyVectorIndex

        self._check_open()
        with self._lock:
            snapshot = snapshot_store(self.store, self.embedder, at)
        quiet = dataclasses.replace(
            self.config.evolve, every_n_adds=0, every_growth_percent=0.0, schedule_seconds=0.0
        )
        inner = SageMemory(
            config=self.config.but(evolve=quiet),
            embedder=self.embedder,
            extractor=self.extractor,
            store=snapshot,
            index=NumpyVectorIndex(),
            clock=lambda: as_utc(at),
        )
        return MemoryAsOf(inner, at, self.history)

    # -- journal ---------------------------------------------------------------------------
    def undo(self, change_or_batch_id: str, *, force: bool = False) -> list[Change]:
        """Undo one journaled change, or every change of a batch (an add, a merge, a run).

        Refuses when a later change touched the same rows, unless ``force=True`` (which then
        overwrites the later changes too). Returns the changes the undo applied.
        """
        self._check_open()
        with self._lock:
            entries = self.store.journal(batch_id=change_or_batch_id)
            if not entries:
                entries = [
                    (s, c) for s, c in self.store.journal(limit=None) if c.id == change_or_batch_id
                ]
            if not entries:
                raise NotFoundError(f"no change or batch with id {change_or_batch_id!r}")
            last_seq = max(s for s, _ in entries)
            touched = {c.entity_id for _, c in entries}
            if not force:
                later = [
                    c.id
                    for s, c in self.store.journal(after_seq=last_seq)
                    if c.entity_id in touched
                ]
                if later:
                    raise ValidationError(
                        f"{len(later)} later change(s) touched the same rows (first: {later[0]}); "
                        "undo those first, or pass force=True"
                    )
            current = self._current_state([c for _, c in entries])
            batch = Batch("user", f"undo {change_or_batch_id}", self.now())
            changes = inverse([c for _, c in entries], current, batch)
            vectors = self._vectors_for_restored(changes)
            self.store.apply(changes, vectors)
            self._sync_index(changes, vectors)
            return changes

    def _current_state(self, changes: Sequence[Change]) -> dict[str, dict[str, Any] | None]:
        from sage_memory.codec import to_dict

        out: dict[str, dict[str, Any] | None] = {}
        for ch in changes:
            scope = _scope_from_key(ch)
            if ch.entity == "memory":
                found: Sequence[Any] = self.store.get_memories(scope, [ch.entity_id])
            elif ch.entity == "node":
                found = self.store.get_nodes(scope, [ch.entity_id])
            else:
                found = self.store.get_edges(scope, [ch.entity_id])
            out[ch.entity_id] = to_dict(found[0]) if found else None
        return out

    def _vectors_for_restored(self, changes: Sequence[Change]) -> dict[str, Vector]:
        """Re-embed restored memories and nodes whose text changed or that came back."""
        todo: list[tuple[str, str]] = []
        for ch in changes:
            if ch.after is None or ch.entity == "edge":
                continue
            field = "text" if ch.entity == "memory" else "name"
            if ch.before is None or ch.before.get(field) != ch.after.get(field):
                todo.append((ch.entity_id, ch.after[field]))
        if not todo:
            return {}
        vecs = self.embedder.embed([t for _, t in todo])
        return {i: v for (i, _), v in zip(todo, vecs, strict=True)}

    # -- export / import -------------------------------------------------------------------
    def export(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        format: str = "jsonl",
    ) -> int:
        """Write memories, nodes and edges to a file: "jsonl" (lossless, for :meth:`load`) or
        "graphml" (the graph, for graph tools). Returns the number of records written."""
        from sage_memory.engine.transfer import export_graphml, export_jsonl

        scopes = (
            self.store.partitions()
            if user_id is None and agent_id is None
            else [Scope(user_id, agent_id)]
        )
        writers = {"jsonl": export_jsonl, "graphml": export_graphml}
        if format not in writers:
            raise ValidationError(f"format={format!r}: use 'jsonl' or 'graphml'")
        try:
            return writers[format](self, Path(path), scopes)
        except StorageError:
            raise
        except OSError as exc:  # a missing folder, no permission, a full disk
            raise StorageError(
                f"cannot write the export {path}: {exc.strerror or exc}. Choose a path in an "
                "existing folder you can write to."
            ) from exc

    @classmethod
    def load(
        cls,
        export_path: str | os.PathLike[str],
        path: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> SageMemory:
        """A new SageMemory (at ``path``, or in memory) holding the records of a jsonl export."""
        from sage_memory.engine.transfer import import_jsonl

        mem = cls(path, **kwargs)
        try:
            import_jsonl(mem, Path(export_path))
        except BaseException:
            mem.close()
            raise
        return mem

    def backup(self, target: str | os.PathLike[str]) -> Path:
        """A consistent copy of the memory folder while it stays in use (SQLite online backup;
        the vector index is rebuilt from it when the copy is opened)."""
        from sage_memory.store.sqlite import SQLiteGraphStore

        if self.path is None or not isinstance(self.store, SQLiteGraphStore):
            raise StorageError("backup needs a folder-backed SageMemory; use export() instead")
        dest = Path(target)
        dest.mkdir(parents=True, exist_ok=True)
        if any(dest.iterdir()):
            raise StorageError(f"{dest} is not empty; back up into a new folder")
        self.store.backup(dest / DB_FILE)
        copy = SQLiteGraphStore(dest / DB_FILE)
        copy.set_meta("clean_shutdown", "0")  # forces a full index rebuild on first open
        copy.close()
        return dest


def _scope_from_key(change: Change) -> Scope:
    data = change.after if change.after is not None else change.before
    assert data is not None, "a journaled change always has a before or an after state"
    return Scope(**data["scope"]).partition


def _progress(total: int, enabled: bool) -> Callable[..., None]:
    """A progress callback: tqdm when installed, a plain stderr line otherwise."""
    if not enabled:
        return lambda n, done=False: None
    try:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="mem", desc="adding")

        def step(n: int, done: bool = False) -> None:
            bar.update(n)
            if done:
                bar.close()

        return step
    except ImportError:
        count = [0]

        def plain(n: int, done: bool = False) -> None:
            count[0] += n
            end = "\n" if done else ""
            print(f"\radding {count[0]}/{total}", end=end, file=sys.stderr, flush=True)

        return plain
