"""Deletion that means it: after delete / delete_all and close, the forgotten text is nowhere.

Checked through the API (get, search, explore, history, the vector index) and by scanning the
raw bytes of every file under the memory folder (SQLite db + WAL, Chroma's SQLite and HNSW
files) for marker strings that occur only in the deleted text.

What Chroma keeps: we give Chroma ids and vectors only, never documents, so text cannot be in
its files. A deleted memory's *vector* may linger in Chroma's operation log and HNSW file
(logically deleted, never returned) until Chroma compacts; ``delete_all`` drops the whole
partition's collections, and with them those files.

On PostgreSQL (server mode) the same tests read every row of every table of the memory's
schema, then run ``VACUUM FULL`` and scan the raw table, TOAST and index files
(``reliability_kit.postgres_leaks``).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from reliability_kit import (
    graph_problems,
    is_url,
    location,
    open_memory,
    postgres_leaks,
    scan_folder,
    sqlite_problems,
)

from sage_memory import SageConfig
from sage_memory.errors import NotFoundError
from sage_memory.index.base import collection_name


def scan_folder_file(path: Path, needles: list[bytes]) -> list[bytes]:
    data = path.read_bytes()
    return [n for n in needles if n in data]


def _markers() -> tuple[str, str]:
    """A lowercase word and a capitalised name (becomes a node) found nowhere else."""
    tag = uuid.uuid4().hex[:12]
    return f"zqxword{tag}", f"Zqxname{tag}"


def _leaks(where: Path | str, needles: list[bytes]) -> list[str]:
    """Where the needles still are: the folder's files, or the server's rows and files."""
    if is_url(where):
        return postgres_leaks(str(where), needles)
    assert isinstance(where, Path)
    assert sqlite_problems(where / "sage.db") == []
    return [f"{needle} in {path}" for needle, path in scan_folder(where, needles)]


def _needles(*texts: str) -> list[bytes]:
    out: list[bytes] = []
    for t in texts:
        out += [t.encode(), t.lower().encode()]
    return out


def _background(mem: object, user: str, n: int = 60) -> None:
    mem.add_many(  # type: ignore[attr-defined]
        [f"Alice met Bob about topic number {i} in Paris" for i in range(n)], user_id=user
    )


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_delete_removes_memory_and_what_only_it_supports(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    folder = location(where, tmp_path, request)
    word, name = _markers()
    with open_memory(folder) as mem:
        _background(mem, "alice")
        target = mem.add(f"the code {word} belongs to {name} who met Alice", user_id="alice")
        _background(mem, "alice", 20)
        assert mem.search(word, user_id="alice").memories[0].id == target.memory_id
        name_node = mem.find_node(name, user_id="alice", exact=True)
        alice_before = mem.find_node("Alice", user_id="alice", exact=True)
        assert target.memory_id in alice_before.memory_ids

        mem.delete(target.memory_id, user_id="alice")

        with pytest.raises(NotFoundError):
            mem.get(target.memory_id)
        assert target.memory_id not in {h.id for h in mem.search(word, user_id="alice")}
        with pytest.raises(NotFoundError):
            mem.find_node(name, user_id="alice", exact=True)
        assert mem.history(target.memory_id) == []
        assert mem.history(name_node.id) == []
        # Alice is supported by other memories: she stays, without the deleted provenance.
        alice = mem.find_node("Alice", user_id="alice", exact=True)
        assert target.memory_id not in alice.memory_ids
        part = alice.scope.key
        assert target.memory_id not in mem.index.ids(collection_name(part, "memory"))
        assert name_node.id not in mem.index.ids(collection_name(part, "node"))
        assert graph_problems(mem) == []
        assert len(mem.get_all(user_id="alice")) == 80
    assert _leaks(folder, _needles(word, name)) == []


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_delete_all_forgets_the_user_everywhere(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    folder = location(where, tmp_path, request)
    word, name = _markers()
    victim = f"victim-{uuid.uuid4().hex[:10]}"
    with open_memory(folder) as mem:
        _background(mem, "alice")
        kept = mem.add("Alice keeps her own notes", user_id="alice")
        first = mem.add(f"{word} one: {name} met Carol", user_id=victim)
        mem.add_many([f"{word} note {i} about {name} and Dora" for i in range(30)], user_id=victim)
        # Text the journal alone remembers: an updated-away text and an undone add.
        mem.update(first.memory_id, f"{word} rewritten by {name}", user_id=victim)
        undone = mem.add(f"{word} undone {name} Eve", user_id=victim)
        mem.undo(_batch_of(mem, undone))
        with pytest.raises(NotFoundError):
            mem.get(undone.memory_id)

        victim_key = first.memory.scope.key

        assert mem.delete_all(user_id=victim) == 31

        assert mem.get_all(user_id=victim) == []
        assert len(mem.search(word, user_id=victim)) == 0
        assert mem.stats(user_id=victim)["nodes"] == 0
        assert victim not in {s.user_id for s in mem.scopes()}
        for entity in ("memory", "node"):  # the partition's collections are dropped
            assert mem.index.count(collection_name(victim_key, entity)) == 0
        assert mem.get(kept.memory_id, user_id="alice").text.startswith("Alice keeps")
        assert graph_problems(mem) == []
    assert _leaks(folder, [*_needles(word, name), victim.encode()]) == []


def _batch_of(mem: object, result: object) -> str:
    change_id = result.change_ids[0]  # type: ignore[attr-defined]
    return next(c.batch_id for c in mem.history(result.memory_id) if c.id == change_id)  # type: ignore[attr-defined]


def test_deleted_text_is_not_in_chroma_even_while_open(tmp_path: Path) -> None:
    """Chroma only ever receives ids and vectors: no text, before or after deletion.

    Only Chroma's SQLite files are scanned: its HNSW ``data_level0.bin`` is written from a
    buffer hnswlib does not zero, and was seen (once in a long test run) carrying bytes of
    earlier heap contents of the process, such as the string "alice". That is upstream
    behaviour, not something this engine writes; delete_all removes those files outright.
    """
    folder = tmp_path / "mem"
    word, name = _markers()
    # Every partition mirrored into Chroma (one this small is otherwise served from SQLite).
    with open_memory(folder, config=SageConfig(vector_index="chroma")) as mem:
        mem.add(f"{word} lives with {name}", user_id="alice")
        chroma_sqlite = [p for p in (folder / "chroma").iterdir() if p.is_file()]
        assert chroma_sqlite  # chroma.sqlite3 (and its WAL while open)
        for path in chroma_sqlite:
            assert scan_folder_file(path, _needles(word, name)) == []
            assert scan_folder_file(path, [b"alice"]) == []  # scope ids are hashed


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_update_then_delete_forgets_both_texts(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    folder = location(where, tmp_path, request)
    old_word, old_name = _markers()
    new_word, new_name = _markers()
    with open_memory(folder) as mem:
        _background(mem, "alice", 30)
        r = mem.add(f"{old_word} with {old_name}", user_id="alice")
        mem.update(r.memory_id, f"{new_word} with {new_name}", user_id="alice")
        assert mem.search(new_word, user_id="alice").memories[0].id == r.memory_id
        mem.delete(r.memory_id, user_id="alice")
        assert graph_problems(mem) == []
    assert _leaks(folder, _needles(old_word, old_name, new_word, new_name)) == []


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_evolver_notes_about_deleted_data_go_too(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    """Regression: the evolver's access log (searches, with the scope key), its review queue
    (suggestions quoting node names) and its per-scope state survived delete / delete_all."""
    folder = location(where, tmp_path, request)
    word, name = _markers()
    victim = f"victim-{uuid.uuid4().hex[:10]}"
    with open_memory(folder) as mem:
        _background(mem, "alice", 20)
        # Near-duplicate names in one memory: the evolver suggests merging them.
        doomed = mem.add(f"{word} {name} met {name}s and {name}z", user_id="alice")
        mem.add_many([f"{word} {name} visited Kyoto {i}" for i in range(8)], user_id=victim)
        again = [f"{name} met {name}s and {name}z again {i}" for i in range(4)]
        mem.add_many(again, user_id=victim)
        for _ in range(4):
            mem.search(f"{name} Kyoto", user_id=victim)
            mem.search(f"{word} {name}", user_id="alice")
        mem.evolve()
        queued = mem.review(user_id="alice") + mem.review(user_id=victim)
        assert any(name in s.summary for s in queued), "the fixture should queue a suggestion"

        mem.delete(doomed.memory_id, user_id="alice")
        assert not [s for s in mem.review(user_id="alice") if name in repr(s)]
        mem.delete_all(user_id=victim)
        assert mem.review(user_id=victim) == []
        mem.search("Alice", user_id="alice")  # the survivor's notes stay usable
        assert graph_problems(mem) == []
    assert _leaks(folder, [*_needles(word, name), victim.encode()]) == []


# -- what survives a deleted memory: shared edges, merged nodes, summaries (every backend) ---


def test_deleted_text_leaves_the_edges_other_memories_support(backend: object) -> None:
    """Regression: the edge memory B still supports kept A's sentence as its fact after
    delete(A); search cited it and the journal kept it."""
    b = backend  # type: ignore[assignment]
    secret = f"zqxsecret{uuid.uuid4().hex[:8]}"
    mem = b.open(extractor=None)  # type: ignore[attr-defined]
    a = mem.add(f"Secretword {secret}: Alice lives in Paris.", user_id="alice")
    kept = mem.add("Alice lives in Paris", user_id="alice")
    edge = mem.graph(user_id="alice").edges[0]
    assert set(edge.memory_ids) == {a.memory_id, kept.memory_id}
    assert secret in edge.fact, "the fixture should make A's sentence the edge's fact"

    mem.delete(a.memory_id, user_id="alice")

    edges = mem.graph(user_id="alice").edges
    assert [e.memory_ids for e in edges] == [(kept.memory_id,)]
    assert secret not in edges[0].fact and "Paris" in edges[0].fact
    result = mem.search("where does alice live?", user_id="alice")
    assert result.edges and all(secret not in h.edge.fact for h in result.edges)
    assert secret not in result.context
    assert all(secret not in repr(c) for c in mem.history(edges[0].id))
    assert graph_problems(mem) == []
    assert b.residue(mem, [secret]) == []  # type: ignore[attr-defined]


def test_deleted_names_leave_merged_nodes(backend: object) -> None:
    """A name one memory gave a node that others support (an alias after a merge, an
    attribute) goes with that memory; the node keeps the names the others use."""
    from sage_memory.types import NodeSpec

    b = backend  # type: ignore[assignment]
    word, name = _markers()
    mem = b.open()  # type: ignore[attr-defined]
    first = mem.add_graph(
        f"{name} is what {word} calls Dora", user_id="alice",
        nodes=[NodeSpec("d", name, "Person", aliases=("Dora",), attributes={"nick": word})],
        edges=[],
    )  # fmt: skip
    mem.add("Dora met Alice in Paris", user_id="alice")
    dora = mem.find_node("Dora", user_id="alice")
    assert len(dora.memory_ids) == 2 and dora.name == name

    mem.delete(first.memory_id, user_id="alice")

    dora = mem.find_node("Dora", user_id="alice")
    assert dora.name == "Dora"
    assert word not in repr(dora) and name not in repr(dora)
    assert all(name not in repr(c) and word not in repr(c) for c in mem.history(dora.id))
    assert graph_problems(mem) == []
    assert b.residue(mem, [word, name]) == []  # type: ignore[attr-defined]


def test_community_summaries_forget_deleted_names(backend: object) -> None:
    """A community summary quotes its members' names and facts: when a member goes, the
    summary goes too (the evolver writes it again from what remains)."""
    b = backend  # type: ignore[assignment]
    word, name = _markers()
    mem = b.open()  # type: ignore[attr-defined]
    lines = [f"{x} met {y}" for x in ("Alice", "Bob") for y in ("Dora", "Erin", "Finn")]
    mem.add_many(lines * 2, user_id="alice")
    doomed = mem.add(f"{name} met Alice and Bob about {word}", user_id="alice")
    mem.evolve(user_id="alice")
    for item in mem.review(user_id="alice"):
        if item.op == "summarize":
            mem.accept(item.id)
    summaries = [n for n in mem.graph(user_id="alice").nodes if n.label == "Summary"]
    assert any(name in n.summary for n in summaries), "the fixture should summarise the name"

    mem.delete(doomed.memory_id, user_id="alice")

    nodes = mem.graph(user_id="alice").nodes
    assert all(word not in repr(n) for n in nodes)
    assert all(name not in repr(n) for n in nodes)
    assert graph_problems(mem) == []
    assert b.residue(mem, [word, name]) == []  # type: ignore[attr-defined]


def test_delete_all_leaves_no_copy_of_the_user_in_index_pages(tmp_path: Path) -> None:
    """The cause of the intermittent failure of test_delete_all_forgets_the_user_everywhere:
    ``secure_delete`` zeroes deleted rows, but interior pages of a b-tree index keep copies of
    some keys as dividers. Once an index keyed by scope (or by node name) grew past a few
    pages, the deleted user's id stayed in sage.db, depending on how the pages split. These
    150 interleaved single adds of two users leave it there every time unless the store
    rebuilds those indexes after delete_all."""
    from sage_memory.index.numpy import NumpyVectorIndex

    folder = tmp_path / "mem"
    victim = f"victim-{uuid.uuid4().hex[:10]}"
    with open_memory(folder, index=NumpyVectorIndex()) as mem:
        for i in range(150):
            mem.add(f"Alice note {i} about Bob", user_id="alice", infer=False)
            mem.add(f"note {i} about Dora", user_id=victim, infer=False)
        mem.delete_all(user_id=victim)
    assert scan_folder(folder, [victim.encode()]) == []


def test_a_large_file_is_rewritten_once_at_close_not_at_every_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewriting the file costs time in proportion to its size: past ``erase_now_bytes`` the
    deletes only mark it, and the rewrite happens once, at close (or at the next open after a
    crash). Either way no byte of the deleted text is left once the memory is closed."""
    import sqlite3

    from sage_memory.store.sqlite import SQLiteGraphStore

    monkeypatch.setattr(SQLiteGraphStore, "erase_now_bytes", 0)  # every file counts as large
    folder = tmp_path / "mem"
    marks = [_markers() for _ in range(3)]
    with open_memory(folder) as mem:
        _background(mem, "alice", n=30)
        doomed = [mem.add(f"{name} said {word}", user_id="alice") for word, name in marks]
        for result in doomed:
            mem.delete(result.memory_id, user_id="alice")
        db = sqlite3.connect(folder / "sage.db")
        pending = db.execute("SELECT value FROM meta WHERE key = 'erase_pending'").fetchall()
        db.close()
        assert pending == [("1",)]  # marked, not yet rewritten
    needles = _needles(*(t for pair in marks for t in pair))
    assert _leaks(folder, needles) == []
    with open_memory(folder) as mem:  # the mark is gone with the rewrite
        assert mem.get_all(user_id="alice")
    db = sqlite3.connect(folder / "sage.db")
    assert db.execute("SELECT value FROM meta WHERE key = 'erase_pending'").fetchall() == []
    db.close()
