"""Every GraphStore backend passes the same contract suites: the core store and, for the
backends that keep it, the optional evolver state (the process-local fallback included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage_memory.postgres import schema_for
from sage_memory.store.base import EvolverState, GraphStore, MetaItems
from sage_memory.store.local_evolver import LocalEvolverState
from sage_memory.store.memory import InMemoryGraphStore
from sage_memory.store.postgres import PostgresGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.testing.evolver_state_contract import EvolverStateContract
from sage_memory.testing.store_contract import GraphStoreContract


class TestInMemoryGraphStore(GraphStoreContract, EvolverStateContract):
    def make_store(self, path: Path) -> GraphStore:
        return InMemoryGraphStore()

    def make_state(self, path: Path) -> EvolverState:
        return InMemoryGraphStore()


class TestSQLiteGraphStore(GraphStoreContract, EvolverStateContract):
    def make_store(self, path: Path) -> GraphStore:
        return SQLiteGraphStore(path / "sage.db")

    def make_state(self, path: Path) -> EvolverState:
        return SQLiteGraphStore(path / "sage.db")


class TestPostgresGraphStore(GraphStoreContract, EvolverStateContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_url: str) -> None:
        self.url = postgres_url

    def make_store(self, path: Path) -> GraphStore:
        # One schema per folder: a fresh store per test, the same data when reopened.
        return PostgresGraphStore(self.url, schema=schema_for(str(path)))

    def make_state(self, path: Path) -> EvolverState:
        return PostgresGraphStore(self.url, schema=schema_for(str(path)))


class TestLocalEvolverState(EvolverStateContract):
    """The degraded mode's state (for a store without the port) keeps the same promises."""

    def make_state(self, path: Path) -> EvolverState:
        return LocalEvolverState(SQLiteGraphStore(path / "sage.db"))


_EVOLVER_METHODS = {
    name for name in vars(EvolverState) if not name.startswith("_") and name not in vars(GraphStore)
}


_META_ITEMS_METHODS = {name for name in vars(MetaItems) if not name.startswith("_")}


class CoreOnlyStore:
    """A third-party store with only the core port: the SQLite store seen through the
    GraphStore methods alone (the evolver-state and the optional meta-items methods are
    hidden)."""

    def __init__(self, inner: SQLiteGraphStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        if name in _EVOLVER_METHODS | _META_ITEMS_METHODS or name == "scope_lock":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_store_without_the_evolver_port_runs_in_a_degraded_mode(tmp_path: Path) -> None:
    from sage_memory import SageMemory

    core = CoreOnlyStore(SQLiteGraphStore(tmp_path / "sage.db"))
    assert isinstance(core, GraphStore) and not isinstance(core, EvolverState)
    with pytest.warns(UserWarning, match="does not implement the EvolverState port"):
        mem = SageMemory(store=core, embedder="hashing")  # type: ignore[arg-type]
    try:
        mem.add("Alice moved to Paris", user_id="alice")
        mem.add("Alice moved to Berlin", user_id="alice")
        assert mem.search("where does alice live", user_id="alice").memories
        mem.evolve(user_id="alice")
        assert isinstance(mem.review(user_id="alice"), list)
        assert mem.delete_all(user_id="alice") == 2
    finally:
        mem.close()


def test_a_store_without_meta_items_keeps_the_pending_queue_in_one_value(tmp_path: Path) -> None:
    """Deferred adds on a store with only the core port: the queue is the single meta value,
    drained completely by extract_pending."""
    import json

    from sage_memory import SageMemory
    from sage_memory.engine import pending

    core = CoreOnlyStore(SQLiteGraphStore(tmp_path / "sage.db"))
    assert not isinstance(core, MetaItems)
    with pytest.warns(UserWarning, match="EvolverState"):
        mem = SageMemory(store=core, embedder="hashing")  # type: ignore[arg-type]
    try:
        ids = [
            mem.add(f"Alice visited city number {i}", user_id="alice", defer=True).memory_id
            for i in range(12)
        ]
        assert list(json.loads(core.get_meta(pending.QUEUE_META) or "{}")) == ids
        assert mem.stats()["pending"] == 12
        assert [r.memory_id for r in mem.extract_pending()] == ids
        assert mem.stats()["pending"] == 0
        assert json.loads(core.get_meta(pending.QUEUE_META) or "") == {}
    finally:
        mem.close()
