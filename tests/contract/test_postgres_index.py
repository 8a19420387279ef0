"""The VectorIndex contract on PostgreSQL + pgvector, plus its scoping and error checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sage_memory.errors import ConfigError, StorageError
from sage_memory.index.base import VectorIndex
from sage_memory.index.postgres import PostgresVectorIndex
from sage_memory.postgres import schema_for, translate_error
from sage_memory.testing.vector_index_contract import (
    VectorIndexContract,
    brute_force_top_k,
    random_unit_vectors,
)


class TestPostgresVectorIndex(VectorIndexContract):
    # Every write is a round trip and a commit, so the model run is kept shorter.
    state_machine_examples = 10
    state_machine_steps = 20

    @pytest.fixture(autouse=True)
    def _server(self, postgres_url: str) -> None:
        self.url = postgres_url

    def make_index(self, path: Path) -> VectorIndex:
        # One schema per folder: a fresh index per test, the same data when reopened.
        return PostgresVectorIndex(self.url, schema=schema_for(str(path)))

    def test_big_collection_gets_its_own_hnsw_index(self, tmp_path: Path) -> None:
        rng = np.random.default_rng(3)
        index = PostgresVectorIndex(self.url, schema=schema_for(str(tmp_path)), hnsw_threshold=200)
        try:
            ids = [f"v{i}" for i in range(300)]
            matrix = random_unit_vectors(rng, len(ids), self.dim)
            index.upsert("big", ids, matrix)
            index.upsert("small", ["s"], matrix[:1])
            assert index._dim_of("big") == (self.dim, True)
            assert index._dim_of("small") == (self.dim, False)
            hits = index.query("big", matrix[5], k=10)
            expected = brute_force_top_k(ids, matrix, matrix[5], 10)
            # Approximate, but a self-match is found and most neighbours agree.
            assert hits[0][0] == "v5"
            assert len({i for i, _ in hits} & {i for i, _ in expected}) >= 8
            assert index.query("small", matrix[0], k=10) == [("s", pytest.approx(1.0, abs=1e-5))]
            index.drop("big")
            assert index.query("big", matrix[5], k=3) == []
        finally:
            index.close()


def test_unreachable_host_names_the_fix() -> None:
    with pytest.raises(StorageError, match="check that PostgreSQL runs"):
        PostgresVectorIndex("postgresql://u:secret@127.0.0.1:1/db")


def test_a_plain_user_works_once_pgvector_is_installed(postgres_url: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        conn.execute("DROP ROLE IF EXISTS sage_plain_user")
        conn.execute("CREATE ROLE sage_plain_user LOGIN PASSWORD 'right'")
        conn.execute("GRANT CREATE ON DATABASE postgres TO sage_plain_user")
    url = postgres_url.replace("postgres:@", "sage_plain_user:right@")
    index = PostgresVectorIndex(url, schema="sage_plain_user_schema")
    index.upsert("c", ["a"], np.ones((1, 4), dtype=np.float32))
    assert index.count("c") == 1
    index.close()


def test_wrong_password_message_names_the_fix() -> None:
    # pgserver trusts its unix socket, so the server's own refusal text is fed in directly.
    error = translate_error(
        "postgresql://bob:hunter2@db.example:5432/app",
        RuntimeError('FATAL:  password authentication failed for user "bob"'),
    )
    assert "check the user and password" in str(error)
    assert "hunter2" not in str(error) and "bob:***@" in str(error)


def test_not_a_postgres_url() -> None:
    with pytest.raises(ConfigError, match="not a PostgreSQL URL"):
        PostgresVectorIndex("sqlite:///x.db")
