"""Integration tests: real framework objects (LangChain, LangGraph, LlamaIndex, MCP) on a real
sage_memory, driven by scripted fake models. Every test here is marked ``integration``; a module
whose framework is not installed is skipped as a whole, with the missing packages named.

Install what they need with the project's dev set-up:

    pip install -e . -e integrations/langchain-sage-memory \\
        -e integrations/llama-index-memory-sage -e integrations/sage-memory-mcp
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from support import open_memory

from sage_memory import SageMemory

HERE = Path(__file__).parent

#: What each test module imports; a module is skipped when one of these is missing.
REQUIRES: dict[str, tuple[str, ...]] = {
    "test_langchain.py": (
        "langchain_core",
        "langchain_classic",
        "langchain_tests",
        "langchain_sage_memory",
    ),
    "test_langgraph.py": ("langgraph", "langchain", "langchain_sage_memory"),
    "test_llamaindex.py": ("llama_index.core", "llama_index.memory.sage"),
    "test_mcp.py": ("mcp", "sage_memory_mcp"),
    "test_notebooks.py": (
        "nbclient",
        "nbformat",
        "ipykernel",
        "langchain_sage_memory",
        "llama_index.memory.sage",
    ),
    "test_docs_snippets.py": (
        "langchain_sage_memory",
        "llama_index.memory.sage",
        "sage_memory_mcp",
    ),
}


def _missing(modules: Sequence[str]) -> list[str]:
    out = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            out.append(name)
    return out


class _SkippedModule(pytest.Module):
    """A test module whose framework is missing: reported as skipped, never imported."""

    reason = ""

    def collect(self) -> list[pytest.Item]:
        pytest.skip(self.reason)


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    missing = _missing(REQUIRES.get(module_path.name, ()))
    if not missing:
        return None
    module = _SkippedModule.from_parent(parent, path=module_path)
    module.reason = (
        f"{module_path.name} needs {', '.join(missing)}; install the integrations "
        "(pip install -e integrations/<package>)"
    )
    return module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[SageMemory]:
    """A folder-backed memory (real SQLite + Chroma) under tmp_path."""
    mem = open_memory(tmp_path / "memory")
    yield mem
    mem.close()
