"""Building an engine's parts from its arguments: the folder, the store, the index, the models.

Functions, not methods: each takes what it needs and returns a part, so the facade's
constructor reads as the list of what it assembles.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import IO, cast

import numpy as np

from sage_memory.config import SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.engine import index_mark
from sage_memory.engine.context import CHROMA_DIR, DB_FILE, LOCK_FILE, EngineContext
from sage_memory.engine.progress import Progress
from sage_memory.errors import ConfigError, FolderBusyError, StorageError
from sage_memory.extract.base import Extractor, LazyExtractor
from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.llm.base import ChatModel
from sage_memory.store.base import GraphStore


class FolderLock:
    """An exclusive advisory lock on the memory folder: one process owns it at a time.

    Chroma's embedded client is not process-safe, so a second process gets a clear error
    instead of a corrupted index.
    """

    def __init__(self, folder: Path) -> None:
        self._file: IO[str] | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks, single process only
            return
        fh = open(folder / LOCK_FILE, "a+")  # noqa: SIM115 - held open for the lock's lifetime
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            fh.seek(0)
            owner = fh.read().strip() or "another process"
            fh.close()
            raise FolderBusyError(
                f"{folder} is in use by {owner}. One process owns a memory folder at a time: "
                "close the other SageMemory, open it with read_only=True to read beside it, "
                "or open a copy of the folder; many writers means server mode (PostgreSQL)."
            ) from exc
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        self._file = fh

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def open_folder(path: Path) -> FolderLock:
    """Create the folder if needed, check it is writable, and lock it for this process."""
    if path.exists() and not path.is_dir():
        raise StorageError(f"{path} is a file; SageMemory(path=...) needs a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise StorageError(
            f"cannot write to {path}: {exc.strerror or exc}. Choose a folder you can write to."
        ) from exc
    return FolderLock(path)


def default_store(path: Path | None) -> GraphStore:
    """SQLite in the folder, or an in-memory store without one."""
    if path is None:
        from sage_memory.store.memory import InMemoryGraphStore

        return InMemoryGraphStore()
    from sage_memory.store.sqlite import SQLiteGraphStore

    return SQLiteGraphStore(path / DB_FILE)


def read_only_backends(folder: Path, index: VectorIndex | None) -> tuple[GraphStore, VectorIndex]:
    """A reader's view of a folder another process may own: SQLite opened read-only (WAL
    readers), the evolver's usage notes kept in this process, and an exact in-memory index
    filled from the stored vectors (Chroma's embedded files are the owner's alone)."""
    from sage_memory.index.numpy import NumpyVectorIndex
    from sage_memory.store.local_evolver import LocalEvolverState
    from sage_memory.store.sqlite import SQLiteGraphStore

    store = LocalEvolverState(SQLiteGraphStore(folder / DB_FILE, read_only=True))
    return cast(GraphStore, store), index or NumpyVectorIndex()


def server_backends(url: str) -> tuple[GraphStore, VectorIndex]:
    """The PostgreSQL store and pgvector index of server mode, sharing one connection pool."""
    from sage_memory.index.postgres import PostgresVectorIndex
    from sage_memory.postgres import split_schema
    from sage_memory.store.postgres import PostgresGraphStore

    url, schema = split_schema(url)
    store = PostgresGraphStore(url, schema=schema)
    try:
        index = PostgresVectorIndex(url, schema=store.schema, pool=store.pool)
    except BaseException:
        store.close()
        raise
    return store, index


def default_index(
    config: SageConfig, path: Path | None, store: GraphStore | None = None
) -> VectorIndex:
    """The vector index ``config.vector_index`` names ("auto": numpy in memory, else Chroma).

    With the folder's ``store``, Chroma opens on first need (:class:`FolderIndex`): under
    "auto", a small partition is served exactly from the store's vectors and never copied into
    Chroma; "chroma" mirrors every partition into it.
    """
    kind = config.vector_index
    if path is not None and store is not None and kind in ("auto", "chroma"):
        from sage_memory.engine.folder_index import FolderIndex

        limit = None if kind == "auto" else 0
        return FolderIndex(lambda: open_chroma(path), store, exact_limit=limit)
    if kind == "auto":
        kind = "numpy" if path is None else "chroma"
    if kind == "numpy":
        from sage_memory.index.numpy import NumpyVectorIndex

        return NumpyVectorIndex()
    return open_chroma(path)


def open_chroma(path: Path | None) -> VectorIndex:
    """The folder's Chroma index (or an in-memory one), rebuilt when its folder is damaged."""
    from sage_memory.index.chroma import ChromaVectorIndex

    chroma_path = None if path is None else path / CHROMA_DIR
    # Chroma's default ef_search (100) found about half of the true top-10 on random
    # vectors and 95% on clustered ones; 200 lifts that at about 1 ms more per query.
    hnsw = {"ef_search": 200, "ef_construction": 200, "max_neighbors": 32}
    try:
        return ChromaVectorIndex(chroma_path, hnsw=hnsw)
    except StorageError as exc:
        if chroma_path is None or not chroma_path.is_dir():
            raise
        discard_index(chroma_path, exc)
        return ChromaVectorIndex(chroma_path, hnsw=hnsw)


def discard_index(folder: Path, exc: Exception) -> None:
    """Delete a damaged index folder: it is derived data, rebuilt from SQLite."""
    import shutil
    import warnings

    warnings.warn(
        f"the vector index in {folder} is damaged ({exc}); rebuilding it from the SQLite "
        "store, which holds every vector",
        RuntimeWarning,
        stacklevel=4,
    )
    shutil.rmtree(folder)


def check_embedder(store: GraphStore, embedder: Embedder) -> None:
    """Refuse to mix two models' vectors in one memory."""
    signature = f"{embedder.name}:{embedder.dim}"
    stored = store.get_meta("embedder")
    if stored is None:
        store.set_meta("embedder", signature)
    elif stored != signature:
        name = stored.rsplit(":", 1)[0]
        # Said for each way in: the API, the CLI flag and the variable the MCP server and
        # the adapters' URL engines read (a CLI user cannot act on a keyword argument).
        raise ConfigError(
            f"this memory was embedded with {stored}, not {signature}; vectors of two models "
            f"cannot be mixed. Open it with embedder={name!r} (command line: --embedder "
            f"{name}; MCP server and adapters: SAGE_EMBEDDER={name}), or export it and load "
            "the export with the new embedder."
        )


def make_llm(config: SageConfig, llm: ChatModel | str | None) -> ChatModel | None:
    """The chat model given, or the one the config names, or None."""
    spec = llm if llm is not None else config.llm
    if spec is None:
        return None
    from sage_memory.llm import make_chat_model

    return make_chat_model(spec, **dict(config.llm_kwargs))


def default_extractor(config: SageConfig, llm: ChatModel | None) -> Extractor:
    """The structure extractor, or the LLM extractor over it when an LLM is configured
    (``mode="rules"`` / ``"patterns"``: the older pattern extractor)."""
    mode = config.extract.mode
    if mode == "llm" and llm is None:  # checked first: a config error fails fast
        raise ConfigError("extract.mode='llm' needs an LLM: pass llm=... or config.llm")
    if mode in ("rules", "patterns"):
        from sage_memory.extract.rules import RuleExtractor

        return RuleExtractor(config.extract)
    from sage_memory.extract.structure import StructureExtractor

    offline = StructureExtractor(config.extract)
    if llm is not None and mode in ("auto", "llm"):
        from sage_memory.extract.llm import LLMExtractor

        return LLMExtractor(llm, config.extract, fallback=offline)
    return offline


def lazy_default_extractor(config: SageConfig, llm: ChatModel | None) -> Extractor:
    """:func:`default_extractor`, built on the first extraction: opening a memory to search
    loads no lexicon (a configuration error is still raised here, at open)."""
    mode = config.extract.mode
    if mode == "llm" and llm is None:
        return default_extractor(config, llm)  # raises the ConfigError
    if mode in ("rules", "patterns"):
        name = "rules"
    elif llm is not None and mode in ("auto", "llm"):
        name = "llm"
    else:
        name = "structure"
    return LazyExtractor(name, functools.partial(default_extractor, config, llm))


def reconcile_or_rebuild(ctx: EngineContext, *, own_index: bool, progress: bool = False) -> None:
    """Reconcile; if our own on-disk index fails while doing so, rebuild it from scratch."""
    try:
        reconcile_index(ctx, progress=progress)
    except StorageError as exc:
        folder = None if ctx.path is None else ctx.path / CHROMA_DIR
        if not own_index or folder is None or not folder.is_dir():
            raise
        ctx.index.close()
        discard_index(folder, exc)
        ctx.set_index(default_index(ctx.config, ctx.path, ctx.store))
        reconcile_index(ctx, progress=progress)


def _index_stamp(ctx: EngineContext) -> str | None:
    """Size and mtime of the Chroma folder's database: changes whenever Chroma writes."""
    if ctx.path is None:
        return None
    try:
        st = (ctx.path / CHROMA_DIR / "chroma.sqlite3").stat()
    except OSError:
        return None
    return f"{st.st_size}:{st.st_mtime_ns}"


def record_index_counts(ctx: EngineContext) -> None:
    """At a clean close: remember each collection's size and the index folder's stamp, so the
    next clean open can trust the index without opening it (see :func:`reconcile_index`)."""
    from sage_memory.engine.folder_index import FolderIndex

    index = ctx.index
    if not isinstance(index, FolderIndex) or not ctx.store.persistent:
        return
    if not index.opened and ctx.store.get_meta("index_counts") is not None:
        return  # nothing was written to the index: the record still holds
    # Only the collections Chroma mirrors: the others are served from SQLite, nothing to trust.
    counts = {coll: index.count(coll) for coll in sorted(index.mirrored())}
    index.close()  # Chroma flushes on close: the stamp must be taken after it
    ctx.store.set_meta("index_counts", json.dumps({"stamp": _index_stamp(ctx), "counts": counts}))


def _recorded_counts(ctx: EngineContext) -> dict[str, int]:
    """The counts of the last clean close, if the index folder is unchanged since."""
    raw = ctx.store.get_meta("index_counts")
    if raw is None:
        return {}
    try:
        record = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(record, dict) or record.get("stamp") != _index_stamp(ctx):
        return {}
    counts = record.get("counts")
    return counts if isinstance(counts, dict) else {}


def reconcile_index(ctx: EngineContext, *, progress: bool = False) -> None:
    """Make the derived vector index agree with SQLite (after a crash, or a lost index)."""
    store, index = ctx.store, ctx.index
    clean = store.get_meta("clean_shutdown") != "0"
    recorded = _recorded_counts(ctx) if clean else {}
    mark = None if clean else index_mark.read_mark(store)
    if mark is not None:  # after a crash: what changed since the index was last in sync
        index_mark.catch_up(store, index, mark)
    counts_suffice = clean or mark is not None
    from sage_memory.engine.folder_index import FolderIndex

    mirrored = index.mirrored() if isinstance(index, FolderIndex) else None
    limit = index.exact_limit if isinstance(index, FolderIndex) else 0
    scopes = store.partitions()
    bar = Progress(len(scopes), "checking the index", "scope", enabled=progress and not clean)
    for scope in scopes:
        bar.update()
        for entity in ("memory", "node"):
            coll = collection_name(scope.key, entity)
            truth = store.vector_ids(scope, entity)  # type: ignore[arg-type]
            if mirrored is not None and coll not in mirrored and len(truth) <= limit:
                continue  # served from SQLite's vectors alone: nothing derived to repair
            if clean and recorded.get(coll) == len(truth):
                continue  # unchanged since a clean close: no need to open the index
            if counts_suffice and len(truth) == index.count(coll):
                continue
            present = index.ids(coll)
            missing = sorted(truth - present)
            for i in range(0, len(missing), 1000):
                chunk = missing[i : i + 1000]
                vecs = store.get_vectors(chunk)
                ids = [c for c in chunk if c in vecs]
                if ids:
                    index.upsert(coll, ids, np.stack([vecs[c] for c in ids]))
            extra = sorted(present - truth)
            if extra:
                index.delete(coll, extra)
    bar.close()
    if store.persistent:
        index_mark.write_mark(store)
        store.set_meta("clean_shutdown", "0")
