"""The hybrid search end to end on real stores (in memory, and SQLite + Chroma in a folder):
channels and their "why", neighbouring turns, speakers, time windows, time travel, superseded
facts, structure answers, presets, scopes and the token budget."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageConfig, SageMemory
from sage_memory.config import RetrieveConfig
from sage_memory.embed.tokens import default_counter
from sage_memory.errors import ConfigError
from sage_memory.testing.fakes import NoGraphExtractor
from sage_memory.types import EdgeSpec, NodeSpec, Scope, replace
from tests.conftest import WhereExtractor

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
NOW = datetime(2026, 7, 1, tzinfo=UTC)


def open_mem(kind: str, tmp_path: Path, extractor: object, **kw: object) -> SageMemory:
    path = None if kind == "memory" else tmp_path / "m"
    return SageMemory(path, embedder="hashing", extractor=extractor, clock=lambda: NOW, **kw)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "folder"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mem(kind: str, tmp_path: Path) -> Iterator[SageMemory]:
    m = open_mem(kind, tmp_path, NoGraphExtractor())
    yield m
    m.close()


def turns(mem: SageMemory, texts: Sequence[str], start: datetime = T0, **scope: str) -> list[str]:
    items = [{"text": t, "timestamp": start + timedelta(seconds=i)} for i, t in enumerate(texts)]
    return [r.memory_id for r in mem.add_many(items, infer=False, **scope)]  # type: ignore[arg-type]


FILLER = [f"Speaker{i % 3}: note {i} about gardening, weather and groceries" for i in range(30)]


# -- the store method behind neighbouring turns -------------------------------------------------


@pytest.fixture(params=["memory", "folder", "postgres"])
def any_mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    """The three backends, PostgreSQL included (its neighbour query has its own plan)."""
    if request.param != "postgres":
        m = open_mem(request.param, tmp_path, NoGraphExtractor())
    else:
        url = request.getfixturevalue("postgres_url")
        sep = "&" if "?" in url else "?"
        schema = f"adj_{uuid.uuid4().hex[:12]}"
        m = SageMemory(
            url=f"{url}{sep}schema={schema}",
            embedder="hashing",
            extractor=NoGraphExtractor(),
            clock=lambda: NOW,
        )
    yield m
    m.close()


def test_adjacent_memories_in_time_order_per_run(any_mem: SageMemory) -> None:
    mem = any_mem
    a, b, c = turns(mem, ["one", "two", "three"], user_id="u", run_id="r1")
    (x,) = turns(
        mem, ["other run"], start=T0 + timedelta(milliseconds=1500), user_id="u", run_id="r2"
    )
    # Same timestamp as "three": insertion order breaks the tie.
    (d,) = turns(mem, ["four"], start=T0 + timedelta(seconds=2), user_id="u", run_id="r1")
    adj = mem.store.adjacent_memories(Scope("u"), [a, b, c, d, x, "missing"])
    assert adj[a] == (None, b)
    assert adj[b] == (a, c)
    assert adj[c] == (b, d)
    assert adj[x] == (None, None)  # alone in its run
    assert "missing" not in adj
    # A run-scoped read sees only that run.
    assert set(mem.store.adjacent_memories(Scope("u", run_id="r2"), [a, x])) == {x}
    # Archived memories are skipped.
    m = mem.store.get_memories(Scope("u"), [b])[0]
    from sage_memory.engine.journal import Batch
    from sage_memory.engine.unit import UnitOfWork

    uow = UnitOfWork(mem.store, Batch("user", "archive", NOW))
    uow.put(replace(m, archived=True))
    uow.commit()
    assert mem.store.adjacent_memories(Scope("u"), [a])[a] == (None, c)


# -- ranking ----------------------------------------------------------------------------------


def test_the_reply_after_a_matching_question_is_found(mem: SageMemory) -> None:
    ids = turns(
        mem,
        [
            *FILLER[:15],
            "Jo: Did you finish the Berlin marathon last weekend?",
            "Sam: Yes! 4:12!",
            *FILLER[15:],
        ],
        user_id="u",
    )
    reply = ids[16]
    res = mem.search("How long did Sam take for the Berlin marathon?", user_id="u", limit=5)
    hit = next(h for h in res.memories if h.id == reply)
    assert "neighbour" in hit.channels
    assert f"reply to mem {ids[15][:8]}" in hit.why


def test_a_memory_keeps_its_lexical_credit_beyond_the_lexical_seeds(
    kind: str, tmp_path: Path
) -> None:
    """The lexical feature is read for every candidate the channel scores, so a memory's
    lexical credit does not depend on whether it made the channel's few seeds (long messages
    all match many query words: a cut at the seeds would take a dense find's whole credit)."""
    words = ["budget", "tracker", "export", "monthly", "report", "chart", "category", "csv"]
    texts = [
        " ".join(words[: 2 + i % 7] + [f"filler{j}" for j in range(i * 3)] + words[:1])
        for i in range(12)
    ]
    credit = []
    for seeds in (1, 20):
        cfg = SageConfig(embedder="hashing", retrieve=RetrieveConfig(seeds_per_channel=seeds))
        m = SageMemory(None, config=cfg, extractor=NoGraphExtractor(), clock=lambda: NOW)
        try:
            # Hours apart: no turn borrows a neighbour's score, so only the features count.
            items = [{"text": t, "timestamp": T0 + timedelta(hours=i)} for i, t in enumerate(texts)]
            m.add_many(items, user_id="u", infer=False)  # type: ignore[arg-type]
            res = m.search("monthly budget report export as csv", user_id="u", limit=5)
            credit.append(
                {h.text: re.findall(r"lexical \(bm25 [0-9.]+", h.why) for h in res.memories}
            )
        finally:
            m.close()
    shared = credit[0].keys() & credit[1].keys()
    assert len(shared) >= 3
    assert all(credit[0][t] == credit[1][t] != [] for t in shared)


def test_a_named_speaker_ranks_first(mem: SageMemory) -> None:
    turns(
        mem,
        ["Ann: I adopted a cat named Pixel", "Bob: I adopted a cat named Miso", *FILLER],
        user_id="u",
    )
    res = mem.search("What cat did Bob adopt?", user_id="u", limit=3)
    assert res.memories[0].text.startswith("Bob:")
    assert "said by a person the query names" in res.memories[0].why


def test_a_named_date_prefers_memories_of_that_day(mem: SageMemory) -> None:
    turns(mem, ["We talked about the budget"], start=datetime(2026, 3, 9, tzinfo=UTC), user_id="u")
    turns(mem, ["We talked about the budget"], start=datetime(2026, 4, 2, tzinfo=UTC), user_id="u")
    res = mem.search("What did we talk about on 2 April, 2026?", user_id="u", limit=2)
    assert res.memories[0].timestamp.date().isoformat() == "2026-04-02"
    assert "time" in res.memories[0].channels


def test_as_of_hides_later_memories(mem: SageMemory) -> None:
    turns(mem, ["the launch slipped"], start=datetime(2026, 2, 1, tzinfo=UTC), user_id="u")
    turns(mem, ["the launch happened"], start=datetime(2026, 5, 1, tzinfo=UTC), user_id="u")
    res = mem.search("launch", user_id="u", as_of=datetime(2026, 3, 1, tzinfo=UTC))
    assert [h.text for h in res.memories] == ["the launch slipped"]
    naive = mem.search("launch", user_id="u", as_of=datetime(2026, 3, 1))  # taken as UTC
    assert [h.text for h in naive.memories] == ["the launch slipped"]


def test_scopes_never_mix_and_an_empty_scope_finds_nothing(mem: SageMemory) -> None:
    turns(mem, ["alice's secret recipe uses saffron"], user_id="alice")
    assert mem.search("saffron recipe", user_id="bob").memories == ()
    res = mem.search("saffron recipe", user_id="bob")
    assert res.context == "" and res.nodes == () and res.edges == ()


def test_another_scope_never_changes_a_score(mem: SageMemory) -> None:
    """Every channel's statistics, the lexical feature's best included, are the scope's own."""
    turns(mem, ["the saffron recipe needs rice", "saffron tea", *FILLER], user_id="alice")
    before = [(h.id, h.score) for h in mem.search("saffron recipe", user_id="alice").memories]
    turns(mem, ["saffron saffron recipe recipe", "a recipe", *FILLER], user_id="bob")
    after = [(h.id, h.score) for h in mem.search("saffron recipe", user_id="alice").memories]
    assert before == after


def test_the_context_fits_a_small_budget(mem: SageMemory) -> None:
    turns(
        mem,
        [f"fact {i}: " + "a rather long sentence about things " * 5 for i in range(20)],
        user_id="u",
    )
    res = mem.search("a long sentence about things", user_id="u", context_tokens=60)
    count = default_counter()
    assert 0 < count(res.context) <= 60
    assert res.context.startswith("## Related background")


@pytest.mark.parametrize("preset", ["semantic", "lexical", "graph", "recent", "diverse", "rrf"])
def test_every_preset_ranks(kind: str, tmp_path: Path, preset: str) -> None:
    cfg = SageConfig(embedder="hashing", retrieve=RetrieveConfig(preset=preset))
    m = open_mem(kind, tmp_path, NoGraphExtractor(), config=cfg)
    try:
        turns(m, ["the cat sleeps on the sofa", "stock prices fell", *FILLER[:5]], user_id="u")
        assert (
            m.search("where does the cat sleep?", user_id="u")
            .memories[0]
            .text.startswith("the cat")
        )
    finally:
        m.close()


def test_an_unknown_preset_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="balanced"):
        SageMemory(
            embedder="hashing",
            extractor=NoGraphExtractor(),
            config=SageConfig(retrieve=RetrieveConfig(preset="best")),
        )


# -- the graph --------------------------------------------------------------------------------


def test_current_facts_lead_and_old_ones_are_history(kind: str, tmp_path: Path) -> None:
    m = open_mem(kind, tmp_path, WhereExtractor())
    try:
        m.add("Alice lives in Paris", user_id="u", timestamp=datetime(2026, 3, 1, tzinfo=UTC))
        m.add("Alice moved to Berlin", user_id="u", timestamp=datetime(2026, 6, 1, tzinfo=UTC))
        now = m.search("Where does Alice live?", user_id="u")
        assert now.memories[0].text == "Alice moved to Berlin"
        assert "no longer hold" in now.memories[1].why
        core, history = now.context.split("## History")
        assert "Berlin" in core.split("## Related background")[0]
        assert "Paris" in history and "2026-03-01 to 2026-06-01" in history
        april = m.search("Where did Alice live in April?", user_id="u")
        assert april.memories[0].text == "Alice lives in Paris"
        then = m.search(
            "Where does Alice live?", user_id="u", as_of=datetime(2026, 4, 2, tzinfo=UTC)
        )
        assert [h.text for h in then.memories] == ["Alice lives in Paris"]
        assert "Berlin" not in then.context
    finally:
        m.close()


def test_graph_hits_explain_their_path(mem: SageMemory) -> None:
    mem.add_graph(
        "the with statement closes the file automatically",
        nodes=[NodeSpec("w", "with statement", "Tool"), NodeSpec("c", "close()", "Tool")],
        edges=[EdgeSpec("w", "c", "RELATED_TO")],
        user_id="u",
    )
    mem.add_graph(
        "a file opened with open() must be closed with close()",
        nodes=[NodeSpec("o", "open()", "Tool"), NodeSpec("c", "close()", "Tool")],
        edges=[EdgeSpec("o", "c", "RELATED_TO")],
        user_id="u",
    )
    res = mem.search("open()", user_id="u")
    with_hit = next(h for h in res.memories if "with statement" in h.text)
    assert "graph" in with_hit.channels
    linked = next(h for h in res.nodes if h.name == "open()")
    assert "entity" in linked.channels and "named" in linked.why
    far = next(h for h in res.nodes if h.name == "with statement")
    assert far.why == "open() -RELATED_TO-> close() <-RELATED_TO- with statement"


def test_a_plan_question_gets_next_steps(mem: SageMemory) -> None:
    mem.add_graph(
        "Blog: database, then backend API with FastAPI, then frontend.",
        nodes=[
            NodeSpec("p", "personal blog", "Project"),
            NodeSpec("db", "design the database", "Task", attributes={"status": "pending"}),
            NodeSpec("be", "build the backend API", "Task", attributes={"status": "pending"}),
            NodeSpec("fe", "build the frontend", "Task", attributes={"status": "pending"}),
            NodeSpec("fa", "FastAPI", "Resource"),
        ],
        edges=[
            EdgeSpec("p", "db", "CONTAINS_TASK"),
            EdgeSpec("db", "be", "PRECEDES"),
            EdgeSpec("be", "fe", "PRECEDES"),
            EdgeSpec("be", "fa", "REQUIRES"),
        ],
        user_id="u",
    )
    res = mem.search("what's next for the backend API?", user_id="u")
    steps = res.context.split("## Next steps\n")[1].split("##")[0]
    assert steps.index("design the database (status: pending)") < steps.index("FastAPI")
    assert steps.index("FastAPI") < steps.index("build the frontend")
    first = next(h for h in res.nodes if h.name == "design the database")
    assert "structure" in first.channels and "before build the backend API" in first.why
    plain = mem.search("backend API", user_id="u")
    assert "## Next steps" not in plain.context  # only when asked


def test_a_run_sees_only_the_graph_its_memories_support(mem: SageMemory) -> None:
    mem.add_graph(
        "r1: the blog plan",
        nodes=[NodeSpec("a", "write posts", "Task"), NodeSpec("b", "publish", "Task")],
        edges=[EdgeSpec("a", "b", "PRECEDES")],
        user_id="u",
        run_id="r1",
    )
    secret = mem.add_graph(
        "r2: publish needs the secret key",
        nodes=[NodeSpec("b", "publish", "Task"), NodeSpec("k", "secret key", "Resource")],
        edges=[EdgeSpec("b", "k", "REQUIRES")],
        user_id="u",
        run_id="r2",
    )
    res = mem.search("what do I need to publish?", user_id="u", run_id="r1")
    assert "secret key" not in res.context
    assert all(secret.memory_id not in h.edge.memory_ids for h in res.edges)
    assert "secret key" not in {h.name for h in res.nodes}
    whole = mem.search("what do I need to publish?", user_id="u")
    assert "secret key" in whole.context
