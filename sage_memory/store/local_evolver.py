"""The degraded mode for a store without the evolver-state port: a process-local state.

A third-party :class:`~sage_memory.store.base.GraphStore` need not keep the evolver's access
log and review queue. :func:`with_evolver_state` pairs such a store with an in-memory state, so
search, add, evolve and review all work; what the evolver learned from usage, and the open
suggestions, then last only as long as the process (a warning says so once).
"""

from __future__ import annotations

import warnings
from typing import Any, cast

from sage_memory.store.base import EvolverState, EvolvingStore, GraphStore
from sage_memory.store.memory_evolver import InMemoryEvolverState

__all__ = ["LocalEvolverState", "with_evolver_state"]


class LocalEvolverState(InMemoryEvolverState):
    """A core store plus an in-process evolver state; every other attribute is the store's.

    The evolver's per-partition notes (meta keys that end with a partition key, which contain
    the ``\\x1f`` separator no global key has) stay here too, so deleting a partition forgets
    them along with its access log, as the port promises.
    """

    def __init__(self, store: GraphStore) -> None:
        super().__init__()
        self.store = store

    def __getattr__(self, name: str) -> Any:
        if name == "store":  # not set yet (a copy being built): never recurse
            raise AttributeError(name)
        return getattr(self.store, name)

    def get_meta(self, key: str) -> str | None:
        if "\x1f" in key:
            return self._meta.get(key)
        return self.store.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        if "\x1f" in key:
            self._meta[key] = value
        else:
            self.store.set_meta(key, value)


def with_evolver_state(store: GraphStore) -> EvolvingStore:
    """``store`` itself when it implements both ports, else ``store`` with a local state."""
    if isinstance(store, EvolverState):
        return cast(EvolvingStore, store)
    warnings.warn(
        f"{type(store).__name__} does not implement the EvolverState port; the evolver's access "
        "log and review queue are kept in this process only and are lost when it exits",
        stacklevel=3,
    )
    return cast(EvolvingStore, LocalEvolverState(store))
