"""Every ```python block of docs/integrations.md runs as written.

Blocks of one ``##`` section run in order in one namespace (they build on each other); each
section starts fresh, in its own working directory, so it stays copy-paste-able on its own.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def sections() -> list[tuple[str, list[str]]]:
    out = []
    for chunk in re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)[1:]:
        title = chunk.splitlines()[0].strip()
        blocks = _BLOCK.findall(chunk)
        if blocks:
            out.append((title, blocks))
    return out


def test_the_doc_has_a_section_per_framework() -> None:
    titles = " ".join(t for t, _ in sections())
    for name in ("LangChain", "LangGraph", "LlamaIndex", "MCP"):
        assert name in titles


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("title", "blocks"), sections(), ids=[t for t, _ in sections()])
def test_snippets_run_as_written(
    title: str, blocks: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # A real module, as a script would have: dataclasses and pickling look classes up there.
    module = types.ModuleType("docs_snippets")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for i, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{DOC.name} [{title} #{i}]", "exec"), module.__dict__)
        except Exception as exc:
            raise AssertionError(f"snippet {i} of section {title!r} failed: {exc!r}") from exc
