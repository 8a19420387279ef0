"""Relation arguments read by type and by structure: an instrument adjunct whose argument is typed
by meaning (:mod:`.argtypes`), the verbs "using" and main-verb "do", adjuncts of a later verb,
topic questions and measure phrases (sentences written for these tests, in our own words)."""

from __future__ import annotations

import pytest

from sage_memory.extract import argtypes, syntax
from tests.unit.test_structure_extractor import edges

needs_parser = pytest.mark.skipif(not syntax.available(), reason="spaCy's parser is not installed")
needs_embedder = pytest.mark.skipif(
    not argtypes.type_scores("a hammer"), reason="the MiniLM embedder is not installed"
)


@needs_embedder
def test_tools_devices_and_software_read_as_instruments() -> None:
    for name in ("a soldering iron", "a sewing machine", "a laptop", "a microscope"):
        assert argtypes.is_instrument(name), name


@needs_embedder
def test_places_times_and_ideas_are_no_instruments() -> None:
    for name in ("the garden", "the weekend", "spain", "the meeting", "my spare time"):
        assert not argtypes.is_instrument(name), name


@needs_parser
@needs_embedder
def test_an_instrument_after_any_verb_is_used() -> None:
    assert ("kofi", "USES", "hook knife", False) in edges(
        "Kofi carves the spoons with a hook knife."
    )


@needs_parser
@needs_embedder
def test_a_place_after_the_same_verb_is_not_used() -> None:
    assert not {
        e for e in edges("Ines sold her paintings in the harbour market.") if e[1] == "USES"
    }
    assert not {e for e in edges("Ines waters the tomatoes in the greenhouse.") if e[1] == "USES"}


@needs_parser
@needs_embedder
def test_main_verb_do_takes_an_instrument() -> None:
    assert ("user", "USES", "tablet", False) in edges("I do all my drafting on a tablet.")


@needs_parser
def test_using_read_as_the_verb_use() -> None:
    assert ("user", "USES", "buildkite", False) in edges(
        "We are using Buildkite to run the pipelines."
    )
    assert ("team", "USES", "mercurial", True) in edges(
        "The team stopped using Mercurial last spring."
    )
    assert ("churn model", "USES", "scikit-learn", False) in edges(
        "The churn model is fitted using scikit-learn."
    )


@needs_parser
@needs_embedder
def test_an_adjunct_of_a_later_verb_is_not_the_first_verbs_instrument() -> None:
    assert not {e for e in edges("I will do my best to help with your move.") if e[1] == "USES"}


@needs_parser
def test_an_order_stands_over_a_loose_phrasing_that_states_nothing() -> None:
    assert ("sign off on the repairs", "PRECEDES", "pay the roofer", False) in edges(
        "We only pay the roofer after the inspector signs off on the repairs."
    )


@needs_parser
@needs_embedder
def test_a_pronoun_after_the_verb_leaves_the_instrument_to_the_verb() -> None:
    assert ("billing team", "USES", "gradle", False) in edges(
        "The billing team compiles everything with Gradle."
    )


@needs_parser
@needs_embedder
def test_a_coordinated_predicate_is_no_second_tool() -> None:
    found = edges("I log my climbs with a wrist altimeter and post them online.")
    assert ("user", "USES", "wrist altimeter", False) in found
    assert not any(e[1] == "USES" and "post" in e[2] for e in found)


@needs_parser
@needs_embedder
def test_towns_a_region_includes_are_parts_not_members() -> None:
    found = edges("The Rhine valley includes Basel, Mainz and Koblenz.")
    assert ("basel", "PART_OF", "rhine valley", False) in found
    assert not any(e[1] == "MEMBER_OF" for e in found)


@needs_parser
def test_a_topic_question_gives_it_its_referent() -> None:
    assert ("leaky tap", "SOLVED_BY", "new washer", False) in edges(
        "A leaky tap? A new washer fixed it."
    )
    # a question with a verb states nothing and names no topic
    assert not edges("Did the tap leak? Nothing fixed it.")


@needs_parser
def test_a_measure_phrase_names_the_thing_measured() -> None:
    assert ("kiln", "REQUIRES", "clay", False) in edges("The kiln needs 40 kilos of clay.")
    assert ("renew the lease", "REQUIRES", "bank statement", False) in edges(
        "To renew the lease you need at least two months of bank statements."
    )


@needs_parser
def test_a_purpose_infinitive_is_no_destination() -> None:
    assert ("renew the passport", "REQUIRES", "photo", False) in edges(
        "To renew the passport, you need two photos."
    )
    assert not edges("If we moved to Ghent, we'd probably need a bigger flat.")


@needs_parser
def test_almost_before_a_past_verb_states_no_event() -> None:
    assert not edges("Sam almost joined Initech in 2020.")
    assert ("sam", "WORKS_AT", "initech", False) in edges("Sam joined Initech in 2020.")
