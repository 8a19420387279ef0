"""Same name, same thing? The write-time referent check and what the evolver does with it."""

from __future__ import annotations

from datetime import UTC, datetime

from sage_memory import SageMemory
from sage_memory.config import ExtractConfig, SageConfig
from sage_memory.entities.referent import (
    ambiguous_name,
    ambiguous_pair,
    qualifiers_in,
    referent_check,
)
from sage_memory.entities.resolution import adds_words
from sage_memory.evolve.duplicates import choose_keep
from sage_memory.types import Node, Scope


def test_qualifiers_close_a_clause_and_lists_are_not_qualifiers() -> None:
    assert qualifiers_in("My aunt lives in Springfield, Illinois.", "Springfield") == {"illinois"}
    assert qualifiers_in("Our supplier is in Springfield, MA", "Springfield") == {"ma"}
    assert qualifiers_in("Bob, Alice and I went out.", "Bob") == set()


def test_ambiguous_names_are_capitalised_common_nouns() -> None:
    assert ambiguous_name("Java") and ambiguous_name("Mercury")
    assert not ambiguous_name("Alice") and not ambiguous_name("Springfield")
    assert not ambiguous_name("java")  # a lower-case concept is the word itself
    assert not ambiguous_name("Java Virtual Machine")


def test_the_check_wants_agreement_only_for_ambiguous_thin_nodes() -> None:
    kw = {"co_mentioned": {"indonesia"}, "neighbours": {"backend"}, "context": 0.2}
    assert not referent_check(**kw, support=1).merge
    assert referent_check(**kw, support=5).merge  # the name's usual referent
    assert referent_check(**kw, support=1, ambiguous=False).merge
    assert referent_check(**{**kw, "context": 0.6}, support=1).merge
    assert referent_check(**{**kw, "neighbours": {"indonesia"}}, support=1).merge
    clash = referent_check(**kw, support=9, qualifiers={"ma"}, node_qualifiers={"illinois"})
    assert not clash.merge and clash.reason == "different qualifier"


def test_a_name_plus_a_word_is_not_a_string_match() -> None:
    assert adds_words(["pathlib.PurePath"], ["pathlib.Path"])
    assert not adds_words(["pathlib.Path"], ["Path", "pathlib.Path"])


def test_write_time_resolution_keeps_two_javas_and_two_springfields_apart() -> None:
    # MiniLM: the context check compares meanings (the hashing embedder compares words, and
    # both Java sentences share one). The pattern extractor gives these sentences the nodes the
    # test is about (the structure extractor misreads "Springfield, Illinois" and finds no
    # node in the island sentence): what is tested here is resolution, not extraction.
    config = SageConfig(extract=ExtractConfig(mode="patterns"))
    with SageMemory(config=config) as mem:
        mem.add("The backend is written in Java.", user_id="u")
        mem.add("Java is the most populous island in Indonesia.", user_id="u")
        mem.add("My aunt lives in Springfield, Illinois.", user_id="u")
        mem.add("The basketball hall of fame is in Springfield, Massachusetts.", user_id="u")
        mem.add("Alice lives in Paris.", user_id="u")
        mem.add("Alice moved to Berlin.", user_id="u")
        names = [n.name.casefold() for n in mem.graph(user_id="u").nodes]
        assert names.count("java") == 2
        assert names.count("springfield") == 2
        assert names.count("alice") == 1  # a repeated proper name is a repeated mention
        report = mem.evolve(user_id="u", dry_run=True, operations=["merge"])
        assert not [s for s in report.suggestions if s.op == "merge"]


def test_a_lower_case_mention_of_an_ambiguous_capitalised_node_needs_agreement() -> None:
    assert not ambiguous_name("python")  # lower case alone looks like a plain noun
    assert ambiguous_pair("python", "Python") and ambiguous_pair("Python", "python")
    assert not ambiguous_pair("alice", "Alice")
    with SageMemory() as mem:
        mem.add("Our billing service is written in Python.", user_id="u")
        mem.add("A python is a large snake that squeezes its prey.", user_id="u")
        pythons = [n for n in mem.graph(user_id="u").nodes if n.name.casefold() == "python"]
        assert len(pythons) == 2, [(n.name, n.memory_ids) for n in pythons]


def test_the_survivor_is_the_common_spelling_on_a_tie() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    good = Node(id="a", scope=Scope("u"), name="elasticsearch", created_at=t, updated_at=t)
    typo = Node(id="b", scope=Scope("u"), name="elasticsaerch", created_at=t, updated_at=t)
    pieces = {"elasticsearch": 3, "elasticsaerch": 4}
    assert choose_keep(typo, good, {}, None, pieces.__getitem__)[0].id == "a"
    # A misspelling repeated more often than the right spelling still gives way to it.
    typo_twice = Node(
        id="e",
        scope=Scope("u"),
        name="elasticsaerch",
        memory_ids=("m1", "m2"),
        created_at=t,
        updated_at=t,
    )
    good_once = Node(
        id="f",
        scope=Scope("u"),
        name="elasticsearch",
        memory_ids=("m3",),
        created_at=t,
        updated_at=t,
    )
    assert choose_keep(typo_twice, good_once, {}, None, pieces.__getitem__)[0].id == "f"
    short = Node(id="c", scope=Scope("u"), name="k8s", created_at=t, updated_at=t)
    full = Node(id="d", scope=Scope("u"), name="kubernetes", created_at=t, updated_at=t)
    assert choose_keep(short, full, {}, None, pieces.get)[0].id == "d"
