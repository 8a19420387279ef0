"""Two hops through a shared entity with the default fusion (preset "balanced").

The query names a person; one memory links that person to a team, another tells what the team
did and shares no word with the query. Dense and lexical search do not rank the second memory
among their hits; the associative walk (query entity -> first memory -> team -> second memory)
does, and ``SageMemory.search`` returns it with the default weights. With the graph channel
off it is gone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.index.base import collection_name
from sage_memory.types import EdgeSpec, NodeSpec, Scope

T0 = datetime(2026, 2, 1, 8, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
QUERY = "Which results can Priya point to?"
FAR = "Kestrel Lab shipped the flood-forecast model to three regions."


@pytest.fixture(params=["memory", "folder"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SageMemory]:
    path = None if request.param == "memory" else tmp_path / "m"
    m = SageMemory(path, embedder="hashing", clock=lambda: NOW)
    yield m
    m.close()


def build(mem: SageMemory) -> dict[str, str]:
    day = timedelta(days=1)
    mem.add_many(
        [
            # Filler that the words and the vector of the query do match (no entities).
            {"text": f"Note {i}: which results can the garage point to?", "timestamp": T0 + i * day}
            for i in range(15)
        ],
        user_id="u",
        infer=False,
    )
    near = mem.add_graph(
        "Priya leads Kestrel Lab since January.",
        nodes=[NodeSpec("p", "Priya", "Person"), NodeSpec("k", "Kestrel Lab", "Organization")],
        edges=[EdgeSpec("p", "k", "RELATED_TO", "Priya leads Kestrel Lab")],
        user_id="u",
        timestamp=T0 + 20 * day,
    ).memory_id
    far = mem.add_graph(
        FAR,
        nodes=[
            NodeSpec("k", "Kestrel Lab", "Organization"),
            NodeSpec("m", "flood-forecast model", "Concept"),
        ],
        user_id="u",
        timestamp=T0 + 30 * day,
    ).memory_id
    return {"near": near, "far": far}


def test_a_memory_two_hops_away_is_found_with_the_default_weights(mem: SageMemory) -> None:
    ids = build(mem)
    scope = Scope("u")
    # Neither word nor vector search ranks it: it shares no word with the query, and the
    # filler is nearer to the query's vector.
    lexical = [i for i, _ in mem.store.search_text(scope, QUERY, entity="memory", limit=5)]
    assert ids["far"] not in lexical
    qvec = mem.embedder.embed_query(QUERY)
    dense = [i for i, _ in mem.index.query(collection_name(scope.partition.key, "memory"), qvec, 5)]
    assert ids["far"] not in dense

    res = mem.search(QUERY, user_id="u", limit=5)
    top = [h.id for h in res.memories]
    assert ids["near"] in top and ids["far"] in top
    hit = next(h for h in res.memories if h.id == ids["far"])
    assert "associative walk" in hit.why

    off = dataclasses.replace(mem.retriever.weights, graph=0.0, entity=0.0, assoc_take=0)
    res_off = mem.retriever.search(
        QUERY, scope, limit=5, as_of=None, context_tokens=2000, now=NOW, weights=off
    )
    assert ids["far"] not in [h.id for h in res_off.memories]
