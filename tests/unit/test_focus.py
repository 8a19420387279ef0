"""Focus: given per search, set for a block (thread- and task-local), inferred from a run; it
seeds the graph walk and lifts the memories near the focus, so near-twin projects are told
apart. Real stores (in memory, and SQLite + Chroma in a folder), the default rule extractor."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sage_memory import AsyncSageMemory, SageConfig, SageMemory
from sage_memory.config import RetrieveConfig
from sage_memory.errors import ConfigError, ValidationError
from sage_memory.retrieve.focus import Focus, Proximity, boost, infer_focus, name_pattern
from sage_memory.types import Memory, MemoryHit, Node, Scope, replace

U = "ann"
NOW = datetime(2026, 7, 1, tzinfo=UTC)

#: Two near-twin projects whose tasks share names; each line names its project.
TWINS = [
    "Project Kestrel is a recipe website built with Django.",
    "Project Osprey is a recipe website built with Flask.",
    "In Kestrel, the release step waits for the translation review.",
    "In Osprey, the release step waits for the load test.",
    "Kestrel's database migration finished on Tuesday.",
    "Osprey's database migration failed on Tuesday.",
]
QUESTION = "what does the release step wait for?"


def open_mem(kind: str, tmp_path: Path, **kw: object) -> SageMemory:
    path = None if kind == "memory" else tmp_path / "m"
    return SageMemory(path, embedder="hashing", clock=lambda: NOW, **kw)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    m = open_mem(str(request.param), tmp_path)
    for text in TWINS:
        m.add(text, user_id=U)
    yield m
    m.close()


def lead(mem: SageMemory, question: str = QUESTION, **kw: object) -> str:
    res = mem.search(question, user_id=U, limit=3, **kw)  # type: ignore[arg-type]
    return res.memories[0].text


# -- the public API ------------------------------------------------------------------------
def test_focus_tells_near_twin_projects_apart(mem: SageMemory) -> None:
    assert "translation review" in lead(mem, focus="Project Kestrel")
    assert "load test" in lead(mem, focus="Project Osprey")
    res = mem.search(QUESTION, user_id=U, focus="Project Osprey")
    assert res.focus == ("Project Osprey",) and not res.focus_inferred
    top = res.memories[0]
    assert "focus" in top.channels and "focus:" in top.why


def test_focus_by_list_and_by_node_id(mem: SageMemory) -> None:
    node = mem.find_node("Project Osprey", user_id=U)
    assert "load test" in lead(mem, focus=[node.id])
    res = mem.search(QUESTION, user_id=U, focus=["Project Kestrel", "no such project"])
    assert res.focus == ("Project Kestrel", "no such project")  # the unknown one as text
    # a name that shares only a word with a node is not that node
    assert "Project Heron" in mem.search(QUESTION, user_id=U, focus="Project Heron").focus


def test_no_focus_leaves_the_search_as_it_was(mem: SageMemory) -> None:
    plain = mem.search(QUESTION, user_id=U)
    empty = mem.search(QUESTION, user_id=U, focus=())
    assert [h.id for h in plain.memories] == [h.id for h in empty.memories]
    assert plain.focus == () and all("focus" not in h.channels for h in plain.memories)


def test_bad_focus_is_a_clear_error(mem: SageMemory) -> None:
    with pytest.raises(ValidationError, match="focus="):
        mem.search(QUESTION, user_id=U, focus="  ")
    with pytest.raises(ValidationError, match="focus="):
        mem.search(QUESTION, user_id=U, focus=[3])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="at least one"):
        mem.focus(user_id=U)


def test_focus_block_applies_inside_only(mem: SageMemory) -> None:
    with mem.focus("Project Osprey", user_id=U):
        assert "load test" in lead(mem)
        with mem.focus("Project Kestrel"):  # the innermost block wins
            assert "translation review" in lead(mem)
        assert "load test" in lead(mem)
        # an explicit focus beats the block
        assert "translation review" in lead(mem, focus="Project Kestrel")
    assert mem.search(QUESTION, user_id=U).focus == ()


def test_focus_block_is_per_scope_and_per_engine(mem: SageMemory) -> None:
    other = SageMemory(embedder="hashing")
    try:
        other.add("Project Osprey ships soon.", user_id=U)
        with mem.focus("Project Osprey", user_id="bob"):
            assert mem.search(QUESTION, user_id=U).focus == ()  # another user's block
        with mem.focus("Project Osprey", user_id=U):
            assert other.search("ships", user_id=U).focus == ()  # another engine's block
    finally:
        other.close()


def test_focus_block_does_not_bleed_into_other_threads(mem: SageMemory) -> None:
    inside = threading.Event()
    done = threading.Event()
    seen: list[tuple[str, ...]] = []

    def other_caller() -> None:
        inside.wait(5)
        seen.append(mem.search(QUESTION, user_id=U).focus)
        done.set()

    t = threading.Thread(target=other_caller)
    t.start()
    with mem.focus("Project Osprey", user_id=U):
        inside.set()
        done.wait(5)
        assert mem.search(QUESTION, user_id=U).focus == ("Project Osprey",)
    t.join(5)
    assert seen == [()]


def test_async_focus_blocks_stay_in_their_task(mem: SageMemory) -> None:
    amem = AsyncSageMemory.wrap(mem)

    async def ask(project: str | None) -> tuple[tuple[str, ...], str]:
        if project is None:
            await asyncio.sleep(0.01)  # runs while the other tasks' blocks are open
            res = await amem.search(QUESTION, user_id=U, limit=3)
            return res.focus, res.memories[0].text
        with amem.focus(project, user_id=U):
            await asyncio.sleep(0.01)  # let the other tasks run inside their own blocks
            res = await amem.search(QUESTION, user_id=U, limit=3)
            return res.focus, res.memories[0].text

    async def main() -> list[tuple[tuple[str, ...], str]]:
        return await asyncio.gather(ask("Project Kestrel"), ask("Project Osprey"), ask(None))

    (fk, k), (fo, o), (fn, _) = asyncio.run(main())
    assert fk == ("Project Kestrel",) and "translation review" in k
    assert fo == ("Project Osprey",) and "load test" in o
    assert fn == ()


def test_focus_inferred_from_the_run(tmp_path: Path) -> None:
    mem = open_mem("memory", tmp_path)
    try:
        for text in TWINS:
            mem.add(text, user_id=U)
        mem.add("Let us look at Project Osprey today.", user_id=U, run_id="s1")
        mem.add("Osprey needs a new logo too.", user_id=U, run_id="s1")
        res = mem.search(QUESTION, user_id=U, run_id="s1")
        # the run's last turns both name Osprey (as a node of its own or by the project's
        # short name): that is what the session is about
        assert res.focus_inferred and res.focus and all("Osprey" in n for n in res.focus)
        assert mem.search(QUESTION, user_id=U, run_id="s1", focus=()).focus == ()
        assert mem.search(QUESTION, user_id=U).focus == ()  # no run, nothing inferred
    finally:
        mem.close()
    off = SageConfig(embedder="hashing", retrieve=RetrieveConfig(infer_focus=False))
    quiet = SageMemory(config=off)
    try:
        quiet.add("Project Osprey has a logo.", user_id=U, run_id="s1")
        quiet.add("Project Osprey ships in May.", user_id=U, run_id="s1")
        assert quiet.search("logo", user_id=U, run_id="s1").focus == ()
    finally:
        quiet.close()


def test_focus_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="focus_weight"):
        SageConfig(retrieve=RetrieveConfig(focus_weight=-1))
    with pytest.raises(ConfigError, match="infer_focus"):
        SageConfig(retrieve=RetrieveConfig(infer_focus="yes"))  # type: ignore[arg-type]


# -- the pure parts ------------------------------------------------------------------------
P = Scope(user_id=U)


def node(name: str, memories: int = 1, aliases: tuple[str, ...] = ()) -> Node:
    return Node(
        id=f"n-{name}",
        name=name,
        label="Project",
        scope=P,
        aliases=aliases,
        memory_ids=tuple(f"m{i}-{name}" for i in range(memories)),
    )


def memory(mid: str, text: str) -> Memory:
    return Memory(id=mid, text=text, scope=P, timestamp=NOW, created_at=NOW, updated_at=NOW)


def test_name_pattern_matches_whole_words_and_aliases() -> None:
    pattern = name_pattern(node("Osprey", aliases=("the bird project", "OS")))
    assert pattern is not None
    assert pattern.search("we shipped osprey today")
    assert pattern.search("the Bird Project is late")
    assert not pattern.search("ospreys are birds")  # not a whole word
    assert not pattern.search("the OS is old")  # names under three characters are left out


def test_boost_lifts_near_memories_and_keeps_order_otherwise() -> None:
    hits = [MemoryHit(memory("a", "plain"), 0.9), MemoryHit(memory("b", "about Osprey"), 0.8)]
    near = Proximity()
    pattern = name_pattern(node("Osprey"))
    assert pattern is not None
    near.names.append((pattern, 1.0, "Osprey"))
    out = boost(hits, near, 0.3)
    assert [h.id for h in out] == ["b", "a"] and out[0].score == pytest.approx(1.1)
    assert boost(hits, near, 0.0) == hits


def test_infer_focus_needs_repeated_specific_mentions() -> None:
    recent = [
        memory("r1", "Osprey needs a logo"),
        memory("r2", "the logo for Osprey is blue"),
        memory("r3", "Kestrel came up once"),
    ]
    osprey, kestrel, hub = node("Osprey"), node("Kestrel"), node("User", memories=100)
    hub = replace(hub, memory_ids=("r1", "r2", "r3", *hub.memory_ids))  # in every one: a hub
    cands = {m.id: [osprey, kestrel, hub] for m in recent}
    got = infer_focus(recent, cands)
    assert got.inferred and [n.name for n in got.nodes] == ["Osprey"]
    assert infer_focus(recent[2:], cands) == Focus()


def test_focus_reaches_the_unnamed_turns_of_its_sessions(tmp_path: Path) -> None:
    mem = open_mem("memory", tmp_path)
    try:
        # each project discussed in a session of its own; the answers never name the project
        mem.add("Project Kestrel kickoff notes.", user_id=U, run_id="k")
        mem.add("The release step waits for the translation review.", user_id=U, run_id="k")
        mem.add("Project Osprey kickoff notes.", user_id=U, run_id="o")
        mem.add("The release step waits for the load test.", user_id=U, run_id="o")
        for project, detail in (("Project Kestrel", "translation"), ("Project Osprey", "load")):
            res = mem.search(QUESTION, user_id=U, focus=project, limit=3)
            assert detail in res.memories[0].text
            assert "said in a session about the focus" in res.memories[0].why
    finally:
        mem.close()
