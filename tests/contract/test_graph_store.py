"""Every GraphStore backend passes the same contract suite."""

from __future__ import annotations

from pathlib import Path

from sage_memory.store.base import GraphStore
from sage_memory.store.memory import InMemoryGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.testing.store_contract import GraphStoreContract


class TestInMemoryGraphStore(GraphStoreContract):
    def make_store(self, path: Path) -> GraphStore:
        return InMemoryGraphStore()


class TestSQLiteGraphStore(GraphStoreContract):
    def make_store(self, path: Path) -> GraphStore:
        return SQLiteGraphStore(path / "sage.db")
