"""spaCy's tags and arcs under the structure extractor's tokens (``extract/syntax.py``), and
the dictionary tagger it falls back to. Sentences written for these tests."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from sage_memory.extract import syntax
from sage_memory.extract.args import ArgReader
from sage_memory.extract.base import ExtractionContext
from sage_memory.extract.chunk import tokenize
from sage_memory.extract.lexicon import default_lexicon
from sage_memory.extract.phrase import phrase_extent
from sage_memory.extract.structure import StructureExtractor
from sage_memory.extract.word import CODE, NOUN, PROPN, VERB
from sage_memory.types import Memory, Scope

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)

pytestmark = pytest.mark.skipif(not syntax.available(), reason="spaCy's model is not installed")


def memory(text: str, mid: str = "m") -> Memory:
    return Memory(
        id=mid,
        text=text,
        scope=Scope(agent_id="t"),
        timestamp=NOW,
        created_at=NOW,
        updated_at=NOW,
    )


def edges(text: str) -> set[tuple[str, str, str, bool]]:
    delta = StructureExtractor().extract(memory(text), ExtractionContext())
    assert delta.error is None
    names = {n.key: n.name.lower() for n in delta.nodes}
    return {(names[e.source], e.relation, names[e.target], e.negated) for e in delta.edges}


@pytest.fixture
def dictionary_tagger() -> Iterator[None]:
    syntax.use_parser(False)
    try:
        yield
    finally:
        syntax.use_parser(True)


def test_tokens_carry_the_parse() -> None:
    toks = tokenize("The rollout was delayed by the vendor audit.")
    by_word = {t.lower: t for t in toks}
    assert by_word["rollout"].dep == "nsubjpass"
    assert by_word["by"].dep == "agent"
    assert toks[by_word["audit"].head].lower == "by"
    assert by_word["delayed"].pos == VERB and by_word["delayed"].lemma == "delay"
    assert all(0 <= t.head < len(toks) for t in toks)


def test_code_and_error_messages_stay_one_token() -> None:
    toks = tokenize("Call np.linalg.norm after ImportError: no module named 'yaml' shows up.")
    codes = [t.text for t in toks if t.pos == CODE]
    assert "np.linalg.norm" in codes
    assert any(c.startswith("ImportError: no module named") for c in codes)
    assert all(t.head >= 0 for t in toks)  # the parser read the same tokens


def test_unknown_words_are_names_not_verbs() -> None:
    toks = tokenize("Our worker pool uses zeromq for messages and Dask for scheduling.")
    pos = {t.lower: t.pos for t in toks}
    assert pos["zeromq"] == NOUN
    assert pos["dask"] == PROPN
    assert pos["uses"] == VERB


def test_phrase_extent_drops_an_appositive_pronoun() -> None:
    toks = tokenize("The parser rewrite itself waits on the grammar freeze.")
    lo, hi = phrase_extent(toks, 0, 4)
    assert [t.lower for t in toks[lo:hi]] == ["the", "parser", "rewrite"]


def test_relative_pronoun_subject_is_its_antecedent() -> None:
    found = edges("Shipping is stalled by the security review, which waits on the pen test.")
    assert ("security review", "BLOCKED_BY", "pen test", False) in found


def test_passive_with_an_instrument_is_no_status() -> None:
    found = edges("The grouting was done with a rubber float.")
    assert not any(r == "HAS_STATUS" for _, r, _, _ in found)


def test_extract_many_matches_extract_one_by_one() -> None:
    texts = [
        "The billing export depends on the ledger sync.",
        "Marta works at Lumen Labs in Ghent.",
        "Dropping the stale cache fixed the slow dashboard.",
    ]
    ex = StructureExtractor()
    batch = ex.extract_many(
        [(memory(t, f"m{k}"), ExtractionContext()) for k, t in enumerate(texts)]
    )
    single = [ex.extract(memory(t, f"m{k}"), ExtractionContext()) for k, t in enumerate(texts)]
    assert [sorted(e.relation for e in d.edges) for d in batch] == [
        sorted(e.relation for e in d.edges) for d in single
    ]
    assert all(d.edges for d in batch)


def test_parsed_sentences_are_cached() -> None:
    text = "The kiln upgrade needs a new breaker."
    syntax.prime([syntax.as_words([(w, True) for w in text.split()])])
    first = syntax.parse(syntax.as_words([(w, True) for w in text.split()]))
    again = syntax.parse(syntax.as_words([(w, True) for w in text.split()]))
    assert first is not None and first is again


def test_dictionary_tagger_fallback(dictionary_tagger: None) -> None:
    assert not syntax.available()
    toks = tokenize("Priya repairs old radios.")
    assert all(t.head == -1 and t.dep == "" for t in toks)
    assert [t.pos for t in toks][:2] == [PROPN, VERB]
    assert ("priya", "DISLIKES", "olive", False) in edges("Priya hates olives.")
    reader = ArgReader(default_lexicon())
    toks = tokenize("The export job needs the ledger.")
    assert [a.name for a in reader.after(toks, 4, 6, clause_ok=False)] == ["ledger"]


def test_subject_is_the_verbs_subject_not_what_opens_the_clause() -> None:
    found = edges("On my old bike the chain guard is part of the frame.")
    assert ("chain guard", "PART_OF", "frame", False) in found


def test_time_phrase_with_these_is_no_part_of_a_task() -> None:
    found = edges("Lately we prefer short standups these days.")
    assert ("user", "PREFERS", "short standup", False) in found


@pytest.mark.slow
def test_light_pipeline_parses_as_the_full_one() -> None:
    """The pipeline loads without its tokenizer rules (the extractor gives spaCy its own
    words): tags, lemmas and arcs are those of the pipeline loaded whole."""
    import importlib

    from spacy.tokens import Doc

    full = importlib.import_module(syntax.MODEL_MODULE).load(exclude=["ner", "senter"])
    sentences = [
        "The rollout was delayed by the vendor audit .",
        "Maria moved to Lisbon in 2021 and now works for Acme as a data engineer !",
        "Did you finish `deploy.sh` before the 3pm stand-up , or is it still blocked ?",
        "Running migrations requires the staging database to be up .",
    ]
    for text in sentences:
        words = syntax.as_words([(w, True) for w in text.split()])
        doc = next(full.pipe([Doc(full.vocab, words=[w for w, _ in words])]))
        expected = tuple(
            syntax.Parsed(t.tag_, (t.lemma_ or t.text).lower(), t.dep_, t.head.i) for t in doc
        )
        assert syntax.parse(words) == expected


@pytest.mark.slow
def test_parser_loads_without_spacys_command_line() -> None:
    """Loading the pipeline leaves spaCy's command-line package (and what it imports) out of
    the process, and that package still imports afterwards. In a fresh interpreter: the
    modules a process has already imported would hide the difference."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from sage_memory.extract import syntax\n"
        "words = syntax.as_words([(w, True) for w in 'Nadia repairs old clocks .'.split()])\n"
        "assert syntax.parse(words)[1].tag == 'VBZ'\n"
        "print(sorted(m for m in ('spacy.cli', 'typer', 'weasel') if m in sys.modules))\n"
        "import spacy, spacy.cli\n"
        "print(callable(spacy.cli.download), 'spacy_version' in spacy.info(silent=True))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[:2] == ["[]", "True True"]
