"""What every part of the engine shares: its wiring, its lock, its clock, its open state.

The facade (:class:`~sage_memory.engine.core.SageMemory`) builds one :class:`EngineContext` and
hands it to its parts (lookup, writer, reader, evolution, maintenance). A part takes the context
and the parts it calls, never the facade, so no part reaches back into another's privates and
no module imports the facade it serves.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar, overload

import numpy as np

from sage_memory.config import SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.engine import index_mark
from sage_memory.errors import StorageError
from sage_memory.extract.base import Extractor
from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.llm.base import ChatModel
from sage_memory.schema import Schema
from sage_memory.store.base import EvolvingStore, ScopeLocking
from sage_memory.types import Change, Scope, Vector

if TYPE_CHECKING:
    from sage_memory.engine.ingest import Ingestor
    from sage_memory.retrieve import Retriever

Clock = Callable[[], datetime]
DB_FILE = "sage.db"
CHROMA_DIR = "chroma"
LOCK_FILE = ".lock"
T = TypeVar("T")


@dataclass(eq=False)
class EngineContext:
    """The engine's wiring and shared state; mutable where the engine replaces a part (a
    rebuilt index, a schema that learned relations, a test's own extractor)."""

    config: SageConfig
    path: Path | None
    store: EvolvingStore
    index: VectorIndex
    embedder: Embedder
    llm: ChatModel | None
    extractor: Extractor
    schema: Schema
    clock: Clock
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: Changes mirrored into the index since its high-water mark was last recorded.
    unmarked: int = 0
    closed: bool = False
    # Parts one kind of command never uses, built on first use (see the properties below).
    _retriever: Retriever | None = field(default=None, init=False, repr=False)
    _ingestor: Ingestor | None = field(default=None, init=False, repr=False)
    _parts_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def retriever(self) -> Retriever:
        """The retriever behind search; built on first use, so a process that only writes
        (the command line's ``add``) never imports the search's modules."""
        if self._retriever is None:
            with self._parts_lock:
                if self._retriever is None:
                    from sage_memory.embed.tokens import LazyCounter, default_counter
                    from sage_memory.retrieve.retriever import Retriever

                    self._retriever = Retriever(
                        self.store,
                        self.index,
                        self.embedder,
                        self.config.retrieve,
                        counter=LazyCounter(default_counter),
                        single_valued=self.config.extract.single_valued,
                    )
        return self._retriever

    @retriever.setter
    def retriever(self, retriever: Retriever) -> None:
        self._retriever = retriever

    @property
    def built_retriever(self) -> Retriever | None:
        """The retriever if one was built (what closing has to stop), else None."""
        return self._retriever

    @property
    def ingestor(self) -> Ingestor:
        """Turns extracted deltas into rows; built on the first write, so a process that only
        reads (the command line's ``search``) never imports the write path's modules."""
        if self._ingestor is None:
            with self._parts_lock:
                if self._ingestor is None:
                    from sage_memory.engine.ingest import Ingestor

                    self._ingestor = Ingestor(
                        self.index, self.embedder, self.schema, self.config.extract
                    )
        return self._ingestor

    def now(self) -> datetime:
        """The engine's clock (UTC)."""
        return self.clock()

    def check_open(self) -> None:
        """Raise when the engine was closed."""
        if self.closed:
            raise StorageError("this SageMemory is closed; open a new one")

    @contextlib.contextmanager
    def writing(self, *partitions: str) -> Iterator[None]:
        """Hold the write lock, checking (under it) that the engine is still open.

        With ``partitions`` (partition keys), a store shared by processes (one with
        :class:`~sage_memory.store.base.ScopeLocking`, PostgreSQL) is also locked on each
        across processes, in sorted order so that two writers never wait on each other: what a
        write reads before it decides (entity resolution, current values, what a delete
        removes) cannot change under it.
        """
        with self.lock:
            self.check_open()
            with contextlib.ExitStack() as held:
                if partitions and isinstance(self.store, ScopeLocking):
                    for key in sorted(set(partitions)):
                        held.enter_context(self.store.scope_lock(key))
                yield

    def set_index(self, index: VectorIndex) -> None:
        """Swap the vector index everywhere it is held (after a damaged one was rebuilt)."""
        self.index = index
        if self._ingestor is not None:
            self._ingestor.index = index
        if self._retriever is not None:
            self._retriever.index = index

    def set_schema(self, schema: Schema) -> None:
        """Swap the schema everywhere it is held (after relation types were learned)."""
        self.schema = schema
        if self._ingestor is not None:
            self._ingestor.schema = schema

    def sync_index(self, changes: Sequence[Change], vectors: Mapping[str, Vector]) -> None:
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
        self.unmarked += len(changes)
        if self.unmarked >= index_mark.MARK_EVERY:  # bounds the repair after a crash
            self.unmarked = 0
            index_mark.write_mark(self.store)


def scope_of(
    user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
) -> Scope | None:
    """The public keywords as a :class:`Scope`; None when none is given ("every scope")."""
    if user_id is None and agent_id is None and run_id is None:
        return None
    return Scope(user_id, agent_id, run_id)


def required(scope: Scope | None) -> Scope:
    """``scope``, or the error a scope-less call has always raised (Scope's own message)."""
    return scope if scope is not None else Scope()


class ContextField(Generic[T]):
    """A facade attribute that reads and writes the same-named field of its ``_ctx``.

    Keeps ``mem.store``, ``mem.extractor = ...`` and friends working on a facade that holds
    its wiring in an :class:`EngineContext`.
    """

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> ContextField[T]: ...

    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj: object | None, owner: type) -> ContextField[T] | T:
        if obj is None:
            return self
        value: T = getattr(obj._ctx, self.name)  # type: ignore[attr-defined]
        return value

    def __set__(self, obj: object, value: T) -> None:
        setattr(obj._ctx, self.name, value)  # type: ignore[attr-defined]
