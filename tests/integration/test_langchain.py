"""LangChain adapters on a real SageMemory: legacy chain memory, tools, retriever, model bridges.

The standard suites of langchain-tests (ToolsUnitTests, ToolsIntegrationTests,
RetrieversIntegrationTests) run against every tool and the retriever.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langchain_classic.chains import ConversationChain, LLMChain
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    ParrotFakeChatModel,
)
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_sage_memory import (
    ExploreGraphTool,
    ForgetMemoryTool,
    QueryRelatedMemoriesTool,
    SageChatModel,
    SageConversationMemory,
    SageEmbedder,
    SageMemoryRetriever,
    SaveMemoryTool,
    create_memory_tools,
)
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from support import open_memory, seed_graph

from sage_memory import SageMemory


# -- legacy chain memory -------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_conversation_chain_turn_is_saved_and_recalled_later(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m") as mem:
        chain = ConversationChain(
            llm=FakeListChatModel(responses=["Nice to meet you, Alice!"]),
            memory=SageConversationMemory(sage=mem, user_id="alice", run_id="monday"),
        )
        first = chain.invoke({"input": "Hi, I'm Alice and I build graph databases at Acme."})
        assert first["response"] == "Nice to meet you, Alice!"
        texts = [(m.role, m.text) for m in mem.get_all(user_id="alice")]
        assert texts == [
            ("user", "Hi, I'm Alice and I build graph databases at Acme."),
            ("assistant", "Nice to meet you, Alice!"),
        ]

    # Days later, another process: a new chain on the reopened folder.
    with open_memory(tmp_path / "m") as mem:
        llm = ParrotFakeChatModel()  # echoes the prompt it was given
        chain = ConversationChain(
            llm=llm, memory=SageConversationMemory(sage=mem, user_id="alice", run_id="friday")
        )
        later = chain.invoke({"input": "What do I build?"})
        assert "I build graph databases at Acme" in later["history"]
        assert "I build graph databases at Acme" in later["response"]  # the model saw it
        assert len(mem.get_all(user_id="alice")) == 4


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_chain_memory_async_path_and_llmchain_messages(memory: SageMemory) -> None:
    seed_graph(memory)
    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    llm = ParrotFakeChatModel()
    chain = LLMChain(
        llm=llm,
        prompt=prompt,
        memory=SageConversationMemory(sage=memory, user_id="alice", return_messages=True),
    )
    out = await chain.ainvoke({"question": "What does Alice drink?"})
    (history,) = out["history"]
    assert isinstance(history, SystemMessage)
    assert "green tea" in history.content
    saved = [m.text for m in memory.get_all(user_id="alice")]
    assert "What does Alice drink?" in saved


def test_chain_memory_needs_input_key_when_ambiguous(memory: SageMemory) -> None:
    mem = SageConversationMemory(sage=memory, user_id="alice")
    with pytest.raises(ValueError, match="input_key"):
        mem.load_memory_variables({"question": "a", "topic": "b"})
    keyed = SageConversationMemory(sage=memory, user_id="alice", input_key="question")
    keyed.save_context({"question": "I like chess", "topic": "games"}, {"text": "Noted"})
    assert [m.text for m in memory.get_all(user_id="alice")] == ["I like chess", "Noted"]
    keyed.clear()
    assert memory.get_all(user_id="alice") == []


# -- tools: standard suites ---------------------------------------------------------------------
@cache
def shared_memory() -> SageMemory:
    """One in-memory engine for the standard suites (they only read, save and forget)."""
    mem = open_memory()
    seed_graph(mem)
    return mem


class _ToolSuite:
    tool_class: type[Any]
    example: dict[str, Any]

    @property
    def tool_constructor(self) -> type[Any]:
        return self.tool_class

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"sage": shared_memory(), "user_id": "alice"}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return self.example


class _QuerySuite(_ToolSuite):
    tool_class = QueryRelatedMemoriesTool
    example = {"query": "what does Alice work on?", "limit": 3}  # noqa: RUF012


class _ExploreSuite(_ToolSuite):
    tool_class = ExploreGraphTool
    example = {"name": "Orion", "hops": 1}  # noqa: RUF012


class _SaveSuite(_ToolSuite):
    tool_class = SaveMemoryTool
    example = {"text": "Alice's standup is at 9:30.", "kind": "knowledge"}  # noqa: RUF012


class _ForgetSuite(_ToolSuite):
    tool_class = ForgetMemoryTool
    example = {"memory_id": "0123456789abcdef0123456789abcdef"}  # noqa: RUF012


class TestQueryToolUnit(_QuerySuite, ToolsUnitTests):
    pass


class TestQueryToolIntegration(_QuerySuite, ToolsIntegrationTests):
    pass


class TestExploreToolUnit(_ExploreSuite, ToolsUnitTests):
    pass


class TestExploreToolIntegration(_ExploreSuite, ToolsIntegrationTests):
    pass


class TestSaveToolUnit(_SaveSuite, ToolsUnitTests):
    pass


class TestSaveToolIntegration(_SaveSuite, ToolsIntegrationTests):
    pass


class TestForgetToolUnit(_ForgetSuite, ToolsUnitTests):
    pass


class TestForgetToolIntegration(_ForgetSuite, ToolsIntegrationTests):
    pass


class TestRetrieverIntegration(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[SageMemoryRetriever]:
        return SageMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"sage": shared_memory(), "user_id": "alice"}

    @property
    def retriever_query_example(self) -> str:
        return "what does Alice work on?"


# -- tools: behaviour ---------------------------------------------------------------------------
def call(tool: Any, args: dict[str, Any]) -> ToolMessage:
    msg = tool.invoke({"name": tool.name, "args": args, "id": "c1", "type": "tool_call"})
    assert isinstance(msg, ToolMessage)
    return msg


def test_tools_query_explore_save_forget(memory: SageMemory) -> None:
    seed_graph(memory)
    tools = {t.name: t for t in create_memory_tools(memory, user_id="alice")}
    assert list(tools) == [
        "query_related_memories",
        "explore_graph",
        "save_memory",
        "forget_memory",
    ]

    found = call(tools["query_related_memories"], {"query": "what does Orion use?"})
    assert "Neo4j" in found.content
    assert found.artifact[0]["text"] == "Orion uses Neo4j and depends on Kafka."

    around = call(tools["explore_graph"], {"name": "orion", "hops": 1})
    assert "Orion USES Neo4j" in around.content
    assert {e["target"] for e in around.artifact["edges"]} == {"Orion", "Neo4j", "Kafka"}
    missing = call(tools["explore_graph"], {"name": "Zeus"})
    assert missing.artifact["nodes"] == []

    saved = call(tools["save_memory"], {"text": "Alice moved the standup to 10:00."})
    new_id = saved.artifact["memory_id"]
    assert memory.get(new_id).source == "tool:save_memory"

    # The model cites ids by their first 8 characters, as the packed context shows them.
    gone = call(tools["forget_memory"], {"memory_id": new_id[:8]})
    assert gone.artifact == {
        "memory_id": new_id,
        "forgotten": True,
        "text": "Alice moved the standup to 10:00.",
    }
    again = call(tools["forget_memory"], {"memory_id": new_id})
    assert again.artifact["forgotten"] is False
    assert "nothing was forgotten" in again.content


def test_tools_stay_in_their_scope(memory: SageMemory) -> None:
    seed_graph(memory, user_id="alice")
    bob_tools = {t.name: t for t in create_memory_tools(memory, user_id="bob")}
    alice_memory = memory.get_all(user_id="alice")[0]
    out = call(bob_tools["forget_memory"], {"memory_id": alice_memory.id})
    assert out.artifact["forgotten"] is False
    assert memory.get(alice_memory.id).text == alice_memory.text
    assert call(bob_tools["query_related_memories"], {"query": "Orion"}).artifact == []
    with pytest.raises(ValueError, match="scope"):
        create_memory_tools(memory)


def test_tools_bound_to_a_run_write_to_it_and_recall_across_runs(memory: SageMemory) -> None:
    seed_graph(memory)  # written outside any run
    tools = {t.name: t for t in create_memory_tools(memory, user_id="alice", run_id="tuesday")}
    assert "Orion USES Neo4j" in call(tools["explore_graph"], {"name": "Orion"}).content
    assert "Neo4j" in call(tools["query_related_memories"], {"query": "Orion"}).content
    saved = call(tools["save_memory"], {"text": "Alice demoed Orion on Tuesday."})
    assert memory.get(saved.artifact["memory_id"]).scope.run_id == "tuesday"


async def test_tools_async(memory: SageMemory) -> None:
    seed_graph(memory)
    tools = {t.name: t for t in create_memory_tools(memory, user_id="alice")}
    msg = await tools["query_related_memories"].ainvoke(
        {
            "name": "query_related_memories",
            "args": {"query": "Kafka"},
            "id": "1",
            "type": "tool_call",
        }
    )
    assert "Kafka" in msg.content
    text = await tools["explore_graph"].ainvoke({"name": "Alice", "hops": 2})
    assert "Neo4j" in text


# -- retriever ----------------------------------------------------------------------------------
async def test_retriever_documents_carry_ids_and_scores(memory: SageMemory) -> None:
    seed_graph(memory)
    retriever = SageMemoryRetriever(sage=memory, user_id="alice", k=2)
    docs = retriever.invoke("green tea")
    assert docs[0].page_content == "Alice prefers green tea in the afternoon."
    assert docs[0].id == docs[0].metadata["id"]
    assert docs[0].metadata["score"] > 0
    assert len(await retriever.ainvoke("Orion", k=1)) == 1


# -- bring your own model -----------------------------------------------------------------------
def test_langchain_chat_model_drives_extraction(tmp_path: Path) -> None:
    answer = {
        "memories": [
            {
                "index": 0,
                "nodes": [
                    {"name": "Alice", "label": "Person"},
                    {"name": "Berlin", "label": "Place"},
                ],
                "edges": [{"source": "Alice", "target": "Berlin", "relation": "LIVES_IN"}],
            }
        ]
    }
    llm = SageChatModel(FakeListChatModel(responses=[json.dumps(answer)]))
    assert llm.name.startswith("langchain:")
    with SageMemory(tmp_path / "m", embedder="hashing", llm=llm) as mem:
        res = mem.add("Alice moved to Berlin.", user_id="alice")
        assert res.extraction_error is None
        (edge,) = mem.explore("Alice", user_id="alice").edges
        assert edge.relation == "LIVES_IN"


async def test_langchain_chat_model_async() -> None:
    llm = SageChatModel(FakeListChatModel(responses=["pong"]))
    res = await llm.acomplete(
        [{"role": "system", "content": "s"}, {"role": "user", "content": "p"}]
    )
    assert res.text == "pong"


def test_langchain_embeddings_as_embedder(tmp_path: Path) -> None:
    embedder = SageEmbedder(DeterministicFakeEmbedding(size=24), name="fake-24")
    assert embedder.dim == 24
    with SageMemory(tmp_path / "m", embedder=embedder) as mem:
        mem.add("Alice prefers green tea.", user_id="alice", infer=False)
        assert mem.search("green tea", user_id="alice").memories[0].text.startswith("Alice")
        assert mem.stats()["embedder"] == "fake-24:24"


def test_chain_memory_focus_option(memory: SageMemory) -> None:
    from support import leads, seed_twins

    seed_twins(memory)
    question = {"input": "what does the release step wait for?"}
    for project, first, second in (
        ("Project Osprey", "load test", "translation review"),
        ("Project Kestrel", "translation review", "load test"),
    ):
        chat = SageConversationMemory(sage=memory, user_id="alice", focus=project)
        assert leads(chat.load_memory_variables(question)["history"], first, second)


def test_langchain_chat_model_reranks_a_search() -> None:
    """The user's own LangChain model, through the bridge, as the rerank stage's model."""
    llm = SageChatModel(FakeListChatModel(responses=[json.dumps({"order": [1, 0]})]))
    with SageMemory(embedder="hashing", reranker=llm) as mem:
        for text in ("The boiler was serviced in March.", "The boiler pressure dropped."):
            mem.add(text, user_id="home")
        plain = [h.text for h in mem.search("the boiler", user_id="home").memories]
        res = mem.search("the boiler", user_id="home", rerank=True)
    assert res.rerank is not None and res.rerank.status == "applied"
    assert [h.text for h in res.memories] == plain[::-1]
