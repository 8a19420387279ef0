"""Current value first for the holder of a post the question names.

Through the public API with the offline defaults (MiniLM, the structure extractor). A handover
note ("Wilhelmina moved to the events committee; Oskar is site secretary") gives the new
holder's post and a fact of the former holder; the graph keys each post fact by its holder, so
the two notes shared no slot, and sharing the former holder made them "other slots of one
subject": the older note kept the lead.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory import SageMemory


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def _texts(mem: SageMemory, notes: list[tuple[str, str]], question: str) -> list[str]:
    for text, day in notes:
        mem.add(text, user_id="u", timestamp=_at(day))
    return [h.memory.text for h in mem.search(question, user_id="u", limit=5).memories]


NOTES = [
    ("Larkspur Allotments: Wilhelmina is site secretary, has been for years.", "2026-01-10"),
    ("Larkspur Allotments: the water troughs need fixing before spring.", "2026-02-01"),
    (
        "Larkspur Allotments: Wilhelmina moved to the events committee; Oskar is site secretary.",
        "2026-04-02",
    ),
    ("Larkspur Allotments: the compost bays are full again.", "2026-05-02"),
]


def test_the_new_holder_of_the_asked_post_leads(folder: SageMemory) -> None:
    texts = _texts(folder, NOTES, "Who is Larkspur Allotments' site secretary now?")
    assert "Oskar is site secretary" in texts[0], texts
    # history stays: the former holder's note is still found, below the handover
    assert any("has been for years" in t for t in texts[1:]), texts


def test_a_twin_teams_holder_of_the_same_post_does_not_lead(folder: SageMemory) -> None:
    # The same post in another team's note, said later: the post's node is shared, but the
    # note names the other team, so it is no statement of the asked team's post.
    notes = [*NOTES, ("Bramble Allotments: Cosima is site secretary.", "2026-06-01")]
    texts = _texts(folder, notes, "Who is Larkspur Allotments' site secretary now?")
    assert "Oskar is site secretary" in texts[0], texts
