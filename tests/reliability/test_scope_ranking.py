"""One scope's data never changes another scope's ranking (every backend).

Regression: SQLite FTS5's bm25() counted term statistics over the whole table, so one
unrelated memory of user "dev" flipped alice's "where does alice live?" from Berlin first to
Paris first. Lexical scores now come from the partition's own statistics; the vector index
and the graph were already per partition. The property test adds, updates and deletes random
data of other scopes and checks that alice's results, their order and scores stay the same.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
QUERIES = ("where does alice live?", "paris", "berlin job", "who is bob")
ALICE = [
    "Alice lived in Paris for years",
    "Alice works in Berlin now and lives in Berlin",
    "Bob visited Alice in Paris in spring",
    "Alice likes long walks by the river",
]


def _fixed(mem: Any) -> list[tuple[str, tuple[tuple[str, float], ...]]]:
    """What alice sees: for each query, the (memory id, score) list in order."""
    out = []
    for q in QUERIES:
        res = mem.search(q, user_id="alice", limit=3)
        out.append((q, tuple((h.id, round(h.score, 9)) for h in res.memories)))
    return out


def _open(backend: Any) -> Any:
    return backend.open(extractor=None, clock=lambda: NOW)


def test_another_users_memory_does_not_flip_alices_ranking(backend: Any) -> None:
    mem = _open(backend)
    mem.add_many(ALICE, user_id="alice")
    before = _fixed(mem)
    # Words alice's queries use, made rare or common in "dev"'s scope.
    mem.add_many(["paris " * 20, "berlin berlin job", "lives lives lives"] * 3, user_id="dev")
    mem.add("Paris", user_id="dev", agent_id="bot")
    assert _fixed(mem) == before


WORDS = ("paris", "berlin", "alice", "lives", "job", "bob", "river", "walks", "zq")
TEXTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
OTHER = st.sampled_from(
    [{"user_id": "dev"}, {"user_id": "alice", "agent_id": "bot"}, {"agent_id": "alice"}]
)
OPS = st.lists(st.tuples(st.sampled_from(["add", "update", "delete"]), OTHER, TEXTS), max_size=6)


def test_other_scopes_never_change_alices_results(backend: Any) -> None:
    mem = _open(backend)
    mem.add_many(ALICE, user_id="alice")
    baseline = _fixed(mem)

    @settings(
        max_examples=8,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(ops=OPS)
    def check(ops: list[tuple[str, dict[str, str], str]]) -> None:
        for op, scope, text in ops:
            mine = mem.get_all(**scope)
            if op == "add" or not mine:
                mem.add(text, **scope)
            elif op == "update":
                mem.update(mine[len(text) % len(mine)].id, text, **scope)
            else:
                mem.delete(mine[len(text) % len(mine)].id, **scope)
        assert _fixed(mem) == baseline

    check()
