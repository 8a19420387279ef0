"""The SQLite journal stores deltas and gives back exactly the whole images."""

from __future__ import annotations

import itertools
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sage_memory.codec import dumps, to_dict
from sage_memory.store import journal_delta as delta
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import Change, Node, Scope, new_id

_AT = datetime(2026, 1, 1, tzinfo=UTC)

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)
_images = st.dictionaries(st.sampled_from("abcdef"), _json | st.lists(st.text(max_size=3)))


def _canon(image: dict[str, Any]) -> Any:
    return json.loads(dumps(image))


@settings(max_examples=300, deadline=None)
@given(_images, _images)
def test_patch_of_diff_is_the_after_image(before: dict[str, Any], after: dict[str, Any]) -> None:
    canon_before = _canon(before)
    got = delta.patch(canon_before, json.loads(dumps(delta.diff(canon_before, after))))
    assert dumps(got) == dumps(after)
    assert list(got) == list(_canon(after))  # the key order of json.loads too


def test_whole_images_leave_out_defaults_and_read_back_complete() -> None:
    image = _node("n1", [])
    stored = delta.compact("node", image)
    assert "memory_ids" not in stored and "access_count" not in stored
    assert delta.complete("node", json.loads(dumps(stored))) == image


def test_numbers_of_equal_value_but_other_json_are_kept() -> None:
    before, after = {"x": 1, "y": True}, {"x": 1.0, "y": 1}
    got = delta.patch(before, json.loads(dumps(delta.diff(before, after))))
    assert dumps(got) == dumps(after)


def _node(nid: str, mentions: list[str], name: str = "Alice") -> dict[str, Any]:
    """A node's image as the engine journals it (``to_dict``), as JSON gives it back."""
    node = Node(
        id=nid,
        scope=Scope(user_id="u"),
        name=name,
        memory_ids=tuple(mentions),
        attributes={"n": len(mentions)},
        created_at=_AT,
        updated_at=_AT,
    )
    return _canon(to_dict(node))


def _change(nid: str, before: Any, after: Any) -> Change:
    op = "insert" if before is None else "delete" if after is None else "update"
    return Change(
        id=new_id(),
        batch_id=new_id(),
        scope_key=Scope(user_id="u").key,
        entity="node",
        entity_id=nid,
        op=op,  # type: ignore[arg-type]
        before=before,
        after=after,
        at=_AT,
        actor="test",
        reason="test",
    )


def test_a_popular_rows_history_grows_linearly_and_reads_back_whole(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    nid = new_id()
    images: list[dict[str, Any] | None] = [None]
    mentions: list[str] = []
    for i in range(600):
        mentions = [*mentions, new_id()]
        if i % 97 == 50:  # a forgotten mention: an item removed from the list
            mentions = mentions[1:]
        images.append(_node(nid, mentions))
        store.apply([_change(nid, images[-2], images[-1])])
    store.apply([_change(nid, images[-1], None)])
    images.append(None)
    entries = store.journal(entity_id=nid)
    assert [(c.before, c.after) for _, c in entries] == list(itertools.pairwise(images))
    # Any page, any batch, decodes the same as the whole history.
    for start in (0, entries[17][0], entries[400][0]):
        page = store.journal(after_seq=start, limit=50)
        assert [c for _, c in page] == [c for s, c in entries if s > start][:50]
    seq, change = entries[333]
    assert store.journal(batch_id=change.batch_id) == [(seq, change)]
    assert store.journal(scope=Scope(user_id="u"), after_seq=entries[250][0]) == entries[251:]
    db = sqlite3.connect(tmp_path / "s.db")
    stored = db.execute("SELECT sum(length(before) + length(after)) FROM journal").fetchone()[0]
    whole = sum(len(dumps(i)) for i in images if i is not None) * 2
    assert stored < whole / 10  # whole images: quadratic in the mentions
    store.close()


def test_a_rewritten_history_stays_exact_and_unlinks_what_follows(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "s.db")
    nid = new_id()
    images: list[dict[str, Any] | None] = [None]
    for i in range(40):
        images.append(_node(nid, [f"m{j}" for j in range(i + 1)], name="Secret"))
        store.apply([_change(nid, images[-2], images[-1])])

    def scrub(image: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if image is None else {**image, "name": "Alice"}

    entries = store.journal(entity_id=nid)
    store.rewrite_journal(
        [(s, _change(nid, scrub(c.before), scrub(c.after))) for s, c in entries[::3]]
    )
    got = [(c.before, c.after) for _, c in store.journal(entity_id=nid)]
    want = [
        (scrub(b), scrub(a)) if k % 3 == 0 else (b, a)
        for k, (b, a) in enumerate(itertools.pairwise(images))
    ]
    assert got == want
    # The next change starts from the row as it is (not as the rewritten journal has it).
    nxt = _node(nid, [f"m{j}" for j in range(41)], name="Secret")
    store.apply([_change(nid, images[-1], nxt)])
    last = store.journal(entity_id=nid)[-1][1]
    assert (last.before, last.after) == (images[-1], nxt)
    store.close()


def _journal_cols(path: Path, entity_id: str) -> list[tuple[str | None, str | None]]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT before, after FROM journal WHERE entity_id = ? ORDER BY seq", (entity_id,)
        ).fetchall()
    finally:
        db.close()
    return rows


def test_an_insert_is_journaled_by_reference_to_its_row_until_the_row_changes(
    tmp_path: Path,
) -> None:
    """An add's journal row keeps the hash of the memory, not a second copy of its record;
    the row's next change puts the image in first, so history and undo read it as before."""
    from sage_memory import SageMemory

    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        first = mem.add("Alice lives in Paris with her old cat", user_id="u")
        mid = first.memory_id
        [(before, after)] = _journal_cols(folder / "sage.db", mid)
        assert before is None and after is not None and after.startswith("R")
        assert len(after) == 17  # the text is in the row only
        [insert] = mem.history(mid)
        assert insert.after is not None and insert.after["text"].startswith("Alice lives")
        mem.update(mid, "Alice lives in Berlin now", user_id="u")
        cols = _journal_cols(folder / "sage.db", mid)
        assert cols[0][1] is not None and cols[0][1].startswith("F")  # the image, put in
        assert cols[-1][1] is not None and cols[-1][1][:1] in ("R", "D")
        history = mem.history(mid)
        assert [c.after["text"] for c in history if c.after] == [
            "Alice lives in Paris with her old cat",
            "Alice lives in Berlin now",
        ]
        mem.undo(history[-1].batch_id)
        assert mem.get(mid, user_id="u").text == "Alice lives in Paris with her old cat"
    with SageMemory(folder, embedder="hashing") as mem:  # reopened: the same history
        assert [c.op for c in mem.history(mid)][:2] == ["insert", "update"]
        mem.undo(first.change_ids[0], force=True)
        assert mem.get_all(user_id="u") == []


def test_a_journal_with_whole_insert_images_of_older_versions_still_reads(
    tmp_path: Path,
) -> None:
    """A folder written before inserts were journaled by reference (``F`` images): it opens,
    its history reads the same, and its rows' next changes link to those images."""
    from sage_memory import SageMemory

    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        mid = mem.add("Bob works at Acme as an engineer", user_id="u").memory_id
        want = [(c.before, c.after) for c in mem.history(mid)]
    db = sqlite3.connect(folder / "sage.db")
    rows = db.execute(
        "SELECT seq, entity, entity_id, after FROM journal WHERE after LIKE 'R%'"
    ).fetchall()
    assert rows
    db.executemany(  # what older versions wrote: the whole image
        "UPDATE journal SET after = ? WHERE seq = ?",
        [
            (delta.resolve(entity, after, delta.stored_record(db, entity, eid)), seq)
            for seq, entity, eid, after in rows
        ],
    )
    db.commit()
    db.close()
    with SageMemory(folder, embedder="hashing") as mem:
        assert [(c.before, c.after) for c in mem.history(mid)] == want
        mem.update(mid, "Bob works at Initech", user_id="u")
        cols = _journal_cols(folder / "sage.db", mid)
        assert cols[1][0] == "=1"  # linked to the older version's image
        assert mem.history(mid)[-1].before == want[0][1]


def test_a_memory_row_keeps_its_columns_once_and_older_whole_rows_still_read(
    tmp_path: Path,
) -> None:
    """A memory row's JSON leaves out what its columns hold (id, timestamp, created_at) and
    an ``updated_at`` equal to ``created_at``; a row written whole by an older version reads
    the same."""
    from sage_memory import SageMemory

    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        mid = mem.add("Carol bought a red bicycle", user_id="u", infer=False).memory_id
        want = mem.get(mid, user_id="u")
    db = sqlite3.connect(folder / "sage.db")
    (data,) = db.execute("SELECT data FROM memories WHERE id = ?", (mid,)).fetchone()
    row = json.loads(data)
    assert not {"id", "timestamp", "created_at", "updated_at"} & set(row)
    assert row["text"] == "Carol bought a red bicycle"
    whole = dumps(delta.compact("memory", to_dict(want)))  # what older versions wrote
    db.execute("UPDATE memories SET data = ? WHERE id = ?", (whole, mid))
    db.commit()
    db.close()
    with SageMemory(folder, embedder="hashing") as mem:
        assert mem.get(mid, user_id="u") == want
        assert mem.get_all(user_id="u") == [want]
        mem.update(mid, "Carol bought a blue bicycle", user_id="u")
        now = mem.get(mid, user_id="u")
        assert now.text == "Carol bought a blue bicycle" and now.updated_at >= now.created_at
        assert next(c.after["text"] for c in mem.history(mid) if c.after) == want.text


_OLD_POSTINGS = {  # the lexical tables of the "bm25-partition-1" layout (text partitions)
    "lexical_postings": "part TEXT NOT NULL, term INTEGER NOT NULL, doc INTEGER NOT NULL,"
    " tf INTEGER NOT NULL, PRIMARY KEY (part, term, doc)",
    "lexical_docs": "kind TEXT NOT NULL, doc INTEGER NOT NULL, part TEXT NOT NULL,"
    " length INTEGER NOT NULL, terms BLOB NOT NULL, PRIMARY KEY (kind, doc)",
    "lexical_stats": "part TEXT PRIMARY KEY, docs INTEGER NOT NULL, total INTEGER NOT NULL",
}


def test_postings_of_the_text_partition_layout_are_rebuilt_with_integer_partitions(
    tmp_path: Path,
) -> None:
    """A folder whose lexical postings name their partition as text (older versions) is
    indexed again on open, in integer partitions, and its memories are found by their words."""
    from sage_memory import SageMemory

    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        mid = mem.add("Dora repaired the lighthouse lamp", user_id="u", infer=False).memory_id
        mem.add("Evan painted the garden fence", user_id="v", infer=False)
    db = sqlite3.connect(folder / "sage.db")
    for table, columns in _OLD_POSTINGS.items():
        db.execute(f"DROP TABLE {table}")
        db.execute(f"CREATE TABLE {table} ({columns}) WITHOUT ROWID")
    db.execute("UPDATE meta SET value = 'bm25-partition-1' WHERE key = 'lexical_index'")
    db.commit()
    db.close()
    with SageMemory(folder, embedder="hashing") as mem:
        hits = mem.search("lighthouse lamp", user_id="u").memories
        assert hits and hits[0].memory.id == mid
        assert all(h.memory.id != mid for h in mem.search("lighthouse lamp", user_id="v").memories)
    db = sqlite3.connect(folder / "sage.db")
    kinds = db.execute(
        "SELECT DISTINCT typeof(part) FROM lexical_postings UNION"
        " SELECT DISTINCT typeof(part) FROM lexical_stats"
    ).fetchall()
    db.close()
    assert kinds == [("integer",)]


_OLD_JOURNAL = """
CREATE TABLE journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, batch_id TEXT NOT NULL,
    scope_key TEXT NOT NULL, entity TEXT NOT NULL, entity_id TEXT NOT NULL, op TEXT NOT NULL,
    before TEXT, after TEXT, at TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT NOT NULL
);
CREATE INDEX journal_by_batch ON journal (batch_id);
CREATE INDEX journal_by_entity ON journal (entity_id);
CREATE INDEX journal_by_scope ON journal (scope_key, seq);
"""


def test_a_journal_of_the_older_layout_is_converted_on_open(tmp_path: Path) -> None:
    """A journal whose rows each hold their batch id, time and actor (older versions) is
    moved into the current layout on open: the same changes, undo still works, and sequence
    numbers go on after the old counter (never reused, even for purged changes)."""
    from sage_memory import SageMemory

    folder = tmp_path / "m"
    with SageMemory(folder, embedder="hashing") as mem:
        first = mem.add("Gus adopted a grey kitten", user_id="u")
        second = mem.add("Gus moved to Oslo", user_id="u")
        want = mem._ctx.store.journal()
    db = sqlite3.connect(folder / "sage.db")
    rows = db.execute(
        "SELECT j.seq, j.id, b.id, j.scope_key, j.entity, j.entity_id, j.op, j.before, j.after,"
        " b.at, b.actor, j.reason FROM journal j JOIN journal_batches b ON b.rid = j.batch"
    ).fetchall()
    db.executescript("DROP TABLE journal; DROP TABLE journal_batches;" + _OLD_JOURNAL)
    db.executemany(f"INSERT INTO journal VALUES ({','.join('?' * 12)})", rows)
    top = max(r[0] for r in rows) + 5  # changes purged at the end
    db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'journal'", (top,))
    db.commit()
    db.close()
    with SageMemory(folder, embedder="hashing") as mem:
        assert mem._ctx.store.journal() == want
        assert [c.op for c in mem.history(second.memory_id)] == ["insert"]
        mem.undo(want[-1][1].batch_id)  # the second add's batch
        assert [m.id for m in mem.get_all(user_id="u")] == [first.memory_id]
        assert min(s for s, _ in mem._ctx.store.journal() if s > want[-1][0]) > top
    db = sqlite3.connect(folder / "sage.db")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    db.close()
    assert "journal_v1" not in names and "journal_batches" in names
