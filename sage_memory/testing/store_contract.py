"""The GraphStore contract: one test suite that every store backend's tests subclass.

    class TestMyStore(GraphStoreContract):
        def make_store(self, path):      # path: a fresh folder for this test
            return MyStore(path / "db")

Persistence tests run only for stores whose ``persistent`` is True, reopening the same path.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from sage_memory.engine.journal import Batch
from sage_memory.store.base import GraphStore, MetaItems
from sage_memory.types import Edge, Memory, Node, Scope, new_id

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")


def memory(text: str, scope: Scope = ALICE, minutes: int = 0, **kw: Any) -> Memory:
    ts = T0 + timedelta(minutes=minutes)
    return Memory(new_id(), text, scope, ts, ts, ts, **kw)


def node(name: str, scope: Scope = ALICE, **kw: Any) -> Node:
    return Node(new_id(), scope.partition, name, created_at=T0, updated_at=T0, **kw)


def edge(src: Node, dst: Node, relation: str = "RELATED_TO", **kw: Any) -> Edge:
    return Edge(new_id(), src.scope, src.id, dst.id, relation, created_at=T0, **kw)


def write(store: GraphStore, *pairs: tuple[Any, Any], vectors: dict[str, Any] | None = None) -> str:
    batch = Batch("test", "contract", T0)
    for before, after in pairs:
        batch.record(before, after)
    store.apply(batch.changes, vectors)
    return batch.id


def unit(seed: int, dim: int = 8) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


class GraphStoreContract:
    """Behaviour every GraphStore must have. Subclass and implement :meth:`make_store`."""

    def make_store(self, path: Path) -> GraphStore:
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path) -> Any:
        s = self.make_store(tmp_path)
        yield s
        s.close()

    # -- memories --------------------------------------------------------------------------
    def test_insert_and_get_memory(self, store: GraphStore) -> None:
        m = memory("Alice lives in Paris", metadata={"source": "chat"})
        write(store, (None, m))
        assert store.get_memories(ALICE, [m.id]) == [m]
        assert store.find_memory(m.id) == m
        assert store.count_memories(ALICE) == 1

    def test_list_memories_in_time_order_with_paging(self, store: GraphStore) -> None:
        ms = [memory(f"m{i}", minutes=10 - i) for i in range(5)]
        write(store, *[(None, m) for m in ms])
        listed = store.list_memories(ALICE)
        assert [m.text for m in listed] == ["m4", "m3", "m2", "m1", "m0"]
        assert [m.text for m in store.list_memories(ALICE, limit=2, offset=1)] == ["m3", "m2"]
        assert [m.text for m in store.list_memories(ALICE, before=T0 + timedelta(minutes=8))] == [
            "m4",
            "m3",
        ]

    def test_archived_memories_hidden_by_default(self, store: GraphStore) -> None:
        m = memory("old", archived=True)
        write(store, (None, m))
        assert store.list_memories(ALICE) == []
        assert store.list_memories(ALICE, include_archived=True) == [m]

    def test_scopes_never_see_each_other(self, store: GraphStore) -> None:
        a, b = memory("secret of alice"), memory("secret of bob", BOB)
        na, nb = node("Paris"), node("Paris", BOB)
        write(store, (None, a), (None, b), (None, na), (None, nb), (None, edge(na, na)))
        assert store.get_memories(BOB, [a.id]) == []
        assert [m.id for m in store.list_memories(BOB)] == [b.id]
        assert [h[0] for h in store.search_text(BOB, "secret")] == [b.id]
        assert store.find_nodes(BOB, ["paris"]) == [nb]
        assert store.get_nodes(BOB, [na.id]) == []
        assert store.edges_of(BOB, [na.id]) == []
        assert store.list_edges(BOB) == []

    def test_run_scope_sees_only_its_run(self, store: GraphStore) -> None:
        r1 = memory("in run one", Scope("alice", run_id="r1"))
        r2 = memory("in run two", Scope("alice", run_id="r2"))
        write(store, (None, r1), (None, r2))
        run1 = Scope("alice", run_id="r1")
        assert [m.id for m in store.list_memories(run1)] == [r1.id]
        assert store.get_memories(run1, [r2.id]) == []
        assert [h[0] for h in store.search_text(run1, "run")] == [r1.id]
        assert {m.id for m in store.list_memories(ALICE)} == {r1.id, r2.id}

    def test_update_replaces_text_everywhere(self, store: GraphStore) -> None:
        m = memory("the cat sat")
        write(store, (None, m))
        m2 = dataclasses.replace(m, text="the dog ran")
        write(store, (m, m2))
        assert store.get_memories(ALICE, [m.id])[0].text == "the dog ran"
        assert store.search_text(ALICE, "cat") == []
        assert [h[0] for h in store.search_text(ALICE, "dog")] == [m.id]
        assert store.count_memories(ALICE) == 1

    def test_delete_memory(self, store: GraphStore) -> None:
        m = memory("forget me")
        write(store, (None, m), vectors={m.id: unit(1)})
        write(store, (m, None))
        assert store.get_memories(ALICE, [m.id]) == []
        assert store.search_text(ALICE, "forget") == []
        assert store.get_vectors([m.id]) == {}
        assert store.find_memory(m.id) is None

    def test_lexical_search_ranks_and_is_safe(self, store: GraphStore) -> None:
        ms = [
            memory("pandas read_csv loads a csv file"),
            memory("the weather is nice"),
            memory('odd "quotes" AND OR NOT * ( ) : ^ DROP TABLE memories;'),
        ]
        write(store, *[(None, m) for m in ms])
        hits = store.search_text(ALICE, "how to load a CSV with pandas")
        assert hits[0][0] == ms[0].id
        assert all(score > 0 for _, score in hits)
        assert [h[0] for h in store.search_text(ALICE, 'DROP TABLE "quotes" AND (')] == [ms[2].id]
        assert store.search_text(ALICE, "   ") == []
        assert store.count_memories(ALICE) == 3

    def test_equal_lexical_scores_rank_in_storage_order(self, store: GraphStore) -> None:
        # Ids are random: ties broken by id would rank a rebuilt folder's memories otherwise.
        ms = [memory("the kiln is loaded", minutes=i) for i in range(6)]
        write(store, *[(None, m) for m in ms[:3]])
        write(store, *[(None, m) for m in ms[3:]])
        assert [h[0] for h in store.search_text(ALICE, "kiln")] == [m.id for m in ms]
        assert [h[0] for h in store.search_text(ALICE, "kiln", limit=2)] == [ms[0].id, ms[1].id]

    # -- graph -----------------------------------------------------------------------------
    def test_nodes_found_by_name_and_alias_case_insensitively(self, store: GraphStore) -> None:
        n = node("pandas.read_csv", aliases=("pd.read_csv",), label="Tool")
        write(store, (None, n))
        assert store.find_nodes(ALICE, ["PANDAS.read_csv"]) == [n]
        assert store.find_nodes(ALICE, ["pd.read_csv"]) == [n]
        assert store.find_nodes(ALICE, ["numpy"]) == []
        renamed = dataclasses.replace(n, aliases=())
        write(store, (n, renamed))
        assert store.find_nodes(ALICE, ["pd.read_csv"]) == []
        assert [h[0] for h in store.search_text(ALICE, "read_csv", entity="node")] == [n.id]

    def test_edges_by_direction_and_relation(self, store: GraphStore) -> None:
        a, b, c = node("a"), node("b"), node("c")
        ab, bc = edge(a, b, "PRECEDES"), edge(b, c, "REQUIRES")
        write(store, (None, a), (None, b), (None, c), (None, ab), (None, bc))
        assert {e.id for e in store.edges_of(ALICE, [b.id])} == {ab.id, bc.id}
        assert [e.id for e in store.edges_of(ALICE, [b.id], direction="out")] == [bc.id]
        assert [e.id for e in store.edges_of(ALICE, [b.id], direction="in")] == [ab.id]
        assert [e.id for e in store.edges_of(ALICE, [b.id], relations=["PRECEDES"])] == [ab.id]
        assert store.count_graph(ALICE) == (3, 2)
        assert store.get_edges(ALICE, [bc.id, ab.id]) == [bc, ab]

    def test_edges_of_a_busy_node_are_bounded_to_the_latest_per_node(
        self, store: GraphStore
    ) -> None:
        hub, a, b = node("hub"), node("a"), node("b")
        spokes = [node(f"spoke {i}") for i in range(6)]
        write(store, (None, hub), (None, a), (None, b), *((None, n) for n in spokes))
        out = [edge(hub, n, "USES") for n in spokes]  # added in this order, one write each
        for e in out:
            write(store, (None, e))
        into, other = edge(a, hub, "USES"), edge(a, b, "PRECEDES")
        write(store, (None, into), (None, other))
        every = store.edges_of(ALICE, [hub.id, a.id])
        bounded = store.edges_of(ALICE, [hub.id, a.id], per_node=2)
        latest = {out[-1].id, out[-2].id, into.id, other.id}
        # The same order as the whole read, past the bound left out.
        assert [e.id for e in bounded] == [e.id for e in every if e.id in latest]
        assert {e.id for e in store.edges_of(ALICE, [hub.id], per_node=1)} == {
            out[-1].id,
            into.id,
        }
        assert [e.id for e in store.edges_of(ALICE, [hub.id], direction="in", per_node=3)] == [
            into.id
        ]
        found = store.edges_of(ALICE, [a.id], relations=["USES"], per_node=5)
        assert [e.id for e in found] == [into.id]
        assert store.edges_of(BOB, [hub.id], per_node=2) == []

    def test_a_sources_edges_of_one_relation(self, store: GraphStore) -> None:
        # What ingest reads before it adds a fact: the edges its source already has of that
        # relation, and none of the node's other edges.
        hub, a, b, c = node("hub"), node("a"), node("b"), node("c")
        write(store, (None, hub), (None, a), (None, b), (None, c))
        lives = [edge(hub, a, "LIVES_IN"), edge(hub, b, "LIVES_IN")]
        noise = [edge(hub, c, "USES"), edge(b, hub, "LIVES_IN"), edge(a, c, "LIVES_IN")]
        for e in (lives[0], *noise, lives[1]):
            write(store, (None, e))
        found = store.edges_of(ALICE, [hub.id], direction="out", relations=["LIVES_IN"])
        assert [e.id for e in found] == [e.id for e in lives]
        both = store.edges_of(ALICE, [hub.id, a.id], direction="out", relations=["LIVES_IN"])
        assert {e.id for e in both} == {*(e.id for e in lives), noise[2].id}
        assert store.edges_of(ALICE, [hub.id], direction="out", relations=["WORKS_AT"]) == []
        assert store.edges_of(BOB, [hub.id], direction="out", relations=["LIVES_IN"]) == []

    def test_provenance(self, store: GraphStore) -> None:
        m1, m2 = memory("one"), memory("two")
        a = node("a", memory_ids=(m1.id,))
        b = node("b", memory_ids=(m1.id, m2.id))
        e = edge(a, b, memory_ids=(m2.id,))
        write(store, (None, m1), (None, m2), (None, a), (None, b), (None, e))
        nodes, edges = store.derived_from(ALICE, m1.id)
        assert {n.id for n in nodes} == {a.id, b.id} and edges == []
        nodes, edges = store.derived_from(ALICE, m2.id)
        assert [n.id for n in nodes] == [b.id] and [x.id for x in edges] == [e.id]
        write(store, (e, None))
        assert store.derived_from(ALICE, m2.id)[1] == []

    def test_memory_nodes_lists_the_entities_of_each_memory_in_scope(
        self, store: GraphStore
    ) -> None:
        m1, m2, m3 = memory("one"), memory("two"), memory("three")
        a = node("a", memory_ids=(m1.id,))
        b = node("b", memory_ids=(m1.id, m2.id))
        theirs = memory("four", BOB)
        c = node("c", BOB, memory_ids=(theirs.id, m1.id))  # names an id from another scope
        write(store, (None, m1), (None, m2), (None, m3), (None, theirs))
        write(store, (None, a), (None, b), (None, c))
        found = store.memory_nodes(ALICE, [m1.id, m2.id, m3.id, "missing"])
        assert {k: sorted(v) for k, v in found.items()} == {
            m1.id: sorted([a.id, b.id]),
            m2.id: [b.id],
        }
        assert store.memory_nodes(BOB, [theirs.id, m1.id]) == {theirs.id: [c.id], m1.id: [c.id]}
        write(store, (a, None))
        assert store.memory_nodes(ALICE, [m1.id]) == {m1.id: [b.id]}

    def test_mention_links_are_kept_apart_from_provenance(self, store: GraphStore) -> None:
        """A memory that only mentions a node: deletion finds the node through it, the walk's
        memory-to-entity read does not, and a mention-only node is out of the text search."""
        m1, m2 = memory("John and the lake"), memory("Wow, John!")
        john = node("John", memory_ids=(m1.id,), mention_ids=(m2.id,))
        lake = node("Larch Lake", mention_ids=(m1.id,))
        write(store, (None, m1), (None, m2), (None, john), (None, lake))
        got = store.get_nodes(ALICE, [john.id, lake.id])
        assert {n.id: (n.memory_ids, n.mention_ids) for n in got} == {
            john.id: ((m1.id,), (m2.id,)),
            lake.id: ((), (m1.id,)),
        }
        assert store.memory_nodes(ALICE, [m1.id, m2.id]) == {m1.id: [john.id]}
        assert {n.id for n in store.derived_from(ALICE, m1.id)[0]} == {john.id, lake.id}
        assert [n.id for n in store.derived_from(ALICE, m2.id)[0]] == [john.id]
        assert [n.id for n in store.find_nodes(ALICE, ["larch lake"])] == [lake.id]
        assert store.search_text(ALICE, "larch lake", entity="node") == []
        assert [i for i, _ in store.search_text(ALICE, "john", entity="node")] == [john.id]
        # a fact read later makes it an ordinary node: searchable, a party of the memory
        stated = dataclasses.replace(lake, memory_ids=(m2.id,))
        write(store, (lake, stated))
        assert [i for i, _ in store.search_text(ALICE, "larch lake", entity="node")] == [lake.id]
        assert store.memory_nodes(ALICE, [m2.id]) == {m2.id: [lake.id]}
        write(store, (john, None))
        assert [n.id for n in store.derived_from(ALICE, m2.id)[0]] == [lake.id]

    def test_delete_node_and_edges(self, store: GraphStore) -> None:
        a, b = node("a"), node("b")
        ab = edge(a, b)
        write(store, (None, a), (None, b), (None, ab))
        write(store, (ab, None), (a, None))
        assert store.get_nodes(ALICE, [a.id]) == []
        assert store.find_nodes(ALICE, ["a"]) == []
        assert store.edges_of(ALICE, [b.id]) == []
        assert store.count_graph(ALICE) == (1, 0)

    def test_vectors(self, store: GraphStore) -> None:
        m, n = memory("x"), node("y")
        write(store, (None, m), (None, n), vectors={m.id: unit(1), n.id: unit(2)})
        vecs = store.get_vectors([m.id, n.id, "missing"])
        assert set(vecs) == {m.id, n.id}
        # A store may keep vectors at half precision (SQLite does: cosine >= 0.99999).
        np.testing.assert_allclose(vecs[m.id], unit(1), rtol=1e-3, atol=1e-3)
        assert store.vector_ids(ALICE, "memory") == {m.id}
        assert store.vector_ids(ALICE, "node") == {n.id}
        # An update without a vector keeps the stored one.
        write(store, (m, dataclasses.replace(m, salience=0.9)))
        np.testing.assert_allclose(store.get_vectors([m.id])[m.id], unit(1), rtol=1e-3, atol=1e-3)

    def test_graph_metrics_count_current_edges_isolated_nodes_and_confidence(
        self, store: GraphStore
    ) -> None:
        U, V = Scope(user_id="u"), Scope(user_id="v")
        batch = Batch("test", "seed", T0)
        for nid in ("a", "b", "c", "lonely"):
            batch.record(None, Node(id=nid, scope=U, name=nid, created_at=T0, updated_at=T0))
        for eid, a, b, rel, conf, expired in (
            ("e1", "a", "b", "USES", 0.8, None),
            ("e2", "b", "c", "USES", 0.6, None),
            ("e3", "a", "c", "IS_A", 1.0, T0),
        ):
            batch.record(
                None,
                Edge(
                    id=eid,
                    scope=U,
                    source_id=a,
                    target_id=b,
                    relation=rel,
                    confidence=conf,
                    expired_at=expired,
                    created_at=T0,
                ),
            )
        store.apply(batch.changes)
        m = store.graph_metrics(U)
        assert m["relations"] == {"USES": 2}
        assert {k: m[k] for k in ("nodes", "edges", "current_edges", "isolated_nodes")} == {
            "nodes": 4,
            "edges": 3,
            "current_edges": 2,
            "isolated_nodes": 1,
        }
        assert m["confidence_sum"] == pytest.approx(1.4)
        assert store.graph_metrics(V)["nodes"] == 0

    # -- journal, scopes, metadata ---------------------------------------------------------
    def test_journal_records_every_change_in_order(self, store: GraphStore) -> None:
        m = memory("v1")
        b1 = write(store, (None, m))
        m2 = dataclasses.replace(m, text="v2")
        b2 = write(store, (m, m2))
        entries = store.journal(entity_id=m.id)
        assert [c.op for _, c in entries] == ["insert", "update"]
        assert entries[0][0] < entries[1][0]
        assert entries[1][1].before is not None and entries[1][1].before["text"] == "v1"
        assert [c.batch_id for _, c in store.journal(batch_id=b2)] == [b2]
        assert store.journal(after_seq=entries[0][0])[0][1].batch_id == b2
        assert {c.batch_id for _, c in store.journal(scope=ALICE)} == {b1, b2}
        assert store.journal(scope=BOB) == []
        assert store.purge_journal([m.id]) == 2
        assert store.journal(entity_id=m.id) == []

    def test_partitions_and_meta(self, store: GraphStore) -> None:
        write(store, (None, memory("a")), (None, memory("b", Scope("bob", run_id="r"))))
        assert {p.key for p in store.partitions()} == {ALICE.key, BOB.key}
        assert store.get_meta("k") is None
        store.set_meta("k", "v")
        store.set_meta("k", "w")
        assert store.get_meta("k") == "w"

    def test_meta_items_under_a_prefix(self, store: GraphStore) -> None:
        """The optional MetaItems port: keys under a prefix, set and deleted together."""
        if not isinstance(store, MetaItems):
            pytest.skip("a store without the MetaItems port")
        store.set_meta("q", "whole")
        store.set_meta_many({"q/a": "1", "q/b": "2", "q/c": "3", "qa": "x", "r/a": "y"})
        assert store.meta_items("q/") == {"q/a": "1", "q/b": "2", "q/c": "3"}
        store.set_meta_many({"q/a": None, "q/b": "two", "q/zz": None})
        assert store.meta_items("q/") == {"q/b": "two", "q/c": "3"}
        assert store.get_meta("q/b") == "two" and store.get_meta("q") == "whole"
        assert store.meta_items("none/") == {}

    def test_persistence_across_reopen(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        if not store.persistent:
            store.close()
            pytest.skip("in-memory store")
        m, n = memory("durable"), node("thing")
        write(store, (None, m), (None, n), vectors={m.id: unit(3)})
        store.set_meta("embedder", "x:8")
        store.close()
        again = self.make_store(tmp_path)
        try:
            assert again.get_memories(ALICE, [m.id]) == [m]
            assert again.find_nodes(ALICE, ["thing"]) == [n]
            assert set(again.get_vectors([m.id])) == {m.id}
            assert again.get_meta("embedder") == "x:8"
            assert len(again.journal()) == 2
        finally:
            again.close()

    def test_state_machine_matches_a_dict_model(self, tmp_path: Path) -> None:
        contract = self

        class StoreMachine(RuleBasedStateMachine):
            def __init__(self) -> None:
                super().__init__()
                self.store = contract.make_store(tmp_path / new_id())
                self.model: dict[str, Memory] = {}

            @rule(
                text=st.text(min_size=1, max_size=40),
                who=st.sampled_from([ALICE, BOB, Scope("alice", run_id="r")]),
            )
            def add(self, text: str, who: Scope) -> None:
                m = memory(text, who, minutes=len(self.model))
                write(self.store, (None, m))
                self.model[m.id] = m

            @rule(data=st.data(), text=st.text(min_size=1, max_size=40))
            def update(self, data: st.DataObject, text: str) -> None:
                if not self.model:
                    return
                mid = data.draw(st.sampled_from(sorted(self.model)))
                new = dataclasses.replace(self.model[mid], text=text)
                write(self.store, (self.model[mid], new))
                self.model[mid] = new

            @rule(data=st.data())
            def delete(self, data: st.DataObject) -> None:
                if not self.model:
                    return
                mid = data.draw(st.sampled_from(sorted(self.model)))
                write(self.store, (self.model.pop(mid), None))

            @invariant()
            def agrees(self) -> None:
                for scope in (ALICE, BOB):
                    want = {m.id: m for m in self.model.values() if m.scope.key == scope.key}
                    got = {m.id: m for m in self.store.list_memories(scope)}
                    assert got == want
                    assert self.store.count_memories(scope) == len(want)

            def teardown(self) -> None:
                self.store.close()

        StoreMachine.TestCase.settings = settings(
            max_examples=15,
            stateful_step_count=12,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        StoreMachine.TestCase().runTest()
