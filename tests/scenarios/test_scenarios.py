"""The user stories of ../shared/SCENARIOS.md, answered from ``search(...).context``.

Real parts only: the MiniLM embedder, the default rule extractor, and both backends (in memory;
SQLite + Chroma in a folder). Time is injected with ``clock=`` so "days later" costs nothing.
Each story is asked in its own words and in others, since real users never repeat a template.
Stories 8 (reinforcement) and 9 (merges) are about evolution and live with the evolver's tests.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.testing.fakes import ManualClock

DAY1 = datetime(2026, 3, 2, 9, tzinfo=UTC)


@pytest.fixture(params=["memory", "folder"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SageMemory, ManualClock]]:
    clock = ManualClock(DAY1)
    path = None if request.param == "memory" else tmp_path / "mem"
    mem = SageMemory(path, embedder="minilm", clock=clock)
    yield mem, clock
    mem.close()


#: Memories about other things, some sharing a story's words (a file, a backend, a return, a
#: city, a drink), added to every story so that its answer must out-rank more memories than a
#: search returns: a story that passed only because everything it stored came back can fail.
DISTRACTORS = (
    "The quarterly report file is on the shared drive",
    "Grandma's garden needs watering every morning in summer",
    "The train to the airport leaves every twenty minutes",
    "My laptop battery lasts about six hours",
    "The team lunch is on Friday at noon",
    "The frontend uses a dark theme by default",
    "Carol returned the library book last week",
    "Dan lives in Madrid and works at a bank",
    "Erin prefers green tea in the afternoon",
    "The printer on the second floor jams a lot",
    "Backups of the wiki run every night",
    "The cat sleeps on the sofa most afternoons",
    "Finn is learning to play the violin",
    "The old server room was turned into a meeting room",
)


def distract(mem: SageMemory, **scope: str) -> None:
    """Fill the story's scope with :data:`DISTRACTORS` (more than a search's default limit)."""
    mem.add_many(list(DISTRACTORS), **scope)


def section(context: str, title: str) -> str:
    """The lines of one '## title' section of a context ('' when absent)."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", context, re.M | re.S)
    return m.group(1) if m else ""


def before(text: str, first: str, then: str) -> bool:
    return first in text and then in text and text.index(first) < text.index(then)


# -- 1. project plan ----------------------------------------------------------------------------


def test_project_plan_next_step_prerequisite_and_resource(
    env: tuple[SageMemory, ManualClock],
) -> None:
    mem, clock = env
    distract(mem, user_id="u")
    mem.add(
        "I want to build a personal blog. First I'll design the database, then build the "
        "backend API, and finally the frontend. The backend will use Python's FastAPI.",
        user_id="u",
    )
    clock.now = DAY1 + timedelta(days=4)
    ctx = mem.search("What should I do next on my blog's backend?", user_id="u").context
    plan = section(ctx, "Next steps")
    assert "design the database (status: pending)" in plan  # the prerequisite and its status
    assert "FastAPI" in plan  # the resource
    assert before(plan, "design the database", "build the frontend")  # and what follows
    # Other words for the same questions.
    after = section(
        mem.search("what comes after the backend API?", user_id="u").context, "Next steps"
    )
    assert "build the frontend" in after and "design the database" not in after
    needs = mem.search("what do I need for the backend?", user_id="u").context
    assert "FastAPI" in section(needs, "Next steps")
    # "the database design is done" updates the task's status, and the plan moves on.
    clock.now = DAY1 + timedelta(days=6)
    mem.add("the database design is done", user_id="u")
    plan = section(
        mem.search("what's next for my personal blog?", user_id="u").context, "Next steps"
    )
    assert "design the database" not in plan
    assert before(plan, "build the backend API", "build the frontend")


# -- 2. associative programming knowledge -----------------------------------------------------


def test_associative_knowledge_reaches_the_with_statement(
    env: tuple[SageMemory, ManualClock],
) -> None:
    mem, _ = env
    distract(mem, user_id="u")
    for text in (
        "open() opens a file in Python",
        "a file opened with open() must be closed with close()",
        "the with statement closes the file automatically",
    ):
        mem.add(text, user_id="u")
    res = mem.search("how do I make sure a file gets released?", user_id="u")
    assert "with statement" in res.context
    # Asked without the word "file", the graph still gets there through open() and close().
    res = mem.search("what releases a handle I got from open()?", user_id="u")
    hit = next(h for h in res.memories if "with statement" in h.text)
    assert "graph" in hit.channels
    assert "with statement" in section(res.context, "Core facts")


# -- 3. tool-use experience -------------------------------------------------------------------


def test_tool_use_experience_returns_api_column_and_method(
    env: tuple[SageMemory, ManualClock],
) -> None:
    mem, _ = env
    distract(mem, agent_id="analyst")
    mem.add(
        "The user asked to total sales in sales_data.csv. I loaded it with pandas.read_csv, "
        "found the column 'amount', and summed it with df['amount'].sum() into total_sales.",
        agent_id="analyst",
        kind="experience",
    )
    for question in ("how did we compute totals from a CSV before?", "summing a csv column"):
        ctx = mem.search(question, agent_id="analyst").context
        assert "read_csv" in ctx and "amount" in ctx and ".sum()" in ctx
    assert mem.find_node("pd.read_csv", agent_id="analyst").id == (
        mem.find_node("pandas.read_csv", agent_id="analyst").id
    )


# -- 4. diagnosis chain -------------------------------------------------------------------------


def test_diagnosis_chain_causes_fixes_precondition_in_order(
    env: tuple[SageMemory, ManualClock],
) -> None:
    mem, _ = env
    distract(mem, user_id="dev")
    err = "DatabaseError: relation 'user_table' does not exist"
    mem.add(
        f"{err} can be caused by migrations not run or by models out of sync with the database.",
        user_id="dev",
    )
    mem.add(
        f"{err} is solved by python manage.py migrate (Django) or by checking the Meta options "
        "of the User model.",
        user_id="dev",
    )
    mem.add("Running migrations depends on the database server running.", user_id="dev")
    for question in (err, f"I get {err} when I open the admin page, how do I fix it?"):
        steps = section(mem.search(question, user_id="dev").context, "Next steps")
        assert before(steps, "migrations not run", "python manage.py migrate")
        assert "models out of sync with the database" in steps
        assert "Meta options of the User model" in steps
        # "depends on the database server running": what it relies on is the server
        # (docs/relations.md, DEPENDS_ON: "A relies on B being in place or working")
        assert before(steps, "python manage.py migrate", "database server")


# -- 5. knowledge plus experience -------------------------------------------------------------


def test_rules_and_the_procedure_that_worked(env: tuple[SageMemory, ManualClock]) -> None:
    mem, clock = env
    distract(mem, agent_id="support")
    for text in (
        "user U123 is a premium member",
        "premium members get 7-day no-questions returns",
        "a return needs an order number",
    ):
        mem.add(text, agent_id="support", kind="knowledge")
    mem.add(
        "on 2026-05-01 U123 asked for a return without an order number; I asked for it first, "
        "then called the order lookup tool; it worked and the user had no follow-up",
        agent_id="support",
        kind="experience",
        timestamp=datetime(2026, 5, 1, 15, tzinfo=UTC),
    )
    clock.now = datetime(2026, 6, 10, tzinfo=UTC)
    for question in (
        "U123 wants to return an item again. What should I do?",
        "customer U123 is asking for a refund on an order",
    ):
        ctx = mem.search(question, agent_id="support").context
        assert "premium" in ctx and "7-day" in ctx and "order number" in ctx  # the rules
        # The procedure that worked, in its order, with its outcome.
        assert "I asked for it first, then called the order lookup tool; it worked" in ctx


# -- 6. facts that change -----------------------------------------------------------------------


def test_changing_facts_current_first_history_on_request(
    env: tuple[SageMemory, ManualClock],
) -> None:
    mem, clock = env
    distract(mem, user_id="u")
    mem.add("Alice lives in Paris", user_id="u", timestamp=datetime(2026, 3, 1, tzinfo=UTC))
    mem.add("Alice moved to Berlin", user_id="u", timestamp=datetime(2026, 6, 1, tzinfo=UTC))
    clock.now = datetime(2026, 7, 1, tzinfo=UTC)
    res = mem.search("Where does Alice live?", user_id="u")
    core, history = section(res.context, "Core facts"), section(res.context, "History")
    assert "Berlin" in core and "Paris" not in core
    assert "Paris" in history and "2026-03-01 to 2026-06-01" in history
    assert res.memories[0].text == "Alice moved to Berlin"
    april = mem.search("where did Alice live in April?", user_id="u")
    assert "Paris" in section(april.context, "Core facts")
    assert april.memories[0].text == "Alice lives in Paris"
    then = mem.search(
        "what city is Alice's home?", user_id="u", as_of=datetime(2026, 4, 10, tzinfo=UTC)
    )
    assert "Paris" in then.context and "Berlin" not in then.context


def test_changing_preferences(env: tuple[SageMemory, ManualClock]) -> None:
    mem, clock = env
    distract(mem, user_id="bob")
    mem.add("Bob prefers tea", user_id="bob", timestamp=datetime(2026, 1, 5, tzinfo=UTC))
    mem.add("Bob now prefers coffee", user_id="bob", timestamp=datetime(2026, 4, 5, tzinfo=UTC))
    clock.now = datetime(2026, 5, 1, tzinfo=UTC)
    res = mem.search("What does Bob like to drink?", user_id="bob")
    assert res.memories[0].text == "Bob now prefers coffee"
    assert "coffee" in section(res.context, "Core facts")


# -- 7. health preferences with care ----------------------------------------------------------


def test_health_facts_come_together_with_sources(env: tuple[SageMemory, ManualClock]) -> None:
    mem, _ = env
    distract(mem, user_id="U123")
    texts = (
        "U123 prefers low-salt food",
        "U123's blood pressure has been high lately",
        "the doctor advised less coffee",
    )
    ids = [mem.add(t, user_id="U123").memory_id for t in texts]
    ctx = mem.search("suggest a diet plan for U123", user_id="U123").context
    for text, mid in zip(texts, ids, strict=True):
        assert text in ctx  # each of the three, with its source id
        assert mid[:8] in ctx
