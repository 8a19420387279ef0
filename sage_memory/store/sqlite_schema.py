"""The SQLite store's tables (created on open; ``SCHEMA_VERSION`` guards the layout).

Stores written before the vectors moved to their own tables keep a ``vec`` column in
``memories`` and ``nodes``; it is emptied into the new tables once, on open (``VECTORS_META``).
"""

from __future__ import annotations

SCHEMA_VERSION = "1"

#: Meta key and value of stores whose vectors live in ``memory_vectors`` / ``node_vectors``.
VECTORS_META = ("vector_tables", "1")
#: Meta key and value of stores whose vectors are float16 (older ones wrote float32; they are
#: converted once, on open). Half precision keeps each vector within cosine 0.99999 of its
#: float32 original and changes no top-10 beyond the order of near-ties (``bench/
#: vector_precision.py``); the float32 original lives on in Chroma for mirrored partitions.
HALF_VECTORS_META = ("vector_format", "float16")

#: The journal's columns as :data:`~sage_memory.store.rows.JOURNAL_COLUMNS` lists them, from
#: ``journal j`` joined to its batch ``b``.
JOURNAL_SELECT = (
    "j.seq, j.id, b.id, j.scope_key, j.entity, j.entity_id, j.op, j.before, j.after, b.at,"
    " b.actor, j.reason FROM journal j JOIN journal_batches b ON b.rid = j.batch"
)

#: Page size of new files: 8 KB pages hold five vectors (4 KB pages held two, a quarter empty).
PAGE_SIZE = 8192

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    run_id TEXT,
    ts TEXT NOT NULL,
    created_at TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope_key, ts, created_at);
CREATE TABLE IF NOT EXISTS nodes (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nodes_by_scope ON nodes (scope_key, id);
-- Embeddings (float16) by the rid of their row, apart from it: a 1.5 KB vector beside a
-- memory's row left one row per page (half of it empty) and slowed every scan of the rows.
CREATE TABLE IF NOT EXISTS memory_vectors (rid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS node_vectors (rid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS node_names (
    scope_key TEXT NOT NULL, key TEXT NOT NULL, node_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS node_names_by_key ON node_names (scope_key, key);
CREATE INDEX IF NOT EXISTS node_names_by_node ON node_names (node_id);
CREATE TABLE IF NOT EXISTS edges (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    relation TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_by_scope ON edges (scope_key, id);
CREATE INDEX IF NOT EXISTS edges_by_source ON edges (source_id);
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (target_id);
-- A node's edges of one relation (ingest checks what a source already states for each fact it
-- adds): one seek, however many edges of other relations the node has. edges_by_source stays:
-- it serves the latest-k read of a busy node (ORDER BY rid over one source) without a sort.
CREATE INDEX IF NOT EXISTS edges_by_source_relation ON edges (source_id, relation);
CREATE TABLE IF NOT EXISTS provenance (
    memory_id TEXT NOT NULL, entity TEXT NOT NULL, entity_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provenance_by_memory ON provenance (memory_id);
CREATE INDEX IF NOT EXISTS provenance_by_entity ON provenance (entity_id);
-- A change's id is not UNIQUE here (no query looks a change up by it, and its index was a
-- tenth of the journal's bytes; ids are random 128-bit values). The batch id, time and actor,
-- the same for every change of a batch, are kept once per batch in journal_batches (files
-- of the older layout, those three columns in every row, are converted on open).
CREATE TABLE IF NOT EXISTS journal_batches (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    UNIQUE (id, at, actor)
);
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    batch INTEGER NOT NULL,
    scope_key TEXT NOT NULL,
    entity TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    op TEXT NOT NULL,
    before TEXT,
    after TEXT,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_by_batch ON journal (batch);
CREATE INDEX IF NOT EXISTS journal_by_entity ON journal (entity_id);
CREATE INDEX IF NOT EXISTS journal_by_scope ON journal (scope_key, seq);
CREATE TABLE IF NOT EXISTS access_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    weight REAL NOT NULL,
    entity TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    context INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS access_by_scope ON access_log (scope_key, seq);
CREATE INDEX IF NOT EXISTS access_by_event ON access_log (event_id, entity);
CREATE TABLE IF NOT EXISTS suggestions (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (scope_key, key)
);
CREATE INDEX IF NOT EXISTS suggestions_by_status ON suggestions (scope_key, status);
"""
