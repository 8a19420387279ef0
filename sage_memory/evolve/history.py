"""The memory as it was: rebuilding past states from the journal.

Every write is journaled with the row's state after it, so the state at system time ``t`` is,
for each row, the ``after`` of its last change at or before ``t``. :func:`snapshot_store`
replays the journal into a fresh in-memory store; the engine opens a read-only memory over it
(:class:`MemoryAsOf`), which supports ``get``, ``get_all``, ``search``, ``explore``,
``find_node``, ``graph``, ``stats``, ``history`` and ``export`` exactly as they would have
answered then.

Limits: the replay reads the whole journal (its cost grows with the history, not with a
query); what was deleted with ``delete``/``delete_all`` is gone from the past too (deletion
purges the journal on purpose); vectors are the stored ones when the text is unchanged, else
embedded again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from sage_memory.embed.base import Embedder
from sage_memory.store.base import GraphStore
from sage_memory.store.memory import InMemoryGraphStore
from sage_memory.types import Change, Memory, RetrievalResult, Scope, Subgraph, Vector, as_utc

_PAGE = 5000


def state_at(entries: Iterable[tuple[int, Change]], at: datetime) -> list[Change]:
    """Insert changes that rebuild every row as it stood at ``at``, in journal order.

    Args:
        entries: The journal, (sequence number, change), in order.
        at: A system time (UTC).
    """
    last: dict[str, Change] = {}
    for _, ch in entries:
        if ch.at <= at:
            last.pop(ch.entity_id, None)  # re-insert so order follows the latest write
            last[ch.entity_id] = ch
    rank = {"memory": 0, "node": 1, "edge": 2}
    rows = [c for c in last.values() if c.after is not None]
    rows.sort(key=lambda c: rank[c.entity])
    return [
        Change(
            id=c.id,
            batch_id=c.batch_id,
            scope_key=c.scope_key,
            entity=c.entity,
            entity_id=c.entity_id,
            op="insert",
            before=None,
            after=c.after,
            at=c.at,
            actor=c.actor,
            reason=c.reason,
        )
        for c in rows
    ]


def _journal(store: GraphStore) -> Iterable[tuple[int, Change]]:
    seq = 0
    while page := store.journal(after_seq=seq, limit=_PAGE):
        yield from page
        seq = page[-1][0]


def snapshot_store(store: GraphStore, embedder: Embedder, at: datetime) -> InMemoryGraphStore:
    """An in-memory store holding the memory as it was at system time ``at``."""
    at = as_utc(at)
    changes = state_at(_journal(store), at)
    ids = [c.entity_id for c in changes if c.entity != "edge"]
    live = store.get_vectors(ids)
    vectors: dict[str, Vector] = {}
    todo: list[tuple[str, str]] = []
    current = {m.id: m.text for m in _live_memories(store, changes)}
    for c in changes:
        if c.entity == "edge" or c.after is None:
            continue
        text = c.after["text"] if c.entity == "memory" else c.after["name"]
        same = c.entity == "node" or current.get(c.entity_id) == text
        if c.entity_id in live and same:
            vectors[c.entity_id] = live[c.entity_id]
        else:
            todo.append((c.entity_id, text))
    if todo:
        embedded = embedder.embed([t for _, t in todo])
        vectors.update(
            (i, np.asarray(v, dtype=np.float32)) for (i, _), v in zip(todo, embedded, strict=True)
        )
    snap = InMemoryGraphStore()
    snap.apply(changes, vectors)
    return snap


def _live_memories(store: GraphStore, changes: Sequence[Change]) -> list[Memory]:
    by_scope: dict[str, tuple[Scope, list[str]]] = {}
    for c in changes:
        if c.entity == "memory" and c.after is not None:
            scope = Scope(**c.after["scope"])
            by_scope.setdefault(scope.key, (scope.partition, []))[1].append(c.entity_id)
    out: list[Memory] = []
    for scope, ids in by_scope.values():
        out += store.get_memories(scope, ids)
    return out


class Reader(Protocol):
    """The read side of a memory (``SageMemory`` is one)."""

    @property
    def get(self) -> Callable[..., Memory]: ...

    @property
    def get_all(self) -> Callable[..., list[Memory]]: ...

    @property
    def search(self) -> Callable[..., RetrievalResult]: ...

    @property
    def explore(self) -> Callable[..., Subgraph]: ...

    @property
    def find_node(self) -> Callable[..., Any]: ...

    @property
    def graph(self) -> Callable[..., Subgraph]: ...

    @property
    def stats(self) -> Callable[..., dict[str, Any]]: ...

    @property
    def export(self) -> Callable[..., int]: ...

    @property
    def close(self) -> Callable[[], None]: ...


class MemoryAsOf:
    """A read-only view of a memory as it was at system time :attr:`at`.

    Reads answer as they would have then; writes do not exist on it. Close it (or use it as a
    context manager) to free the rebuilt copy.
    """

    def __init__(self, inner: Reader, at: datetime, journal: Callable[[str], list[Change]]) -> None:
        self._inner = inner
        self._journal = journal
        self.at = as_utc(at)

    def get(self, memory_id: str, **scope: Any) -> Memory:
        return self._inner.get(memory_id, **scope)

    def get_all(self, **kwargs: Any) -> list[Memory]:
        return self._inner.get_all(**kwargs)

    def search(self, query: str, **kwargs: Any) -> RetrievalResult:
        return self._inner.search(query, **kwargs)

    def explore(self, name_or_id: str, **kwargs: Any) -> Subgraph:
        return self._inner.explore(name_or_id, **kwargs)

    def find_node(self, name_or_id: str, **kwargs: Any) -> Any:
        return self._inner.find_node(name_or_id, **kwargs)

    def graph(self, **kwargs: Any) -> Subgraph:
        return self._inner.graph(**kwargs)

    def stats(self, **kwargs: Any) -> dict[str, Any]:
        return {**self._inner.stats(**kwargs), "as_of": self.at.isoformat()}

    def history(self, memory_id: str) -> list[Change]:
        """The journal of one memory, node or edge id up to :attr:`at`, oldest first."""
        return [c for c in self._journal(memory_id) if c.at <= self.at]

    def export(self, path: str | os.PathLike[str], **kwargs: Any) -> int:
        return self._inner.export(path, **kwargs)

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> MemoryAsOf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"{name!r} is not available on a view of the past (as of {self.at.isoformat()}): "
            "it is read-only; use the live memory to change it"
        )
