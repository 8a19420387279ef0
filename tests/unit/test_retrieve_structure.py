"""Structure queries: order, requirements, next steps, paths, neighbours and diagnosis chains,
through SageMemory's API, over graphs stated exactly with ``add_graph``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.retrieve import structure as st
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import EdgeSpec, NodeSpec, Scope

T0 = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", extractor=NoGraphExtractor())
    yield m
    m.close()


def blog(mem: SageMemory) -> None:
    """Story 1's graph: a project, three ordered tasks, the backend needs FastAPI."""
    pending = {"status": "pending"}
    mem.add_graph(
        "Blog plan: database, then backend API (FastAPI), then frontend.",
        nodes=[
            NodeSpec("p", "personal blog", "Project"),
            NodeSpec("db", "design the database", "Task", attributes=pending),
            NodeSpec("be", "build the backend API", "Task", attributes=pending),
            NodeSpec("fe", "build the frontend", "Task", attributes=pending),
            NodeSpec("fa", "FastAPI", "Resource"),
        ],
        edges=[
            EdgeSpec("p", "db", "CONTAINS_TASK"),
            EdgeSpec("p", "be", "CONTAINS_TASK"),
            EdgeSpec("p", "fe", "CONTAINS_TASK"),
            EdgeSpec("db", "be", "PRECEDES"),
            EdgeSpec("be", "fe", "PRECEDES"),
            EdgeSpec("be", "fa", "REQUIRES"),
        ],
        user_id="u",
        timestamp=T0,
    )


def names(hits: Sequence[object]) -> list[str]:
    return [h.name for h in hits]  # type: ignore[attr-defined]


def test_order_direct_and_transitive(mem: SageMemory) -> None:
    blog(mem)
    assert names(mem.predecessors("build the backend API", user_id="u")) == ["design the database"]
    assert names(mem.successors("build the backend API", user_id="u")) == ["build the frontend"]
    assert names(mem.predecessors("build the frontend", user_id="u")) == ["build the backend API"]
    assert names(mem.predecessors("build the frontend", transitive=True, user_id="u")) == [
        "build the backend API",
        "design the database",
    ]
    after = mem.successors("design the database", transitive=True, user_id="u")
    assert names(after) == ["build the backend API", "build the frontend"]
    assert "PRECEDES" in after[0].why and "status: pending" in after[0].why
    assert "2 steps away" in after[1].why


def test_requirements_and_neighbours_by_relation(mem: SageMemory) -> None:
    blog(mem)
    needs = mem.requirements("build the backend API", user_id="u")
    assert names(needs) == ["FastAPI"]
    assert needs[0].why.startswith("build the backend API -REQUIRES-> FastAPI; mem ")
    tasks = mem.neighbors("personal blog", relations=["has task"], user_id="u")  # a synonym
    assert sorted(names(tasks)) == [
        "build the backend API",
        "build the frontend",
        "design the database",
    ]
    assert names(mem.neighbors("FastAPI", direction="in", user_id="u")) == ["build the backend API"]
    assert mem.neighbors("FastAPI", direction="out", user_id="u") == []
    with pytest.raises(ValidationError):
        mem.neighbors("FastAPI", direction="sideways", user_id="u")  # type: ignore[arg-type]


def test_next_steps_follow_status_for_a_project_and_a_task(mem: SageMemory) -> None:
    blog(mem)
    assert names(mem.next_steps("personal blog", user_id="u")) == [
        "design the database",  # the only ready one
        "build the backend API",
        "build the frontend",
    ]
    assert names(mem.next_steps("build the backend API", user_id="u")) == [
        "design the database",
        "build the backend API",
        "build the frontend",
    ]
    # "the database design is done", as a HAS_STATUS fact.
    mem.add_graph(
        "the database design is done",
        nodes=[NodeSpec("db", "design the database", "Task"), NodeSpec("d", "done", "Value")],
        edges=[EdgeSpec("db", "d", "HAS_STATUS")],
        user_id="u",
        timestamp=datetime(2026, 3, 5, tzinfo=UTC),
    )
    assert names(mem.next_steps("personal blog", user_id="u")) == [
        "build the backend API",
        "build the frontend",
    ]
    # As of before it was done, the plan was the old one.
    before = mem.next_steps("personal blog", as_of=datetime(2026, 3, 3, tzinfo=UTC), user_id="u")
    assert names(before)[0] == "design the database"


def test_blocked_by_and_depends_on_put_the_target_first(mem: SageMemory) -> None:
    mem.add_graph(
        "deploy waits for tests, tests wait for the build",
        nodes=[NodeSpec("d", "deploy"), NodeSpec("t", "tests"), NodeSpec("b", "build")],
        edges=[EdgeSpec("d", "t", "BLOCKED_BY"), EdgeSpec("t", "b", "DEPENDS_ON")],
        user_id="u",
    )
    assert names(mem.predecessors("deploy", transitive=True, user_id="u")) == ["tests", "build"]
    assert names(mem.successors("build", transitive=True, user_id="u")) == ["tests", "deploy"]


def test_cycles_terminate(mem: SageMemory) -> None:
    mem.add_graph(
        "a loop",
        nodes=[NodeSpec("a", "alpha"), NodeSpec("b", "beta")],
        edges=[EdgeSpec("a", "b", "PRECEDES"), EdgeSpec("b", "a", "PRECEDES")],
        user_id="u",
    )
    assert names(mem.successors("alpha", transitive=True, user_id="u")) == ["beta"]


def test_path_between_two_nodes_in_either_direction(mem: SageMemory) -> None:
    blog(mem)
    path = mem.path_between("design the database", "FastAPI", user_id="u")
    assert [(h.source_name, h.relation, h.target_name) for h in path] == [
        ("design the database", "PRECEDES", "build the backend API"),
        ("build the backend API", "REQUIRES", "FastAPI"),
    ]
    back = mem.path_between("FastAPI", "design the database", user_id="u")
    assert len(back) == 2
    assert mem.path_between("FastAPI", "design the database", max_hops=1, user_id="u") == []
    with pytest.raises(NotFoundError):
        mem.path_between("FastAPI", "no such thing at all", user_id="u")


def test_diagnosis_orders_causes_fixes_and_preconditions(mem: SageMemory) -> None:
    err = "DatabaseError: relation 'user_table' does not exist"
    mem.add_graph(
        "causes and fixes",
        nodes=[
            NodeSpec("e", err, "Error"),
            NodeSpec("c1", "migrations not run"),
            NodeSpec("c2", "models out of sync with the database"),
            NodeSpec("f1", "python manage.py migrate", "Tool"),
        ],
        edges=[
            EdgeSpec("e", "c1", "CAUSED_BY"),
            EdgeSpec("e", "c2", "CAUSED_BY"),
            EdgeSpec("c1", "f1", "SOLVED_BY"),
        ],
        user_id="u",
    )
    # The precondition is stated of another phrasing of the fix.
    mem.add_graph(
        "running migrations depends on the database server running",
        nodes=[NodeSpec("r", "running migrations"), NodeSpec("s", "database server running")],
        edges=[EdgeSpec("r", "s", "DEPENDS_ON")],
        user_id="u",
    )
    node = mem.find_node(err, user_id="u")
    d = st.diagnose(mem.store, Scope("u"), node.id)
    assert sorted(s.node.name for s in d.causes) == [
        "migrations not run",
        "models out of sync with the database",
    ]
    assert [s.node.name for s in d.fixes] == ["python manage.py migrate"]
    assert [s.node.name for s in d.preconditions] == ["database server running"]
    assert d
    assert not st.diagnose(
        mem.store, Scope("u"), mem.find_node("running migrations", user_id="u").id
    )


def test_unknown_names_raise_not_found(mem: SageMemory) -> None:
    blog(mem)
    with pytest.raises(NotFoundError):
        mem.next_steps("a project nobody mentioned xyz", user_id="other")


def test_a_run_sees_only_its_own_plan_and_naive_times_are_utc(mem: SageMemory) -> None:
    mem.add_graph(
        "r1: write, then publish",
        nodes=[NodeSpec("w", "write posts", "Task"), NodeSpec("p", "publish", "Task")],
        edges=[EdgeSpec("w", "p", "PRECEDES")],
        user_id="u",
        run_id="r1",
    )
    mem.add_graph(
        "r2: review before publishing",
        nodes=[NodeSpec("r", "review", "Task"), NodeSpec("p", "publish", "Task")],
        edges=[EdgeSpec("r", "p", "PRECEDES")],
        user_id="u",
        run_id="r2",
    )
    assert sorted(names(mem.predecessors("publish", user_id="u"))) == ["review", "write posts"]
    assert names(mem.predecessors("publish", user_id="u", run_id="r1")) == ["write posts"]
    naive = datetime(2030, 1, 1)  # no tzinfo: taken as UTC
    assert sorted(names(mem.predecessors("publish", as_of=naive, user_id="u"))) == [
        "review",
        "write posts",
    ]


def test_a_told_chain_links_on_content_words_not_on_an_auxiliary(mem: SageMemory) -> None:
    # The start note says what "can't" happen; other notes of the story say who "can't"
    # make a meeting. The next link is the note sharing a content word ("firmware"), not
    # one sharing only the auxiliary of a contraction.
    start = mem.add("Vega: we can't ship the kiosks, the card reader firmware is old.", user_id="u")
    for who in ("Ola", "Ben", "Ines"):
        mem.add(f"Vega: {who} can't come Friday, we can swap.", user_id="u")
    for i in range(15):  # other teams' notes: the auxiliary is no rarer than the content word
        mem.add(f"Orion note {i}: the quarterly garden rota is pinned up.", user_id="u")
    target = mem.add(
        "Vega: the new firmware for the card readers is held back until the vendor sends "
        "over the signing key that the build server needs for release.",
        user_id="u",
    )
    scope = Scope("u")
    [first] = mem.store.get_memories(scope, [start.memory.id])
    found = st.told_hops(
        mem.store,
        scope,
        [first],
        known="What holds up the kiosks?",
        anchors="Vega",
        skip=(),
        at=None,
        hops=1,
    )
    assert target.memory.id in [m.id for m in found]


def test_a_notes_facts_are_listed_in_the_order_it_tells_them(mem: SageMemory) -> None:
    # Eight facts of one memory share its storage time: their order must come from the text,
    # not from the random edge ids (a rebuilt folder would list them differently).
    steps = ["sand", "prime", "fill", "rub down", "undercoat", "paint", "varnish", "buff"]
    text = "Order of work: " + ", then ".join(steps) + "."
    keys = [f"n{i}" for i in range(len(steps))]
    added = mem.add_graph(
        text,
        nodes=[NodeSpec(k, s, "Task") for k, s in zip(keys, steps, strict=True)],
        edges=[EdgeSpec(a, b, "PRECEDES", fact=text) for a, b in pairwise(keys)],
        user_id="u",
        timestamp=T0,
    )
    told = st.stated_in(mem.store, Scope("u"), added.memory.id, {"PRECEDES"})
    by_id = {n.id: n.name for n in mem.store.get_nodes(Scope("u"), [e.source_id for e in told])}
    assert [by_id[e.source_id] for e in told] == steps[:-1]
