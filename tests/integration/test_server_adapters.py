"""The framework adapters in server mode: each takes a postgresql:// URL (or a SageMemory on
one) and works against the real PostgreSQL the test session starts."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from sage_memory import SageMemory


@pytest.fixture
def url(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("SAGE_EMBEDDER", "hashing")  # the engine an adapter opens from a URL
    sep = "&" if "?" in postgres_url else "?"
    return f"{postgres_url}{sep}schema=a_{uuid.uuid4().hex[:12]}"


def test_langchain_store_on_a_url(url: str) -> None:
    from langchain_sage_memory import SageStore

    store = SageStore(sage=url)
    store.put(("alice", "memories"), "k1", {"text": "Alice moved to Lisbon in May"})
    hits = store.search(("alice", "memories"), query="where does Alice live")
    assert [h.key for h in hits][:1] == ["k1"]
    # Another engine (another worker of the same app) on the same URL sees the write.
    with SageMemory(url=url, embedder="hashing") as other:
        assert [m.text for m in other.get_all(user_id="alice")] == ["Alice moved to Lisbon in May"]


def test_llama_index_chat_memory_on_a_url(url: str) -> None:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.memory.sage import SageChatMemory

    memory = SageChatMemory.from_defaults(sage=url, user_id="bob", session_id="s1")
    memory.put(ChatMessage(role=MessageRole.USER, content="My daughter Mia studies in Lisbon."))
    memory.put(ChatMessage(role=MessageRole.ASSISTANT, content="Noted."))
    with SageMemory(url=url, embedder="hashing") as other:
        assert [m.role for m in other.get_all(user_id="bob")] == ["user", "assistant"]
    later = SageChatMemory.from_defaults(sage=url, user_id="bob", session_id="s2")
    recalled = later.get(input="Where does Mia study?")
    assert any("Lisbon" in str(m.content) for m in recalled)


@pytest.mark.slow
async def test_mcp_server_on_a_url_shared_by_two_clients(url: str) -> None:
    script = Path(sys.executable).with_name("sage-memory-mcp")
    env = {
        **os.environ,
        "SAGE_MEMORY_URL": url,
        "SAGE_MEMORY_USER": "alice",
        "SAGE_EMBEDDER": "hashing",
    }
    params = StdioServerParameters(command=str(script), args=[], env=env)
    kim = {"name": "Kim", "entityType": "person", "observations": ["Runs marathons"]}
    async with Client(params) as first, Client(params) as second:
        created = await first.call_tool("create_entities", {"entities": [kim]})
        assert not created.is_error, created.content
        found = await second.call_tool("search_nodes", {"query": "marathon"})
        assert not found.is_error, found.content
        assert found.structured_content is not None
        assert [e["name"] for e in found.structured_content["entities"]] == ["Kim"]
