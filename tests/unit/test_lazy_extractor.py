"""The engine's default extractor is built on the first extraction, not at open."""

from __future__ import annotations

import pytest

from sage_memory import SageMemory
from sage_memory.config import ExtractConfig, SageConfig
from sage_memory.errors import ConfigError
from sage_memory.extract.base import LazyExtractor


@pytest.mark.parametrize(("mode", "name"), [("auto", "structure"), ("rules", "rules")])
def test_opening_builds_no_extractor_and_the_first_add_does(mode: str, name: str) -> None:
    config = SageConfig(extract=ExtractConfig(mode=mode), embedder="hashing")  # type: ignore[arg-type]
    with SageMemory(config=config) as mem:
        extractor = mem.extractor
        assert isinstance(extractor, LazyExtractor) and not extractor.built
        mem.search("where does Rosalind live?", user_id="u")
        mem.add("Rosalind relocated to Gdansk.", user_id="u", infer=False)
        assert not extractor.built  # neither a search nor an add without extraction needs it
        mem.add("Rosalind relocated to Gdansk.", user_id="u")
        assert extractor.built
        assert extractor.name == extractor.extractor().name == name


def test_an_llm_mode_without_a_model_still_fails_at_open() -> None:
    config = SageConfig(extract=ExtractConfig(mode="llm"), embedder="hashing")
    with pytest.raises(ConfigError, match="needs an LLM"):
        SageMemory(config=config)
