"""Stories 6, 8 and 9 end to end, on the in-memory and the folder (SQLite + Chroma) backends.

Time is injected (``SageMemory(clock=...)``) so "weeks of use" and "a year of disuse" take no
real time. Graphs are stated with ``add_graph`` (exact structure, no extractor guesswork) or
extracted by the small ``WhereExtractor`` of the shared conftest.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sage_memory import SageConfig, SageMemory
from sage_memory.config import EvolveConfig
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.testing.fakes import ManualClock, NoGraphExtractor
from sage_memory.types import EdgeSpec, NodeSpec
from tests.conftest import WhereExtractor

START = datetime(2026, 1, 5, 9, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture(params=["memory", "folder"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Path | None:
    return None if request.param == "memory" else tmp_path / "mem"


@pytest.fixture
def mem(backend: Path | None, clock: ManualClock) -> Iterator[SageMemory]:
    m = SageMemory(backend, embedder="hashing", extractor=NoGraphExtractor(), clock=clock)
    yield m
    m.close()


def N(key: str, name: str, label: str = "Concept") -> NodeSpec:
    return NodeSpec(key, name, label)


def E(a: str, b: str, rel: str) -> EdgeSpec:
    return EdgeSpec(a, b, rel)


# -- story 8: reinforcement -----------------------------------------------------------------


def backend_knowledge(mem: SageMemory) -> str:
    """A developer's notes; returns the id of the memory about the FastAPI docs."""
    mem.add_graph(
        "Backend development covers API design, databases, authentication, deployment and testing.",
        nodes=[
            N("b", "backend development"),
            N("a", "API design"),
            N("d", "database schema"),
            N("u", "authentication"),
            N("p", "deployment"),
            N("t", "testing"),
            N("l", "logging"),
        ],
        edges=[*(E("b", x, "REQUIRES") for x in "adupt"), E("b", "l", "RELATED_TO")],
        user_id="dev",
    )
    mem.add_graph(
        "A web framework routes requests; FastAPI, Django and Flask are Python web frameworks.",
        nodes=[
            N("w", "web framework"),
            N("f", "FastAPI", "Tool"),
            N("j", "Django", "Tool"),
            N("k", "Flask", "Tool"),
        ],
        edges=[E(x, "w", "IS_A") for x in "fjk"],
        user_id="dev",
    )
    mem.add_graph(
        "The API design step defines the routes the web framework serves.",
        nodes=[N("a", "API design"), N("w", "web framework")],
        edges=[E("a", "w", "USES")],
        user_id="dev",
    )
    docs = mem.add_graph(
        "FastAPI docs: path operations, dependency injection and pydantic models.",
        nodes=[N("f", "FastAPI", "Tool"), N("x", "pydantic", "Tool")],
        edges=[E("f", "x", "USES")],
        user_id="dev",
    )
    return docs.memory_id


def top3(mem: SageMemory, question: str) -> list[str]:
    return [h.name for h in mem.search(question, user_id="dev").nodes[:3]]


QUESTIONS = (
    "how do I get started with backend development?",
    "backend development checklist for my blog",
    "what are good practices in backend development",
)


def test_story8_usage_brings_fastapi_up_and_long_disuse_lets_it_fade(
    mem: SageMemory, clock: ManualClock
) -> None:
    fastapi_docs = backend_knowledge(mem)
    probe = "what matters most in backend development?"
    assert "FastAPI" not in top3(mem, probe)
    for day in range(6):  # six sessions: a backend question, then the FastAPI docs are opened
        clock.advance(days=1)
        mem.search(QUESTIONS[day % 3], user_id="dev")
        mem.feedback(fastapi_docs, user_id="dev")
    report = mem.evolve(user_id="dev")
    assert report.counts()["applied"]["associate"] >= 1
    learnt = [p for p in report.applied if p.op == "associate" and "FastAPI" in p.summary]
    assert any("backend development" in p.summary for p in learnt)
    assert "FastAPI" in top3(mem, probe)
    assert "FastAPI" in top3(mem, "any tips for backend development work?")
    # A year without that pattern: the learnt association fades and FastAPI drops back.
    clock.advance(days=365)
    faded = mem.evolve(user_id="dev")
    assert any(p.evidence.get("faded") for p in faded.applied)
    assert "FastAPI" not in top3(mem, probe)
    fastapi = mem.find_node("FastAPI", user_id="dev")
    assert all(
        e.relation != "ASSOCIATED_WITH"
        for e in mem.explore(fastapi.id, user_id="dev", hops=1).edges
    )


def test_marking_a_result_unused_weakens_its_link(mem: SageMemory, clock: ManualClock) -> None:
    backend_knowledge(mem)
    logging_ = mem.find_node("logging", user_id="dev")
    (link,) = [
        e
        for e in mem.explore("backend development", user_id="dev", hops=1).edges
        if e.target_id == logging_.id
    ]
    for _ in range(5):
        result = mem.search("backend development", user_id="dev")
        mem.feedback(logging_.id, used=False, user_id="dev", result=result)
    mem.evolve(user_id="dev", operations=["reinforce"])
    (after,) = [
        e
        for e in mem.explore("backend development", user_id="dev", hops=1).edges
        if e.id == link.id
    ]
    assert after.weight < link.weight


# -- story 9: duplicates and merges ---------------------------------------------------------


def duplicate_knowledge(mem: SageMemory) -> None:
    def g(text: str, nodes: list[NodeSpec], edges: list[EdgeSpec]) -> None:
        mem.add_graph(text, nodes=nodes, edges=edges, user_id="ana")

    g(
        "I loaded sales_data.csv with pd.read_csv and summed the amount column.",
        [N("r", "pd.read_csv", "Tool"), N("f", "sales_data.csv", "Document"), N("a", "amount")],
        [E("r", "f", "USES"), E("r", "a", "REFERENCES")],
    )
    g(
        "pandas.read_csv parses a CSV file such as sales_data.csv into a DataFrame.",
        [
            N("r", "pandas.read_csv", "Tool"),
            N("d", "DataFrame"),
            N("f", "sales_data.csv", "Document"),
        ],
        [E("r", "d", "RESULTED_IN"), E("r", "f", "USES")],
    )
    g(
        "Deep learning trains neural networks with backpropagation on GPUs.",
        [
            N("d", "deep learning"),
            N("n", "neural networks"),
            N("b", "backpropagation"),
            N("g", "GPU", "Tool"),
        ],
        [E("d", "n", "USES"), E("d", "b", "USES"), E("d", "g", "USES")],
    )
    g(
        "Deep neural networks are neural networks trained by backpropagation, usually on a GPU.",
        [
            N("x", "deep neural networks"),
            N("n", "neural networks"),
            N("b", "backpropagation"),
            N("g", "GPU", "Tool"),
        ],
        [E("x", "n", "IS_A"), E("x", "b", "USES"), E("x", "g", "USES")],
    )
    g(
        "Machine learning finds patterns in data.",
        [N("m", "machine learning"), N("p", "data")],
        [E("m", "p", "USES")],
    )


def records(path: Path) -> tuple[str, list[str]]:
    """The export's header and its records, in a canonical order (rows re-inserted by an undo
    come back at the end of the table, so file order alone may differ)."""
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    return header, sorted(lines)


def merge_of(mem: SageMemory, *names: str) -> str:
    for s in mem.review(user_id="ana"):
        if s.op == "merge" and set(s.evidence["names"]) == set(names):
            return s.id
    raise AssertionError(f"no merge suggestion for {names}: {[s.summary for s in mem.review()]}")


def test_story9_merges_are_suggested_with_evidence_accepted_and_undone_exactly(
    mem: SageMemory, clock: ManualClock, tmp_path: Path
) -> None:
    duplicate_knowledge(mem)
    report = mem.evolve(user_id="ana")
    assert report.counts()["applied"].get("merge", 0) == 0  # merges wait for review by default
    merges = {
        frozenset(s.evidence["names"]): s for s in mem.review(user_id="ana") if s.op == "merge"
    }
    pandas = merges[frozenset({"pd.read_csv", "pandas.read_csv"})]
    deep = merges[frozenset({"deep learning", "deep neural networks"})]
    assert pandas.evidence["alias_match"] is True and pandas.confidence >= 0.97
    assert deep.evidence["neighbour_overlap"] == 1.0
    assert sorted(deep.evidence["shared_neighbours"]) == [
        "GPU",
        "backpropagation",
        "neural networks",
    ]
    assert frozenset({"deep neural networks", "neural networks"}) not in merges  # IS_A: two things
    assert frozenset({"machine learning", "deep learning"}) not in merges
    assert report.metrics["nodes"] == 12
    assert report.metrics["duplicate_candidate_rate"] == round(len(merges) / 12, 4)

    before = tmp_path / "before.jsonl"
    mem.export(before, user_id="ana")
    graph = mem.graph(user_id="ana", include_expired=True)
    ids = {n.name: n.id for n in graph.nodes}
    clock.advance(hours=1)
    changes = mem.accept(deep.id)
    keep_name, drop_name = deep.evidence["names"]
    keep, drop = ids[keep_name], ids[drop_name]
    after = mem.graph(user_id="ana", include_expired=True)
    assert drop not in {n.id for n in after.nodes}
    assert all(drop not in (e.source_id, e.target_id) for e in after.edges)  # every edge moved
    merged = next(n for n in after.nodes if n.id == keep)
    assert drop_name in merged.aliases
    moved = {e.target_id: e for e in after.edges if e.source_id == keep}
    names = {n.id: n.name for n in after.nodes}
    assert {names[t] for t in moved} == {"neural networks", "backpropagation", "GPU"}
    # the two USES-backpropagation facts became one, supported by both memories
    assert len(moved[ids["backpropagation"]].memory_ids) == 2
    assert mem.find_node(drop_name, user_id="ana").id == keep  # the old name still finds it
    assert mem.review(user_id="ana", status="accepted")[0].batch_id == changes[0].batch_id

    mem.undo(changes[0].batch_id)
    restored = tmp_path / "restored.jsonl"
    mem.export(restored, user_id="ana")
    assert restored.read_bytes() == before.read_bytes()  # the test: identical exports

    pandas_changes = mem.accept(merge_of(mem, "pd.read_csv", "pandas.read_csv"))
    kept = mem.find_node("pd.read_csv", user_id="ana")
    assert kept.name == "pandas.read_csv" and "pd.read_csv" in kept.aliases
    mem.undo(pandas_changes[0].batch_id)
    mem.export(restored, user_id="ana")
    assert records(restored) == records(before)


def test_a_person_can_merge_directly_and_reject_suggestions(mem: SageMemory) -> None:
    duplicate_knowledge(mem)
    mem.evolve(user_id="ana")
    deep = merge_of(mem, "deep learning", "deep neural networks")
    rejected = mem.reject(deep)
    assert rejected.status == "rejected"
    mem.evolve(user_id="ana")  # a rejected suggestion is not made again
    assert all(
        s.id != deep
        and set(s.evidence.get("names", ())) != {"deep learning", "deep neural networks"}
        for s in mem.review(user_id="ana")
    )
    with pytest.raises(ValidationError):
        mem.accept(deep)
    changes = mem.merge("machine learning", "deep learning", user_id="ana")
    ml = mem.find_node("machine learning", user_id="ana")
    assert "deep learning" in ml.aliases
    assert {c.op for c in changes} >= {"update", "delete"}
    with pytest.raises(NotFoundError):
        mem.accept("no-such-suggestion")


# -- story 6: facts that change ---------------------------------------------------------------


@pytest.fixture
def where(backend: Path | None, clock: ManualClock) -> Iterator[SageMemory]:
    m = SageMemory(backend, embedder="hashing", extractor=WhereExtractor(), clock=clock)
    yield m
    m.close()


MARCH, APRIL, JUNE = (datetime(2026, m, 1, tzinfo=UTC) for m in (3, 4, 6))


def test_story6_facts_learnt_out_of_order_are_put_back_in_time_order(
    where: SageMemory, clock: ManualClock
) -> None:
    # The June memory arrives first; the March one is imported later (a backlog). World time
    # decides at once: Paris becomes history ending when Berlin starts, Berlin stays current.
    where.add("Alice moved to Berlin", user_id="alice", timestamp=JUNE)
    clock.advance(minutes=5)
    late = where.add("Alice lives in Paris", user_id="alice", timestamp=MARCH)
    names = {n.id: n.name for n in where.graph(user_id="alice").nodes}
    current = where.explore("Alice", user_id="alice", hops=1)
    assert [names[e.target_id] for e in current.edges] == ["Berlin"]
    history = where.explore("Alice", user_id="alice", hops=1, include_expired=True)
    paris = next(e for e in history.edges if names[e.target_id] == "Paris")
    assert (paris.valid_from, paris.valid_to) == (MARCH, JUNE)  # kept as history, not deleted
    assert paris.is_current(APRIL + timedelta(days=14)) and not paris.is_current(JUNE)
    assert "Berlin" in where.search("where does Alice live?", user_id="alice").context
    # Nothing is left for the evolver to repair.
    clock.advance(minutes=5)
    report = where.evolve(user_id="alice")
    assert [p for p in report.applied if p.op == "expire_conflicts"] == []
    # Undoing the late add takes the backlog fact away; Berlin stays as it was. (The run and
    # the search's access notes came later, hence force.)
    where.undo(where.history(late.memory_id)[0].batch_id, force=True)
    back = where.explore("Alice", user_id="alice", hops=1, include_expired=True)
    assert [(names[e.target_id], e.valid_to) for e in back.edges] == [("Berlin", None)]


def test_story6_close_evidence_becomes_a_review_item(mem: SageMemory, clock: ManualClock) -> None:
    for _ in range(2):
        mem.add_graph(
            "Alice works at Acme",
            nodes=[N("a", "Alice", "Person"), N("c", "Acme")],
            edges=[EdgeSpec("a", "c", "works at", confidence=0.9)],
            user_id="alice",
            timestamp=MARCH,
        )
    mem.add_graph(
        "Alice might work at Globex now",
        nodes=[N("a", "Alice", "Person"), N("g", "Globex")],
        edges=[EdgeSpec("a", "g", "works at", confidence=0.5)],
        user_id="alice",
        timestamp=JUNE,
    )
    report = mem.evolve(user_id="alice")
    assert not [p for p in report.applied if p.op == "expire_conflicts"]
    (item,) = [s for s in mem.review(user_id="alice") if s.op == "expire_conflicts"]
    assert item.evidence["votes"] == {
        "recency": "winner",
        "confidence": "loser",
        "sources": "loser",
    }
    changes = mem.accept(item.id)
    (expired,) = [c for c in changes if c.entity == "edge"]
    assert expired.after is not None and expired.after["expired_at"] is not None
    assert mem.stats(user_id="alice")["edges"] == 2  # expired, not deleted


# -- runs: undo, dry run, as_of, triggers, metrics --------------------------------------------


def test_undo_of_a_whole_run_restores_every_weight_and_edge(
    mem: SageMemory, clock: ManualClock, tmp_path: Path
) -> None:
    docs = backend_knowledge(mem)
    for _ in range(4):
        clock.advance(days=2)
        mem.search("backend development", user_id="dev")
        mem.feedback(docs, user_id="dev")
    before = tmp_path / "before.jsonl"
    mem.export(before, user_id="dev")
    report = mem.evolve(user_id="dev")
    assert report.changes > 0 and {"reinforce", "associate", "decay"} <= set(
        report.counts()["applied"]
    )
    assert len({c.batch_id for c in mem.history(report.proposed[0].evidence["edge"])}) >= 2
    mem.undo(report.batch_id)
    after = tmp_path / "after.jsonl"
    mem.export(after, user_id="dev")
    assert records(after) == records(before)


def test_a_dry_run_proposes_and_writes_nothing(mem: SageMemory, tmp_path: Path) -> None:
    duplicate_knowledge(mem)
    before = tmp_path / "before.jsonl"
    mem.export(before)
    journal = len(mem.store.journal())
    report = mem.evolve(dry_run=True)
    assert report.dry_run and report.changes == 0 and report.suggestions
    assert mem.review() == [] and len(mem.store.journal()) == journal
    after = tmp_path / "after.jsonl"
    mem.export(after)
    assert records(after) == records(before)
    assert mem.stats()["quality"] is None  # no run has been recorded
    with pytest.raises(ValidationError, match="unknown evolution operation"):
        mem.evolve(operations=["merge", "teleport"])


def test_as_of_reads_the_memory_as_it_was(
    where: SageMemory, clock: ManualClock, tmp_path: Path
) -> None:
    where.add("Alice lives in Paris", user_id="alice", timestamp=MARCH)
    clock.advance(days=30)
    t = clock.now
    clock.advance(days=30)
    where.add("Alice moved to Berlin", user_id="alice", timestamp=JUNE)
    with where.as_of(t) as past:
        assert [m.text for m in past.get_all(user_id="alice")] == ["Alice lives in Paris"]
        sub = past.explore("Alice", user_id="alice", hops=1)
        assert [n.name for n in sub.nodes if n.name != "Alice"] == ["Paris"]
        assert "Berlin" not in past.search("where does Alice live?", user_id="alice").context
        assert past.export(tmp_path / "past.jsonl") == 4  # a memory, two nodes, one edge
        assert past.stats()["as_of"] == t.isoformat()
        edge = sub.edges[0]
        assert [c.op for c in past.history(edge.id)] == ["insert"]  # the expiry came later
        with pytest.raises(AttributeError, match="read-only"):
            past.add("Alice moved to Rome", user_id="alice")
    assert len(where.history(edge.id)) == 2


def test_every_n_adds_triggers_a_run_and_stats_report_quality(
    backend: Path | None, clock: ManualClock
) -> None:
    cfg = SageConfig(embedder="hashing", evolve=EvolveConfig(every_n_adds=2))
    with SageMemory(backend, config=cfg, extractor=WhereExtractor(), clock=clock) as m:
        assert m.stats(user_id="bob")["quality"] is None
        m.add("Bob lives in Rome", user_id="bob")
        assert m.stats(user_id="bob")["quality"] is None
        m.add("Carol lives in Oslo", user_id="bob")  # the second add runs a pass
        first = m.stats(user_id="bob")["quality"]
        assert first["metrics"]["nodes"] == 4 and first["deltas"] == {}
        m.add("Dan lives in Rome", user_id="bob")
        m.add("Eve lives in Rome", user_id="bob")
        second = m.stats(user_id="bob")["quality"]
        assert second["metrics"]["nodes"] == 6 and second["deltas"]["nodes"] == 2


def test_the_background_schedule_runs_passes_until_closed(clock: ManualClock) -> None:
    cfg = SageConfig(embedder="hashing", evolve=EvolveConfig(schedule_seconds=0.01))
    m = SageMemory(config=cfg, extractor=WhereExtractor(), clock=clock)
    try:
        m.add("Bob lives in Rome", user_id="bob")
        schedule = m._schedule
        assert schedule is not None
        deadline = datetime.now(UTC) + timedelta(seconds=30)
        while m.stats(user_id="bob")["quality"] is None and datetime.now(UTC) < deadline:
            schedule._stop.wait(0.01)
        assert m.stats(user_id="bob")["quality"] is not None
    finally:
        m.close()
    assert m._schedule is not None and not m._schedule._thread.is_alive()
    assert m._schedule.errors == []


def test_feedback_needs_ids(mem: SageMemory) -> None:
    with pytest.raises(ValidationError):
        mem.feedback([], user_id="u")
    assert isinstance(mem.feedback("unknown-id", user_id="u"), str)  # unknown ids are ignored
    assert json.loads(json.dumps(mem.evolve(user_id="u").metrics))["nodes"] == 0


# -- the command line ------------------------------------------------------------------------


def test_cli_evolve_review_accept_reject_and_undo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sage_memory.cli import main

    folder = tmp_path / "mem"
    with SageMemory(folder, embedder="hashing", extractor=NoGraphExtractor()) as m:
        duplicate_knowledge(m)
    base = ["--path", str(folder), "--user", "ana", "--embedder", "hashing"]

    def cli(*argv: str) -> Any:
        code = main([*base, *argv, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    dry = cli("evolve", "--dry-run")
    assert dry["dry_run"] is True and dry["changes"] == 0
    assert dry["suggested"]["merge"] == 2 and cli("review") == []
    run = cli("evolve", "--apply")
    assert run["metrics"]["nodes"] == 12
    items = cli("review")
    assert isinstance(items, list) and {x["op"] for x in items} >= {"merge"}
    pandas = next(x for x in items if "pandas.read_csv" in x["summary"])
    deep = next(x for x in items if "deep" in x["summary"] and x["op"] == "merge")
    accepted = cli("review", "accept", pandas["id"])
    assert accepted["changes"] > 0
    assert cli("review", "reject", deep["id"]) == {"rejected": deep["id"]}
    assert {x["id"] for x in cli("review")} & {pandas["id"], deep["id"]} == set()
    assert cli("undo", accepted["batch_id"])["undone"] > 0
    with SageMemory(folder, embedder="hashing", extractor=NoGraphExtractor()) as m:
        assert {n.name for n in m.graph(user_id="ana").nodes} >= {"pd.read_csv", "pandas.read_csv"}
    with pytest.raises(SystemExit):  # --dry-run or --apply must be chosen
        main([*base, "evolve"])
