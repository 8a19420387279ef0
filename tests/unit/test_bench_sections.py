"""Figures in README.md and bench/README.md are written by the script that measured them.

Each generated section names its command; the sections whose script renders them from a
committed results file are compared with that rendering here, so a figure cannot be typed by
hand or left stale. No figure table may sit outside a generated section.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests" / "reliability")]

from sections import SECTION, sections  # noqa: E402

DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md"]
#: A table row holding a measured figure: a cell that is a number, percentage or ratio.
FIGURE = re.compile(r"\|\s*\**[0-9][0-9.,/% ]*\**\s*(\||$)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_section_names_a_bench_script(doc: Path) -> None:
    found = sections(doc)
    assert found or doc.name == "README.md"
    for name, command, _ in found:
        scripts = re.findall(r"bench/[a-z_0-9]+\.py", command)
        assert scripts, f"section {name} does not name its script: {command!r}"
        assert all((ROOT / s).exists() for s in scripts), f"{name}: {command!r}"


def test_sections_rendered_from_results_are_what_the_scripts_make() -> None:
    import delete_cost
    import evolve_100k
    import latency_scaling
    import lexical_latency
    import merges
    import soak
    import throughput

    bench = {name: body for name, _, body in sections(ROOT / "bench" / "README.md")}
    renderers = {
        "soak-table": (soak.render, "soak"),
        "lexical-latency": (lexical_latency.render, "lexical_latency"),
        "throughput-table": (throughput.render, "throughput"),
        "evolve-table": (evolve_100k.render, "evolve"),
        "latency-scaling": (latency_scaling.render, "latency_scaling"),
        "delete-cost": (delete_cost.render, "delete_cost"),
        "merges-table": (lambda d: merges.render(d, merges.saved_runs()), "merges"),
    }
    for name, (render, results) in renderers.items():
        data = json.loads((ROOT / "bench" / "results" / f"{results}.json").read_text("utf-8"))
        assert bench[name].rstrip() == render(data).rstrip(), (
            f"{name} is not its results' rendering"
        )


def test_no_pasted_figure_table_outside_a_generated_section() -> None:
    for doc in DOCS:
        text = SECTION.sub("", doc.read_text(encoding="utf-8"))
        heading = ""
        for line in text.splitlines():
            if line.startswith("## "):
                heading = line[3:].strip()
            elif line.startswith("|") and FIGURE.search(line):
                raise AssertionError(
                    f"{doc.relative_to(ROOT)} under {heading!r}: a figure outside a generated "
                    f"section: {line[:80]}"
                )
