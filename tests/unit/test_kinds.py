"""Kinds that matter: the kind filter, the experience preference of past-doing questions, the
context's experience mark, and add_experience (its text, metadata, graph and undo)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sage_memory import AsyncSageMemory, SageMemory
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.retrieve.kinds import EXPERIENCE_MARK, asks_experience

U = "ops"


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing")
    m.add("The nightly backup job copies the orders table to cold storage.", user_id=U)
    m.add("Backups are kept for ninety days.", user_id=U)
    m.add_experience(
        task="restore the orders table from backup",
        actions=[
            {
                "tool": "pg_restore",
                "arguments": {"table": "orders"},
                "result": "ok",
                "success": True,
            },
            {"tool": "vacuum", "arguments": "orders", "result": "lock timeout", "success": False},
            "paused the checkout service first",
        ],
        outcome="orders were back after 40 minutes",
        lesson="pause the checkout service before a restore",
        success=True,
        user_id=U,
    )
    yield m
    m.close()


def test_add_experience_stores_text_metadata_and_graph(mem: SageMemory) -> None:
    [exp] = [m for m in mem.get_all(user_id=U) if m.kind == "experience"]
    assert exp.source == "experience"
    assert exp.text.startswith("Task: restore the orders table from backup. Actions: ")
    assert "vacuum(orders) failed: lock timeout" in exp.text
    assert "Lesson: pause the checkout service before a restore." in exp.text
    record = exp.metadata["experience"]
    assert record["task"] == "restore the orders table from backup" and record["success"] is True
    assert record["actions"][0]["tool"] == "pg_restore"
    assert record["actions"][2] == "paused the checkout service first"
    sub = mem.explore("restore the orders table from backup", user_id=U, hops=1)
    names = {n.id: (n.name, n.label) for n in sub.nodes}
    facts = {(names[e.source_id][0], e.relation, names[e.target_id]) for e in sub.edges}
    t = "restore the orders table from backup"
    assert (t, "USES", ("pg_restore", "Tool")) in facts
    assert (t, "USES", ("vacuum", "Tool")) in facts
    assert (t, "RESULTED_IN", ("orders were back after 40 minutes", "Event")) in facts
    assert (t, "RELATED_TO", ("pause the checkout service before a restore", "Rule")) in facts
    failed = [e for e in sub.edges if names[e.target_id][0] == "vacuum"]
    assert failed[0].attributes["success"] is False


def test_add_experience_is_one_undoable_batch(mem: SageMemory) -> None:
    res = mem.add_experience(task="rotate the keys", actions=[{"tool": "vault"}], user_id=U)
    assert mem.find_node("vault", user_id=U, exact=True)
    batch = mem.history(res.memory_id)[0].batch_id
    mem.undo(batch)
    with pytest.raises(NotFoundError, match="vault"):
        mem.find_node("vault", user_id=U, exact=True)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"task": ""}, "task="),
        ({"task": "x", "actions": "run it"}, "actions must be a list"),
        ({"task": "x", "actions": [{"arguments": {}}]}, "names no tool"),
        ({"task": "x", "actions": [{"tool": "t", "success": "yes"}]}, "success"),
        ({"task": "x", "actions": [3]}, "must be a string or a mapping"),
        ({"task": "x", "outcome": 5}, "outcome="),
    ],
)
def test_add_experience_rejects_bad_records(
    mem: SageMemory, kwargs: dict[str, object], match: str
) -> None:
    before = len(mem.get_all(user_id=U))
    with pytest.raises(ValidationError, match=match):
        mem.add_experience(user_id=U, **kwargs)  # type: ignore[arg-type]
    assert len(mem.get_all(user_id=U)) == before


def test_kind_filter(mem: SageMemory) -> None:
    exp = mem.search("orders table backup", user_id=U, kind="experience")
    assert exp.memories and {h.memory.kind for h in exp.memories} == {"experience"}
    assert exp.edges and all(
        "restore the orders table" in h.source_name for h in exp.edges
    )  # only facts an experience supports
    know = mem.search("orders table backup", user_id=U, kind="knowledge")
    assert know.memories and {h.memory.kind for h in know.memories} == {"knowledge"}
    assert all(h.edge.attributes.get("role") != "lesson" for h in know.edges)
    assert "pg_restore" not in know.context
    with pytest.raises(ValidationError, match="kind="):
        mem.search("orders", user_id=U, kind="facts")  # type: ignore[arg-type]


def test_how_did_we_questions_prefer_experience(mem: SageMemory) -> None:
    plain = mem.search("the orders table backup", user_id=U)
    asked = mem.search("how did we restore the orders table backup last time?", user_id=U)
    assert asked.memories[0].memory.kind == "experience"
    assert "experience, asked how it was done" in asked.memories[0].why
    exp_plain = next(h for h in plain.memories if h.memory.kind == "experience")
    assert all("asked how it was done" not in h.why for h in plain.memories)
    assert exp_plain.score < asked.memories[0].score


def test_context_marks_experience_lines(mem: SageMemory) -> None:
    ctx = mem.search("orders table backup restore", user_id=U).context
    lines = [ln for ln in ctx.splitlines() if ln.startswith("- [")]
    marked = [ln for ln in lines if EXPERIENCE_MARK in ln]
    assert len(marked) == 1 and "Task: restore the orders table" in marked[0]
    assert any("Backups are kept" in ln and EXPERIENCE_MARK not in ln for ln in lines)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How did we fix the login bug last time?", True),
        ("how did I set up the printer", True),
        ("What did we try when the build broke?", True),
        ("what happened when we upgraded the database", True),
        ("What worked for the flaky test?", True),
        ("where does alice live?", False),
        ("how does the cache work?", False),
        ("what is the deadline of the report", False),
    ],
)
def test_experience_cues(query: str, expected: bool) -> None:
    assert asks_experience(query) is expected


def test_async_add_experience_and_kind(mem: SageMemory) -> None:
    import asyncio

    amem = AsyncSageMemory.wrap(mem)

    async def main() -> list[str]:
        await amem.add_experience(
            task="renew the TLS certificate", actions=["ran certbot"], user_id=U
        )
        res = await amem.search("TLS certificate", user_id=U, kind="experience")
        return [h.text for h in res.memories]

    texts = asyncio.run(main())
    assert any("renew the TLS certificate" in t for t in texts)
