"""The SQLite store's lexical postings: BM25 statistics kept per scope partition.

FTS5's ``bm25()`` takes its document counts and term frequencies from the whole table, so
another user's memories changed this user's ranking. These tables hold the same statistics per
partition, and :func:`sage_memory.store.lexical.bm25` scores from them alone, with FTS5's
term weight and stems (a single-scope store ranks as it did with FTS5):

- ``lexical_postings (part, term, doc, tf)``: the partition's documents holding a term; a query
  reads only the rows of its own partition and terms;
- ``lexical_docs (kind, doc, part, length, terms)``: each document's length and term keys (to
  remove its postings when it changes or goes);
- ``lexical_stats (part, docs, total)``: document count and total length per partition.

``part`` is a 64-bit hash of the scope key and the entity (memory or node; an integer: the
21-character text it was took a third of each posting), ``term`` a 64-bit hash of
the stem (:func:`~sage_memory.store.lexical.term_key`): no word or user id is stored here, so a
deleted text leaves nothing of itself in these tables' index pages.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from typing import Any, Literal

import numpy as np

from sage_memory.store import lexical
from sage_memory.store.lexical import query_term_set, term_key, terms

Kind = Literal["m", "n"]

POSTINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS lexical_postings (
    part INTEGER NOT NULL, term INTEGER NOT NULL, doc INTEGER NOT NULL, tf INTEGER NOT NULL,
    PRIMARY KEY (part, term, doc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lexical_docs (
    kind TEXT NOT NULL, doc INTEGER NOT NULL, part INTEGER NOT NULL, length INTEGER NOT NULL,
    terms BLOB NOT NULL, PRIMARY KEY (kind, doc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lexical_stats (
    part INTEGER PRIMARY KEY, docs INTEGER NOT NULL, total INTEGER NOT NULL
) WITHOUT ROWID;
"""

#: Meta key and value of the current lexical layout (older stores are rebuilt on open).
POSTINGS_META = ("lexical_index", "bm25-partition-2")
#: The tables of :data:`POSTINGS_SCHEMA` (an older layout's are dropped before the rebuild).
POSTINGS_TABLES = ("lexical_postings", "lexical_docs", "lexical_stats")

_TABLES = {"m": "memories", "n": "nodes"}


def part_key(kind: Kind, scope_key: str) -> str:
    """The hashed partition of a (entity kind, scope key) as text (the PostgreSQL store's)."""
    return kind + hashlib.blake2b(scope_key.encode(), digest_size=10).hexdigest()


def part_id(kind: Kind, scope_key: str) -> int:
    """The hashed partition of a (entity kind, scope key), a signed 64-bit integer."""
    digest = hashlib.blake2b(f"{kind}\x1f{scope_key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def node_text(data: dict[str, Any]) -> str:
    """The searchable text of a node record: name, aliases and summary."""
    return " ".join([data["name"], *data.get("aliases", ()), data.get("summary", "")])


def unindex(db: sqlite3.Connection, kind: Kind, doc: int) -> None:
    """Remove a document's postings and its share of the partition's statistics."""
    row = db.execute(
        "SELECT part, length, terms FROM lexical_docs WHERE kind = ? AND doc = ?", (kind, doc)
    ).fetchone()
    if row is None:
        return
    part, length, packed = row
    keys = np.frombuffer(packed, dtype=np.int64).tolist()
    db.executemany(
        "DELETE FROM lexical_postings WHERE part = ? AND term = ? AND doc = ?",
        [(part, k, doc) for k in keys],
    )
    db.execute("DELETE FROM lexical_docs WHERE kind = ? AND doc = ?", (kind, doc))
    db.execute(
        "UPDATE lexical_stats SET docs = docs - 1, total = total - ? WHERE part = ?",
        (length, part),
    )
    db.execute("DELETE FROM lexical_stats WHERE part = ? AND docs <= 0", (part,))


def index(db: sqlite3.Connection, kind: Kind, doc: int, scope_key: str, text: str) -> None:
    """(Re)index a document of a partition."""
    unindex(db, kind, doc)
    part = part_id(kind, scope_key)
    counts = Counter(term_key(t) for t in terms(text))
    length = sum(counts.values())
    db.executemany(
        "INSERT INTO lexical_postings (part, term, doc, tf) VALUES (?,?,?,?)",
        [(part, k, doc, tf) for k, tf in counts.items()],
    )
    packed = np.fromiter(counts, dtype=np.int64, count=len(counts)).tobytes()
    db.execute(
        "INSERT INTO lexical_docs (kind, doc, part, length, terms) VALUES (?,?,?,?,?)",
        (kind, doc, part, length, packed),
    )
    db.execute(
        "INSERT INTO lexical_stats (part, docs, total) VALUES (?, 1, ?) ON CONFLICT(part)"
        " DO UPDATE SET docs = docs + 1, total = total + excluded.total",
        (part, length),
    )


def search(
    db: sqlite3.Connection,
    kind: Kind,
    scope_key: str,
    query: str,
    limit: int,
    run_id: str | None = None,
) -> list[tuple[str, float]]:
    """(id, BM25 score) best first, from the partition's own statistics; ``run_id`` keeps the
    memories of one run (scored within their partition, as the graph is).

    The postings are scored by row number and only the best rows' ids are read: looking up
    the id of every document that holds a common term was most of a query's time.

    Bounded reads: each term's postings are read newest first, at most
    :data:`~sage_memory.store.lexical.TERM_POSTINGS` of them (or ``limit``, if more). A term
    with no more postings than that is read whole, and when every term is, the scores are
    exact BM25. A common term (more postings) is scored on its newest postings and on the
    documents the rarer terms found (looked up by key, so a document holding a rare and a
    common term keeps both shares); its document frequency, for the IDF, is estimated from how
    densely its newest postings fill the span between its first and its newest document. A
    document holding only common terms and none of the newest of them is not scored: such a
    document matches the query by its most frequent words only, the weakest lexical evidence
    there is. The cost is bounded by the number of terms, whatever the partition's size. The
    PostgreSQL store reads and scores the same way
    (:func:`sage_memory.store.postgres_postings.search_read`).
    """
    wanted = {term_key(t): t for t in query_term_set(query)}
    if not wanted or limit <= 0:
        return []
    part = part_id(kind, scope_key)
    stats = db.execute("SELECT docs, total FROM lexical_stats WHERE part = ?", (part,)).fetchone()
    if stats is None:
        return []
    keys = list(wanted)
    cap = max(lexical.TERM_POSTINGS, limit)
    rows, df = _read_postings(db, kind, part, keys, cap)
    if not rows:
        return []
    docs, scores = lexical.bm25_rows(rows, keys, stats[0], stats[1], df)
    table = _TABLES[kind]
    if run_id is None:
        # Every row scoring at least the limit-th best (ties included: they break by id).
        cut = np.partition(scores, -limit)[-limit] if len(scores) > limit else -np.inf
        best = np.flatnonzero(scores >= cut)
        run_sql, run_params = "", tuple[str, ...]()
    else:
        best = np.arange(len(scores))
        run_sql, run_params = " AND run_id = ?", (run_id,)
    score_of = dict(zip(docs[best].tolist(), scores[best].tolist(), strict=True))
    found: list[tuple[str, float]] = []
    rids = list(score_of)
    for start in range(0, len(rids), 500):
        chunk = rids[start : start + 500]
        found += [
            (doc_id, score_of[rid])
            for rid, doc_id in db.execute(
                f"SELECT rid, id FROM {table} WHERE rid IN ({','.join('?' * len(chunk))}){run_sql}",
                (*chunk, *run_params),
            )
        ]
    found.sort(key=lambda kv: (-kv[1], kv[0]))
    return found[:limit]


_POSTINGS_OF = (
    "SELECT p.term, p.tf, d.length, p.doc FROM lexical_postings p"
    " JOIN lexical_docs d ON d.kind = ? AND d.doc = p.doc"
    " WHERE p.part = ? AND p.term = ?"
)


def _read_postings(
    db: sqlite3.Connection, kind: Kind, part: int, keys: list[int], cap: int
) -> tuple[list[tuple[int, int, int, int]], dict[int, int]]:
    """The rows (term, tf, length, doc) :func:`search` scores, and each term's document
    frequency: the count of its rows for a term read whole, an estimate for a common one."""
    rows: list[tuple[int, int, int, int]] = []
    df: dict[int, int] = {}
    common: dict[int, list[tuple[int, int, int, int]]] = {}
    for k in keys:
        got = db.execute(
            _POSTINGS_OF + " ORDER BY p.doc DESC LIMIT ?", (kind, part, k, cap + 1)
        ).fetchall()
        if len(got) > cap:
            common[k] = got[:cap]
        else:
            rows += got
            df[k] = len(got)
    if not common:
        return rows, df
    rare_docs = sorted({r[3] for r in rows})
    for k, newest in common.items():
        first = db.execute(
            "SELECT doc FROM lexical_postings WHERE part = ? AND term = ? ORDER BY doc LIMIT 1",
            (part, k),
        ).fetchone()[0]
        df[k] = lexical.estimated_df(len(newest), newest[0][3], newest[-1][3], first)
        rows += newest
        have = {r[3] for r in newest}
        todo = [d for d in rare_docs if d not in have]
        for start in range(0, len(todo), 500):
            chunk = todo[start : start + 500]
            rows += db.execute(
                _POSTINGS_OF + f" AND p.doc IN ({','.join('?' * len(chunk))})",
                (kind, part, k, *chunk),
            ).fetchall()
    return rows, df


def rebuild(db: sqlite3.Connection) -> None:
    """Index every memory and node again (a store written by an older version)."""
    for table in POSTINGS_TABLES:
        db.execute(f"DELETE FROM {table}")
    for rid, scope_key, data in db.execute("SELECT rid, scope_key, data FROM memories").fetchall():
        index(db, "m", rid, scope_key, json.loads(data)["text"])
    for rid, scope_key, data in db.execute("SELECT rid, scope_key, data FROM nodes").fetchall():
        index(db, "n", rid, scope_key, node_text(json.loads(data)))
