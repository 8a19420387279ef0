"""The SQLite store keeps what its lexical searches read of the postings until the next write.

A search asks the lexical index several times with the same common words, and the next search
asks again: the second time nothing is read from SQLite. A write drops what was kept (its
memories are found at once), and one user's kept postings never answer another user's search:
every answer equals the answer of a read-only handle, which keeps nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.evolve.access import search_event
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import Scope

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
ALICE, BOB = Scope(user_id="alice"), Scope(user_id="bob")
#: A common word (more postings than a term's read bound) with a rarer one.
QUERY = "release blocked by the migration"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[SageMemory]:
    m = SageMemory(tmp_path / "m", embedder="hashing")
    for user, n in (("alice", 150), ("bob", 40)):
        texts = [
            {
                "text": f"Note {i} of {user}: the release "
                + ("is blocked by the migration." if i % 7 == 0 else "went out on time."),
                "timestamp": T0 + timedelta(minutes=i),
            }
            for i in range(n)
        ]
        m.add_many(texts, user_id=user, infer=False)
    yield m
    m.close()


def _statements(store: SQLiteGraphStore, run: object) -> list[str]:
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        run()  # type: ignore[operator]
    finally:
        store._db.set_trace_callback(None)
    return seen


def _fresh(mem: SageMemory, scope: Scope, query: str, limit: int = 20) -> list[tuple[str, float]]:
    reader = SQLiteGraphStore(Path(mem.store.path), read_only=True)
    try:
        return reader.search_text(scope, query, limit=limit)
    finally:
        reader.close()


def test_a_repeated_search_reads_nothing_and_answers_the_same(mem: SageMemory) -> None:
    store = mem.store
    assert isinstance(store, SQLiteGraphStore)
    first: list[list[tuple[str, float]]] = []
    read = _statements(store, lambda: first.append(store.search_text(ALICE, QUERY, limit=20)))
    assert any("lexical_postings" in s for s in read)
    again: list[list[tuple[str, float]]] = []
    common = "release"  # read whole from the memo: no statement at all
    _statements(store, lambda: store.search_text(ALICE, common, limit=20))
    assert (
        _statements(store, lambda: again.append(store.search_text(ALICE, common, limit=20))) == []
    )
    assert again[0] == _fresh(mem, ALICE, common)
    assert first[0] == _fresh(mem, ALICE, QUERY)
    assert first[0] and all(
        "alice" in m.text for m in store.get_memories(ALICE, [i for i, _ in first[0]])
    )


def test_a_write_drops_the_kept_postings(mem: SageMemory) -> None:
    store = mem.store
    before = store.search_text(ALICE, QUERY, limit=20)
    added = mem.add(
        "Alice: the release is blocked by the migration, blocked again, still blocked.",
        user_id="alice",
        infer=False,
    )
    after = store.search_text(ALICE, QUERY, limit=20)
    assert after != before
    assert after[0][0] == added.memory_id  # the new memory is found at once, and leads
    assert after == _fresh(mem, ALICE, QUERY)


def test_one_users_kept_postings_never_answer_another(mem: SageMemory) -> None:
    store = mem.store
    mine = store.search_text(ALICE, QUERY, limit=50)
    theirs = store.search_text(BOB, QUERY, limit=50)
    assert theirs == _fresh(mem, BOB, QUERY, limit=50)
    assert not {i for i, _ in mine} & {i for i, _ in theirs}
    texts = [m.text for m in store.get_memories(BOB, [i for i, _ in theirs])]
    assert texts and all("of bob" in t for t in texts)


def test_a_repeated_query_of_rare_and_common_words_reads_nothing(mem: SageMemory) -> None:
    # The common word's rows in the rare word's documents are read by document: the answer
    # itself is kept, so asking again (a structure answer's walk does, search after search)
    # runs no statement, and changing the list it got changes nothing kept.
    store = mem.store
    assert isinstance(store, SQLiteGraphStore)
    first = store.search_text(ALICE, QUERY, limit=20)
    expected = list(first)
    first.clear()
    again: list[list[tuple[str, float]]] = []
    assert _statements(store, lambda: again.append(store.search_text(ALICE, QUERY, limit=20))) == []
    assert again[0] == expected == _fresh(mem, ALICE, QUERY)
    # Another bound is another answer: read, not cut from the kept one.
    assert store.search_text(ALICE, QUERY, limit=5) == _fresh(mem, ALICE, QUERY, limit=5)


def test_a_write_after_a_repeated_query_is_seen_by_the_next(mem: SageMemory) -> None:
    store = mem.store
    for _ in range(2):
        before = store.search_text(ALICE, QUERY, limit=20)
    added = mem.add(
        "Alice: the release is blocked by the migration, blocked again, still blocked.",
        user_id="alice",
        infer=False,
    )
    after = store.search_text(ALICE, QUERY, limit=20)
    assert after != before and after[0][0] == added.memory_id
    assert after == _fresh(mem, ALICE, QUERY)


def test_the_access_log_flush_keeps_the_postings_and_a_write_still_drops_them(
    mem: SageMemory,
) -> None:
    # Searches flush their access events every few dozen searches: that write changes no
    # lexical row, so the postings kept stay kept (asking again runs no statement) ...
    store = mem.store
    assert isinstance(store, SQLiteGraphStore)
    event = search_event(mem.search(QUERY, user_id="alice"), T0, top_nodes=5, weight=1.0)
    before = store.search_text(ALICE, QUERY, limit=20)
    logged = _statements(store, lambda: store.log_access([event]))
    assert any("access_log" in s for s in logged)
    again: list[list[tuple[str, float]]] = []
    assert _statements(store, lambda: again.append(store.search_text(ALICE, QUERY, limit=20))) == []
    assert again[0] == before == _fresh(mem, ALICE, QUERY)
    # ... and a memory written after it is still found at once.
    added = mem.add(
        "Alice: the release is blocked by the migration, blocked again, still blocked.",
        user_id="alice",
        infer=False,
    )
    after = store.search_text(ALICE, QUERY, limit=20)
    assert after[0][0] == added.memory_id and after == _fresh(mem, ALICE, QUERY)
