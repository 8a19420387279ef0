"""LangGraph / LangChain 1.x: SageStore (parity with InMemoryStore), the agent middleware, and
create_agent runs that call the memory tools."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_sage_memory import SageMemoryMiddleware, SageStore, create_memory_tools
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from lc_fakes import ScriptedChatModel, last_tool_result, tool_call
from support import open_memory, seed_graph

from sage_memory import SageMemory
from sage_memory.embed import HashingEmbedder


def hashing_embed(texts: list[str]) -> list[list[float]]:
    return HashingEmbedder().embed(texts).tolist()


DOCS = [
    (("alice", "notes"), "n1", {"text": "Alice is allergic to peanuts", "n": 1, "tag": "health"}),
    (("alice", "notes"), "n2", {"text": "Alice plays cello on Sundays", "n": 2, "tag": "hobby"}),
    (("alice", "todo"), "t1", {"text": "book the dentist", "n": 3, "meta": {"prio": "high"}}),
    (("bob", "notes"), "b1", {"text": "Bob drives a red bicycle", "n": 4, "tag": "hobby"}),
    (("bob", "notes", "old"), "b2", {"text": "Bob lived in Lyon", "n": 5, "tag": "history"}),
]


def fill(store: BaseStore) -> None:
    for ns, key, value in DOCS:
        store.put(ns, key, value)
    store.put(("alice", "notes"), "raw", {"text": "peanuts and cello", "n": 6}, index=False)


def view(items: list[Any]) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    return [(i.namespace, i.key, i.value) for i in items]


@pytest.fixture
def stores(tmp_path: Path) -> Any:
    mem = open_memory(tmp_path / "m")
    sage, ref = SageStore(mem), InMemoryStore(index={"dims": 256, "embed": hashing_embed})
    fill(sage)
    fill(ref)
    yield sage, ref
    mem.close()


# -- SageStore parity with InMemoryStore ---------------------------------------------------------
def test_get_put_update_delete_match_in_memory_store(stores: Any) -> None:
    sage, ref = stores
    for s in (sage, ref):
        s.put(("alice", "notes"), "n2", {"text": "Alice plays the viola now", "n": 7})
        s.delete(("bob", "notes"), "b1")
        s.delete(("bob", "notes"), "never-there")
    for ns, key, _ in [*DOCS, (("alice", "notes"), "raw", None)]:
        a, b = sage.get(ns, key), ref.get(ns, key)
        assert (a is None) == (b is None), (ns, key)
        if a is not None:
            assert (a.namespace, a.key, a.value) == (b.namespace, b.key, b.value)
    assert sage.get(("nobody",), "x") is None


def test_search_without_query_filters_and_pages_like_in_memory_store(stores: Any) -> None:
    sage, ref = stores
    cases: list[dict[str, Any]] = [
        {"namespace_prefix": ("alice",)},
        {"namespace_prefix": ("bob",), "limit": 1, "offset": 1},
        {"namespace_prefix": ()},
        {"namespace_prefix": ("alice",), "filter": {"tag": "hobby"}},
        {"namespace_prefix": (), "filter": {"n": {"$gte": 2, "$lt": 5}}},
        {"namespace_prefix": (), "filter": {"tag": {"$ne": "hobby"}}},
        {"namespace_prefix": (), "filter": {"meta": {"prio": "high"}}},
        {"namespace_prefix": (), "filter": {"n": {"$gt": 4}, "tag": "history"}},
    ]
    for case in cases:
        prefix = case.pop("namespace_prefix")
        assert view(sage.search(prefix, **case)) == view(ref.search(prefix, **case)), case


def test_query_search_ranks_indexed_items_then_unindexed(stores: Any) -> None:
    sage, ref = stores
    a = sage.search(("alice",), query="peanut allergy", limit=10)
    b = ref.search(("alice",), query="peanut allergy", limit=10)
    assert a[0].key == b[0].key == "n1"
    assert {i.key for i in a} == {i.key for i in b}
    assert a[-1].key == b[-1].key == "raw"
    assert a[-1].score is None
    assert all(i.score is not None for i in a[:-1])
    assert [i.key for i in sage.search(("alice",), query="cello", limit=1, offset=0)] == ["n2"]


def test_list_namespaces_matches_in_memory_store(stores: Any) -> None:
    sage, ref = stores
    cases: list[dict[str, Any]] = [
        {},
        {"prefix": ("bob",)},
        {"suffix": ("notes",)},
        {"prefix": ("*", "notes")},
        {"max_depth": 1},
        {"max_depth": 2, "limit": 2, "offset": 1},
    ]
    for case in cases:
        assert sage.list_namespaces(**case) == ref.list_namespaces(**case), case


def test_reads_in_a_batch_see_the_state_before_its_writes(stores: Any) -> None:
    from langgraph.store.base import GetOp

    sage, ref = stores
    ops = [
        PutOp(("alice", "notes"), "n1", {"text": "changed"}),
        GetOp(("alice", "notes"), "n1"),
        PutOp(("alice", "notes"), "n1", {"text": "changed twice"}),
    ]
    (_, a, _), (_, b, _) = sage.batch(ops), ref.batch(ops)
    assert a.value == b.value == DOCS[0][2]
    assert sage.get(("alice", "notes"), "n1").value == {"text": "changed twice"}


async def test_async_store_api(stores: Any) -> None:
    sage, _ = stores
    await sage.aput(("carol", "notes"), "c1", {"text": "Carol speaks Welsh"})
    item = await sage.aget(("carol", "notes"), "c1")
    assert item.value == {"text": "Carol speaks Welsh"}
    hits = await sage.asearch(("carol",), query="Welsh language")
    assert hits[0].key == "c1"
    assert await sage.alist_namespaces(prefix=("carol",)) == [("carol", "notes")]
    await sage.adelete(("carol", "notes"), "c1")
    assert await sage.aget(("carol", "notes"), "c1") is None


# -- SageStore on the engine ---------------------------------------------------------------------
def test_items_are_memories_of_the_namespace_user_and_survive_reopening(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m") as mem:
        store = SageStore(mem)
        store.put(("alice", "prefs"), "drink", {"text": "Alice drinks green tea"})
        first = store.get(("alice", "prefs"), "drink")
        store.put(("alice", "prefs"), "drink", {"text": "Alice switched to coffee"})
        (memory,) = mem.get_all(user_id="alice")  # the old version was forgotten
        assert memory.text == "Alice switched to coffee"
        assert memory.metadata["store"]["key"] == "drink"
        hits = mem.search("what does Alice drink?", user_id="alice")
        assert hits.memories[0].text == "Alice switched to coffee"
    with open_memory(tmp_path / "m") as mem:
        item = SageStore(mem).get(("alice", "prefs"), "drink")
        assert item.value == {"text": "Alice switched to coffee"}
        assert item.created_at == first.created_at  # an update keeps the creation time
        assert item.updated_at >= first.updated_at


def test_a_duplicate_left_by_a_crash_is_resolved_on_load(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m") as mem:
        SageStore(mem).put(("alice", "prefs"), "drink", {"text": "tea"})
        (old,) = mem.get_all(user_id="alice")
        # As if a put wrote its new memory and crashed before forgetting the old one.
        meta = {"store": {**old.metadata["store"], "value": '{"text": "coffee"}'}}
        mem.add("coffee", user_id="alice", metadata=meta, source="langgraph-store", infer=False)
    with open_memory(tmp_path / "m") as mem:
        assert SageStore(mem).get(("alice", "prefs"), "drink").value == {"text": "coffee"}
        assert [m.text for m in mem.get_all(user_id="alice")] == ["coffee"]


def test_namespace_to_scope_mapping_options(memory: SageMemory) -> None:
    SageStore(memory, user_label=1).put(("memories", "dave"), "k", {"text": "Dave likes jazz"})
    SageStore(memory, user_id="team").put(("a", "b"), "k", {"text": "shared runbook"})
    assert [m.text for m in memory.get_all(user_id="dave")] == ["Dave likes jazz"]
    assert [m.text for m in memory.get_all(user_id="team")] == ["shared runbook"]
    with pytest.raises(ValueError, match="user_label"):
        SageStore(memory, user_label=3).put(("a",), "k", {"text": "x"})
    with pytest.raises(NotImplementedError):
        SageStore(memory).batch([PutOp(("a",), "k", {"x": 1}, ttl=5.0)])


# -- agents --------------------------------------------------------------------------------------
@dataclass
class Ctx:
    user_id: str


@tool
def recall_notes(query: str, runtime: ToolRuntime[Ctx]) -> str:
    """Look up the user's saved notes."""
    items = runtime.store.search((runtime.context.user_id, "notes"), query=query, limit=2)
    return "\n".join(i.value["text"] for i in items) or "no notes"


def answer_from_tool(messages: list[BaseMessage]) -> str:
    return f"From your notes: {last_tool_result(messages).splitlines()[0]}"


def test_create_agent_with_store_middleware_and_tool(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m") as mem:
        store = SageStore(mem)
        store.put(("alice", "notes"), "n1", {"text": "Alice's locker code is 4512"})
        mem.add("Alice's favourite colour is teal.", user_id="alice")
        model = ScriptedChatModel(
            script=[tool_call("recall_notes", {"query": "locker code"}), answer_from_tool]
        )
        agent = create_agent(
            model,
            tools=[recall_notes],
            system_prompt="You are a helpful assistant.",
            middleware=[SageMemoryMiddleware(mem)],
            store=store,
            context_schema=Ctx,
            checkpointer=InMemorySaver(),
        )
        out = agent.invoke(
            {"messages": [{"role": "user", "content": "What is my favourite colour and locker?"}]},
            config={"configurable": {"thread_id": "t1"}},
            context=Ctx(user_id="alice"),
        )
        assert out["messages"][-1].content == "From your notes: Alice's locker code is 4512"
        system = model.calls[0][0]
        assert system.type == "system"
        assert system.content.startswith("You are a helpful assistant.")
        assert "<memory>" in system.content
        assert "favourite colour is teal" in system.content
        # after_agent saved the turn: the question and the final answer ...
        saved = mem.get_all(user_id="alice")
        texts = [m.text for m in saved if m.source != "experience"]
        assert texts[-2:] == [
            "What is my favourite colour and locker?",
            "From your notes: Alice's locker code is 4512",
        ]
        # ... and its tool call as an experience record
        [record] = [m for m in saved if m.source == "experience"]
        assert record.kind == "experience"
        assert record.metadata["experience"]["actions"][0]["tool"] == "recall_notes"


async def test_agent_calls_query_related_memories_and_uses_the_result(memory: SageMemory) -> None:
    seed_graph(memory)

    def answer(messages: list[BaseMessage]) -> str:
        found = last_tool_result(messages)
        return "Orion uses Neo4j." if "Neo4j" in found else "I don't know."

    model = ScriptedChatModel(
        script=[tool_call("query_related_memories", {"query": "what does Orion use?"}), answer]
    )
    agent = create_agent(model, tools=create_memory_tools(memory, user_id="alice"))
    out = await agent.ainvoke({"messages": [{"role": "user", "content": "What does Orion use?"}]})
    called = [m for m in out["messages"] if m.type == "tool"]
    assert called[0].name == "query_related_memories"
    assert "Neo4j" in called[0].content
    assert called[0].artifact[0]["text"] == "Orion uses Neo4j and depends on Kafka."
    assert out["messages"][-1].content == "Orion uses Neo4j."


async def test_middleware_async_with_tagged_message_placement(memory: SageMemory) -> None:
    memory.add("Alice is vegetarian.", user_id="alice")
    model = ScriptedChatModel(script=["Try the lentil soup."])
    middleware = SageMemoryMiddleware(memory, user_id="alice", placement="message", tag="recall")
    agent = create_agent(model, system_prompt="Be brief.", middleware=[middleware])
    await agent.ainvoke({"messages": [{"role": "user", "content": "Suggest a vegetarian lunch"}]})
    system, note, question = model.calls[0]
    assert system.content == "Be brief."  # the system prompt stays as written
    assert isinstance(note, HumanMessage)
    assert note.content.count("<recall>") == 1
    assert "Alice is vegetarian." in note.content
    assert question.content == "Suggest a vegetarian lunch"
    texts = [m.text for m in memory.get_all(user_id="alice")]
    assert texts[-1] == "Try the lentil soup."


def test_middleware_without_a_scope_says_how_to_give_one(memory: SageMemory) -> None:
    model = ScriptedChatModel(script=["hi"])
    agent = create_agent(model, middleware=[SageMemoryMiddleware(memory)])
    with pytest.raises(ValueError, match="user_id"):
        agent.invoke({"messages": [{"role": "user", "content": "hello"}]})


# -- focus and tool-call experience ----------------------------------------------------------
@dataclass
class FocusCtx:
    user_id: str
    focus: str | None = None


@pytest.mark.parametrize("how", ["option", "run context"])
def test_middleware_focus_leads_with_the_focused_project(memory: SageMemory, how: str) -> None:
    from support import leads, seed_twins

    seed_twins(memory)
    model = ScriptedChatModel(script=["ok"])
    if how == "option":
        middleware = SageMemoryMiddleware(memory, focus="Project Osprey")
        ctx = FocusCtx(user_id="alice")
    else:
        middleware = SageMemoryMiddleware(memory)
        ctx = FocusCtx(user_id="alice", focus="Project Osprey")
    agent = create_agent(model, middleware=[middleware], context_schema=FocusCtx)
    agent.invoke(
        {"messages": [{"role": "user", "content": "what does the release step wait for?"}]},
        context=ctx,
    )
    system = model.calls[0][0].content
    assert leads(system, "load test", "translation review")


async def test_middleware_records_tool_calls_as_experience(memory: SageMemory) -> None:
    from langchain_core.tools import ToolException

    @tool
    def restart_service(name: str) -> str:
        """Restart a service by name."""
        if name == "db":
            raise ToolException("permission denied")
        return f"{name} restarted"

    restart_service.handle_tool_error = True  # the error becomes a ToolMessage (status error)

    model = ScriptedChatModel(
        script=[
            tool_call("restart_service", {"name": "db"}, "c1"),
            tool_call("restart_service", {"name": "web"}, "c2"),
            "The web service is back; the database needs an admin.",
        ]
    )
    agent = create_agent(
        model,
        tools=[restart_service],
        middleware=[SageMemoryMiddleware(memory, user_id="alice", save_turns=False)],
    )
    await agent.ainvoke({"messages": [{"role": "user", "content": "Restart the db and web"}]})
    [record] = memory.get_all(user_id="alice")
    assert record.kind == "experience"
    exp = record.metadata["experience"]
    assert exp["task"] == "Restart the db and web"
    assert [(a["tool"], a["success"]) for a in exp["actions"]] == [
        ("restart_service", False),
        ("restart_service", True),
    ]
    assert "permission denied" in exp["actions"][0]["result"]
    assert exp["outcome"] == "The web service is back; the database needs an admin."
    tool_node = memory.find_node("restart_service", user_id="alice", exact=True)
    assert tool_node.label == "Tool"
    found = memory.search("how did we restart the db last time?", user_id="alice")
    assert found.memories[0].id == record.id
    off = SageMemoryMiddleware(memory, user_id="bob", save_turns=False, record_tools=False)
    model2 = ScriptedChatModel(script=[tool_call("restart_service", {"name": "web"}), "done"])
    agent2 = create_agent(model2, tools=[restart_service], middleware=[off])
    await agent2.ainvoke({"messages": [{"role": "user", "content": "Restart web"}]})
    assert memory.get_all(user_id="bob") == []
