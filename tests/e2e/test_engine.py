"""The public API end to end, on both the in-memory and the folder (SQLite + Chroma) backends."""

from __future__ import annotations

import asyncio
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import networkx as nx
import pytest

from sage_memory import (
    AsyncSageMemory,
    ConfigError,
    NotFoundError,
    SageConfig,
    SageMemory,
    StorageError,
    ValidationError,
)
from sage_memory.codec import to_dict
from sage_memory.index.base import collection_name
from tests.conftest import WhereExtractor

MAY = datetime(2026, 5, 1, tzinfo=UTC)


def test_add_get_search(mem: SageMemory) -> None:
    r = mem.add("Alice lives in Paris", user_id="alice", timestamp=MAY, metadata={"source": "chat"})
    m = mem.get(r.memory_id)
    assert (m.text, m.timestamp, m.metadata, m.scope.user_id) == (
        "Alice lives in Paris",
        MAY,
        {"source": "chat"},
        "alice",
    )
    mem.add("Bob enjoys hiking in the Alps", user_id="alice")
    res = mem.search("where does Alice live?", user_id="alice")
    assert res.memories[0].id == r.memory_id
    assert res.memories[0].score > 0 and res.memories[0].why
    assert "Paris" in res.context
    assert mem.get_all(user_id="alice")[0].text == "Alice lives in Paris"


def test_graph_is_built_and_changing_facts_expire(mem: SageMemory) -> None:
    first = mem.add("Alice lives in Paris", user_id="alice", timestamp=MAY)
    second = mem.add("Alice moved to Berlin", user_id="alice", timestamp=MAY + timedelta(days=40))
    assert len(first.node_ids) == 2 and len(first.edge_ids) == 1
    assert second.expired_edge_ids == first.edge_ids
    sub = mem.explore("alice", user_id="alice", include_expired=True)
    names = {n.id: n.name for n in sub.nodes}
    facts = {(names[e.target_id], e.valid_to) for e in sub.edges}
    assert facts == {("Paris", MAY + timedelta(days=40)), ("Berlin", None)}
    current = mem.explore("Alice", user_id="alice")
    assert [names[e.target_id] for e in current.edges] == ["Berlin"]


def test_a_list_of_messages_becomes_one_memory_each(mem: SageMemory) -> None:
    r = mem.add(
        [
            {"role": "user", "content": "I moved to Lisbon"},
            {"role": "assistant", "content": "Lisbon is lovely in spring."},
        ],
        user_id="u1",
    )
    assert len(r.memory_ids) == 2
    assert [mem.get(i).role for i in r.memory_ids] == ["user", "assistant"]


def test_scopes_are_isolated(mem: SageMemory) -> None:
    a = mem.add("Alice lives in Paris", user_id="alice")
    mem.add("Bob lives in Rome", user_id="bob")
    res = mem.search("Paris", user_id="bob")
    assert all("Paris" not in h.text for h in res.memories)
    assert "Paris" not in res.context
    with pytest.raises(NotFoundError):
        mem.get(a.memory_id, user_id="bob")
    with pytest.raises(NotFoundError):
        mem.explore("Alice", user_id="bob")
    assert mem.stats(user_id="bob")["memories"] == 1


def test_runs_narrow_a_user_scope(mem: SageMemory) -> None:
    mem.add("Alice lives in Paris", user_id="alice", run_id="s1")
    mem.add("Alice moved to Oslo", user_id="alice", run_id="s2")
    assert [m.text for m in mem.get_all(user_id="alice", run_id="s1")] == ["Alice lives in Paris"]
    res = mem.search("Alice", user_id="alice", run_id="s2")
    assert [h.text for h in res.memories] == ["Alice moved to Oslo"]
    assert len(mem.get_all(user_id="alice")) == 2


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        ("", {"user_id": "a"}, "empty"),
        ("   ", {"user_id": "a"}, "empty"),
        (42, {"user_id": "a"}, "pass a string"),
        ("x" * 40_000, {"user_id": "a"}, "limit is 32,000"),
        ("ok", {}, "no scope given"),
        ("ok", {"user_id": " alice"}, "surrounding spaces"),
        ("ok", {"user_id": "a\nb"}, "control characters"),
        ("ok", {"user_id": "a", "metadata": {"x": object()}}, "JSON"),
        ([{"role": "robot", "content": "hi"}], {"user_id": "a"}, "role="),
        ([], {"user_id": "a"}, "empty list"),
    ],
)
def test_bad_input_is_rejected_and_nothing_is_stored(
    mem: SageMemory, data: object, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        mem.add(data, **kwargs)  # type: ignore[arg-type]
    assert mem.stats()["memories"] == 0


def test_unknown_ids_and_bad_queries(mem: SageMemory) -> None:
    with pytest.raises(NotFoundError, match="no memory with id"):
        mem.get("does-not-exist")
    with pytest.raises(NotFoundError):
        mem.delete("does-not-exist", user_id="a")
    with pytest.raises(ValidationError, match="query is empty"):
        mem.search("  ", user_id="a")
    assert mem.search("anything", user_id="nobody").memories == ()


def test_update_reextracts_and_undo_restores(mem: SageMemory) -> None:
    r = mem.add("Alice lives in Paris", user_id="alice")
    before = _export_lines(mem)
    u = mem.update(r.memory_id, "Alice lives in Madrid", user_id="alice")
    assert mem.get(r.memory_id).text == "Alice lives in Madrid"
    names = {n.name for n in mem.explore("Alice", user_id="alice").nodes}
    assert names == {"Alice", "Madrid"}
    mem.undo(mem.history(r.memory_id)[-1].batch_id)
    assert mem.get(r.memory_id).text == "Alice lives in Paris"
    assert _export_lines(mem) == before
    assert u.change_ids


def test_undo_refuses_to_overwrite_later_changes(mem: SageMemory) -> None:
    r = mem.add("Alice lives in Paris", user_id="alice")
    first_batch = mem.history(r.memory_id)[0].batch_id
    mem.update(r.memory_id, "Alice lives in Rome", user_id="alice")
    with pytest.raises(ValidationError, match="later change"):
        mem.undo(first_batch)
    mem.undo(first_batch, force=True)
    with pytest.raises(NotFoundError):
        mem.get(r.memory_id)
    with pytest.raises(NotFoundError):
        mem.undo("no-such-batch")


def test_delete_removes_what_only_it_supported(mem: SageMemory) -> None:
    a = mem.add("Alice lives in Paris", user_id="alice")
    b = mem.add("Carol lives in Paris", user_id="alice")
    mem.delete(a.memory_id)
    names = {n.name for n in mem.explore("Paris", user_id="alice").nodes}
    assert names == {"Paris", "Carol"}
    assert all(h.id != a.memory_id for h in mem.search("Alice Paris", user_id="alice").memories)
    assert mem.history(a.memory_id) == []  # the journal no longer holds the forgotten text
    assert mem.get(b.memory_id)


def test_delete_all_leaves_other_users_alone(mem: SageMemory) -> None:
    mem.add("Alice lives in Paris", user_id="alice")
    mem.add("Alice moved to Rome", user_id="alice")
    mem.add("Bob lives in Oslo", user_id="bob")
    assert mem.delete_all(user_id="alice") == 2
    assert mem.stats(user_id="alice")["memories"] == 0
    assert mem.stats(user_id="alice")["nodes"] == 0
    assert mem.stats(user_id="bob")["memories"] == 1
    assert mem.search("Oslo", user_id="bob").memories


def test_export_then_load_is_an_identity(mem: SageMemory, tmp_path: Path) -> None:
    mem.add("Alice lives in Paris", user_id="alice", timestamp=MAY, metadata={"k": [1, 2]})
    mem.add("Alice moved to Rome", user_id="alice", kind="experience")
    mem.add("Bob lives in Oslo", user_id="bob", run_id="r1")
    path = tmp_path / "export.jsonl"
    n = mem.export(path)
    assert n == 3 + 5 + 3
    with SageMemory.load(path, embedder="hashing") as copy:
        assert _records(copy) == _records(mem)
        assert copy.search("Oslo", user_id="bob").memories
    graphml = tmp_path / "g.graphml"
    mem.export(graphml, format="graphml")
    g = nx.read_graphml(graphml)
    assert g.number_of_nodes() == 5 and g.number_of_edges() == 3


def test_extraction_failure_keeps_the_memory(mem: SageMemory) -> None:
    class Broken(WhereExtractor):
        def extract(self, memory, context):  # type: ignore[no-untyped-def]
            raise RuntimeError("model fell over")

    mem.extractor = Broken()
    r = mem.add("Alice lives in Paris", user_id="alice")
    stored = mem.get(r.memory_id)
    assert stored.extraction == "failed" and "model fell over" in (stored.extraction_error or "")
    assert r.extraction_error
    assert mem.search("Paris", user_id="alice").memories[0].id == r.memory_id


def test_add_many_batches_and_infer_false(mem: SageMemory) -> None:
    items = [f"note {i} about topic {i % 3}" for i in range(25)]
    items.append({"text": "Dave lives in Cork", "timestamp": "2026-05-01T10:00:00+00:00"})
    results = mem.add_many(items, user_id="u", batch_size=8)
    assert len(results) == 26
    assert mem.get(results[-1].memory_id).timestamp == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert results[-1].edge_ids
    r = mem.add("Erin lives in Nice", user_id="u", infer=False)
    assert r.node_ids == () and mem.get(r.memory_id).extraction == "skipped"
    with pytest.raises(ValidationError, match="item 1"):
        mem.add_many(["fine", ""], user_id="u")


def test_async_twin_has_the_same_methods() -> None:
    async def main() -> None:
        async with AsyncSageMemory(embedder="hashing", extractor=WhereExtractor()) as mem:
            r = await mem.add("Alice lives in Paris", user_id="alice")
            results = await asyncio.gather(
                *[mem.add(f"fact {i}", user_id="alice") for i in range(5)]
            )
            res = await mem.search("Paris", user_id="alice")
            assert res.memories[0].id == r.memory_id
            assert len(await mem.get_all(user_id="alice")) == 6 == len(results) + 1
            sub = await mem.explore("Alice", user_id="alice")
            assert {n.name for n in sub.nodes} == {"Alice", "Paris"}

    asyncio.run(main())


# -- folder behaviour -----------------------------------------------------------------------------
#: Every partition mirrored into Chroma (a partition this small is otherwise served from SQLite
#: alone, with no Chroma copy to keep or rebuild).
MIRROR_ALL = SageConfig(vector_index="chroma")


def test_persistent_folder_survives_reopen(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    with SageMemory(
        folder, embedder="hashing", extractor=WhereExtractor(), config=MIRROR_ALL
    ) as mem:
        r = mem.add("Alice lives in Paris", user_id="alice")
    assert {p.name for p in folder.iterdir()} >= {"sage.db", "chroma"}
    with SageMemory(
        folder, embedder="hashing", extractor=WhereExtractor(), config=MIRROR_ALL
    ) as mem:
        assert mem.get(r.memory_id).text == "Alice lives in Paris"
        assert mem.search("Paris", user_id="alice").memories[0].id == r.memory_id
        assert mem.explore("Alice", user_id="alice").edges


def test_lost_vector_index_is_rebuilt_from_sqlite(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    with SageMemory(
        folder, embedder="hashing", extractor=WhereExtractor(), config=MIRROR_ALL
    ) as mem:
        r = mem.add("Alice lives in Paris", user_id="alice")
    shutil.rmtree(folder / "chroma")
    with SageMemory(
        folder, embedder="hashing", extractor=WhereExtractor(), config=MIRROR_ALL
    ) as mem:
        coll = collection_name(mem.get(r.memory_id).scope.key, "memory")
        hits = mem.index.query(coll, mem.embedder.embed_query("Paris"), 1)
        assert hits[0][0] == r.memory_id


def test_one_process_owns_a_folder(tmp_path: Path) -> None:
    with (
        SageMemory(tmp_path / "m", embedder="hashing"),
        pytest.raises(StorageError, match="in use"),
    ):
        SageMemory(tmp_path / "m", embedder="hashing")
    SageMemory(tmp_path / "m", embedder="hashing").close()  # released on close


def test_embedder_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    SageMemory(tmp_path / "m", embedder="hashing").close()
    with pytest.raises(ConfigError, match="embedded with hashing-256"):
        SageMemory(tmp_path / "m", embedder="hashing:64")


def test_unusable_paths_and_config(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(StorageError, match="is a file"):
        SageMemory(f)
    with pytest.raises(ConfigError, match="vector_index"):
        SageConfig(vector_index="faiss")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"unknown|embedder"):
        SageMemory(embedder="word2vec")


def test_closed_memory_refuses_work(tmp_path: Path) -> None:
    mem = SageMemory(tmp_path / "m", embedder="hashing")
    mem.close()
    mem.close()
    with pytest.raises(StorageError, match="closed"):
        mem.add("x", user_id="a")


def _records(mem: SageMemory) -> list[dict[str, object]]:
    out = []
    for scope in mem.store.partitions():
        out += [to_dict(m) for m in mem.store.list_memories(scope, include_archived=True)]
        out += [to_dict(n) for n in mem.store.list_nodes(scope)]
        out += [to_dict(e) for e in mem.store.list_edges(scope)]
    return sorted(out, key=lambda d: str(d["id"]))


def _export_lines(mem: SageMemory) -> list[dict[str, object]]:
    return _records(mem)


def test_async_twin_answers_structure_questions() -> None:
    async def main() -> None:
        async with AsyncSageMemory(embedder="hashing") as mem:
            await mem.add(
                "First I'll design the database, then build the backend API.", user_id="dev"
            )
            steps = await mem.successors("design the database", user_id="dev")
            assert [h.name for h in steps] == ["build the backend API"]
            path = await mem.path_between("design the database", "backend API", user_id="dev")
            assert [h.relation for h in path] == ["PRECEDES"]

    asyncio.run(main())
