"""Isolation: nothing of one scope is ever visible from another.

Hypothesis generates a few scopes (users, agents, user+agent pairs; the same string in
different roles) and random texts per scope built from a shared vocabulary of entity names (so
every scope has nodes called "Alice", "Paris"...) plus secret words unique to the scope. Then
each scope asks for every other scope's words and names, through search, explore, find_node,
get (with scope), get_all, graph, stats and export, and must only ever see its own data.

Four storage set-ups: the in-memory store, the SQLite store (SQL filters) with the numpy
index, a real folder (SQLite + Chroma collections) and server mode (PostgreSQL + pgvector, a
schema per example), the last two with fewer examples.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_kit import fresh_url, open_memory

from sage_memory.codec import to_dict
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.index.numpy import NumpyVectorIndex
from sage_memory.store.sqlite import SQLiteGraphStore
from sage_memory.types import MAX_SCOPE_CHARS, Scope

VOCAB = ("Alice", "Bob", "Paris", "Berlin", "Acme", "Python", "Rust", "Kyoto")
FILLER = ("met", "likes", "visited", "uses", "with", "and", "near", "about")

# Scope values: printable, no surrounding spaces; small alphabets make collisions likely
# (the same string as a user in one scope and an agent in another).
scope_value = st.sampled_from(["a", "b", "alice", "Alice", "ALICE", "a b", "用户", "é", "e\u0301"])


@st.composite
def scopes(draw: st.DrawFn) -> list[dict[str, str]]:
    raw = draw(
        st.lists(
            st.one_of(
                st.builds(lambda u: {"user_id": u}, scope_value),
                st.builds(lambda a: {"agent_id": a}, scope_value),
                st.builds(lambda u, a: {"user_id": u, "agent_id": a}, scope_value, scope_value),
            ),
            min_size=2,
            max_size=3,
        )
    )
    unique: dict[str, dict[str, str]] = {}
    for kw in raw:
        unique.setdefault(Scope(**kw).key, kw)
    return list(unique.values()) if len(unique) >= 2 else [{"user_id": "a"}, {"agent_id": "a"}]


@st.composite
def worlds(draw: st.DrawFn) -> list[tuple[dict[str, str], list[str]]]:
    """Scopes with their texts; scope i's secret words are ``secret<i>w<j>``."""
    out = []
    for i, kw in enumerate(draw(scopes())):
        texts = []
        for j in range(draw(st.integers(1, 4))):
            words = draw(st.lists(st.sampled_from(VOCAB + FILLER), min_size=2, max_size=8))
            texts.append(" ".join([f"secret{i}w{j}", *words]))
        out.append((kw, texts))
    return out


@contextmanager
def memory_for(kind: str, tmp_path: Path, n: int, server: str = "") -> Iterator[Any]:
    if kind == "memory":
        mem = open_memory(None)
    elif kind == "postgres":  # a fresh schema on the test server per example
        mem = open_memory(fresh_url(server))
    elif kind == "sqlite":
        mem = open_memory(None, store=SQLiteGraphStore(":memory:"), index=NumpyVectorIndex())
    else:
        mem = open_memory(tmp_path / f"mem{n}")
    try:
        yield mem
    finally:
        mem.close()


_counter = iter(range(10**9))


def _part_key(kw: dict[str, str]) -> str:
    return Scope(**kw).key


def _check_world(mem: Any, world: list[tuple[dict[str, str], list[str]]], tmp: Path) -> int:
    """Load the world, then probe every scope with every other scope's words. Returns probes."""
    ids: dict[str, list[str]] = {}
    for kw, texts in world:
        ids[_part_key(kw)] = [r.memory_id for r in mem.add_many(texts, **kw)]
    node_ids = {
        _part_key(kw): {n.id for n in mem.graph(**kw, include_expired=True).nodes}
        for kw, _ in world
    }
    probes = 0
    for kw, own_texts in world:
        me = _part_key(kw)
        mine = set(ids[me])
        others = [(k2, t2) for k2, t2 in world if _part_key(k2) != me]
        queries = {w for _, t2 in others for text in t2 for w in text.split()} | set(VOCAB)
        for q in sorted(queries):
            res = mem.search(q, **kw)
            probes += 1
            assert {h.memory.scope.partition.key for h in res.memories} <= {me}
            assert {h.id for h in res.memories} <= mine
            assert {h.node.scope.key for h in res.nodes} <= {me}
            assert {h.edge.scope.key for h in res.edges} <= {me}
            for k2, t2 in others:
                for text in t2:
                    assert text.split()[0] not in res.context, f"{kw} sees {k2}'s secret"
        for name in VOCAB:
            try:
                sub = mem.explore(name, hops=3, **kw)
            except NotFoundError:
                continue
            probes += 1
            assert {n.id for n in sub.nodes} <= node_ids[me]
            assert {e.scope.key for e in sub.edges} <= {me}
        for k2, _ in others:
            other = _part_key(k2)
            for mid in ids[other]:
                with pytest.raises(NotFoundError):
                    mem.get(mid, **kw)
                probes += 1
            for nid in node_ids[other] - node_ids[me]:
                with pytest.raises(NotFoundError):
                    mem.explore(nid, **kw)
                probes += 1
        assert {m.id for m in mem.get_all(**kw)} == mine
        assert sorted(m.text for m in mem.get_all(**kw)) == sorted(own_texts)
        graph = mem.graph(**kw, include_expired=True)
        assert {n.scope.key for n in graph.nodes} <= {me}
        assert all(set(n.memory_ids) <= mine for n in graph.nodes)
        assert all(set(e.memory_ids) <= mine for e in graph.edges)
        # Names, aliases, summaries, facts, attributes: no other scope's secret anywhere.
        blob = json.dumps([to_dict(r) for r in (*graph.nodes, *graph.edges)], ensure_ascii=False)
        for _, t2 in others:
            assert not [t.split()[0] for t in t2 if t.split()[0] in blob]
        stats = mem.stats(**kw)
        assert stats["memories"] == len(mine)
        assert stats["nodes"] == len(node_ids[me])
        path = tmp / f"export-{next(_counter)}.jsonl"
        mem.export(path, **kw)
        records = [json.loads(line) for line in path.read_text("utf-8").splitlines()[1:]]
        assert {Scope(**r["data"]["scope"]).partition.key for r in records} <= {me}
        assert {r["data"]["id"] for r in records if r["type"] == "memory"} == mine
        probes += 1
    return probes


@pytest.mark.parametrize(
    ("kind", "examples"), [("memory", 25), ("sqlite", 25), ("folder", 3), ("postgres", 2)]
)
def test_no_scope_sees_another(
    kind: str, examples: int, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server = request.getfixturevalue("postgres_url") if kind == "postgres" else ""

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(world=worlds())
    def check(world: list[tuple[dict[str, str], list[str]]]) -> None:
        n = next(_counter)
        with memory_for(kind, tmp_path, n, server) as mem:
            assert _check_world(mem, world, tmp_path) > 0

    check()


def test_runs_of_one_user_do_not_see_each_others_memories() -> None:
    with open_memory(None) as mem:
        r1 = mem.add("secretrun1 Alice met Bob", user_id="u", run_id="r1")
        r2 = mem.add("secretrun2 Alice met Paris", user_id="u", run_id="r2")
        assert {m.id for m in mem.get_all(user_id="u", run_id="r1")} == {r1.memory_id}
        assert {h.id for h in mem.search("secretrun2 Alice", user_id="u", run_id="r1")} <= {
            r1.memory_id
        }
        with pytest.raises(NotFoundError):
            mem.get(r2.memory_id, user_id="u", run_id="r1")
        # The user without a run sees both: runs partition memories, not the user's graph.
        assert {m.id for m in mem.get_all(user_id="u")} == {r1.memory_id, r2.memory_id}


def test_explore_in_a_run_shows_only_what_the_run_supports() -> None:
    """Regression: explore(run_id=...) walked the whole user graph, showing nodes and facts
    that only other sessions' memories support."""
    with open_memory(None) as mem:
        mem.add("Alice met Bob", user_id="u", run_id="r1")
        mem.add("Alice visited Paris", user_id="u", run_id="r2")
        mem.add("Zed visited Kyoto", user_id="u", run_id="r2")
        sub = mem.explore("Alice", user_id="u", run_id="r1", hops=3)
        assert {n.name for n in sub.nodes} == {"Alice", "Bob"}
        assert {(e.source_id, e.target_id) for e in sub.edges} <= {
            (a.id, b.id) for a in sub.nodes for b in sub.nodes
        }
        with pytest.raises(NotFoundError):
            mem.explore("Zed", user_id="u", run_id="r1")
        assert {n.name for n in mem.explore("Alice", user_id="u", hops=3).nodes} == {
            "Alice",
            "Bob",
            "Paris",
        }


def test_search_in_a_run_shows_only_graph_items_the_run_supports() -> None:
    with open_memory(None) as mem:
        mem.add("Alice met Bob", user_id="u", run_id="r1")
        other = mem.add("Zed visited Kyoto secretly", user_id="u", run_id="r2")
        res = mem.search("Zed Kyoto", user_id="u", run_id="r1")
        assert {h.name for h in res.nodes} <= {"Alice", "Bob"}
        assert not [h for h in res.edges if other.memory_id in h.edge.memory_ids]
        assert "Kyoto" not in res.context


# -- scope values are validated --------------------------------------------------------------

BAD_SCOPE_VALUES = [
    "",
    " ",
    " alice",
    "alice ",
    "\t",
    "ali\nce",
    "ali\x00ce",
    "a\x1fb",
    "a\x7fb",
    "a\ud800b",
    "x" * (MAX_SCOPE_CHARS + 1),
    5,
    5.0,
    b"alice",
    ["alice"],
    {"id": "alice"},
]


@pytest.mark.parametrize("value", BAD_SCOPE_VALUES, ids=repr)
@pytest.mark.parametrize("field", ["user_id", "agent_id", "run_id"])
def test_bad_scope_values_are_refused_everywhere(field: str, value: object) -> None:
    with open_memory(None) as mem:
        mem.add("Alice met Bob", user_id="ok")
        calls = [
            lambda: mem.add("Alice met Bob", **{field: value}),
            lambda: mem.add_many(["Alice met Bob"], **{field: value}),
            lambda: mem.search("Alice", **{field: value}),
            lambda: mem.get_all(**{field: value}),
            lambda: mem.delete_all(**{field: value}),
            lambda: mem.stats(**{field: value}),
        ]
        if field != "run_id":
            calls.append(lambda: mem.explore("Alice", **{field: value}))
        for call in calls:
            with pytest.raises(ValidationError):
                call()
        assert len(mem.get_all(user_id="ok")) == 1


def test_no_scope_at_all_is_refused() -> None:
    with open_memory(None) as mem, pytest.raises(ValidationError, match="no scope given"):
        mem.add("Alice met Bob")


@settings(max_examples=150, deadline=None)
@given(value=st.text(max_size=MAX_SCOPE_CHARS + 20))
def test_any_string_is_a_scope_or_a_validation_error(value: str) -> None:
    """Whatever the string, the answer is a working scope or a ValidationError: never a crash
    in storage, and an accepted value comes back exactly as given."""
    try:
        scope = Scope(user_id=value)
    except ValidationError:
        return
    with open_memory(None, store=SQLiteGraphStore(":memory:"), index=NumpyVectorIndex()) as mem:
        r = mem.add("Alice met Bob", user_id=value)
        assert mem.get(r.memory_id, user_id=value).scope == scope
        assert [m.id for m in mem.get_all(user_id=value)] == [r.memory_id]


def test_valid_but_unusual_scope_values_work() -> None:
    with open_memory(None) as mem:
        for value in ("x" * MAX_SCOPE_CHARS, "用户 42", "a b", "O'Brien", 'say "hi"', "%_*"):
            mem.add(f"note for {value}", user_id=value)
            assert [m.text for m in mem.get_all(user_id=value)] == [f"note for {value}"]
        # LIKE wildcards and quotes are literal: "%_*" is not a pattern matching other users.
        assert len(mem.get_all(user_id="%_*")) == 1
