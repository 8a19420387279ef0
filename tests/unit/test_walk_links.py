"""The walk's links kept between searches (retrieve/walk_links.py) never change a result.

On a real folder store, a search whose walk reads links kept by earlier searches returns
exactly what the same search returns with nothing kept, after every kind of write (add,
update, delete, a merge, its undo, another user's add), and one user's kept links never
reach another user's search.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sage_memory import SageConfig, SageMemory
from sage_memory.config import RetrieveConfig
from sage_memory.retrieve.walk_links import WalkLinks
from sage_memory.types import EdgeSpec, NodeSpec, RetrievalResult

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
NOW = datetime(2026, 7, 1, tzinfo=UTC)
DAY = timedelta(days=1)
QUERIES = (
    "What has Dana accomplished lately?",
    "Where does Dana work?",
    "Who mentors Orion Works?",
    "What did Orion Works win?",
)


def _open(path: Path | None) -> SageMemory:
    # The "graph" preset: the associative walk (what keeps links) weighs as much as the words.
    config = SageConfig(retrieve=RetrieveConfig(preset="graph"))
    return SageMemory(path, config=config, embedder="hashing", clock=lambda: NOW)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[SageMemory]:
    m = _open(tmp_path / "m")
    yield m
    m.close()


def world(mem: SageMemory, user: str) -> dict[str, str]:
    """Dana mentors Orion Works, which won a medal; Dana works at Vela Labs; filler."""
    fill = [
        {"text": f"The canteen menu {i} listed soup and bread.", "timestamp": T0 + i * DAY}
        for i in range(8)
    ]
    mem.add_many(fill, user_id=user, infer=False)
    dana, ow = NodeSpec("dana", "Dana", "Person"), NodeSpec("ow", "Orion Works", "Organization")
    ids = {}
    ids["bridge"] = mem.add_graph(
        "Dana mentors Orion Works on Saturdays.",
        nodes=[dana, ow],
        edges=[EdgeSpec("dana", "ow", "RELATED_TO", "Dana mentors Orion Works")],
        user_id=user,
        timestamp=T0 + 20 * DAY,
    ).memory_id
    ids["medal"] = mem.add_graph(
        "Orion Works won a gold medal in Berlin.",
        nodes=[ow, NodeSpec("medal", "gold medal", "Concept")],
        user_id=user,
        timestamp=T0 + 40 * DAY,
    ).memory_id
    ids["job"] = mem.add_graph(
        "Dana joined Vela Labs as an engineer.",
        nodes=[dana, NodeSpec("vela", "Vela Labs", "Organization")],
        edges=[EdgeSpec("dana", "vela", "WORKS_AT", "Dana works at Vela Labs")],
        user_id=user,
        timestamp=T0 + 50 * DAY,
    ).memory_id
    return ids


def seen(result: RetrievalResult) -> dict[str, Any]:
    """Everything a search returns but its time."""
    return {
        "memories": [(h.id, h.text, h.score, h.channels, h.why, h.expired) for h in result],
        "nodes": [(h.node.id, h.node.name, h.score) for h in result.nodes],
        "edges": [(h.edge.id, h.edge.fact, h.score) for h in result.edges],
        "context": result.context,
    }


def searches(mem: SageMemory, user: str) -> list[dict[str, Any]]:
    return [seen(mem.search(q, user_id=user, limit=5)) for q in QUERIES]


def cold(mem: SageMemory, user: str) -> list[dict[str, Any]]:
    """The same searches with no link kept (a new cache, dropped after; the warm one stays)."""
    warm = mem.retriever._links
    mem.retriever._links = WalkLinks()
    try:
        return searches(mem, user)
    finally:
        mem.retriever._links = warm


def kept(mem: SageMemory) -> int:
    return len(mem.retriever._links._items)


def check(mem: SageMemory, user: str) -> list[dict[str, Any]]:
    """Searches with the links kept so far answer as searches with none kept."""
    warm = searches(mem, user)
    assert kept(mem) > 0  # the walk did keep links: the comparison means something
    assert warm == cold(mem, user)
    assert warm == searches(mem, user)  # and again, now all of them read from the cache
    return warm


def test_kept_links_answer_as_fresh_ones_after_every_kind_of_write(mem: SageMemory) -> None:
    ids = world(mem, "u")
    before = check(mem, "u")
    steps = []
    # add: a new memory about Orion Works (a kept entity's list of memories grows)
    added = mem.add_graph(
        "Orion Works opened a lab in Lisbon with Dana.",
        nodes=[NodeSpec("ow", "Orion Works", "Organization"), NodeSpec("dana", "Dana", "Person")],
        edges=[EdgeSpec("dana", "ow", "LEADS", "Dana leads the Orion Works lab")],
        user_id="u",
        timestamp=T0 + 60 * DAY,
    ).memory_id
    steps.append(check(mem, "u"))
    # update: the medal memory now tells another story (its entities are re-extracted)
    mem.update(ids["medal"], "The canteen menu changed to pasta.", user_id="u")
    steps.append(check(mem, "u"))
    # delete: the bridge between Dana and Orion Works goes
    mem.delete(ids["bridge"], user_id="u")
    steps.append(check(mem, "u"))
    # a merge: Vela Labs becomes Orion Works (edges re-pointed, provenance joined)
    merge = mem.merge("Orion Works", "Vela Labs", user_id="u")
    steps.append(check(mem, "u"))
    # its undo: both nodes as they were
    mem.undo(merge[0].batch_id)
    steps.append(check(mem, "u"))
    mem.delete(added, user_id="u")
    steps.append(check(mem, "u"))
    # Every write changed some answer: a search that kept stale links would have shown it.
    for earlier, later in zip([before, *steps], steps, strict=False):
        assert earlier != later


def test_another_users_write_is_seen_by_their_next_search(mem: SageMemory) -> None:
    world(mem, "u")
    world(mem, "v")
    check(mem, "u")
    v_before = check(mem, "v")
    mem.add_graph(
        "Dana won the chess cup with Orion Works.",
        nodes=[NodeSpec("dana", "Dana", "Person"), NodeSpec("ow", "Orion Works", "Organization")],
        user_id="v",
        timestamp=T0 + 70 * DAY,
    )
    check(mem, "u")
    assert check(mem, "v") != v_before


def test_one_users_kept_links_never_reach_another(mem: SageMemory) -> None:
    """Two users with the same names: each search sees its own user's memories only, with the
    scores it gets when the other user never searched."""
    u_ids = world(mem, "u")
    v_ids = world(mem, "v")
    # u has more to say about Dana: her node and its links differ from v's
    for i in range(6):
        mem.add_graph(
            f"Dana gave talk number {i} at Orion Works.",
            nodes=[
                NodeSpec("dana", "Dana", "Person"),
                NodeSpec("ow", "Orion Works", "Organization"),
            ],
            user_id="u",
            timestamp=T0 + (80 + i) * DAY,
        )
    v_alone = cold(mem, "v")
    u_warm = check(mem, "u")
    v_warm = check(mem, "v")
    assert v_warm == v_alone
    u_mems = {m for r in u_warm for m, *_ in r["memories"]}
    v_mems = {m for r in v_warm for m, *_ in r["memories"]}
    assert set(u_ids.values()) & u_mems and set(v_ids.values()) & v_mems
    assert not u_mems & v_mems
    assert not u_mems & {m.id for m in mem.get_all(user_id="v")}


def test_a_users_scores_do_not_depend_on_another_users_data(tmp_path: Path) -> None:
    """No ranking statistic (term rarity, a node's degree or memory count, kept links) mixes
    users: v's searches score alike in a folder where u also lives and searched first, and in
    one where v is alone."""
    shared, alone = _open(tmp_path / "shared"), _open(tmp_path / "alone")
    try:
        world(shared, "u")
        for i in range(6):
            shared.add_graph(
                f"Dana gave talk number {i} at Orion Works.",
                nodes=[NodeSpec("dana", "Dana", "Person")],
                user_id="u",
                timestamp=T0 + (80 + i) * DAY,
            )
        world(shared, "v")
        world(alone, "v")
        searches(shared, "u")

        def texts(mem: SageMemory) -> list[list[tuple[str, float, str]]]:
            return [[(t, s, why) for _, t, s, _, why, _ in r["memories"]] for r in check(mem, "v")]

        assert texts(shared) == texts(alone)
    finally:
        shared.close()
        alone.close()


def test_a_run_and_a_past_time_answer_as_without_kept_links(mem: SageMemory) -> None:
    """A run's search (a view of the partition) and a search as of a past time walk their own
    links: the partition's kept ones never stand in for them."""
    world(mem, "u")
    mem.add_graph(
        "Dana and Orion Works planned the spring fair.",
        nodes=[NodeSpec("dana", "Dana", "Person"), NodeSpec("ow", "Orion Works", "Organization")],
        user_id="u",
        run_id="r1",
        timestamp=T0 + 45 * DAY,
    )
    check(mem, "u")

    def run_and_past() -> list[dict[str, Any]]:
        out = []
        for q in QUERIES:
            out.append(seen(mem.search(q, user_id="u", run_id="r1", limit=5)))
            out.append(seen(mem.search(q, user_id="u", as_of=T0 + 30 * DAY, limit=5)))
        return out

    warm = run_and_past()
    mem.retriever._links = WalkLinks()
    assert warm == run_and_past()


def test_kept_links_are_bounded_by_the_links_they_hold(mem: SageMemory) -> None:
    """The bound counts links, not lists: a few busy entities cannot hold more than it."""
    world(mem, "u")
    cache = WalkLinks(limit=10)
    busy = [(f"m:{i}", 1.0) for i in range(6)]
    for n in range(4):
        session = cache.session(mem.store, "setting")
        assert session is not None
        session.keep({f"n:{n}": busy})
        assert sum(len(links) for links in cache._items.values()) <= 10
        assert session.get(f"n:{n}") == busy  # the newest list stays
    assert cache.session(mem.store, "setting") is not None
    assert cache.session(mem.store, "setting").get("n:0") is None  # the oldest went
