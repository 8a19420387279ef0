"""The PostgreSQL store's lexical postings: BM25 statistics per scope partition, as in SQLite.

The same design and the same scores as :mod:`sage_memory.store.sqlite_postings` (the terms of
:func:`~sage_memory.store.lexical.terms`: our word tokens, diacritics folded, Snowball English
stems; FTS5's term weight; :func:`~sage_memory.store.lexical.bm25` computed from the partition's
own counts), so a scope ranks the same on both backends and another tenant's rows never move
its scores (``ts_rank`` has no corpus statistics at all, which is why it ranked differently):

- ``lexical_postings (part, term, doc, tf)``: a query reads only its partition's rows of its
  terms (the primary key's btree);
- ``lexical_docs (kind, doc, part, length, terms)``: each document's length and term keys;
- ``lexical_stats (part, docs, total)``: document count and total length per partition.

``doc`` is the row's ``rid``; ``term`` the 64-bit hash of the stem: no word is stored here.
Writes are batched: :func:`update` re-indexes every document an ``apply`` touched in six
statements, whatever their number (the caller runs them in one pipeline).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

import numpy as np

from sage_memory.store import lexical
from sage_memory.store.lexical import query_term_set, term_key, terms
from sage_memory.store.sqlite_postings import node_text, part_key

__all__ = ["SCHEMA", "SearchRead", "node_text", "rebuild", "search", "search_read", "update"]

Kind = Literal["m", "n"]
#: (kind, rid, scope key, text); text None removes the document.
Doc = tuple[Kind, int, str, str | None]

SCHEMA = """
CREATE TABLE lexical_postings (
    part text NOT NULL, term bigint NOT NULL, doc bigint NOT NULL, tf integer NOT NULL,
    PRIMARY KEY (part, term, doc)
);
CREATE TABLE lexical_docs (
    kind text NOT NULL, doc bigint NOT NULL, part text NOT NULL, length integer NOT NULL,
    terms bytea NOT NULL, PRIMARY KEY (kind, doc)
);
CREATE TABLE lexical_stats (part text PRIMARY KEY, docs bigint NOT NULL, total bigint NOT NULL);
"""

_TABLES = {"m": "memories", "n": "nodes"}


def update(db: Any, docs: list[Doc]) -> None:
    """Re-index (or remove) documents: their old postings and statistics out, the new in."""
    latest: dict[tuple[Kind, int], Doc] = {(d[0], d[1]): d for d in docs}
    if not latest:
        return
    keys = sorted(latest)
    old = db.execute(
        "SELECT d.kind, d.doc, d.part, d.length, d.terms FROM lexical_docs d"
        " JOIN unnest(%s::text[], %s::bigint[]) AS u(kind, doc)"
        " ON d.kind = u.kind AND d.doc = u.doc",
        ([k for k, _ in keys], [r for _, r in keys]),
    ).fetchall()
    delta: dict[str, list[int]] = {}
    gone: list[tuple[str, int, int]] = []
    for _kind, doc, part, length, packed in old:
        stats = delta.setdefault(part, [0, 0])
        stats[0] -= 1
        stats[1] -= length
        gone += [(part, k, doc) for k in np.frombuffer(bytes(packed), dtype=np.int64).tolist()]
    postings: list[tuple[str, int, int, int]] = []
    new_docs: list[tuple[str, int, str, int, bytes]] = []
    for kind, rid in keys:
        _, _, scope_key, text = latest[(kind, rid)]
        if text is None:
            continue
        part = part_key(kind, scope_key)
        counts = Counter(term_key(t) for t in terms(text))
        length = sum(counts.values())
        postings += [(part, k, rid, tf) for k, tf in sorted(counts.items())]
        packed = np.fromiter(counts, dtype=np.int64, count=len(counts)).tobytes()
        new_docs.append((kind, rid, part, length, packed))
        stats = delta.setdefault(part, [0, 0])
        stats[0] += 1
        stats[1] += length
    if gone:
        db.execute(
            "DELETE FROM lexical_postings p USING unnest(%s::text[], %s::bigint[], %s::bigint[])"
            " AS u(part, term, doc) WHERE p.part = u.part AND p.term = u.term AND p.doc = u.doc",
            _columns(gone, 3),
        )
    if old:  # a document without terms has no postings, but its row and length go too
        db.execute(
            "DELETE FROM lexical_docs d USING unnest(%s::text[], %s::bigint[]) AS u(kind, doc)"
            " WHERE d.kind = u.kind AND d.doc = u.doc",
            _columns([(r[0], r[1]) for r in old], 2),
        )
    if postings:
        db.execute(
            "INSERT INTO lexical_postings (part, term, doc, tf)"
            " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bigint[], %s::integer[])",
            _columns(postings, 4),
        )
    if new_docs:
        db.execute(
            "INSERT INTO lexical_docs (kind, doc, part, length, terms) SELECT * FROM"
            " unnest(%s::text[], %s::bigint[], %s::text[], %s::integer[], %s::bytea[])",
            _columns(new_docs, 5),
        )
    # Sorted: two transactions touching the same partitions lock their rows in one order.
    changed = sorted((p, d, t) for p, (d, t) in delta.items() if d or t)
    if changed:
        db.execute(
            "INSERT INTO lexical_stats (part, docs, total)"
            " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bigint[])"
            " ON CONFLICT (part) DO UPDATE SET docs = lexical_stats.docs + EXCLUDED.docs,"
            " total = lexical_stats.total + EXCLUDED.total",
            _columns(changed, 3),
        )
        db.execute(
            "DELETE FROM lexical_stats WHERE part = ANY(%s) AND docs <= 0",
            ([p for p, _, _ in changed],),
        )


def _columns(rows: list[Any], width: int) -> list[list[Any]]:
    """Rows as one list per column (each becomes an array parameter of ``unnest``)."""
    return [[r[i] for r in rows] for i in range(width)] if rows else [[] for _ in range(width)]


def search(
    db: Any, kind: Kind, scope_key: str, query: str, limit: int, run_id: str | None = None
) -> list[tuple[str, float]]:
    """(id, BM25 score) best first from the partition's own statistics, ties by id, as
    :func:`sage_memory.store.sqlite_postings.search`; ``run_id`` keeps one run's memories."""
    read = search_read(kind, scope_key, query, limit, run_id)
    if read is None:
        return []
    return read.score(db.execute(read.sql, read.params).fetchall())


class SearchRead:
    """One BM25 search as a statement and the scoring of its rows, so several searches can
    share a round trip (:func:`search_read`)."""

    def __init__(
        self, sql: str, params: dict[str, Any], keys: list[int], limit: int, cap: int, run: bool
    ) -> None:
        self.sql, self.params = sql, params
        self._keys, self._limit, self._cap, self._run = keys, limit, cap, run

    def score(self, rows: list[tuple[Any, ...]]) -> list[tuple[str, float]]:
        """(id, BM25 score) best first, ties by id, from the statement's rows: the scoring
        of :func:`sage_memory.store.sqlite_postings.search` on the same postings."""
        stats: tuple[int, int] | None = None
        hits: list[tuple[int, int, int, int]] = []
        ids: dict[int, str] = {}
        kept: set[int] = set()
        common: dict[int, tuple[int, int, int]] = {}
        for kind, term, tf, length, doc, doc_id, keep, x, y in rows:
            if kind == "s":
                stats = (int(x), int(y))
            elif kind == "c":
                common[term] = (doc, x, y)
            else:
                hits.append((term, tf, length, doc))
                ids[doc] = doc_id
                if keep:
                    kept.add(doc)
        if stats is None or not hits:
            return []
        df = dict(Counter(h[0] for h in hits))
        for term, (newest, oldest_read, first) in common.items():
            df[term] = lexical.estimated_df(self._cap, newest, oldest_read, first)
        docs, scores = lexical.bm25_rows(hits, self._keys, stats[0], stats[1], df)
        # Equal scores break by storage order (the document number), as in the SQLite store.
        best = sorted(
            (
                (d, s)
                for d, s in zip(docs.tolist(), scores.tolist(), strict=True)
                if not self._run or d in kept
            ),
            key=lambda kv: (-kv[1], kv[0]),
        )
        return [(ids[d], s) for d, s in best[: self._limit]]


def search_read(
    kind: Kind, scope_key: str, query: str, limit: int, run_id: str | None = None
) -> SearchRead | None:
    """The statement of :func:`search` and how to score its rows; None when the query has
    no term to look up (the search finds nothing).

    The reads are bounded as the SQLite store's are (see
    :func:`sage_memory.store.sqlite_postings.search`): each term's newest postings up to the
    bound; for a term with more (a common term), its newest, its postings in the documents the
    rarer terms found, and the three document numbers that estimate its document frequency.
    One statement, so the cost is bounded by the query's terms, whatever the partition's size.
    """
    wanted = {term_key(t): t for t in query_term_set(query)}
    if not wanted or limit <= 0:
        return None
    table = _TABLES[kind]
    run_sql = " AND t.run_id = %(run)s" if run_id is not None else ""
    sql = (
        "WITH newest AS MATERIALIZED (SELECT q.term, x.doc, x.tf, x.n"
        " FROM unnest(%(keys)s::bigint[]) AS q(term) CROSS JOIN LATERAL"
        " (SELECT p.doc, p.tf, row_number() OVER (ORDER BY p.doc DESC) AS n"
        "  FROM lexical_postings p WHERE p.part = %(part)s AND p.term = q.term"
        "  ORDER BY p.doc DESC LIMIT %(cap)s + 1) x),"
        " common AS MATERIALIZED (SELECT term, max(doc) AS top,"
        "  min(doc) FILTER (WHERE n <= %(cap)s) AS low"
        "  FROM newest GROUP BY term HAVING count(*) > %(cap)s),"
        " hits AS (SELECT term, doc, tf FROM newest WHERE n <= %(cap)s"
        "  UNION SELECT p.term, p.doc, p.tf FROM common c JOIN lexical_postings p"
        "  ON p.part = %(part)s AND p.term = c.term AND p.doc IN"
        "  (SELECT doc FROM newest WHERE term NOT IN (SELECT term FROM common)))"
        " SELECT 's', NULL::bigint, NULL::integer, NULL::integer, NULL::bigint, NULL::text,"
        "  NULL::boolean, s.docs, s.total FROM lexical_stats s WHERE s.part = %(part)s"
        " UNION ALL SELECT 'c', c.term, NULL, NULL, c.top, NULL, NULL, c.low,"
        "  (SELECT p.doc FROM lexical_postings p WHERE p.part = %(part)s AND p.term = c.term"
        "  ORDER BY p.doc LIMIT 1) FROM common c"
        f" UNION ALL SELECT 'p', h.term, h.tf, d.length, h.doc, t.id, (true{run_sql}), NULL, NULL"
        "  FROM hits h JOIN lexical_docs d ON d.kind = %(kind)s AND d.doc = h.doc"
        f"  JOIN {table} t ON t.rid = h.doc"
    )
    cap = max(lexical.TERM_POSTINGS, limit)
    params: dict[str, Any] = {
        "keys": list(wanted),
        "part": part_key(kind, scope_key),
        "cap": cap,
        "kind": kind,
        **({"run": run_id} if run_id is not None else {}),
    }
    return SearchRead(sql, params, list(wanted), limit, cap, run_id is not None)


def rebuild(db: Any) -> None:
    """Index every memory and node (a schema written before the postings existed)."""
    for table in ("lexical_postings", "lexical_docs", "lexical_stats"):
        db.execute(f"DELETE FROM {table}")
    docs: list[Doc] = [
        ("m", rid, scope_key, json.loads(data)["text"])
        for rid, scope_key, data in db.execute("SELECT rid, scope_key, data FROM memories")
    ]
    docs += [
        ("n", rid, scope_key, node_text(json.loads(data)))
        for rid, scope_key, data in db.execute("SELECT rid, scope_key, data FROM nodes")
    ]
    for start in range(0, len(docs), 2000):
        update(db, docs[start : start + 2000])
