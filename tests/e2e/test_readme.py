"""Every ```python block of the README runs as written (each on its own, in a fresh folder), and
prints what the README shows after it: a block followed by a line ending in "prints this ...:"
and a ```text block is compared with doctest's checker (``...`` matches anything)."""

from __future__ import annotations

import doctest
import re
import uuid
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)
#: python block -> the output the README says it prints.
SHOWN = dict(
    re.findall(
        r"```python\n(.*?)```\n\n(?:(?!```).)*?prints this(?:(?!```).)*?:\n\n```text\n(.*?)```",
        TEXT,
        re.S,
    )
)


def test_the_readme_shows_what_its_quickstart_prints() -> None:
    assert BLOCKS[0] in SHOWN


def test_the_readme_has_snippets() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_snippet_runs(
    index: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.chdir(tmp_path)  # snippets use ./memory
    if "SAGE_MEMORY_URL" in BLOCKS[index]:  # the server-mode block: a real PostgreSQL
        url = request.getfixturevalue("postgres_url")
        sep = "&" if "?" in url else "?"
        monkeypatch.setenv("SAGE_MEMORY_URL", f"{url}{sep}schema=readme_{uuid.uuid4().hex[:12]}")
    namespace: dict[str, object] = {"__name__": f"readme_{index}"}
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), namespace)
    printed = capsys.readouterr().out
    shown = SHOWN.get(BLOCKS[index])
    if shown is not None:
        checker = doctest.OutputChecker()
        assert checker.check_output(shown, printed, doctest.ELLIPSIS), checker.output_difference(
            doctest.Example("", shown), printed, doctest.ELLIPSIS
        )
