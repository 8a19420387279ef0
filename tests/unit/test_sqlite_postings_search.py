"""The SQLite lexical search scores exactly as the reference BM25 over the same postings.

The search scores postings by row number and reads only the best rows' ids; these tests hold
it to :func:`sage_memory.store.lexical.bm25` (the same statistics, FTS5's term weight), ties
broken by id, on random texts with many equal scores, and to the run filter.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter

import pytest

from sage_memory.store import sqlite_postings as postings
from sage_memory.store.lexical import bm25, fts5_idf, query_term_set, terms

WORDS = ["alpha", "beta", "gamma", "delta", "release", "blocked", "paris", "lyon", "tests"]


def _db(texts: list[tuple[str, str, str | None]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE memories (rid INTEGER PRIMARY KEY, id TEXT UNIQUE, run_id TEXT)")
    db.executescript(postings.POSTINGS_SCHEMA)
    for rid, (mid, text, run) in enumerate(texts, start=1):
        db.execute("INSERT INTO memories (rid, id, run_id) VALUES (?,?,?)", (rid, mid, run))
        postings.index(db, "m", rid, "scope", text)
    return db


def _reference(
    texts: list[tuple[str, str, str | None]], query: str, limit: int, run: str | None = None
) -> list[tuple[str, float]]:
    docs = {mid: Counter(terms(text)) for mid, text, _ in texts}
    wanted = query_term_set(query)
    found = {t: {m: c[t] for m, c in docs.items() if c[t]} for t in wanted}
    lengths = {m: sum(c.values()) for m, c in docs.items()}
    scores = bm25(wanted, found, lengths, len(docs), sum(lengths.values()), fts5_idf)
    runs = {mid: r for mid, _, r in texts}
    kept = [(m, s) for m, s in scores.items() if run is None or runs[m] == run]
    return sorted(kept, key=lambda kv: (-kv[1], kv[0]))[:limit]


@pytest.mark.parametrize("seed", range(5))
def test_search_matches_the_reference_bm25_ties_by_id(seed: int) -> None:
    rng = random.Random(seed)
    texts = [
        (f"m{rng.randrange(10**6):06d}", " ".join(rng.choices(WORDS, k=rng.randint(1, 6))), None)
        for _ in range(120)
    ]
    texts = list({t[0]: t for t in texts}.values())
    db = _db(texts)
    for query in ("release blocked", "alpha", "paris lyon tests gamma", "nothing here", "beta"):
        for limit in (1, 3, 10, 500):
            assert postings.search(db, "m", "scope", query, limit) == _reference(
                texts, query, limit
            )


def test_run_filter_keeps_one_runs_memories_in_score_order() -> None:
    texts = [(f"m{i}", "release " * (1 + i % 3) + "notes", f"r{i % 2}") for i in range(20)]
    db = _db(texts)
    got = postings.search(db, "m", "scope", "release", 5, run_id="r1")
    assert got == _reference(texts, "release", 5, run="r1")
    assert {m for m, _ in got} <= {f"m{i}" for i in range(1, 20, 2)}
    assert postings.search(db, "m", "other scope", "release", 5) == []
