"""The LLM extraction path end to end through litellm (offline: litellm's mock_response)."""

from __future__ import annotations

import json

from sage_memory import SageConfig, SageMemory
from sage_memory.testing.fakes import ScriptedChatModel

GOOD = json.dumps(
    {
        "memories": [
            {
                "index": 0,
                "kind": "knowledge",
                "salience": 0.7,
                "nodes": [
                    {"name": "Alice", "label": "Person"},
                    {"name": "Berlin", "label": "Place"},
                ],
                "edges": [
                    {
                        "source": "Alice",
                        "target": "Berlin",
                        "relation": "LIVES_IN",
                        "fact": "Alice lives in Berlin",
                        "confidence": 0.9,
                    }
                ],
            }
        ]
    }
)


def test_litellm_model_extracts_through_the_engine() -> None:
    cfg = SageConfig(llm="ollama_chat/llama3.1", llm_kwargs={"mock_response": GOOD})
    with SageMemory(config=cfg, embedder="hashing") as mem:
        assert mem.extractor.name == "llm"
        r = mem.add("Alice now lives in Berlin", user_id="a")
        assert r.extraction_error is None and r.tokens_used > 0
        assert len(r.node_ids) == 2 and len(r.edge_ids) == 1
        assert "Alice LIVES_IN Berlin" in mem.search("where does Alice live?", user_id="a").context


def test_garbage_from_the_model_falls_back_to_rules_and_keeps_the_memory() -> None:
    model = ScriptedChatModel(["I'm sorry, I can't do JSON today.", "still no json"])
    with SageMemory(llm=model, embedder="hashing") as mem:
        r = mem.add("Alice moved to Berlin last week", user_id="a")
        assert len(model.calls) == 2  # one call plus one retry carrying the parse error
        stored = mem.get(r.memory_id)
        assert stored.text == "Alice moved to Berlin last week"
        assert r.extraction_error  # the failure is recorded on the result and the memory
        assert stored.extraction_error == r.extraction_error
        names = {n.name for n in mem.explore("Alice", user_id="a").nodes}
        assert "Berlin" in names  # the rule extractor's graph was used instead


def test_add_many_makes_one_llm_call_per_batch() -> None:
    answer = json.dumps(
        {
            "memories": [
                {"index": i, "nodes": [{"name": f"Topic{i}", "label": "Concept"}], "edges": []}
                for i in range(4)
            ]
        }
    )
    model = ScriptedChatModel([answer])
    with SageMemory(llm=model, embedder="hashing") as mem:
        results = mem.add_many([f"note about topic {i}" for i in range(4)], user_id="a")
        assert len(model.calls) == 1
        assert all(r.node_ids for r in results)
