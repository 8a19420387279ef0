"""Run the VectorIndex contract against every backend, plus backend-specific checks."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sage_memory.errors import ConfigError, DependencyError, StorageError
from sage_memory.index import NumpyVectorIndex, VectorIndex
from sage_memory.testing.vector_index_contract import (
    VectorIndexContract,
    brute_force_top_k,
    random_unit_vectors,
)

chromadb = pytest.importorskip("chromadb")

from sage_memory.index.chroma import (  # noqa: E402 - only after chromadb is known present
    LOGICAL_NAME_KEY,
    ChromaVectorIndex,
    chroma_collection_name,
)


class TestNumpyVectorIndex(VectorIndexContract):
    def make_index(self, path: Path) -> VectorIndex:
        return NumpyVectorIndex()

    def test_deletes_keep_rows_contiguous_and_memory_shrinks(self) -> None:
        rng = np.random.default_rng(7)
        index = NumpyVectorIndex()
        ids = [f"v{i}" for i in range(1000)]
        matrix = random_unit_vectors(rng, len(ids), self.dim)
        index.upsert("c", ids, matrix)
        gone = set(ids[::3]) | set(ids[200:])
        index.delete("c", sorted(gone))

        kept = [item for item in ids if item not in gone]
        rows = [ids.index(item) for item in kept]
        for query in matrix[:5]:
            hits = index.query("c", query, k=7)
            expected = brute_force_top_k(kept, matrix[rows], query, 7)
            assert [item for item, _ in hits] == [item for item, _ in expected]
            np.testing.assert_allclose([s for _, s in hits], [s for _, s in expected], atol=1e-5)
        entry = index._collections["c"]
        assert entry.matrix.flags.c_contiguous
        assert entry.matrix.shape[0] < len(ids)  # capacity was handed back


@pytest.fixture
def no_network(socket_disabled: None) -> None:
    """Any Python-level socket use (say, a model download) fails the test."""


@pytest.mark.usefixtures("no_network")
class TestChromaVectorIndex(VectorIndexContract):
    # Every Chroma write commits to SQLite (tens of ms), so the model run is kept shorter.
    state_machine_examples = 10
    state_machine_steps = 20

    def make_index(self, path: Path) -> VectorIndex:
        return ChromaVectorIndex(path)

    @pytest.fixture
    def chroma(self, tmp_path: Path) -> Iterator[ChromaVectorIndex]:
        index = ChromaVectorIndex(tmp_path / "chroma")
        yield index
        index.close()

    def test_collection_names_are_valid_and_deterministic(self) -> None:
        names = ["user:ALICE|a b/ü", "", "x" * 300, "u:alice|a:|memory"]
        mapped = [chroma_collection_name(name) for name in names]
        for name in mapped:
            assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]", name)
        assert len(set(mapped)) == len(names)
        assert chroma_collection_name("u:alice|a:|memory") == chroma_collection_name(
            "u:alice|a:|memory"
        )

    def test_logical_name_and_cosine_space_are_stored(self, chroma: ChromaVectorIndex) -> None:
        chroma.upsert("user:ALICE|a b/ü", ["a"], np.ones((1, 4), dtype=np.float32))
        handle = chroma._client.get_collection(
            chroma_collection_name("user:ALICE|a b/ü"), embedding_function=None
        )
        assert handle.metadata[LOGICAL_NAME_KEY] == "user:ALICE|a b/ü"
        assert handle.configuration_json["hnsw"]["space"] == "cosine"

    def test_hnsw_settings_apply_to_new_collections(self, tmp_path: Path) -> None:
        index = ChromaVectorIndex(tmp_path / "h", hnsw={"ef_search": 200})
        index.upsert("c", ["a"], np.ones((1, 4), dtype=np.float32))
        config = index._handles["c"].configuration_json["hnsw"]
        assert (config["ef_search"], config["space"]) == (200, "cosine")
        index.close()
        with pytest.raises(ConfigError, match="space"):
            ChromaVectorIndex(tmp_path / "h", hnsw={"space": 2})

    def test_unusable_folder_is_a_storage_error(self, tmp_path: Path) -> None:
        blocker = tmp_path / "file"
        blocker.write_text("not a folder")
        with pytest.raises(StorageError, match="cannot open"):
            ChromaVectorIndex(blocker / "index")

    def test_upserts_in_chunks_and_lists_ids_in_pages(
        self, chroma: ChromaVectorIndex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(chroma, "_max_batch", 7)
        monkeypatch.setattr("sage_memory.index.chroma._ID_PAGE", 5)
        ids = [f"v{i}" for i in range(33)]
        matrix = random_unit_vectors(np.random.default_rng(3), len(ids), 8)
        chroma.upsert("c", ids, matrix)

        assert chroma.count("c") == 33
        assert chroma.ids("c") == set(ids)
        chroma.delete("c", ids[:20])
        assert chroma.ids("c") == set(ids[20:])

    @pytest.mark.filterwarnings("ignore:legacy embedding function config:DeprecationWarning")
    def test_never_embeds_documents(self, chroma: ChromaVectorIndex) -> None:
        chroma.upsert("c", ["a"], np.ones((1, 4), dtype=np.float32))
        handle = chroma._handles["c"]
        # With no embedding function Chroma refuses text outright instead of fetching a model.
        with pytest.raises(ValueError, match="embedding function"):
            handle.upsert(ids=["b"], documents=["hello"])

    def test_stale_handle_is_reopened(self, tmp_path: Path) -> None:
        client = chromadb.PersistentClient(path=str(tmp_path / "shared"))
        first, second = ChromaVectorIndex(client=client), ChromaVectorIndex(client=client)
        vector = np.ones((1, 4), dtype=np.float32)
        first.upsert("c", ["a"], vector)
        assert first.count("c") == 1
        second.drop("c")

        assert first.count("c") == 0
        first.upsert("c", ["b"], vector)
        assert second.ids("c") == {"b"}
        first.close()
        second.close()
        # The caller's client stays usable: the indexes did not own it.
        assert client.heartbeat() > 0
        client.close()

    def test_persistent_flag_follows_the_client(self, tmp_path: Path) -> None:
        client = chromadb.PersistentClient(path=str(tmp_path / "p"))
        assert ChromaVectorIndex(client=client).persistent is True
        client.close()

    def test_needs_exactly_one_of_path_and_client(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match="NumpyVectorIndex"):
            ChromaVectorIndex()
        client = chromadb.PersistentClient(path=str(tmp_path / "p"))
        with pytest.raises(ConfigError):
            ChromaVectorIndex(tmp_path / "q", client=client)
        client.close()

    def test_missing_chromadb_names_the_install_command(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "chromadb", None)  # makes `import chromadb` fail
        with pytest.raises(DependencyError, match="pip install chromadb"):
            ChromaVectorIndex(tmp_path / "x")


def test_importing_the_index_package_does_not_import_chromadb() -> None:
    code = (
        "import sys\n"
        "import sage_memory.index, sage_memory.index.chroma\n"
        "from sage_memory.index import ChromaVectorIndex\n"
        "assert 'chromadb' not in sys.modules, 'chromadb imported eagerly'\n"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
