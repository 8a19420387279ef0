"""The layers hold: the import-linter contracts of pyproject.toml pass (the same run as
``scripts/dev.py check``) and cover the layers docs/architecture.md names."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint(config: Path) -> subprocess.CompletedProcess[str]:
    # import-linter's console script, from the environment running the tests
    script = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(script), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_import_contracts_are_kept() -> None:
    run = _lint(ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_the_contracts_cover_the_layers_the_docs_name() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    stages = next(c for c in contracts if c["type"] == "independence")
    assert set(stages["modules"]) == {
        "sage_memory.extract",
        "sage_memory.retrieve",
        "sage_memory.evolve",
    }
    frameworks = next(c for c in contracts if "framework" in c["name"])
    assert {"langchain", "langchain_core", "langgraph", "llama_index"} <= set(
        frameworks["forbidden_modules"]
    )


def test_integrations_import_only_the_public_surface() -> None:
    deep = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "integrations").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if line.lstrip().startswith(("from sage_memory.", "import sage_memory."))
    ]
    assert deep == [], "import these names from `sage_memory` (export them there if missing)"
