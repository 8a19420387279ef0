"""Relation recognition of the structure extractor: informal spellings, coordinated arguments,
lone-verb arguments and the nominal / idiomatic phrasings of the lexicon (sentences written for
these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import syntax
from sage_memory.extract.lexicon import default_lexicon, parse_lexicon
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")


# --- informal spellings ---------------------------------------------------------------------


def test_respell_replaces_whole_informal_words_only() -> None:
    lex = default_lexicon()
    assert lex.respell("cant paint the hall til Friday bc of the damp") == (
        "can't paint the hall until Friday because of the damp"
    )
    assert lex.respell("Tilda's cantata, w/o the choir") == "Tilda's cantata, without the choir"


def test_a_lexicon_without_spellings_leaves_text_alone() -> None:
    lex = parse_lexicon('[closed]\nspeaker = ["i"]\n')
    assert lex.respell("cant stop til dawn") == "cant stop til dawn"


@needs_parser
def test_informal_until_reads_as_a_block() -> None:
    assert (
        "repaint the porch",
        "BLOCKED_BY",
        "primer",
        False,
    ) in edges("cant repaint the porch til the primer dries")


@needs_parser
def test_informal_because_reads_as_a_cause() -> None:
    # the cause is the paper in the state the clause gives it (a copular clause, Quirk 16.22)
    assert ("damp paper", "CAUSES", "printer jammed", False) in edges(
        "the printer jammed bc the paper was damp"
    )


# --- coordination ---------------------------------------------------------------------------


@needs_parser
def test_a_second_conjunct_with_a_participle_modifier_is_a_list_item() -> None:
    found = edges("The kiosk rollout requires a signed lease and an approved wiring plan.")
    assert ("kiosk rollout", "REQUIRES", "signed lease", False) in found
    assert ("kiosk rollout", "REQUIRES", "approved wiring plan", False) in found


@needs_parser
def test_a_second_predicate_is_still_no_list_item() -> None:
    found = edges("Mireille prefers tea and dislikes strong coffee.")
    assert ("mireille", "PREFERS", "tea", False) in found
    assert not any(t.startswith("dislike") for _, _, t, _ in found)


# --- lone verbs -----------------------------------------------------------------------------


@needs_parser
def test_a_lone_verb_is_no_required_thing() -> None:
    found = edges("The gala dinner doesn't need to happen before the auction.")
    assert not any(t == "happen" for _, _, t, _ in found)


@needs_parser
def test_a_verb_with_its_object_is_still_a_task() -> None:
    found = edges("Before the auction, we need to print the catalogue.")
    assert ("print the catalogue", "PRECEDES", "auction", False) in found


# --- nominal and idiomatic phrasings --------------------------------------------------------


@needs_parser
@pytest.mark.parametrize(
    ("text", "edge"),
    [
        (
            "The main obstacle for the bridge repair is the river permit.",
            ("bridge repair", "BLOCKED_BY", "river permit", False),
        ),
        (
            "The billing dashboard sits downstream of the usage collector.",
            ("billing dashboard", "DEPENDS_ON", "usage collector", False),
        ),
        (
            "The poor harvest was the result of the hailstorm.",
            ("hailstorm", "CAUSES", "poor harvest", False),
        ),
        (
            "Uncle Bashir has a soft spot for old westerns.",
            ("uncle bashir", "PREFERS", "old western", False),
        ),
        ("Ines is a Porto resident.", ("ines", "LIVES_IN", "porto", False)),
        ("Kofi's employer is Tessaract Foods.", ("kofi", "WORKS_AT", "tessaract foods", False)),
        (
            "Dr. Varga practises at the Elm Road Clinic.",
            ("dr. varga", "WORKS_AT", "elm road clinic", False),
        ),
        (
            "Henrik volunteers with the river cleanup crew.",
            ("henrik", "MEMBER_OF", "river cleanup crew", False),
        ),
        (
            "Paulo was kicked out of the rowing club.",
            ("paulo", "MEMBER_OF", "rowing club", True),
        ),
        (
            "The mural project was put on hold until the grant arrives.",
            ("mural project", "HAS_STATUS", "on hold", False),
        ),
    ],
)
def test_nominal_and_idiomatic_phrasings(text: str, edge: tuple[str, str, str, bool]) -> None:
    assert edge in edges(text)


# --- roles named before the person ----------------------------------------------------------


@needs_parser
def test_a_role_named_first_goes_to_the_person_after_it() -> None:
    assert ("mateus", "HAS_ROLE", "treasurer", False) in edges(
        "The treasurer for the sailing club is Mateus."
    )
    assert ("brannigan", "HAS_ROLE", "site foreman", False) in edges(
        "Our site foreman, Brannigan, checks the scaffolding daily."
    )


@needs_parser
def test_a_possessed_role_is_left_alone() -> None:
    found = edges("Tove's favourite editor is Helix.")
    assert not any(r in ("HAS_ROLE", "IS_A") and s == "helix" for s, r, _, _ in found)


# --- the act, not its doer, in an order; a role given with "as" -----------------------------


@needs_parser
def test_an_order_between_acts_drops_the_doer() -> None:
    assert ("trim the hedge", "PRECEDES", "sweep the porch", False) in edges(
        "i'll sweep the porch after i trim the hedge"
    )


@needs_parser
def test_an_employment_with_as_gives_the_role_too() -> None:
    found = edges("Rafa is employed by the city library as an archivist.")
    assert ("rafa", "WORKS_AT", "city library", False) in found
    assert ("rafa", "HAS_ROLE", "archivist", False) in found


# --- passive, perfect and note forms of blocking, status, part-whole and fixes ---------------


@needs_parser
@pytest.mark.parametrize(
    ("text", "edge"),
    [
        (
            "The harbour festival got pushed back by the gale.",
            ("harbour festival", "BLOCKED_BY", "gale", False),
        ),
        (
            "The kiln upgrade was postponed pending the safety inspection.",
            ("kiln upgrade", "BLOCKED_BY", "safety inspection", False),
        ),
        (
            "Resurfacing the court has to wait until the drains are cleared.",
            ("resurface the court", "BLOCKED_BY", "drain", False),
        ),
        (
            "Until the mortgage offer arrives, we can't book the movers.",
            ("book the movers", "BLOCKED_BY", "mortgage offer", False),
        ),
        (
            "Until the survey is signed off, the extension can't start.",
            ("extension", "BLOCKED_BY", "survey", False),
        ),
        (
            "Invoice export blocked by the expired ledger token",
            ("invoice export", "BLOCKED_BY", "expired ledger token", False),
        ),
        (
            "The pantry refit can't go ahead; it's waiting on the joiner's quote.",
            ("pantry refit", "BLOCKED_BY", "quote", False),
        ),
        (
            "The library extension is on hold behind the zoning appeal.",
            ("library extension", "BLOCKED_BY", "zoning appeal", False),
        ),
        (
            "The carburettor is one component of the fuel system.",
            ("carburettor", "PART_OF", "fuel system", False),
        ),
        (
            "The glossary is one of the sections of the style guide.",
            ("glossary", "PART_OF", "style guide", False),
        ),
        (
            "The gearbox sits inside the turbine housing.",
            ("gearbox", "PART_OF", "turbine housing", False),
        ),
        (
            "The archive tab is one of the sheets in the budget workbook.",
            ("archive tab", "PART_OF", "budget workbook", False),
        ),
        (
            "The amygdala is a structure within the limbic system.",
            ("amygdala", "PART_OF", "limbic system", False),
        ),
        (
            "The parser is a submodule of the compiler package.",
            ("parser", "PART_OF", "compiler package", False),
        ),
        (
            "The crankshaft and the flywheel make up the rotating assembly.",
            ("flywheel", "PART_OF", "rotating assembly", False),
        ),
        (
            "A sunroom was added to the cottage.",
            ("sunroom", "PART_OF", "cottage", False),
        ),
        (
            "The boundary quarrel was settled through arbitration.",
            ("boundary quarrel", "SOLVED_BY", "arbitration", False),
        ),
        (
            "The greenhouse rebuild hasn't started yet.",
            ("greenhouse rebuild", "HAS_STATUS", "pending", False),
        ),
        (
            "My pension transfer is being processed.",
            ("pension transfer", "HAS_STATUS", "in progress", False),
        ),
        ("Ticket 88 -> Done", ("ticket 88", "HAS_STATUS", "done", False)),
        (
            "Ticket 31 (badge reader offline) - resolved by resetting the controller",
            ("badge reader offline", "SOLVED_BY", "reset the controller", False),
        ),
        (
            "The stiff neck was eased by a warmer pillow.",
            ("stiff neck", "SOLVED_BY", "warmer pillow", False),
        ),
        (
            "Blisters on the hike? Gel plasters usually sort them out.",
            ("blister", "SOLVED_BY", "gel plaster", False),
        ),
        (
            "Mitigation for the session fixation bug: regenerate the cookie at login.",
            ("session fixation bug", "SOLVED_BY", "regenerate the cookie at login", False),
        ),
    ],
)
def test_passive_perfect_and_notation_phrasings(
    text: str, edge: tuple[str, str, str, bool]
) -> None:
    assert edge in edges(text)


@needs_parser
def test_verbless_status_notes_in_a_list() -> None:
    found = edges(
        "Weekly notes: roof survey done; gutter quote in progress; shed demolition not started."
    )
    assert ("roof survey", "HAS_STATUS", "done", False) in found
    assert ("gutter quote", "HAS_STATUS", "in progress", False) in found
    assert ("shed demolition", "HAS_STATUS", "pending", False) in found
    assert not any(e[1] == "USES" for e in found)  # "in progress" is a status, no instrument


@needs_parser
def test_a_finite_verb_after_a_noun_is_no_verbless_status() -> None:
    assert not any(e[1] == "HAS_STATUS" for e in edges("The guests arrived and dinner started."))
    assert not any(
        e[1] == "HAS_STATUS" for e in edges("The night crew finished the inventory count.")
    )


# --- order across clauses -------------------------------------------------------------------


@needs_parser
def test_only_before_a_sequence_marker_still_starts_the_next_step() -> None:
    assert ("prime the wall", "PRECEDES", "hang the wallpaper", False) in edges(
        "Prime the wall, and only after that hang the wallpaper."
    )


@needs_parser
def test_a_named_doer_of_the_main_clause_leaves_the_act_in_the_order() -> None:
    found = edges("Once the quote is accepted, Tomasz will order the tiles.")
    assert any(e[1] == "PRECEDES" and e[2] == "order the tiles" for e in found)


@needs_parser
def test_a_named_doer_with_no_object_is_an_event_not_a_task() -> None:
    assert not any(e[1] == "PRECEDES" for e in edges("After the exams, Bruna travelled."))


@needs_parser
def test_a_person_who_sits_within_or_makes_up_is_no_part() -> None:
    assert not any(e[1] in ("PART_OF", "MEMBER_OF") for e in edges("I made up my mind."))
    assert not any(e[1] == "PART_OF" for e in edges("Kim sits within the finance team."))


@needs_parser
def test_a_verb_takes_no_object_past_a_comma() -> None:
    found = edges("Until the loan clears, we can't buy the van.")
    assert ("buy the van", "BLOCKED_BY", "loan", False) in found
    assert not any(e[1] == "SOLVED_BY" for e in found)  # "clears" has no object here
