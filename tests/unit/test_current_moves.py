"""A thing that moves: a later note saying the asked team or thing moved to a named place is
a value of where it is, though it holds none of the query's words ("we've moved to the
Marrick Arts Centre" after "rehearsals are at Gadsden hall")."""

from __future__ import annotations

import numpy as np

from sage_memory.retrieve.change import relocates
from sage_memory.retrieve.current import current_first
from sage_memory.retrieve.query import analyze
from sage_memory.types import Memory
from tests.unit.test_current_change import NOW, _memory, _order, _unit


def test_a_move_to_a_named_place_is_read() -> None:
    assert relocates("the stall moves to the Cuthwin Exchange from June")
    assert relocates("relocating again, Oxlade this time")
    assert relocates("the quiz is now at the Tolland Arms")
    assert not relocates("Ulric is our treasurer now.")
    assert not relocates("we moved the sofa into the spare room")
    assert not relocates("That is all for now. Ulric out.")


def _choir(**texts: tuple[str, int]) -> tuple[dict[str, Memory], dict[str, np.ndarray]]:
    docs = {k: _memory(k, text, day) for k, (text, day) in texts.items()}
    # Axis 0: where the choir rehearses; axis 1: the move; axis 2: the choir's other news.
    vectors = {
        "old": _unit(1.0, 0.0, 0.15),
        "new": _unit(0.3, 0.9, 0.1),
        "other": _unit(0.2, 0.0, 1.0),
    }
    return docs, {k: v for k, v in vectors.items() if k in docs}


def test_a_later_move_of_the_asked_team_leads_where_it_is_now() -> None:
    docs, vectors = _choir(
        old=("Tamsby Choir: rehearsals are at Gadsden hall until Easter.", 2),
        new=("Tamsby Choir: we've moved to the Marrick Arts Centre, much warmer.", 20),
        other=("Tamsby Choir: the spring concert needs forty programmes printed.", 25),
    )
    scores = {"old": 1.0, "new": 0.6, "other": 0.5}
    plan = analyze("Where is the Tamsby Choir rehearsing now?", NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.5, 0.0), plan, None)
    assert _order(out)[:2] == ["new", "old"]
    assert out["other"] == scores["other"]
    # Asked at a time before the move (``as_of``), the note of that time leads.
    at = docs["old"].timestamp + (docs["new"].timestamp - docs["old"].timestamp) / 2
    plan = analyze("Where was the Tamsby Choir rehearsing?", NOW)
    assert _order(current_first(scores, docs, vectors, _unit(1.0, 0.5, 0.0), plan, at))[0] == "old"


def test_a_twin_teams_move_is_no_value_of_the_asked_one() -> None:
    docs = {
        "old": _memory("old", "Tamsby Choir: rehearsals are at Gadsden hall until Easter.", 2),
        "twin": _memory("twin", "Ovington Choir: we've moved to the Marrick Arts Centre.", 20),
    }
    vectors = {"old": _unit(1.0, 0.0, 0.15), "twin": _unit(0.3, 0.9, 0.1)}
    scores = {"old": 1.0, "twin": 0.6}
    plan = analyze("Where is the Tamsby Choir rehearsing now?", NOW)
    assert current_first(scores, docs, vectors, _unit(1.0, 0.5, 0.0), plan, None) == scores


def test_a_move_is_no_update_for_a_question_that_does_not_ask_where() -> None:
    docs, vectors = _choir(
        old=("Tamsby Choir: rehearsals are at Gadsden hall until Easter.", 2),
        new=("Tamsby Choir: we've moved to the Marrick Arts Centre, much warmer.", 20),
    )
    scores = {"old": 1.0, "new": 0.6}
    plan = analyze("How long are the Tamsby Choir rehearsals now?", NOW)
    assert current_first(scores, docs, vectors, _unit(1.0, 0.5, 0.0), plan, None) == scores
