"""Every GraphStore backend passes the same contract suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage_memory.postgres import schema_for
from sage_memory.store.base import GraphStore
from sage_memory.store.memory import InMemoryGraphStore
from sage_memory.store.postgres import PostgresGraphStore
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.testing.store_contract import GraphStoreContract


class TestInMemoryGraphStore(GraphStoreContract):
    def make_store(self, path: Path) -> GraphStore:
        return InMemoryGraphStore()


class TestSQLiteGraphStore(GraphStoreContract):
    def make_store(self, path: Path) -> GraphStore:
        return SQLiteGraphStore(path / "sage.db")


class TestPostgresGraphStore(GraphStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_url: str) -> None:
        self.url = postgres_url

    def make_store(self, path: Path) -> GraphStore:
        # One schema per folder: a fresh store per test, the same data when reopened.
        return PostgresGraphStore(self.url, schema=schema_for(str(path)))
