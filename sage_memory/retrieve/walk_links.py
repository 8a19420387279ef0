"""The associative walk's links, kept from one search to the next until the store is written.

A search walks the same people, places and busy memories as the last one did: reading a node's
facts, filtering, weighing and ordering them (:class:`~sage_memory.retrieve.expand.Neighbourhood`)
and listing a memory's entities were most of the walk's time, and they change only when the
store is written. The links of a node or a memory are kept here, per walk setting (partition,
fact filter, fan-out), and all of them are dropped when the store's write epoch
(:class:`~sage_memory.store.base.WriteEpoch`) moves. A store without one (PostgreSQL: other
processes write; a read-only handle) and a run's view (what it sees depends on the run) keep
nothing: every search reads, as before.

A link list is kept only as computed by the walk itself, so a search with the cache reaches
exactly what it reaches without it; a node whose edge read was cut by its bound is not kept
(its links may depend on the nodes read with it).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from sage_memory.retrieve.reader import GraphReader
from sage_memory.store.base import WriteEpoch

#: (neighbour key, link weight) pairs, as the walk's neighbour callback returns them.
Links = Sequence[tuple[str, float]]


class WalkLinks:
    """Link lists by walk setting and key (``"n:<id>"`` or ``"m:<id>"``), bounded by the
    links they hold (an entity keeps up to a hundred memories and its facts; a memory a few
    entities): the oldest lists go, down to half the bound, when a search would pass it.
    Shared by the searches of one retriever (thread-safe)."""

    def __init__(self, limit: int = 500_000) -> None:
        self._lock = threading.Lock()
        self._epoch: int | None = None
        self._items: dict[tuple[Hashable, str], Links] = {}
        self._size = 0  # links held, summed over the lists
        self._limit = limit

    def session(self, store: GraphReader, setting: Hashable) -> WalkSession | None:
        """The cache as one search sees it, or None when ``store`` cannot say when it was last
        written. Drops everything kept before the store's last write."""
        if not isinstance(store, WriteEpoch):
            return None
        epoch = store.write_epoch()
        if epoch is None:
            return None
        with self._lock:
            if self._epoch is not None and epoch < self._epoch:
                # A search that read the epoch before a write another search already saw:
                # it keeps and reads nothing (going back would let older links in again).
                return None
            if epoch != self._epoch:
                self._items.clear()
                self._size = 0
                self._epoch = epoch
        return WalkSession(self, store, setting, epoch)

    def _get(self, setting: Hashable, key: str) -> Links | None:
        return self._items.get((setting, key))

    def _put(self, epoch: int, setting: Hashable, items: dict[str, Links]) -> None:
        with self._lock:
            if epoch != self._epoch:
                return  # a later search saw a newer write: these may predate it
            adding = sum(len(links) for links in items.values())
            if self._size + adding > self._limit:
                for old in list(self._items):
                    if self._size + adding <= self._limit // 2:
                        break
                    self._size -= len(self._items.pop(old))
            for key, links in items.items():
                was = self._items.pop((setting, key), None)
                if was is not None:
                    self._size -= len(was)
                self._items[(setting, key)] = links
                self._size += len(links)


@dataclass(slots=True)
class WalkSession:
    """One search's handle on :class:`WalkLinks`: it reads what is kept and keeps what this
    search computed only when the store was not written while it read."""

    cache: WalkLinks
    store: WriteEpoch
    setting: Hashable
    epoch: int

    def get(self, key: str) -> Links | None:
        return self.cache._get(self.setting, key)

    def keep(self, items: dict[str, Links]) -> None:
        if items and self.store.write_epoch() == self.epoch:
            self.cache._put(self.epoch, self.setting, items)
