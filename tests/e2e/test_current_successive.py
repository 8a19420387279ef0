"""Current value first when the latest statement of a group is of another slot.

Through the public API with the offline defaults (MiniLM, the structure extractor). A team's
notes on one person share her name and the team's, so closeness joins a later note on her post
to the statements of where she lives, and as the latest it leads them. The statements after it
used to keep the fused order, where the oldest value (said with the query's own words) came
before the move; now each next place goes to the latest of those left that may lead.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory import SageMemory


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_the_move_comes_before_the_old_home_below_a_later_note(folder: SageMemory) -> None:
    notes = [
        ("Kestrel Choir: welcome Ilse, our new alto, she lives in Arnhem.", "2026-01-10"),
        ("Kestrel Choir: Ilse is relocating again, this time to Deventer.", "2026-03-02"),
        ("Kestrel Choir: the spring concert needs the hall booking first.", "2026-03-20"),
        ("Kestrel Choir: Ilse has been made section leader for the altos.", "2026-05-15"),
    ]
    for text, day in notes:
        folder.add(text, user_id="u", timestamp=_at(day))
    hits = folder.search("Where does Ilse from Kestrel Choir live these days?", user_id="u")
    texts = [h.memory.text for h in hits.memories]
    places = [t for t in texts if "Arnhem" in t or "Deventer" in t]
    assert "Deventer" in places[0], texts
    # history stays: the older home is still found, below the move
    assert any("Arnhem" in t for t in places[1:]), texts
