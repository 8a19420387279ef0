"""The same text ingested twice gives the same graph and the same ranked search results.

Two fresh folders, each filled by its own Python process with a different string-hash seed
(``PYTHONHASHSEED``: the order in which sets of strings iterate) and, as always, different random
ids. Ties between equally good candidates (two nodes a mention matches equally well, two values
of a one-valued relation stated in one add_many chunk, two memories with the same score) must be
broken by content, never by an id or a set's order, or a benchmark wobbles from run to run.
Offline defaults (the structure extractor, MiniLM), through the public API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CORPUS = [
    "Lena Ortiz is a violinist and a composer.",
    "Lena Ortiz works at the Harbor Opera and at the Civic Orchestra.",
    "Lena Ortiz lives in Valparaiso and in Santiago.",
    "The producer of the record was Tomas Reyes.",
    "Producer Tomas Reyes mixed the record at Salt Studio.",
    "Tomas Reyes is a producer and an engineer.",
    "Tomas Reyes works at Salt Studio and at Reef Records.",
    "Reef Records released the album Tidewater in 2019.",
    "The album Tidewater features Lena Ortiz on violin.",
    "A production of the opera opened at the Harbor Opera.",
    "The production crew at Salt Studio includes two engineers.",
    "Mara Quist is a composer who studied with Lena Ortiz.",
    "Mara Quist works at the Civic Orchestra.",
    "Mara Quist lives in Santiago.",
]
QUERIES = [
    "where does Lena Ortiz live?",
    "who produced the record?",
    "which studio did the producer of Tidewater work at?",
    "what does Mara Quist do?",
    "who plays violin on Tidewater?",
]

RUN = """
import json, re, sys
from sage_memory import SageMemory
corpus, queries = json.loads(sys.argv[2]), json.loads(sys.argv[3])
mem = SageMemory(sys.argv[1])
mem.add_many([{"text": t} for t in corpus], user_id="u")
g = mem.graph(user_id="u")
names = {n.id: n.name for n in g.nodes}
texts = {m.id: m.text for m in mem.get_all(user_id="u")}
out = {
    "nodes": sorted(
        [n.label, n.name, sorted(n.aliases), sorted(texts[m] for m in n.memory_ids)]
        for n in g.nodes
    ),
    "edges": sorted([names[e.source_id], e.relation, names[e.target_id]] for e in g.edges),
    "ranked": {
        q: [[h.memory.text, h.score] for h in mem.search(q, user_id="u", limit=8).memories]
        for q in queries
    },
    "node_hits": {
        q: [[h.node.label, h.node.name] for h in mem.search(q, user_id="u", limit=8).nodes]
        for q in queries
    },
    # Memory ids are random per folder; the context cites them, so they are masked.
    "contexts": {
        q: re.sub(r"mem [0-9a-f,]{6,}", "mem", mem.search(q, user_id="u", limit=8).context)
        for q in queries
    },
}
mem.close()
print(json.dumps(out))
"""


def _ingest_and_search(folder: Path, hash_seed: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(folder), json.dumps(CORPUS), json.dumps(QUERIES)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_same_corpus_twice_gives_same_graph_and_rankings(tmp_path: Path) -> None:
    first = _ingest_and_search(tmp_path / "one", "1")
    second = _ingest_and_search(tmp_path / "two", "2")
    assert first["nodes"] == second["nodes"]
    assert first["edges"] == second["edges"]
    # The ranked texts are the same; scores agree to 1e-4. The walk's lazy push visits a node's
    # links in the store's order (by node id), and the push is approximate, so the mass of a
    # memory can differ in the sixth decimal between two folders (a known residual; fixing it
    # needs a content order for edges in every store).
    for q in QUERIES:
        a, b = first["ranked"][q], second["ranked"][q]  # type: ignore[index]
        assert [text for text, _ in a] == [text for text, _ in b], q
        assert all(abs(x - y) < 1e-4 for (_, x), (_, y) in zip(a, b, strict=True)), q
    assert all(first["ranked"][q] for q in QUERIES)  # type: ignore[index]
    # Node hits of equal score keep one order (by content), and the packed context is the same.
    assert first["node_hits"] == second["node_hits"]
    assert first["contexts"] == second["contexts"]
