"""A memory about someone else is no answer: the asked person's (or team's) own statements lead.

Through the public API with the offline defaults (MiniLM, the structure extractor), as a new
user would try it. In a small folder the asked name is in most memories, so BM25 gives it
almost no weight and another person's note that shares the question's other words used to
outrank the asked person's current value; with two teams that share task names, the other
team's note outranked the asked team's.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory import SageMemory


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_asked_persons_current_home_leads_over_another_persons(folder: SageMemory) -> None:
    for text, day in [
        ("Marta lives in Porto.", "2026-01-12"),
        ("Ivo lives in Bergen.", "2026-02-03"),
        ("Marta enjoys bouldering on weekends.", "2026-02-20"),
        ("Ivo works at a print shop.", "2026-03-01"),
        ("Marta moved to Tallinn last month.", "2026-05-04"),
    ]:
        folder.add(text, user_id="u", timestamp=_at(day))
    hits = folder.search("where does marta live?", user_id="u", limit=5).memories
    texts = [h.memory.text for h in hits]
    assert "Tallinn" in texts[0], texts
    # Ivo's home is not above either of Marta's.
    order = {t: i for i, t in enumerate(texts)}
    assert order["Ivo lives in Bergen."] > order["Marta lives in Porto."], texts


def test_twin_teams_note_ranks_below_the_asked_teams(folder: SageMemory) -> None:
    larch = "Minutes (Larch Rowing Club): the hull sanding is waiting on the varnish order."
    fern = "Diary, Fern Rowing Club: the hull sanding is waiting on the crane permit and a dry day."
    for text, day in [
        ("Larch Rowing Club noticeboard: new oars arrived for the juniors.", "2026-03-01"),
        ("Fern Rowing Club noticeboard: the boathouse roof was patched.", "2026-03-02"),
        (fern, "2026-03-03"),
        (larch, "2026-03-06"),
    ]:
        folder.add(text, user_id="u", timestamp=_at(day))
    hits = folder.search(
        "what is the hull sanding at Larch Rowing Club waiting on?", user_id="u", limit=4
    ).memories
    texts = [h.memory.text for h in hits]
    assert texts[0] == larch, texts
    assert fern not in texts[:2], texts


def test_a_person_the_asked_one_is_related_to_is_the_next_hop_not_a_rival(
    folder: SageMemory,
) -> None:
    # Two hops: Noor's manager, then where the manager lives. The manager's own memory is
    # about another person of the asked one's kind, but the graph relates the two: it is the
    # answer's second half, not another person's answer.
    for text, day in [
        ("Noor reports to Tomasz.", "2026-01-10"),
        ("Noor likes rock climbing and strong coffee.", "2026-01-14"),
        ("Noor bought a used cargo bike.", "2026-01-20"),
        ("Tomasz lives in Gdansk.", "2026-02-02"),
        ("Noor's sister plays the cello.", "2026-02-09"),
    ]:
        folder.add(text, user_id="u", timestamp=_at(day))
    hits = folder.search("Noor reports to someone; where does he live?", user_id="u", limit=3)
    texts = [h.memory.text for h in hits.memories]
    assert "Tomasz lives in Gdansk." in texts, texts
