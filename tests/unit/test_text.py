"""Pure text helpers of the rule extractor: sentences, names, code mentions, noun phrases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sage_memory.entities.names import display_name, looks_like_code, node_key
from sage_memory.extract.text import (
    TIME_MARK,
    content_words,
    find_code_mentions,
    find_proper_names,
    find_quoted,
    find_user_ids,
    head_word,
    leading_np,
    prepare,
    split_list,
    split_sentences,
    stem,
    trailing_np,
)

ANCHOR = datetime(2026, 6, 15, 12, tzinfo=UTC)


# --- sentences ----------------------------------------------------------------------------


def test_sentences_do_not_break_on_code_versions_or_abbreviations() -> None:
    text = (
        "I loaded it with pandas.read_csv on Python 3.11. Dr. Chen said e.g. tea is fine! "
        "Then run `python manage.py migrate.` please"
    )
    assert [s.text for s in split_sentences(text)] == [
        "I loaded it with pandas.read_csv on Python 3.11.",
        "Dr. Chen said e.g. tea is fine!",
        "Then run `python manage.py migrate.` please",
    ]


def test_semicolons_and_list_lines_split_but_list_numbers_stay_with_their_item() -> None:
    text = "asked first; then called the tool\n1. install docker\n2. pull the image"
    assert [s.text for s in split_sentences(text)] == [
        "asked first",
        "then called the tool",
        "1. install docker",
        "2. pull the image",
    ]


def test_a_wrapped_line_continues_its_sentence() -> None:
    assert [s.text for s in split_sentences("we moved to a small\ntown near Utrecht")] == [
        "we moved to a small\ntown near Utrecht"
    ]


@given(st.text(max_size=400))
@settings(max_examples=200, deadline=None)
def test_sentence_offsets_point_at_their_text(text: str) -> None:
    previous_end = 0
    for seg in split_sentences(text):
        assert text[seg.start : seg.end] == seg.text
        assert seg.text == seg.text.strip() and seg.text
        assert seg.start >= previous_end
        previous_end = seg.end


# --- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("The Backend", "backend"),
        ("  a   personal   blog. ", "personal blog"),
        ("Python's", "python"),
        ('"amount"', "amount"),
        ("my blog", "blog"),
        ("pd.read_csv", "pandas.read_csv"),
        ("pandas.read_csv", "pandas.read_csv"),
        ("np", "numpy"),
        ("k8s cluster", "kubernetes cluster"),
        ("js", "javascript"),
        ("py", "python"),
        ("node.js", "node.js"),  # an alias never applies inside a token
        ("manage.py", "manage.py"),
        ("df['Amount'].sum()", "df['amount'].sum()"),  # code keeps its brackets and quotes
        ("open()", "open()"),
        ("The the end", "end"),
        ("", ""),
    ],
)
def test_node_key(name: str, key: str) -> None:
    assert node_key(name) == key


def test_user_aliases_are_merged_with_the_built_in_ones() -> None:
    assert node_key("NYC", {"nyc": "new york city"}) == "new york city"
    assert node_key("pd.concat", {"nyc": "new york city"}) == "pandas.concat"


def test_display_name_keeps_case_but_applies_aliases() -> None:
    assert display_name("The FastAPI") == "FastAPI"
    assert display_name("pd.read_csv") == "pandas.read_csv"


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_node_key_is_idempotent_and_total(name: str) -> None:
    key = node_key(name)
    assert node_key(key) == key


def test_looks_like_code() -> None:
    assert looks_like_code("df['amount'].sum()")
    assert looks_like_code("total_sales")
    assert looks_like_code("open()")
    assert not looks_like_code("personal blog")


# --- mentions -----------------------------------------------------------------------------


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in find_code_mentions(text)]


def test_code_mentions_of_a_tool_log() -> None:
    text = (
        "I loaded sales_data.csv with pd.read_csv, summed df['amount'].sum() into total_sales "
        "and called open() then ran `git stash`."
    )
    assert _kinds(text) == [
        ("sales_data.csv", "file"),
        ("pd.read_csv", "dotted"),
        ("df['amount'].sum()", "call"),
        ("total_sales", "var"),
        ("open()", "call"),
        ("git stash", "command"),
    ]


def test_error_messages_and_bare_commands() -> None:
    text = (
        "DatabaseError: relation 'user_table' does not exist can be fixed by running "
        "python manage.py migrate (Django)."
    )
    assert _kinds(text) == [
        ("DatabaseError: relation 'user_table' does not exist", "error"),
        ("python manage.py migrate", "command"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "make sure the server is up",
        "go home early",
        "Python is great",
        "e.g. this, i.e. that",
        "I use node every day",
    ],
)
def test_english_is_not_mistaken_for_code(text: str) -> None:
    assert find_code_mentions(text) == []


def test_constructs_and_commands_with_arguments() -> None:
    assert _kinds("the with statement closes it") == [("with statement", "construct")]
    assert _kinds("then pytest -x on the repo") == [("pytest -x", "command")]
    assert _kinds("pip install requests to fix it") == [("pip install requests", "command")]


def test_quoted_terms_ignore_apostrophes() -> None:
    text = "Don't touch Python's 'amount' column, see \u201cthe docs\u201d or \"README\""
    assert [q.text for q in find_quoted(text)] == ["amount", "the docs", "README"]


def test_user_ids_and_proper_names() -> None:
    assert [m.text for m in find_user_ids("user U123 and C-889 but not 3.11")] == ["U123", "C-889"]
    names = [m.text for m in find_proper_names("Yesterday Alice met Bob Smith at Google.")]
    assert names == ["Alice", "Bob Smith", "Google"]


# --- noun phrases -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "np"),
    [
        ("an order number for returns", "order number"),
        ("the Meta options of the User model and more", "Meta options of the User model"),
        ("the cleaned dataset first.", "cleaned dataset"),
        ("free shipping on orders", "free shipping"),
        ("working late at night", "working late"),
        ("Rust and Go compile to native code", "Rust"),
        ("to the store", ""),
    ],
)
def test_leading_np(text: str, np: str) -> None:
    assert leading_np(text) == np


@pytest.mark.parametrize(
    ("text", "np"),
    [
        ("I think the backend", "backend"),
        ("Running the notebook", "Running the notebook"),
        ("The onboarding of new hires", "onboarding of new hires"),
        ("yesterday I", "I"),
        ("will", ""),
    ],
)
def test_trailing_np(text: str, np: str) -> None:
    assert trailing_np(text) == np


def test_split_list_and_word_stems() -> None:
    assert split_list("a frame, two wheels and a chain") == ["a frame", "two wheels", "a chain"]
    assert split_list("tea and biscuits or cake", split_and=False) == ["tea and biscuits", "cake"]
    assert stem("designing") == stem("design") == "design"
    assert stem("status") == "status"
    assert content_words("the database design") == ["database", "design"]
    assert head_word("build the backend API") == "api"


# --- masking ------------------------------------------------------------------------------


def test_prepare_masks_code_quotes_ids_and_times_and_expands_contractions() -> None:
    masked = prepare("On 2026-05-01 U123 couldn't open 'notes.txt' with open()", ANCHOR)
    assert [e.kind for e in masked.entities] == ["userid", "file", "call"]
    assert "could not" in masked.text
    assert TIME_MARK not in masked.text  # a date that opens a sentence is dropped
    assert masked.times[0].value == datetime(2026, 5, 1, tzinfo=UTC)
    assert masked.unmask(masked.text) == "U123 could not open notes.txt with open()"


def test_prepare_strips_private_use_characters_from_input_first() -> None:
    masked = prepare("a \ue000 b \ue0010\ue001 c", ANCHOR)
    assert masked.entities == ()
