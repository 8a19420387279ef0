"""Scopes a search builds over and over are shared, not rebuilt (a Scope is frozen, so a shared
one is the same value as a new one), and a stored scope is still checked."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sage_memory.codec import from_dict, scope_from, to_dict
from sage_memory.errors import ValidationError
from sage_memory.types import Memory, Scope


def test_a_partition_is_its_own_partition() -> None:
    user = Scope(user_id="alice")
    assert user.partition is user
    both = Scope(user_id="alice", agent_id="bot")
    assert both.partition is both
    run = Scope(user_id="alice", run_id="r1")
    assert run.partition == Scope(user_id="alice") and run.partition.run_id is None
    only_run = Scope(run_id="r1")
    assert only_run.partition is only_run


def test_decoded_scopes_are_shared_and_equal_to_new_ones() -> None:
    now = datetime(2026, 5, 1, tzinfo=UTC)
    m = Memory(
        id="m1",
        scope=Scope(user_id="alice", run_id="r1"),
        text="hello",
        timestamp=now,
        created_at=now,
        updated_at=now,
    )
    a, b = from_dict(Memory, to_dict(m)), from_dict(Memory, to_dict(m))
    assert a == m and b == m
    assert a.scope is b.scope
    assert scope_from({"user_id": "alice"}) == Scope(user_id="alice")


@pytest.mark.parametrize("bad", [{"user_id": " alice"}, {"user_id": ["a"]}, {}])
def test_a_stored_scope_is_still_checked(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        scope_from(bad)


def test_an_unknown_scope_field_still_fails() -> None:
    with pytest.raises(TypeError):
        scope_from({"user_id": "alice", "team": "x"})
