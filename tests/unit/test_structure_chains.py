"""Chains through SageMemory's API: blockers of blockers, every broader kind, root causes,
followed level by level, each step citing the memory that states it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sage_memory import AsyncSageMemory, SageMemory
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import EdgeSpec, NodeSpec

T0 = datetime(2026, 5, 4, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", extractor=NoGraphExtractor())
    yield m
    m.close()


def state(mem: SageMemory, text: str, src: NodeSpec, rel: str, dst: NodeSpec) -> str:
    """One memory stating one fact; returns the memory id."""
    added = mem.add_graph(
        text, nodes=[src, dst], edges=[EdgeSpec(src.key, dst.key, rel)], user_id="u", timestamp=T0
    )
    return added.memory.id


def names(hits: Sequence[object]) -> list[str]:
    return [h.node.name for h in hits]  # type: ignore[attr-defined]


def test_blockers_one_level_or_the_whole_chain_in_order(mem: SageMemory) -> None:
    launch, signoff = (
        NodeSpec("a", "launch the mobile app", "Task"),
        NodeSpec("b", "QA signoff", "Task"),
    )
    staging, kit = NodeSpec("c", "staging cluster", "Task"), NodeSpec("d", "test devices", "Task")
    m1 = state(mem, "The launch waits on QA signoff.", launch, "BLOCKED_BY", signoff)
    state(mem, "QA signoff depends on the staging cluster.", signoff, "DEPENDS_ON", staging)
    m3 = state(mem, "Staging is held up by the test devices.", staging, "BLOCKED_BY", kit)
    assert names(mem.blockers("launch the mobile app", user_id="u")) == ["QA signoff"]
    chain = mem.blockers("launch the mobile app", transitive=True, user_id="u")
    assert names(chain) == ["QA signoff", "staging cluster", "test devices"]
    assert m1[:8] in chain[0].why and m3[:8] in chain[-1].why
    # Nothing blocks the last link: the walk stops there.
    assert mem.blockers("test devices", transitive=True, user_id="u") == []


def test_ancestors_list_every_broader_kind_most_general_last(mem: SageMemory) -> None:
    flat, coffee = NodeSpec("a", "flat white", "Concept"), NodeSpec("b", "coffee", "Concept")
    hot, drink = NodeSpec("c", "hot drink", "Concept"), NodeSpec("d", "beverage", "Concept")
    state(mem, "A flat white is a coffee.", flat, "IS_A", coffee)
    state(mem, "Coffee is a hot drink.", coffee, "IS_A", hot)
    state(mem, "Hot drinks are beverages.", hot, "IS_A", drink)
    assert names(mem.ancestors("flat white", user_id="u")) == ["coffee", "hot drink", "beverage"]
    assert names(mem.ancestors("hot drink", user_id="u")) == ["beverage"]


def test_causes_reach_the_root_through_either_phrasing(mem: SageMemory) -> None:
    outage, disk = (
        NodeSpec("a", "checkout outage", "Problem"),
        NodeSpec("b", "full disk", "Problem"),
    )
    logs, cron = (
        NodeSpec("c", "unrotated logs", "Problem"),
        NodeSpec("d", "broken cron job", "Problem"),
    )
    state(mem, "The checkout outage came from a full disk.", outage, "CAUSED_BY", disk)
    state(mem, "The disk filled with unrotated logs.", disk, "CAUSED_BY", logs)
    # Stated from the cause's side: the walk follows it backwards.
    state(mem, "A broken cron job left the logs unrotated.", cron, "CAUSES", logs)
    assert names(mem.causes("checkout outage", user_id="u")) == ["full disk"]
    chain = mem.causes("checkout outage", transitive=True, user_id="u")
    assert names(chain)[-1] == "broken cron job"  # the root cause
    assert names(chain) == ["full disk", "unrotated logs", "broken cron job"]


def test_a_cycle_of_blockers_ends_and_transitive_requirements(mem: SageMemory) -> None:
    a, b = NodeSpec("a", "alpha task", "Task"), NodeSpec("b", "beta task", "Task")
    c = NodeSpec("c", "gamma tool", "Resource")
    state(mem, "Alpha is blocked by beta.", a, "BLOCKED_BY", b)
    state(mem, "Beta is blocked by alpha.", b, "BLOCKED_BY", a)
    state(mem, "Beta needs the gamma tool.", b, "REQUIRES", c)
    assert names(mem.blockers("alpha task", transitive=True, user_id="u")) == ["beta task"]
    assert names(mem.requirements("alpha task", user_id="u")) == ["beta task"]
    assert names(mem.requirements("alpha task", transitive=True, user_id="u")) == [
        "beta task",
        "gamma tool",
    ]


def test_async_mirrors_the_chain_methods(tmp_path: Path) -> None:
    async def run() -> list[list[str]]:
        amem = AsyncSageMemory(tmp_path / "m", embedder="hashing", extractor=NoGraphExtractor())
        try:
            x, y = NodeSpec("a", "ship docs", "Task"), NodeSpec("b", "write docs", "Task")
            # The async facade has no add_graph: state the fact through the sync engine it wraps.
            amem.sync.add_graph(
                "Shipping docs waits for writing them.",
                nodes=[x, y],
                edges=[EdgeSpec("a", "b", "BLOCKED_BY")],
                user_id="u",
                timestamp=T0,
            )
            blockers = await amem.blockers("ship docs", transitive=True, user_id="u")
            kinds = await amem.ancestors("ship docs", user_id="u")
            causes = await amem.causes("ship docs", transitive=True, user_id="u")
            return [names(blockers), names(kinds), names(causes)]
        finally:
            await amem.close()

    assert asyncio.run(run()) == [["write docs"], [], []]


def test_search_context_lists_the_whole_chain_for_a_root_cause_question(mem: SageMemory) -> None:
    outage, disk = (
        NodeSpec("a", "checkout outage", "Problem"),
        NodeSpec("b", "full disk", "Problem"),
    )
    logs = NodeSpec("c", "unrotated logs", "Problem")
    state(mem, "The checkout outage came from a full disk.", outage, "CAUSED_BY", disk)
    root = state(mem, "The disk filled with unrotated logs.", disk, "CAUSED_BY", logs)
    context = mem.search("What was the root cause of the checkout outage?", user_id="u").context
    first, deepest = context.find("caused by full disk"), context.find("caused by unrotated logs")
    assert 0 <= first < deepest
    assert root[:8] in context[deepest:]


def test_ancestors_one_level_when_not_transitive(mem: SageMemory) -> None:
    flat, coffee = NodeSpec("a", "flat white", "Concept"), NodeSpec("b", "coffee", "Concept")
    hot = NodeSpec("c", "hot drink", "Concept")
    state(mem, "A flat white is a coffee.", flat, "IS_A", coffee)
    state(mem, "Coffee is a hot drink.", coffee, "IS_A", hot)
    assert names(mem.ancestors("flat white", transitive=False, user_id="u")) == ["coffee"]
    assert names(mem.ancestors("flat white", user_id="u")) == ["coffee", "hot drink"]


def test_a_kind_that_falls_under_or_belongs_to_a_class_has_it_as_a_broader_kind(
    mem: SageMemory,
) -> None:
    lacquer, finish = (
        NodeSpec("a", "tung lacquer", "Concept"),
        NodeSpec("b", "wood finish", "Concept"),
    )
    coating = NodeSpec("c", "surface coating", "Concept")
    state(mem, "A tung lacquer is a wood finish.", lacquer, "IS_A", finish)
    state(mem, "Wood finishes belong to the surface coatings.", finish, "MEMBER_OF", coating)
    last = state(
        mem,
        "Surface coatings fall under the protective layers.",
        coating,
        "PART_OF",
        NodeSpec("d", "protective layer", "Concept"),
    )
    # What the asked thing itself is part of is not a kind of it.
    state(
        mem,
        "The tung lacquer is part of the restoration kit.",
        lacquer,
        "PART_OF",
        NodeSpec("e", "restoration kit", "Concept"),
    )
    kinds = mem.ancestors("tung lacquer", user_id="u")
    assert names(kinds) == ["wood finish", "surface coating", "protective layer"]
    assert last[:8] in kinds[-1].why
    assert names(mem.ancestors("tung lacquer", transitive=False, user_id="u")) == ["wood finish"]
    res = mem.search("What kinds of thing is a tung lacquer, at every level?", user_id="u")
    assert "surface coating falls under protective layer" in res.context
    assert "restoration kit" not in res.context.split("## Next steps")[-1].split("## ")[0]


def test_a_chain_goes_on_through_another_phrasing_of_a_node(mem: SageMemory) -> None:
    # The second fact names the middle task with one word more: two nodes for one thing.
    state(
        mem,
        "The beta release is held up by the billing audit.",
        NodeSpec("a", "beta release", "Task"),
        "BLOCKED_BY",
        NodeSpec("b", "billing audit", "Task"),
    )
    last = state(
        mem,
        "The billing audit report waits on the vendor invoices.",
        NodeSpec("c", "billing audit report", "Task"),
        "BLOCKED_BY",
        NodeSpec("d", "vendor invoices", "Task"),
    )
    assert names(mem.blockers("beta release", user_id="u")) == ["billing audit"]
    chain = mem.blockers("beta release", transitive=True, user_id="u")
    assert names(chain) == ["billing audit", "vendor invoices"]
    assert last[:8] in chain[-1].why
    # A name that merely shares a word with another is not another phrasing of it.
    state(
        mem,
        "The audit log is blocked by the disk quota.",
        NodeSpec("e", "audit log", "Task"),
        "BLOCKED_BY",
        NodeSpec("f", "disk quota", "Task"),
    )
    assert "disk quota" not in names(mem.blockers("beta release", transitive=True, user_id="u"))


def test_search_context_tells_the_links_the_graph_does_not_hold(mem: SageMemory) -> None:
    # Only the first link is a fact in the graph; the next two are told in memories the
    # extractor made nothing of (NoGraphExtractor), and a near-twin story shares their words.
    first = state(
        mem,
        "Nimbus: the launch is blocked by the security review.",
        NodeSpec("a", "launch", "Task"),
        "BLOCKED_BY",
        NodeSpec("b", "security review", "Task"),
    )
    told = mem.add(
        "Nimbus: the security review is waiting on the penetration test report.",
        user_id="u",
        timestamp=T0,
    ).memory_id
    deeper = mem.add(
        "Nimbus: the penetration test report needs the staging credentials from IT.",
        user_id="u",
        timestamp=T0,
    ).memory_id
    mem.add("Cirrus: our launch party is booked for Friday.", user_id="u", timestamp=T0)
    for i in range(12):
        mem.add(f"Nimbus standup {i}: the launch slides look good.", user_id="u", timestamp=T0)
    res = mem.search(
        "What is ultimately holding up the Nimbus launch, every link?", user_id="u", limit=3
    )
    context = res.context
    steps = context[context.index("## Next steps") : context.index("## Related background")]
    assert "launch blocked by security review" in steps and first[:8] in steps
    assert told[:8] in steps and deeper[:8] in steps
    # The memories the answer cites lead the background, even past the search's limit.
    background = context[context.index("## Related background") :].splitlines()[1:4]
    assert [line.split("[mem ")[1][:8] for line in background] == [first[:8], told[:8], deeper[:8]]
    assert "staging credentials" in context


def test_a_plain_question_gets_no_chain(mem: SageMemory) -> None:
    state(
        mem,
        "Nimbus: the launch is blocked by the security review.",
        NodeSpec("a", "launch", "Task"),
        "BLOCKED_BY",
        NodeSpec("b", "security review", "Task"),
    )
    context = mem.search("Who reviewed the launch slides?", user_id="u").context
    assert "## Next steps" not in context


def test_a_chain_from_another_story_is_not_the_answer(mem: SageMemory) -> None:
    # "launch" is one node for two teams; only Nimbus's blocker is a fact in the graph.
    state(
        mem,
        "Nimbus: the launch is blocked by the security review.",
        NodeSpec("a", "launch", "Task"),
        "BLOCKED_BY",
        NodeSpec("b", "security review", "Task"),
    )
    told = mem.add(
        "Cirrus: the launch is stuck until the venue contract is signed.",
        user_id="u",
        timestamp=T0,
    ).memory_id
    context = mem.search(
        "What is ultimately holding up the Cirrus launch, every link?", user_id="u"
    ).context
    steps = context[context.index("## Next steps") : context.index("## Related background")]
    assert "security review" not in steps  # Nimbus's chain, not the one asked about
    assert told[:8] in steps


def test_a_shared_task_node_follows_the_asked_storys_own_links(mem: SageMemory) -> None:
    # Two teams' plans share the task "launch"; each states its own blocker of it. The
    # question names Cirrus: its link is followed, Nimbus's is not.
    launch = NodeSpec("a", "launch", "Task")
    state(
        mem,
        "Nimbus: the launch is blocked by the security review.",
        launch,
        "BLOCKED_BY",
        NodeSpec("b", "security review", "Task"),
    )
    own = state(
        mem,
        "Cirrus: the launch is blocked by the venue contract.",
        launch,
        "BLOCKED_BY",
        NodeSpec("c", "venue contract", "Task"),
    )
    state(
        mem,
        "Cirrus: the venue contract waits on the deposit, says the Cirrus treasurer.",
        NodeSpec("c", "venue contract", "Task"),
        "BLOCKED_BY",
        NodeSpec("d", "deposit", "Task"),
    )
    context = mem.search(
        "What is ultimately holding up the Cirrus launch, every link?", user_id="u"
    ).context
    steps = context[context.index("## Next steps") : context.index("## Related background")]
    assert "launch blocked by venue contract" in steps and own[:8] in steps
    assert "venue contract blocked by deposit" in steps
    assert "security review" not in steps


def test_a_chain_broken_in_the_graph_goes_on_with_the_same_notes_facts(mem: SageMemory) -> None:
    # One note states three levels; the graph lost the middle link ("coffees are hot
    # drinks"), so the walk from "flat white" stops at "coffee". The note's other fact of
    # the asked relation still tells the chain on, cited.
    flat, coffee = NodeSpec("a", "flat white", "Concept"), NodeSpec("b", "coffee", "Concept")
    hot, drink = NodeSpec("c", "hot drink", "Concept"), NodeSpec("d", "beverage", "Concept")
    added = mem.add_graph(
        "Cafe notes: a flat white is a coffee, coffees are hot drinks, hot drinks are beverages.",
        nodes=[flat, coffee, hot, drink],
        edges=[EdgeSpec("a", "b", "IS_A"), EdgeSpec("c", "d", "IS_A")],
        user_id="u",
        timestamp=T0,
    )
    context = mem.search("What is a flat white, at every level?", user_id="u").context
    steps = context[context.index("## Next steps") : context.index("## Related background")]
    assert "flat white a kind of coffee" in steps
    assert "hot drink a kind of beverage" in steps and added.memory.id[:8] in steps


def test_a_twin_storys_link_past_a_node_the_asked_story_reaches_is_not_followed(
    mem: SageMemory,
) -> None:
    # Cirrus's launch waits on the deposit; Nimbus, a near twin, says its deposit waits on a
    # bank transfer. The deposit node is shared: Cirrus states a link of it (the one into
    # it), so the link out of it that only Nimbus states is not Cirrus's next level.
    deposit = NodeSpec("b", "deposit", "Task")
    own = state(
        mem,
        "At Cirrus the launch is blocked by the deposit.",
        NodeSpec("a", "launch", "Task"),
        "BLOCKED_BY",
        deposit,
    )
    state(
        mem,
        "At Nimbus the deposit waits on the bank transfer.",
        deposit,
        "BLOCKED_BY",
        NodeSpec("c", "bank transfer", "Task"),
    )
    context = mem.search(
        "What is ultimately holding up the Cirrus launch, every link?", user_id="u"
    ).context
    steps = context[context.index("## Next steps") : context.index("## Related background")]
    assert "launch blocked by deposit" in steps and own[:8] in steps
    assert "bank transfer" not in steps


def test_links_stored_together_list_in_told_order_not_by_random_ids(tmp_path: Path) -> None:
    """Facts of one ``add_many`` share their storage time and facts of one sentence share
    everything but their random ids: the answer lists them by world time, then in the order
    the sentence names them, so a folder rebuilt from the same inputs answers the same."""
    mem = SageMemory(tmp_path / "m", embedder="hashing")
    subjects = ["release", "audit", "migration", "launch", "rollout", "upgrade", "survey", "move"]
    try:
        mem.add_many(
            [
                item
                for s in subjects
                for item in (
                    {"text": f"The {s} is blocked by the vendor contract.", "timestamp": T0},
                    {
                        "text": f"The {s} is blocked by the budget sign-off.",
                        "timestamp": datetime(2026, 3, 1, tzinfo=UTC),
                    },
                )
            ],
            user_id="u",
        )
        for s in subjects:
            assert names(mem.blockers(s, user_id="u")) == ["budget sign-off", "vendor contract"]
        for i, s in enumerate(subjects):
            plan, brief, nod = (
                NodeSpec("a", f"{s} plan", "Task"),
                NodeSpec("b", f"zeta brief {i}", "Task"),
                NodeSpec("c", f"alpha approval {i}", "Task"),
            )
            said = f"The {s} plan depends on the zeta brief {i} and the alpha approval {i}."
            mem.add_graph(
                said,
                nodes=[plan, brief, nod],
                edges=[EdgeSpec("a", k, "DEPENDS_ON", fact=said) for k in ("b", "c")],
                user_id="u",
                timestamp=T0,
            )
            got = names(mem.blockers(f"{s} plan", user_id="u"))
            assert got == [f"zeta brief {i}", f"alpha approval {i}"]  # told order, not names
    finally:
        mem.close()
