"""The PostgreSQL store's tables and their versioned migrations, applied on first connect.

``schema_version`` holds one row per applied migration. Opening a store takes an advisory lock,
applies the migrations it has not seen in order, each in the same transaction as its version
row, so two processes connecting to a new database at once never both create the tables.
A database newer than this code (a version above the last one here) is refused with the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sage_memory.errors import StorageError
from sage_memory.store import postgres_postings as postings

#: (version, statements). Append new versions; never edit an applied one.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE memories (
    rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    scope_key text NOT NULL,
    run_id text,
    ts text NOT NULL,
    created_at text NOT NULL,
    archived boolean NOT NULL DEFAULT false,
    data text NOT NULL,
    body text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,
    vec bytea
);
CREATE INDEX memories_by_scope ON memories (scope_key, ts, created_at, rid);
CREATE INDEX memories_fts ON memories USING gin (tsv);
CREATE TABLE nodes (
    rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    scope_key text NOT NULL,
    data text NOT NULL,
    body text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,
    vec bytea
);
CREATE INDEX nodes_by_scope ON nodes (scope_key, id);
CREATE INDEX nodes_fts ON nodes USING gin (tsv);
CREATE TABLE node_names (scope_key text NOT NULL, key text NOT NULL, node_id text NOT NULL);
CREATE INDEX node_names_by_key ON node_names (scope_key, key);
CREATE INDEX node_names_by_node ON node_names (node_id);
CREATE TABLE edges (
    rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    scope_key text NOT NULL,
    source_id text NOT NULL,
    target_id text NOT NULL,
    relation text NOT NULL,
    data text NOT NULL
);
CREATE INDEX edges_by_scope ON edges (scope_key, id);
CREATE INDEX edges_by_source ON edges (source_id);
CREATE INDEX edges_by_target ON edges (target_id);
CREATE TABLE provenance (memory_id text NOT NULL, entity text NOT NULL, entity_id text NOT NULL);
CREATE INDEX provenance_by_memory ON provenance (memory_id);
CREATE INDEX provenance_by_entity ON provenance (entity_id);
CREATE TABLE journal (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    batch_id text NOT NULL,
    scope_key text NOT NULL,
    entity text NOT NULL,
    entity_id text NOT NULL,
    op text NOT NULL,
    before text,
    after text,
    at text NOT NULL,
    actor text NOT NULL,
    reason text NOT NULL
);
CREATE INDEX journal_by_batch ON journal (batch_id);
CREATE INDEX journal_by_entity ON journal (entity_id);
CREATE INDEX journal_by_scope ON journal (scope_key, seq);
CREATE TABLE access_log (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id text NOT NULL,
    scope_key text NOT NULL,
    at text NOT NULL,
    kind text NOT NULL,
    weight double precision NOT NULL,
    entity text NOT NULL,
    entity_id text NOT NULL,
    context boolean NOT NULL DEFAULT false
);
CREATE INDEX access_by_scope ON access_log (scope_key, seq);
CREATE INDEX access_by_event ON access_log (event_id, entity);
CREATE TABLE suggestions (
    rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    scope_key text NOT NULL,
    key text NOT NULL,
    status text NOT NULL,
    data text NOT NULL,
    UNIQUE (scope_key, key)
);
CREATE INDEX suggestions_by_status ON suggestions (scope_key, status);
""",
    ),
    (
        2,
        # The lexical channel moves from full-text search (ts_rank) to BM25 postings per
        # partition (postgres_postings), scored as the SQLite store scores; names and
        # provenance keep their insertion order (the order the SQLite store reads them in).
        """
DROP INDEX memories_fts;
DROP INDEX nodes_fts;
ALTER TABLE memories DROP COLUMN tsv, DROP COLUMN body;
ALTER TABLE nodes DROP COLUMN tsv, DROP COLUMN body;
ALTER TABLE node_names ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE provenance ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
"""
        + postings.SCHEMA,
    ),
    (
        3,
        # A bounded read of a busy node's edges (edges_of per_node: the latest k) seeks the
        # (end, rid) index and stops after k entries; these serve the plain lookups too.
        """
CREATE INDEX edges_by_source_rid ON edges (source_id, rid);
CREATE INDEX edges_by_target_rid ON edges (target_id, rid);
DROP INDEX edges_by_source;
DROP INDEX edges_by_target;
""",
    ),
    (
        4,
        # A node's edges of one relation (ingest checks what a source already states for each
        # fact it adds): one seek, however many edges of other relations the node has; rid
        # last, so the latest k of one relation are a seek too.
        """
CREATE INDEX edges_by_source_relation ON edges (source_id, relation, rid);
""",
    ),
)

#: Work a migration needs beyond its SQL, run in the same transaction right after it.
_AFTER: dict[int, Callable[[Any], None]] = {2: postings.rebuild}

LATEST = MIGRATIONS[-1][0]


def migrate(conn: Any, schema: str) -> int:
    """Bring ``schema`` up to :data:`LATEST`; returns the version found before."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"migrate:{schema}",))
    conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    conn.execute(f'SET LOCAL search_path TO "{schema}", public')
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT COALESCE(max(version), 0) FROM schema_version").fetchone()
    found = int(row[0])
    if found > LATEST:
        conn.rollback()
        raise StorageError(
            f"schema {schema!r} is at store version {found}; this sage_memory reads up to "
            f"{LATEST}. Upgrade sage_memory, or use another schema"
        )
    for version, statements in MIGRATIONS:
        if version > found:
            conn.execute(statements)
            if version in _AFTER:
                _AFTER[version](conn)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
    conn.commit()
    return found
