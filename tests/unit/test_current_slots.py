"""Current value first from the graph: statements of one slot by the values' world time."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from sage_memory.retrieve.current import (
    MAX_VALUES,
    Slots,
    SlotValue,
    current_first,
    newer_values,
)
from sage_memory.retrieve.query import analyze
from sage_memory.types import Edge, Memory, Scope

NOW = datetime(2026, 12, 1, tzinfo=UTC)
SCOPE = Scope(user_id="u")
KEY = ("ruth", "WORKS_AT")


def _day(month: int) -> datetime:
    return datetime(2026, month, 1, tzinfo=UTC)


def _memory(mid: str, text: str, said: int) -> Memory:
    return Memory(mid, text, SCOPE, _day(said), _day(said), _day(said))


def _value(eid: str, target: str, start: int, end: int | None, *mids: str) -> SlotValue:
    edge = Edge(
        eid,
        SCOPE,
        KEY[0],
        target,
        KEY[1],
        valid_from=_day(start),
        valid_to=None if end is None else _day(end),
        memory_ids=mids,
    )
    return SlotValue(KEY, edge.valid_from, edge)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


# Two statements of where Ruth works whose words share little (vectors far apart, each
# as close to the query), and a note about something else. "recap" was said last but
# tells the older value (a recap of her first job); "switch" tells the value that holds.
MEMORIES = {
    "recap": _memory("recap", "Looking back: Ruth started out at the bakery on Elm St.", 9),
    "switch": _memory("switch", "Big news, she signed with the print shop.", 6),
    "other": _memory("other", "Lunch is at noon.", 10),
}
VECTORS = {"recap": _unit(1, 0, 0), "switch": _unit(0, 1, 0), "other": _unit(0, 0, 1)}
QVEC = _unit(1, 1, 0)  # both statements answer it as well; the note does not
SCORES = {"recap": 1.0, "other": 0.8, "switch": 0.5}
BAKERY = _value("e1", "bakery", 1, 6, "recap")
PRINT_SHOP = _value("e2", "print shop", 6, None, "switch")
SLOTS = Slots(
    {"recap": [BAKERY], "switch": [PRINT_SHOP]},
    {KEY: [BAKERY, PRINT_SHOP]},
)


def _order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])


def test_the_graph_joins_statements_of_one_slot_whatever_their_words() -> None:
    plan = analyze("Where does Ruth work?", NOW)
    # text alone: too far apart to be one slot, the fused order stands
    assert current_first(SCORES, MEMORIES, VECTORS, QVEC, plan, None) == SCORES
    out = current_first(SCORES, MEMORIES, VECTORS, QVEC, plan, None, SLOTS)
    # one subject, one single-valued relation: the value that holds first, by world time
    # (the recap was said later, but tells the older value); the other note keeps its score
    assert _order(out) == ["switch", "other", "recap"]
    assert out["other"] == SCORES["other"]


def test_a_reference_time_puts_the_value_valid_then_first() -> None:
    plan = analyze("Where did Ruth work?", NOW)
    march = _day(3)
    out = current_first(SCORES, MEMORIES, VECTORS, QVEC, plan, march, SLOTS)
    assert _order(out)[0] == "recap"


def test_the_memory_of_the_value_that_holds_is_named_for_bringing_in() -> None:
    only_recap = Slots({"recap": [BAKERY]}, {KEY: [BAKERY, PRINT_SHOP]})
    assert newer_values(only_recap, ["recap", "other"], None) == [("switch", "recap")]
    # at a time the bakery was the value, nothing is missing
    assert newer_values(only_recap, ["recap"], _day(3)) == []
    # a chosen memory stating the value that holds already: nothing to bring
    assert newer_values(SLOTS, ["recap", "switch"], None) == []


def test_a_hub_slot_brings_nothing_in() -> None:
    many = [_value(f"e{i}", f"place {i}", 1, 2, f"m{i}") for i in range(MAX_VALUES)]
    hub = Slots({"recap": [BAKERY]}, {KEY: [BAKERY, *many, PRINT_SHOP]})
    assert newer_values(hub, ["recap"], None) == []


def test_a_twin_teams_note_on_the_same_person_is_no_value_of_the_asked_team() -> None:
    # Yelland coached Hethel Rovers, then moved to Wragby Town; the graph keys both notes of her
    # role by Yelland, but the question asks about the Rovers, and the Wragby Town note names
    # neither the Rovers nor is Yelland the one asked: it must not lead the Rovers' statements.
    def role(eid: str, start: int, end: int | None, mid: str) -> SlotValue:
        edge = Edge(
            eid, SCOPE, "dana", "coach", "HAS_ROLE", valid_from=_day(start),
            valid_to=None if end is None else _day(end), memory_ids=(mid,),
        )  # fmt: skip
        return SlotValue(("dana", "HAS_ROLE"), edge.valid_from, edge)

    memories = {
        "rovers": _memory("rovers", "Hethel Rovers: Yelland Brisco is head coach this season.", 2),
        "after": _memory(
            "after", "Hethel Rovers: Yelland left, Ulric Quarrendon is our new head coach.", 6
        ),
        "twin": _memory("twin", "Wragby Town: Yelland Brisco takes over as head coach.", 7),
    }
    vectors = {
        "rovers": _unit(1, 0, 0),
        "after": _unit(0.8, 0.6, 0),
        "twin": _unit(0.7, 0, 0.7),
    }
    first, second = role("r1", 2, 7, "rovers"), role("r2", 7, None, "twin")
    slots = Slots(
        {"rovers": [first], "twin": [second]},
        {("dana", "HAS_ROLE"): [first, second]},
        {"dana": ("yelland brisco",)},
    )
    scores = {"rovers": 1.0, "twin": 0.9, "after": 0.6}
    plan = analyze("Who is the head coach at Hethel Rovers now?", NOW)
    out = current_first(scores, memories, vectors, _unit(1, 0.2, 0.2), plan, None, slots)
    assert _order(out)[0] == "after"
    assert out["twin"] == scores["twin"]
    # Asked about Yelland herself, both notes are values of her role: the latest leads.
    plan = analyze("What is Yelland Brisco's role now?", NOW)
    out = current_first(scores, memories, vectors, _unit(1, 0.2, 0.2), plan, None, slots)
    assert _order(out)[0] == "twin"
