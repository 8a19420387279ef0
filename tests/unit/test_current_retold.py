"""A later note that names the value an earlier one gave, with a change, is an update of it,
even when it holds none of the query's words; a short name ("Elmstead GC") is the long one."""

from __future__ import annotations

from sage_memory.retrieve.change import retold_value, value_words
from sage_memory.retrieve.current import current_first
from sage_memory.retrieve.query import analyze
from sage_memory.retrieve.subjects import abbreviates, names_rival
from tests.unit.test_current_change import NOW, _memory, _unit


def test_the_values_a_statement_gives_and_a_later_note_that_retells_one() -> None:
    said = value_words("Kestrel: the printing is done by Halden Press in Leeds.", {"kestrel"})
    assert said == {"halden", "press", "leeds"}
    assert retold_value("Kestrel: Halden Press missed the date, so we switched to Inkwise.", said)
    # A note naming the value without a change is no update of it.
    assert retold_value("Kestrel: Halden Press sent the proofs back today.", said) is None
    # With a reach, the change must be said near the name, in its own sentence.
    assert retold_value("Proofs are late. Halden Press again.", said, 6) is None


def test_an_update_that_names_the_old_value_leads_though_it_holds_no_query_word() -> None:
    docs = {
        "old": _memory("old", "Kestrel: the printing is done by Halden Press in Leeds.", 2),
        "new": _memory(
            "new", "Kestrel: Halden Press missed the date, so we switched to Inkwise.", 9
        ),
        "other": _memory("other", "Kestrel: the launch party is at the boathouse.", 12),
    }
    vectors = {"old": _unit(1.0, 0.1, 0.0), "new": _unit(0.6, 0.8, 0.0), "other": _unit(0, 0, 1)}
    scores = {"old": 1.0, "new": 0.7, "other": 0.5}
    plan = analyze("Which printer does Kestrel use now?", NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.2, 0.0), plan, None)
    order = sorted(out, key=lambda i: -out[i])
    assert order.index("new") < order.index("old")
    assert out["other"] == scores["other"]


def test_a_retelling_counts_only_when_the_query_asks_which_value_holds() -> None:
    # A query asking what was said, not which value holds now or at a time, keeps its
    # order: a later message naming the value with a change word is no answer to it.
    docs = {
        "old": _memory("old", "Kestrel: the printing is done by Halden Press in Leeds.", 2),
        "new": _memory(
            "new", "Kestrel: Halden Press missed the date, so we switched to Inkwise.", 9
        ),
    }
    vectors = {"old": _unit(1.0, 0.1, 0.0), "new": _unit(0.6, 0.8, 0.0)}
    scores = {"old": 1.0, "new": 0.7}
    plan = analyze("Did Kestrel tell me who was printing the book?", NOW)
    assert current_first(scores, docs, vectors, _unit(1.0, 0.2, 0.0), plan, None) == scores


def test_initials_abbreviate_a_name_and_are_no_rival_of_it() -> None:
    assert abbreviates(("gc",), ("garden", "club"))
    assert abbreviates(("hq",), ("head", "of", "quality"))
    assert not abbreviates(("gc",), ("golf", "course", "club"))
    told = names_rival(
        "Where does Elmstead Garden Club meet these days?",
        ["Elmstead GC: meetings move to the community centre.", "Larchmont Garden Club: Tuesdays."],
    )
    assert told == [False, True]
