"""Which texts are about another team or person than the one a query names (by their words)."""

from __future__ import annotations

from sage_memory.retrieve.subjects import describes_another, names_rival


def test_a_twin_teams_note_names_a_rival() -> None:
    query = "What is the kiln rebuild at Saltcombe Pottery Guild waiting on?"
    told = names_rival(
        query,
        [
            "Minutes (Saltcombe Pottery Guild): the kiln rebuild waits for the firebricks.",
            "Diary, Redmoor Pottery Guild: the kiln rebuild waits for the chimney sweep.",
            "Redmoor Pottery Guild and Saltcombe Pottery Guild share the van on Fridays.",
            "The kiln rebuild waits for the firebricks.",
        ],
    )
    assert told == [False, True, False, False]


def test_a_title_word_shared_by_two_teams() -> None:
    told = names_rival(
        "What does Crew Juniper need for the regatta?",
        ["Crew Hawthorn: the regatta needs a trailer.", "Crew Juniper: the regatta needs oars."],
    )
    assert told == [True, False]


def test_one_name_said_two_ways_is_no_rival() -> None:
    # A shortened name keeps more than the affix: it may be the same club.
    told = names_rival(
        "Where does Elm Hollow Chess Club meet?",
        ["Elm Hollow CC group chat: we meet at the library now."],
    )
    assert told == [False]


def test_a_query_naming_no_proper_name_finds_no_rival() -> None:
    assert names_rival("what is the roof repair waiting on?", ["Fern Rowing Club: tiles."]) == [
        False
    ]


def test_a_name_the_query_says_is_no_rival_of_another_it_says() -> None:
    # Both pottery guilds are asked about: a note naming one of them is no other subject's.
    told = names_rival(
        "Did Saltcombe Pottery Guild or Redmoor Pottery Guild fire more kilns?",
        ["Redmoor Pottery Guild fired nine kilns in May.", "Wexby Pottery Guild fired two."],
    )
    assert told == [False, True]


def test_a_relative_clause_describes_another_entity() -> None:
    # The named one is where the hop starts: the answer is about the one the clause describes.
    assert describes_another("Which studio hired the engineer who mixed Coral Nights?")
    assert describes_another("Where was the captain whose ship sank off Marrow Point born?")
    assert describes_another("what did the club that Ines founded sell?")
    # A question about the named one's own slot describes no one else.
    assert not describes_another("where does Ines live now?")
    assert not describes_another("Who does Tomas work for these days?")
    assert not describes_another("which of the guilds fired more kilns?")
    assert not describes_another("what is the kiln rebuild at Saltcombe Pottery Guild waiting on?")
