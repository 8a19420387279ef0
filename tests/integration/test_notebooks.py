"""The notebooks in notebooks/ execute top to bottom offline, and are committed without outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_the_expected_notebooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {
        "quickstart",
        "langchain_agent",
        "llamaindex_chat_engine",
        "evolution",
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_outputs_are_stripped(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a cell has outputs; clear them"
            assert cell.execution_count is None, f"{path.name}: clear execution counts"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    # The "python3" kernel: jupyter_client launches it with this interpreter (sys.executable),
    # so it sees the virtualenv's packages. It runs in a scratch directory.
    client = NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
