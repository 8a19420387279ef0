"""Which statement of a slot may lead it: one that says something of the asked subject or slot
after its title, not a later note of the same team on something else, nor a note titled with
a rival team's name (sentences written for these tests)."""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory.retrieve.change import marks_change, without_now
from sage_memory.retrieve.current import current_first
from sage_memory.retrieve.mentions import phrases
from sage_memory.retrieve.query import analyze
from sage_memory.retrieve.seeds import LinkedNode
from sage_memory.retrieve.subjects import asked_subjects, other_subject_penalty
from sage_memory.types import Memory, Node, Scope
from tests.unit.test_current_change import NOW, SCOPE, _order, _unit


def _memory(mid: str, text: str, month: int) -> Memory:
    when = datetime(2026, month, 1, tzinfo=UTC)
    return Memory(mid, text, SCOPE, when, when, when)


def test_a_later_note_on_something_else_does_not_lead_the_slot() -> None:
    # Three notes of one choir, close to each other (one group by closeness): the last is
    # small talk that holds the slot's word only in its title.
    docs = {
        "first": _memory("first", "Harbour choir: Wendell conducts the choir.", 1),
        "handover": _memory(
            "handover", "Harbour choir: Wendell is moving; Pim takes the choir.", 3
        ),
        "chat": _memory("chat", "Harbour choir: lovely sunny rehearsal, cake after.", 4),
    }
    vectors = {
        "first": _unit(1.0, 0.3, 0.1),
        "handover": _unit(1.0, 0.35, 0.0),
        "chat": _unit(1.0, 0.25, 0.2),
    }
    scores = {"first": 1.0, "chat": 0.9, "handover": 0.8}
    plan = analyze("Who conducts the Harbour choir now?", NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.3, 0.1), plan, None)
    assert _order(out)[0] == "handover"


def test_a_note_titled_with_a_rival_team_does_not_lead() -> None:
    # The twin crew's note names the asked crew in passing and is the latest: still theirs.
    docs = {
        "first": _memory("first", "Crew Juniper: Ola leads the crew this season.", 1),
        "handover": _memory("handover", "Crew Juniper: Ola hands over to Tamsin as lead.", 3),
        "twin": _memory("twin", "Crew Hawthorn: Ola left for Juniper, so Bram leads us.", 5),
    }
    vectors = {
        "first": _unit(1.0, 0.3, 0.1),
        "handover": _unit(1.0, 0.35, 0.0),
        "twin": _unit(1.0, 0.25, 0.2),
    }
    scores = {"first": 1.0, "twin": 0.9, "handover": 0.8}
    plan = analyze("Who leads Crew Juniper now?", NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.3, 0.1), plan, None)
    assert _order(out)[0] == "handover"


def test_the_words_asking_for_the_present_are_no_slot_words() -> None:
    assert "present" not in without_now("Who is the Fenwick lab's PI at present?")
    assert "moment" not in without_now("where is the van parked at the moment?")
    assert "budget" in without_now("what is the budget these days?")


def test_a_title_abbreviation_does_not_hide_the_name_after_it() -> None:
    found = phrases("Dr. Quayle is on leave; Mrs. Ibbotson runs the clinic now.")
    assert "Quayle" in found and "Ibbotson" in found
    # a sentence that starts after a full stop still names nothing by its first word
    assert "Anyway" not in phrases("We met at noon. Anyway the clinic opens late.")


def test_bump_tells_a_change() -> None:
    assert marks_change("Ruth bumped the minimum Python to 3.12 on main.")


def test_a_fuzzy_match_of_part_of_a_name_is_not_the_asked_subject() -> None:
    scope = Scope(user_id="teams").partition
    user = Node("t", scope, "teams", "Person", memory_ids=("m0",))
    bram = Node("b", scope, "Bram", "Person", memory_ids=("m1",))
    linked = [LinkedNode(user, 0.9, "fuzzy 'team'")]
    query = "Who leads Team Heron now?"
    assert asked_subjects(linked, query) == []
    note = Memory("m1", "Team Heron: Bram leads the team now.", scope, NOW, NOW, NOW)
    penalty = other_subject_penalty(
        query, linked, [user, bram], {"m1": note}, ["m1"], {"m1": ["b"]}
    )
    assert penalty == {}
    # a misspelt name said whole is still the name asked
    alice = Node("a", scope, "Alice", "Person", memory_ids=("m2",))
    assert asked_subjects([LinkedNode(alice, 0.9, "fuzzy 'Alcie'")], "Where does Alcie live?") == [
        alice
    ]


def test_a_role_handed_to_someone_may_lead() -> None:
    # "handed the keys to Ines" holds no word of "who runs the depot" after its title, but it
    # tells a succession with a name: it is the update, and the later note is small talk.
    docs = {
        "first": _memory("first", "Larkfield depot: Osman runs the depot for now.", 1),
        "handed": _memory("handed", "Larkfield depot: Osman handed the keys to Ines Varo.", 3),
        "chat": _memory("chat", "Larkfield depot: the kettle broke again, typical.", 4),
    }
    vectors = {
        "first": _unit(1.0, 0.3, 0.1),
        "handed": _unit(1.0, 0.35, 0.0),
        "chat": _unit(1.0, 0.25, 0.2),
    }
    scores = {"first": 1.0, "chat": 0.9, "handed": 0.8}
    plan = analyze("Who runs the Larkfield depot now?", NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.3, 0.1), plan, None)
    assert _order(out)[0] == "handed"


def test_a_title_that_names_the_slot_itself_states_it() -> None:
    # "Ferris wheel budget: ..." names the slot in its title, which no other note's title does:
    # the update leads, not the twin wheel's later note.
    docs = {
        "first": _memory("first", "Ferris wheel build: the budget is ninety thousand.", 1),
        "update": _memory("update", "Ferris wheel budget: a hundred and ten thousand now.", 3),
        "chat": _memory("chat", "Ferris wheel build: drizzle all day, site muddy.", 4),
    }
    vectors = {
        "first": _unit(1.0, 0.3, 0.1),
        "update": _unit(1.0, 0.35, 0.0),
        "chat": _unit(1.0, 0.25, 0.2),
    }
    scores = {"first": 1.0, "chat": 0.9, "update": 0.8}
    plan = analyze("What is the Ferris wheel budget now?", NOW)
    out = current_first(scores, docs, vectors, _unit(1.0, 0.3, 0.1), plan, None)
    assert _order(out)[0] == "update"
