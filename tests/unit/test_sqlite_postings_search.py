"""The SQLite lexical search scores exactly as the reference BM25 over the same postings
(when no term has more postings than the read bound; past it, see the last two tests).

The search scores postings by row number and reads only the best rows' ids; these tests hold
it to :func:`sage_memory.store.lexical.bm25` (the same statistics, FTS5's term weight), ties
broken by storage order (the row number, not the random id), on random texts with many equal
scores, and to the run filter.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter

import pytest

from sage_memory.store import lexical
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
    stored = {mid: i for i, (mid, _, _) in enumerate(texts)}
    kept = [(m, s) for m, s in scores.items() if run is None or runs[m] == run]
    return sorted(kept, key=lambda kv: (-kv[1], stored[kv[0]]))[:limit]


@pytest.mark.parametrize("seed", range(5))
def test_search_matches_the_reference_bm25_ties_in_storage_order(seed: int) -> None:
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


def _common_and_rare() -> list[tuple[str, str, str | None]]:
    # "kettle" in every document, "harbour" in every tenth (the oldest ones too), "lantern"
    # in three: with a bound of 40 postings a term, "kettle" is common, the others are rare.
    texts = []
    for i in range(400):
        words = ["kettle"] + ["harbour"] * (i % 10 == 0) + ["lantern"] * (i in (3, 150, 390))
        texts.append((f"m{i:04d}", " ".join(words + ["pebble"] * (i % 7)), None))
    return texts


def test_a_common_term_is_read_to_the_bound_and_its_frequency_estimated() -> None:
    db = _db(_common_and_rare())
    part = postings.part_id("m", "scope")
    keys = [postings.term_key(t) for t in query_term_set("kettle harbour lantern")]
    rows, df = postings._read_postings(db, "m", part, keys, 40)
    kettle, harbour, lantern = keys
    assert (df[harbour], df[lantern]) == (40, 3)  # read whole: exact counts
    assert abs(df[kettle] - 400) <= 4  # 40 newest of an even spread
    # The common term's rows: its newest 40, then the rare terms' documents looked up by key.
    common = [r[3] for r in rows if r[0] == kettle]
    assert len(common) == len(set(common)) <= 40 + 40 + 3
    assert set(common) >= {r[3] for r in rows if r[0] in (harbour, lantern)}


def test_bounded_reads_keep_the_rare_terms_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _common_and_rare()
    query = "kettle lantern"
    exact = postings.search(_db(texts), "m", "scope", query, 10)
    monkeypatch.setattr(lexical, "TERM_POSTINGS", 40)
    bounded = postings.search(_db(texts), "m", "scope", query, 10)
    # Documents holding the rare word lead in the same order, with both words' shares.
    assert [m for m, _ in bounded[:3]] == [m for m, _ in exact[:3]]
    assert [m for m, _ in exact[:3]] == [m for m, _ in _reference(texts, query, 3)]
    # After them, documents holding only the common word, the newest of those read.
    assert {m for m, _ in bounded[3:]} <= {f"m{i:04d}" for i in range(360, 400)}
    # A term within the bound is still scored exactly.
    assert postings.search(_db(texts), "m", "scope", "lantern harbour", 50) == _reference(
        texts, "lantern harbour", 50
    )


def test_the_rare_documents_are_looked_up_under_all_common_terms_at_once() -> None:
    # "kettle" and "pebble" both pass a bound of 40 postings; "lantern" is rare.
    texts = [
        (f"m{i:04d}", "kettle pebble" + " lantern" * (i in (3, 150, 390)), None) for i in range(400)
    ]
    db = _db(texts)
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    part = postings.part_id("m", "scope")
    keys = [postings.term_key(t) for t in query_term_set("kettle pebble lantern")]
    rows, _ = postings._read_postings(db, "m", part, keys, 40)
    db.set_trace_callback(None)
    assert sum(" IN (" in s for s in seen) == 1
    kettle, pebble, lantern = keys
    rare = {r[3] for r in rows if r[0] == lantern}
    for k in (kettle, pebble):
        docs = [r[3] for r in rows if r[0] == k]
        assert len(docs) == len(set(docs)) and set(docs) >= rare
