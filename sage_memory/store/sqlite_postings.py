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


class PostingsMemo:
    """What :func:`search` read of the postings and that only a write changes: a partition's
    statistics, a term's newest postings and its oldest document, a row number's id.

    A search asks the lexical index several times (its words, the one-name hop, the concept
    hop, a structure answer) with the same common words ("live", "work"), and the searches
    after it ask again: reading those postings again was most of the lexical channel's time.
    Keys hold the hashed partition (scope key and entity kind), so what one scope read is
    found only by a search of that scope. The store drops everything at the start of each
    write transaction (:meth:`~sage_memory.store.sqlite_connection.SQLiteConnection._tx`), under
    the lock the reads fill it under; a read-only handle keeps none (another process writes).
    """

    def __init__(self, limit: int = 20_000) -> None:
        self._items: dict[tuple[Any, ...], Any] = {}
        self._limit = limit
        self.get = self._items.get

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        if len(self._items) >= self._limit:
            self._items.clear()
        if self._limit > 0:  # a memo of no room keeps nothing: each search reads
            self._items[key] = value

    def clear(self) -> None:
        self._items.clear()


def search(
    db: sqlite3.Connection,
    kind: Kind,
    scope_key: str,
    query: str,
    limit: int,
    run_id: str | None = None,
    memo: PostingsMemo | None = None,
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

    ``memo``: what earlier searches read, kept until the next write (:class:`PostingsMemo`);
    the scores and their order are the same with it or without it.
    """
    memo = memo if memo is not None else PostingsMemo(limit=0)
    wanted = {term_key(t): t for t in query_term_set(query)}
    if not wanted or limit <= 0:
        return []
    part = part_id(kind, scope_key)
    keys = list(wanted)
    # The whole answer: a structure answer's walk through memories and the concept and
    # one-name hops ask the same queries again from one search to the next, and a query
    # with a rare and a common term reads the common term's rows in the rare term's
    # documents each time (the term memo below holds only each term's newest postings).
    asked = ("r", part, tuple(keys), limit, run_id)
    answer = memo.get(asked)
    if answer is None:
        answer = _search(db, kind, part, keys, limit, run_id, memo)
        memo.put(asked, answer)
    return list(answer)


def _search(
    db: sqlite3.Connection,
    kind: Kind,
    part: int,
    keys: list[int],
    limit: int,
    run_id: str | None,
    memo: PostingsMemo,
) -> list[tuple[str, float]]:
    """:func:`search`'s read and scoring, for a partition and the query's term keys."""
    stats = memo.get(("s", part), False)
    if stats is False:
        stats = db.execute(
            "SELECT docs, total FROM lexical_stats WHERE part = ?", (part,)
        ).fetchone()
        memo.put(("s", part), stats)
    if stats is None:
        return []
    cap = max(lexical.TERM_POSTINGS, limit)
    rows, df = _read_postings(db, kind, part, keys, cap, memo)
    if not rows:
        return []
    docs, scores = lexical.bm25_rows(rows, keys, stats[0], stats[1], df)
    table = _TABLES[kind]
    if run_id is None:
        # Every row scoring at least the limit-th best (ties included: they break by storage order).
        cut = np.partition(scores, -limit)[-limit] if len(scores) > limit else -np.inf
        best = np.flatnonzero(scores >= cut)
        run_sql, run_params = "", tuple[str, ...]()
    else:
        best = np.arange(len(scores))
        run_sql, run_params = " AND run_id = ?", (run_id,)
    score_of = dict(zip(docs[best].tolist(), scores[best].tolist(), strict=True))
    found: list[tuple[int, str]] = []
    rids = list(score_of)
    if run_id is None:
        # A row's id is known from an earlier search (a run's filter reads its rows again).
        known = [(rid, memo.get(("i", table, rid))) for rid in rids]
        found += [(rid, doc_id) for rid, doc_id in known if doc_id is not None]
        rids = [rid for rid, doc_id in known if doc_id is None]
    for start in range(0, len(rids), 500):
        chunk = rids[start : start + 500]
        for rid, doc_id in db.execute(
            f"SELECT rid, id FROM {table} WHERE rid IN ({','.join('?' * len(chunk))}){run_sql}",
            (*chunk, *run_params),
        ):
            found.append((rid, doc_id))
            if run_id is None:
                memo.put(("i", table, rid), doc_id)
    # Equal scores break by storage order, not by the random id: the same memories added in
    # the same order rank the same in every folder built from them.
    found.sort(key=lambda kv: (-score_of[kv[0]], kv[0]))
    return [(doc_id, score_of[rid]) for rid, doc_id in found[:limit]]


_POSTINGS_OF = (
    "SELECT p.term, p.tf, d.length, p.doc FROM lexical_postings p"
    " JOIN lexical_docs d ON d.kind = ? AND d.doc = p.doc"
    " WHERE p.part = ? AND p.term = ?"
)
#: The rows of some terms (``{terms}``) in some documents (``{docs}``).
_POSTINGS_IN = (
    "SELECT p.term, p.tf, d.length, p.doc FROM lexical_postings p"
    " JOIN lexical_docs d ON d.kind = ? AND d.doc = p.doc"
    " WHERE p.part = ? AND p.term IN ({terms}) AND p.doc IN ({docs})"
)


def _read_postings(
    db: sqlite3.Connection,
    kind: Kind,
    part: int,
    keys: list[int],
    cap: int,
    memo: PostingsMemo | None = None,
) -> tuple[list[tuple[int, int, int, int]], dict[int, int]]:
    """The rows (term, tf, length, doc) :func:`search` scores, and each term's document
    frequency: the count of its rows for a term read whole, an estimate for a common one.
    ``memo``: the term reads kept by earlier searches (:class:`PostingsMemo`)."""
    memo = memo if memo is not None else PostingsMemo(limit=0)
    rows: list[tuple[int, int, int, int]] = []
    df: dict[int, int] = {}
    common: dict[int, list[tuple[int, int, int, int]]] = {}
    for k in keys:
        got = memo.get(("t", part, k, cap))
        if got is None:
            got = db.execute(
                _POSTINGS_OF + " ORDER BY p.doc DESC LIMIT ?", (kind, part, k, cap + 1)
            ).fetchall()
            memo.put(("t", part, k, cap), got)
        if len(got) > cap:
            common[k] = got[:cap]
        else:
            rows += got
            df[k] = len(got)
    if not common:
        return rows, df
    rare_docs = sorted({r[3] for r in rows})
    have: set[tuple[int, int]] = set()  # (term, document) of the common terms' rows read
    for k, newest in common.items():
        first = memo.get(("f", part, k))
        if first is None:
            first = db.execute(
                "SELECT doc FROM lexical_postings WHERE part = ? AND term = ? ORDER BY doc LIMIT 1",
                (part, k),
            ).fetchone()[0]
            memo.put(("f", part, k), first)
        df[k] = lexical.estimated_df(len(newest), newest[0][3], newest[-1][3], first)
        rows += newest
        have.update((k, r[3]) for r in newest)
    # The rarer terms' documents, looked up under every common term in one statement (a
    # term's rows may come in any order: each document has one row per term, and the scores
    # add a document's rows in query order, see lexical.bm25_rows).
    terms = ",".join("?" * len(common))
    for start in range(0, len(rare_docs), 500):
        chunk = rare_docs[start : start + 500]
        rows += [
            r
            for r in db.execute(
                _POSTINGS_IN.format(terms=terms, docs=",".join("?" * len(chunk))),
                (kind, part, *common, *chunk),
            ).fetchall()
            if (r[0], r[3]) not in have
        ]
    return rows, df


def rebuild(db: sqlite3.Connection) -> None:
    """Index every memory and node again (a store written by an older version)."""
    for table in POSTINGS_TABLES:
        db.execute(f"DELETE FROM {table}")
    for rid, scope_key, data in db.execute("SELECT rid, scope_key, data FROM memories").fetchall():
        index(db, "m", rid, scope_key, json.loads(data)["text"])
    for rid, scope_key, data in db.execute("SELECT rid, scope_key, data FROM nodes").fetchall():
        index(db, "n", rid, scope_key, node_text(json.loads(data)))
