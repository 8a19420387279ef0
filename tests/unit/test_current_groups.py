"""Which statements are one slot: the slot's own words, or mutual nearest paraphrases.

A world's notes share their header and topic, so a preamble is close to every slot it touches;
closeness alone must not chain two slots into one group (the later slot would then lead the
asked one). Two statements that both hold the words of the slot asked are one slot whatever
else they say.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from sage_memory.retrieve.current import current_first
from sage_memory.retrieve.query import analyze
from sage_memory.types import Memory, Scope

NOW = datetime(2026, 12, 1, tzinfo=UTC)
SCOPE = Scope(user_id="u")


def _memory(mid: str, text: str, month: int) -> Memory:
    when = datetime(2026, month, 1, tzinfo=UTC)
    return Memory(mid, text, SCOPE, when, when, when)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])


# Axis 0: where Noor is based; axis 1: the crew's shared topic; axis 2: Noor's role;
# axis 3: anything else. The kickoff note is close to both slots (cosine 0.86 and 0.65), the
# role note is not close to the home notes (0.3).
HOME = {
    "kickoff": _memory("kickoff", "Kite crew kickoff: Noor joins us as a tester.", 1),
    "flat": _memory("flat", "Kite crew: Noor rents a flat in Harwich.", 2),
    "moved": _memory("moved", "Kite crew: Noor moved over to Ipswich.", 6),
    "role": _memory("role", "Kite crew: Noor got promoted to QA lead.", 9),
    "lunch": _memory("lunch", "Kite crew: pizza on Friday.", 10),
}
HOME_VECTORS = {
    "kickoff": _unit(0.6, 1.0, 0.25, 0.0),
    "flat": _unit(1.0, 0.6, 0.0, 0.0),
    "moved": _unit(1.0, 0.45, 0.0, 0.15),
    "role": _unit(0.0, 0.7, 1.0, 0.0),
    "lunch": _unit(0.0, 0.2, 0.0, 1.0),
}
HOME_SCORES = {"flat": 1.0, "kickoff": 0.9, "role": 0.8, "moved": 0.7, "lunch": 0.5}


def test_a_preamble_does_not_chain_another_slot_into_the_asked_one() -> None:
    plan = analyze("Which town is Noor from the Kite crew based in now?", NOW)
    qvec = _unit(1.0, 0.5, 0.5, 0.0)  # the role note answers it well enough to take part
    out = current_first(HOME_SCORES, HOME, HOME_VECTORS, qvec, plan, None)
    # the latest statement of where Noor is leads; the later role note (close to the kickoff
    # note only) is another slot and keeps its score instead of taking the lead
    assert _order(out)[0] == "moved"
    assert out["role"] == HOME_SCORES["role"]
    assert out["lunch"] == HOME_SCORES["lunch"]


# Two long statements about different things that both state Ines's lab partner: their
# vectors are apart (cosine 0.41), each answers the query as well.
LAB = {
    "week3": _memory("week3", "Week 3, Ines: titration went fine and my lab partner is Jonas.", 3),
    "hood": _memory("hood", "Ines: the fume hood is booked for Friday.", 8),
    "swap": _memory(
        "swap", "Ines: Jonas went to the Tuesday group, so Sade is my lab partner from here.", 10
    ),
}
LAB_VECTORS = {
    "week3": _unit(1.0, 0.0, 1.2, 0.0),
    "hood": _unit(1.0, 1.5, 0.0, 0.0),
    "swap": _unit(1.0, 0.0, 0.0, 1.2),
}
LAB_QVEC = _unit(1.0, 0.0, 0.3, 0.3)
LAB_SCORES = {"week3": 1.0, "hood": 0.8, "swap": 0.6}


def test_statements_holding_the_slots_words_are_one_slot() -> None:
    plan = analyze("Who is Ines's lab partner these days?", NOW)
    out = current_first(LAB_SCORES, LAB, LAB_VECTORS, LAB_QVEC, plan, None)
    assert _order(out) == ["swap", "hood", "week3"]
    # asked about the spring, the statement made by then leads
    march = datetime(2026, 3, 15, tzinfo=UTC)
    assert _order(current_first(LAB_SCORES, LAB, LAB_VECTORS, LAB_QVEC, plan, march))[0] == "week3"


def test_a_slot_word_shared_with_a_name_does_not_join() -> None:
    # "lab" is the only slot word the hood note would share if it said it; one is not enough
    hood = _memory("hood", "Ines: the lab fume hood is booked for Friday.", 11)
    memories = {**LAB, "hood": hood}
    plan = analyze("Who is Ines's lab partner these days?", NOW)
    out = current_first(LAB_SCORES, memories, LAB_VECTORS, LAB_QVEC, plan, None)
    assert out["hood"] == LAB_SCORES["hood"]


def test_a_number_inside_a_name_does_not_pin_the_best_statement() -> None:
    memories = {
        "dunn": _memory("dunn", "Kite school Y6 trip: Mrs Dunn leads it.", 2),
        "carter": _memory("carter", "Kite school: Miss Carter leads the trip from today.", 5),
    }
    vectors = {"dunn": _unit(1.0, 0.1), "carter": _unit(1.0, 0.15)}
    plan = analyze("Who leads the Kite school's Y6 trip now?", NOW)
    out = current_first(
        {"dunn": 1.0, "carter": 0.9}, memories, vectors, _unit(1.0, 0.1), plan, None
    )
    assert _order(out) == ["carter", "dunn"]
    # a number that is a value ("the 3 PM call") still asks for its own statement
    memories = {
        "three": _memory("three", "Kite school: the call is at 3 PM.", 2),
        "four": _memory("four", "Kite school: the call moved to 4 PM.", 5),
    }
    vectors = {"three": _unit(1.0, 0.1), "four": _unit(1.0, 0.15)}
    plan = analyze("What was on the agenda of the Kite school's 3 PM call?", NOW)
    out = current_first({"three": 1.0, "four": 0.9}, memories, vectors, _unit(1.0, 0.1), plan, None)
    assert _order(out) == ["three", "four"]
