"""Communities and summaries, relation discovery, hygiene and metrics, prompt parsing, replay."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sage_memory.config import EvolveConfig
from sage_memory.evolve import communities, discovery, history, hygiene, prompts
from sage_memory.evolve.duplicates import SUMMARY_LABEL
from sage_memory.types import Change, ChangeOp, Edge, Memory, Node, Scope

T0 = datetime(2026, 3, 1, tzinfo=UTC)
S = Scope(user_id="u")


def node(nid: str, label: str = "Concept", **kw: Any) -> Node:
    return Node(id=nid, scope=S, name=nid, label=label, created_at=T0, updated_at=T0, **kw)


def edge(a: str, b: str, rel: str = "RELATED_TO", **kw: Any) -> Edge:
    return Edge(
        id=f"{a}-{rel}-{b}", scope=S, source_id=a, target_id=b, relation=rel, created_at=T0, **kw
    )


# -- communities ---------------------------------------------------------------------------


def two_cliques() -> tuple[list[Node], list[Edge]]:
    left, right = ["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]
    edges = [
        edge(x, y, fact=f"{x} goes with {y}")
        for grp in (left, right)
        for i, x in enumerate(grp)
        for y in grp[i + 1 :]
    ]
    edges.append(edge("a1", "b1", weight=0.1))
    return [node(i) for i in left + right], edges


def test_louvain_finds_the_two_cliques_and_ignores_small_or_summary_groups() -> None:
    nodes, edges = two_cliques()
    nodes += [node("x"), node("y"), node("s", SUMMARY_LABEL)]
    edges += [edge("x", "y"), edge("s", "a1", "SUMMARIZES")]
    found = communities.detect(nodes, edges)
    assert sorted(map(tuple, found)) == [("a1", "a2", "a3", "a4"), ("b1", "b2", "b3", "b4")]
    assert communities.detect(nodes, edges) == found  # deterministic


def test_extractive_summary_and_summary_node_with_links_to_every_member() -> None:
    nodes, edges = two_cliques()
    members = nodes[:4]
    title, text = communities.extractive_summary(members, edges)
    assert title.startswith("Topic: a1")
    assert text.startswith("4 related items:") and "Key facts:" in text
    p = communities.plan_summary(S, members, title, text, method="extractive", now=T0)
    summary = p.puts[0]
    assert isinstance(summary, Node) and summary.label == "Summary"
    links = [e for e in p.puts if isinstance(e, Edge)]
    assert {e.target_id for e in links} == {"a1", "a2", "a3", "a4"}
    assert all(e.relation == "SUMMARIZES" and e.source_id == summary.id for e in links)
    # The community changes: the existing summary is updated, not duplicated.
    moved = [*members[:3], node("a5")]
    again = communities.plan_summary(
        S, moved, title, text, method="extractive", now=T0, existing=summary, existing_edges=links
    )
    assert again.puts[0].id == summary.id
    assert [e.target_id for e in again.puts[1:] if isinstance(e, Edge)] == ["a5"]
    assert [e.target_id for e in again.removes if isinstance(e, Edge)] == ["a4"]
    assert (
        communities.match_existing(
            ["a1", "a2", "a3", "a5"], {summary.id: {"a1", "a2", "a3", "a4"}}
        )[0]
        == summary.id
    )
    assert (
        communities.match_existing(["a1", "z1", "z2", "z3"], {summary.id: {"a1", "a2"}})[0] is None
    )


# -- discovery -----------------------------------------------------------------------------


def test_vague_edges_are_suggested_as_the_label_pairs_usual_relation() -> None:
    labels = {f"t{i}": "Task" for i in range(6)} | {f"r{i}": "Tool" for i in range(6)}
    typed = [edge(f"t{i}", f"r{i}", "USES") for i in range(4)] + [edge("t4", "r4", "REQUIRES")]
    vague = [edge("t5", "r5", "RELATED_TO", fact="the task and the tool")]
    patterns = discovery.label_patterns(typed + vague, labels)
    assert patterns["Task", "Tool"] == Counter({"USES": 4, "REQUIRES": 1})
    (p,) = discovery.by_label_pattern(typed + vague, labels, patterns, T0)
    assert p.needs_review and p.op == "upgrade_relation"
    assert p.confidence == 0.8 and p.payload == {"relation": "USES", "edges": [vague[0].id]}
    (up,) = p.puts
    assert isinstance(up, Edge)
    assert up.relation == "USES" and up.attributes["upgraded_from"] == "RELATED_TO"


def test_usage_confirms_possible_relations_and_new_types_are_schema_changes() -> None:
    maybe = edge("a", "b", "POSSIBLY_RELATED_TO")
    (used,) = discovery.by_usage([maybe], [("a", "b", 9.0, 4)], 3, T0)
    assert used.needs_review and used.payload["relation"] == "RELATED_TO"
    assert discovery.by_usage([maybe], [("a", "b", 2.0, 2)], 3, T0) == []
    invented = [
        edge(f"x{i}", f"y{i}", attributes={"original_relation": "implements"}) for i in range(3)
    ]
    (new,) = discovery.new_relation_types(invented, {"USES"}, T0)
    assert new.schema_change and new.needs_review and new.key == "new_relation:IMPLEMENTS"
    assert discovery.new_relation_types(invented[:2], {"USES"}, T0) == []
    assert discovery.new_relation_types(invented, {"IMPLEMENTS"}, T0) == []


# -- hygiene -------------------------------------------------------------------------------


def memory(mid: str, salience: float, last: datetime | None = None) -> Memory:
    return Memory(
        id=mid,
        text=mid,
        scope=S,
        timestamp=T0,
        created_at=T0,
        updated_at=T0,
        salience=salience,
        last_accessed=last,
    )


def test_stale_low_salience_memories_are_archived_not_deleted() -> None:
    cfg = EvolveConfig(archive_after_days=100, archive_salience=0.2)
    now = T0 + timedelta(days=200)
    ms = [memory("old", 0.1), memory("used", 0.1, now - timedelta(days=5)), memory("key", 0.9)]
    (p,) = hygiene.stale_memories(ms, now, cfg)
    (archived,) = p.puts
    assert isinstance(archived, Memory) and archived.id == "old" and archived.archived
    assert p.removes == ()


def test_orphans_have_no_edges_and_no_surviving_memories() -> None:
    lonely = node("n1", memory_ids=("gone",))
    supported = node("n2", memory_ids=("alive",))
    linked = node("n3")
    props = hygiene.orphans([lonely, supported, linked], {"n3": 2}, {"alive"})
    assert [p.removes[0].id for p in props] == ["n1"]


def test_quality_metrics_and_their_deltas() -> None:
    raw = hygiene.combine(
        [
            {
                "nodes": 8,
                "edges": 10,
                "current_edges": 8,
                "isolated_nodes": 1,
                "confidence_sum": 6.0,
                "relations": {"USES": 4, "IS_A": 4},
            },
            {
                "nodes": 2,
                "edges": 0,
                "current_edges": 0,
                "isolated_nodes": 2,
                "confidence_sum": 0.0,
                "relations": {},
            },
        ]
    )
    q = hygiene.quality(raw, merge_candidates=2)
    assert q == {
        "nodes": 10,
        "edges": 10,
        "current_edges": 8,
        "isolated_nodes": 3,
        "duplicate_candidate_rate": 0.2,
        "relation_entropy": 1.0,
        "mean_confidence": 0.75,
    }
    assert hygiene.entropy({"A": 5}) == 0.0
    assert hygiene.deltas(q, None) == {}
    assert hygiene.deltas(q, {**q, "nodes": 7, "relation_entropy": 1.5})["nodes"] == 3
    assert hygiene.deltas(q, {**q, "relation_entropy": 1.5})["relation_entropy"] == -0.5


# -- prompts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no json here",
        "{broken",
        '["a list"]',
        '{"title": 3, "summary": "x"}',
        '{"title": "  ", "summary": "x"}',
    ],
)
def test_garbage_summaries_are_rejected(text: str) -> None:
    assert prompts.parse_summary(text) is None


def test_summaries_and_splits_parse_from_chatty_answers() -> None:
    chatty = (
        'Sure!\n```json\n{"title": "Python web stack", "summary": "FastAPI  serves APIs."}\n```'
    )
    assert prompts.parse_summary(chatty) == ("Python web stack", "FastAPI serves APIs.")
    assert prompts.parse_split(
        '{"split": true, "names": ["Python (language)", "python (snake)"]}', 2
    ) == ["Python (language)", "python (snake)"]
    assert prompts.parse_split('{"split": false, "names": []}', 2) is None
    assert prompts.parse_split('{"split": true, "names": ["a", "a"]}', 2) is None
    assert prompts.parse_split('{"split": true, "names": ["a"]}', 2) is None


# -- replay --------------------------------------------------------------------------------


def change(
    seq_at: datetime, eid: str, after: dict[str, object] | None, op: ChangeOp = "update"
) -> tuple[int, Change]:
    ch = Change(
        id=f"c{seq_at.day}{eid}",
        batch_id="b",
        scope_key=S.key,
        entity="node",
        entity_id=eid,
        op=op,
        before=None,
        after=after,
        at=seq_at,
    )
    return seq_at.day, ch


def test_state_at_keeps_each_rows_last_state_before_the_time() -> None:
    d = [T0 + timedelta(days=i) for i in range(4)]
    entries = [
        change(d[0], "n1", {"v": 1}, "insert"),
        change(d[1], "n2", {"v": 1}, "insert"),
        change(d[2], "n1", {"v": 2}),
        change(d[3], "n2", None, "delete"),
    ]
    at_1 = history.state_at(entries, d[1])
    assert [(c.entity_id, c.after) for c in at_1] == [("n1", {"v": 1}), ("n2", {"v": 1})]
    at_3 = history.state_at(entries, d[3])
    assert [(c.entity_id, c.after, c.op) for c in at_3] == [("n1", {"v": 2}, "insert")]
    assert history.state_at(entries, T0 - timedelta(days=1)) == []
