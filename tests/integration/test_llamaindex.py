"""LlamaIndex adapters on a real SageMemory: chat engines, FunctionAgent with the memory block,
the tool spec, the retriever and the model bridges. Models are LlamaIndex's own mocks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.chat_engine import CondensePlusContextChatEngine, SimpleChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM, MockLLMWithChatMemoryOfLastCall
from llama_index.core.memory import Memory
from llama_index.memory.sage import (
    SageChatMemory,
    SageChatModel,
    SageEmbedder,
    SageMemoryBlock,
    SageMemoryToolSpec,
    SageRetriever,
)
from support import open_memory, seed_graph

from sage_memory import SageMemory

# llama-index's workflow machinery inspects pydantic models with inspect.getmembers, which
# trips pydantic's own deprecation warnings; they are not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect")


def seen(messages: Sequence[ChatMessage] | None) -> str:
    return "\n".join(f"{m.role.value}: {m.content}" for m in messages or [])


# -- chat engines --------------------------------------------------------------------------------
def test_simple_chat_engine_writes_through_and_recalls_in_a_new_session(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m") as mem:
        memory = SageChatMemory.from_defaults(sage=mem, user_id="bob", session_id="s1")
        engine = SimpleChatEngine.from_defaults(llm=MockLLM(max_tokens=4), memory=memory)
        engine.chat("My daughter Mia starts school in Lisbon in September.")
        roles = [m.role for m in mem.get_all(user_id="bob")]
        assert roles == ["user", "assistant"]  # every turn is in the graph memory at once

    with open_memory(tmp_path / "m") as mem:
        llm = MockLLMWithChatMemoryOfLastCall(max_tokens=4)
        memory = SageChatMemory.from_defaults(sage=mem, user_id="bob", session_id="s2")
        engine = SimpleChatEngine.from_defaults(
            llm=llm, memory=memory, system_prompt="You are a family assistant."
        )
        engine.chat("Where does Mia go to school?")
        system, recalled, question = llm.last_chat_messages
        assert system.content == "You are a family assistant."  # the engine's prefix message
        assert recalled.role == MessageRole.SYSTEM
        assert "My daughter Mia starts school in Lisbon in September." in recalled.content
        assert "Where does Mia go to school?" not in recalled.content  # no self-recall
        assert question.content == "Where does Mia go to school?"


async def test_condense_plus_context_engine_with_retriever_and_memory(memory: SageMemory) -> None:
    seed_graph(memory)
    llm = MockLLM()  # not a chat model: the engine calls complete(), which echoes the prompt
    engine = CondensePlusContextChatEngine.from_defaults(
        retriever=SageRetriever(memory, user_id="alice", similarity_top_k=2),
        llm=llm,
        memory=SageChatMemory.from_defaults(sage=memory, user_id="alice"),
        skip_condense=True,
    )
    response = await engine.achat("What does Orion depend on?")
    assert "Orion uses Neo4j and depends on Kafka." in response.response
    assert "<memory>" in response.response  # the chat memory's recall reached the prompt too
    assert "What does Orion depend on?" in [m.text for m in memory.get_all(user_id="alice")]


async def test_set_writes_only_new_messages_and_reset_keeps_long_term(memory: SageMemory) -> None:
    chat = SageChatMemory.from_defaults(sage=memory, user_id="u")
    first = [
        ChatMessage(role="user", content="I am Ana"),
        ChatMessage(role="assistant", content="Hi"),
    ]
    await chat.aset(first)
    await chat.aset([*first, ChatMessage(role="user", content="I like maps")])
    # The new question waits for the recall it triggers, so it never recalls itself.
    assert [m.text for m in memory.get_all(user_id="u")] == ["I am Ana", "Hi"]
    recalled = await chat.aget(input="I like maps")
    assert "I like maps" not in (recalled[0].content or "")
    assert [m.text for m in memory.get_all(user_id="u")] == ["I am Ana", "Hi", "I like maps"]
    await chat.areset()
    assert await chat.aget_all() == []
    assert len(memory.get_all(user_id="u")) == 3


# -- FunctionAgent + memory block ----------------------------------------------------------------
def scripted_agent_llm(log: list[list[ChatMessage]]) -> MockFunctionCallingLLM:
    def respond(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        log.append(list(messages))
        return ChatMessage(role="assistant", content=f"Noted ({len(log)}).")

    return MockFunctionCallingLLM(response_generator=respond)


async def test_function_agent_with_memory_block_recalls_across_sessions(tmp_path: Path) -> None:
    def session(mem: SageMemory, session_id: str) -> Memory:
        # A small short-term window, so older turns flush into the long-term block.
        return Memory.from_defaults(
            session_id=session_id,
            token_limit=60,
            chat_history_token_ratio=0.5,
            token_flush_size=10,
            memory_blocks=[SageMemoryBlock(sage=mem, user_id="carol")],
        )

    with open_memory(tmp_path / "m") as mem:
        log: list[list[ChatMessage]] = []
        agent = FunctionAgent(tools=[], llm=scripted_agent_llm(log), system_prompt="Be kind.")
        monday = session(mem, "monday")
        await agent.run(user_msg="My cat is called Pixel and she is nine.", memory=monday)
        await agent.run(user_msg="I'm also learning Portuguese this year.", memory=monday)
        await agent.run(user_msg="And I train for a half marathon in May.", memory=monday)
        stored = mem.get_all(user_id="carol")
        assert "My cat is called Pixel and she is nine." in [m.text for m in stored]
        assert {m.scope.run_id for m in stored} == {"monday"}

    with open_memory(tmp_path / "m") as mem:
        log = []
        agent = FunctionAgent(tools=[], llm=scripted_agent_llm(log), system_prompt="Be kind.")
        await agent.run(user_msg="How old is my cat Pixel?", memory=session(mem, "friday"))
        prompt = seen(log[-1])
        assert "<sage_memory>" in prompt
        assert "My cat is called Pixel and she is nine." in prompt


async def test_function_agent_calls_query_related_memories(memory: SageMemory) -> None:
    seed_graph(memory)

    def respond(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        tool_results = [m for m in messages if m.role == MessageRole.TOOL]
        if tool_results:
            found = tool_results[-1].content or ""
            return ChatMessage(role="assistant", content="Kafka." if "Kafka" in found else "?")
        call = ToolCallBlock(
            tool_call_id="c1",
            tool_name="query_related_memories",
            tool_kwargs={"query": "what does Orion depend on?"},
        )
        return ChatMessage(role="assistant", blocks=[call])

    tools = SageMemoryToolSpec(memory, user_id="alice").to_tool_list()
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=respond))
    chat = SageChatMemory.from_defaults(sage=memory, user_id="alice", session_id="t")
    response = await agent.run(user_msg="What does Orion depend on?", memory=chat)
    assert [t.tool_name for t in response.tool_calls] == ["query_related_memories"]
    assert "Kafka" in response.tool_calls[0].tool_output.content
    assert str(response) == "Kafka."
    texts = [m.text for m in memory.get_all(user_id="alice")]
    assert texts[-2:] == ["What does Orion depend on?", "Kafka."]  # tool traffic is not saved


# -- tool spec -----------------------------------------------------------------------------------
async def test_tool_spec_sync_and_async(memory: SageMemory) -> None:
    seed_graph(memory)
    spec = SageMemoryToolSpec(memory, user_id="alice")
    tools = {t.metadata.name: t for t in spec.to_tool_list()}
    assert list(tools) == [
        "query_related_memories",
        "explore_graph",
        "save_memory",
        "forget_memory",
    ]
    assert "Neo4j" in str(tools["query_related_memories"].call(query="Orion tools"))
    assert "Orion USES Neo4j" in str(await tools["explore_graph"].acall(name="Orion", hops=1))
    assert "No entity named" in spec.explore_graph("Zeus")
    saved = str(await tools["save_memory"].acall(text="Alice's badge number is 77."))
    short_id = saved.split()[2].rstrip(".")
    assert "Forgot memory" in str(tools["forget_memory"].call(memory_id=short_id))
    assert "nothing was forgotten" in await spec.aforget_memory(short_id)
    assert "badge" not in " ".join(m.text for m in memory.get_all(user_id="alice"))


# -- bring your own model ------------------------------------------------------------------------
def test_llamaindex_llm_and_embedding_serve_the_engine(tmp_path: Path) -> None:
    answer = {
        "memories": [
            {
                "index": 0,
                "nodes": [{"name": "Ana", "label": "Person"}, {"name": "Porto", "label": "Place"}],
                "edges": [{"source": "Ana", "target": "Porto", "relation": "LIVES_IN"}],
            }
        ]
    }

    def reply(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        return ChatMessage(role="assistant", content=json.dumps(answer))

    llm = SageChatModel(MockFunctionCallingLLM(response_generator=reply))
    embedder = SageEmbedder(MockEmbedding(embed_dim=16), name="mock-16")
    assert embedder.dim == 16
    with SageMemory(tmp_path / "m", embedder=embedder, llm=llm) as mem:
        mem.add("Ana lives in Porto.", user_id="ana")
        (edge,) = mem.explore("Ana", user_id="ana").edges
        assert edge.relation == "LIVES_IN"
        assert mem.stats()["embedder"] == "mock-16:16"


async def test_chat_memory_and_block_focus_option(memory: SageMemory) -> None:
    from support import leads, seed_twins

    seed_twins(memory)
    question = "what does the release step wait for?"
    for project, first, second in (
        ("Project Osprey", "load test", "translation review"),
        ("Project Kestrel", "translation review", "load test"),
    ):
        chat = SageChatMemory.from_defaults(sage=memory, user_id="alice", focus=project)
        system = chat.get(input=question)[0].content or ""
        assert leads(system, first, second)
        block = SageMemoryBlock(sage=memory, user_id="alice", focus=project)
        text = await block._aget([ChatMessage(role=MessageRole.USER, content=question)])
        assert leads(text, first, second)
