"""What the retrieval benchmarks share: a cached embedder, the baselines, recall tallies, README
sections.

Every benchmark here loads a corpus of ``Doc`` items and a list of ``Probe`` questions, runs
SageMemory beside plain baselines over the same texts and the same MiniLM vectors, and prints
(and writes) what it measured. Nothing here is tuned per data set.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
import statistics
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _find_data() -> Path:
    """../shared/data beside the checkout (or beside a parent: worktrees), or $SAGE_BENCH_DATA."""
    import os

    if os.environ.get("SAGE_BENCH_DATA"):
        return Path(os.environ["SAGE_BENCH_DATA"])
    for parent in ROOT.parents:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared" / "data"
    return ROOT.parent / "shared" / "data"


DATA = _find_data()
CACHE = HERE / ".cache"
RESULTS = HERE / "results"
README = HERE / "README.md"


@dataclass(frozen=True)
class Doc:
    """One memory of a benchmark corpus: its benchmark id, text and world time."""

    id: str
    text: str
    when: datetime | None = None


@dataclass(frozen=True)
class Probe:
    """A question with the ids of the docs that hold its answer."""

    text: str
    evidence: frozenset[str]
    category: str = "all"
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def git_commit() -> str:
    """The commit the benchmark ran at (with '+dirty' when the tree has changes)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}+dirty" if dirty else head or "unknown"


def stamp() -> dict[str, str]:
    return {"when": datetime.now(UTC).isoformat(timespec="seconds"), "commit": git_commit()}


def embedder_signature(embedder: Any) -> str:
    """What an embedder's vectors depend on besides the texts: its own ``signature()`` (MiniLM:
    model, weights digest, backend and its version), else its class and repr."""
    sign = getattr(embedder, "signature", None)
    if callable(sign):
        return str(sign())
    return f"{type(embedder).__module__}.{type(embedder).__qualname__}:{embedder!r}"


class CachedMiniLM:
    """The offline MiniLM embedder (or ``inner``) with document vectors cached on disk, keyed
    by the texts and the embedder's signature (a changed model, weights or backend build
    never reads the vectors of another); queries run live."""

    def __init__(self, inner: Any = None, cache: Path | None = None) -> None:
        from sage_memory.embed.minilm import default_embedder

        self.inner = inner if inner is not None else default_embedder()
        self.name = self.inner.name
        self.dim = self.inner.dim
        self.signature = embedder_signature(self.inner)
        self._cache = cache if cache is not None else CACHE
        self._mem: dict[str, np.ndarray] = {}

    def _file(self, texts: Sequence[str]) -> Path:
        keyed = "\x1d".join([self.signature, "\x1e".join(texts)])
        digest = hashlib.sha256(keyed.encode()).hexdigest()[:24]
        return self._cache / f"minilm-{digest}.npy"

    def warm(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for a whole corpus, from the cache file or computed and saved."""
        path = self._file(texts)
        if path.exists():
            vecs: np.ndarray = np.load(path)
        else:
            vecs = self.inner.embed(list(texts)).astype(np.float32)
            self._cache.mkdir(parents=True, exist_ok=True)
            np.save(path, vecs)
        self._mem.update(zip(texts, vecs, strict=True))
        return vecs

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._mem]
        if missing:
            self._mem.update(zip(missing, self.inner.embed(missing), strict=True))
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        return np.stack([self._mem[t] for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.inner.embed_query(text))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


# -- systems ---------------------------------------------------------------------------------

Search = Callable[[str, int], list[str]]  # (question, k) -> doc ids, best first


@dataclass
class System:
    name: str
    search: Search
    close: Callable[[], None] = lambda: None


def bm25_system(docs: Sequence[Doc]) -> System:
    """Okapi BM25 (the rank-bm25 style formula in sage_memory's in-memory lexical index)."""
    from sage_memory.store.lexical import BM25Index

    index = BM25Index()
    for d in docs:
        index.add(d.id, d.text)

    def search(q: str, k: int) -> list[str]:
        return [i for i, _ in index.search(q, k)]

    return System("bm25", search)


def fts5_system(docs: Sequence[Doc]) -> System:
    """SQLite FTS5 bm25() with the Porter stemmer."""
    from sage_memory.store.sqlite import fts_query

    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')"
    )
    db.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", enumerate(d.text for d in docs))
    ids = [d.id for d in docs]

    def search(q: str, k: int) -> list[str]:
        match = fts_query(q)
        if match is None:
            return []
        rows = db.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (f"body : ({match})", k)
        ).fetchall()
        return [ids[r[0]] for r in rows]

    return System("fts5", search, db.close)


def dense_system(docs: Sequence[Doc], emb: CachedMiniLM, vecs: np.ndarray) -> System:
    """Exact cosine search over the same MiniLM vectors."""
    ids = [d.id for d in docs]

    def search(q: str, k: int) -> list[str]:
        sims = vecs @ emb.embed_query(q)
        top = np.argpartition(-sims, min(k, len(ids) - 1))[:k]
        return [ids[i] for i in top[np.argsort(-sims[top])]]

    return System("dense", search)


def rrf_system(a: System, b: System, *, k0: int = 60, pool: int = 50) -> System:
    """Reciprocal-rank fusion of two systems (the 'plain hybrid retriever' reference)."""

    def search(q: str, k: int) -> list[str]:
        scores: dict[str, float] = defaultdict(float)
        for s in (a, b):
            for rank, doc in enumerate(s.search(q, pool)):
                scores[doc] += 1.0 / (k0 + rank + 1)
        return sorted(scores, key=lambda d: -scores[d])[:k]

    return System(f"rrf({a.name}+{b.name})", search)


def chroma_system(docs: Sequence[Doc], emb: CachedMiniLM, vecs: np.ndarray, folder: Path) -> System:
    """A plain Chroma collection of the same vectors: the latency reference."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False)
    )
    coll = client.create_collection(
        "docs", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    ids = [d.id for d in docs]
    for i in range(0, len(ids), 5000):
        coll.add(ids=ids[i : i + 5000], embeddings=vecs[i : i + 5000])

    def search(q: str, k: int) -> list[str]:
        res = coll.query(
            query_embeddings=emb.embed_query(q).reshape(1, -1), n_results=k, include=[]
        )
        return list(res["ids"][0])

    return System("chroma", search)


@dataclass
class SageRun:
    """A SageMemory holding one corpus in one scope, with a map back to the docs' ids."""

    mem: Any
    user_id: str
    by_memory: dict[str, str]
    ingest_s: float

    def search(self, q: str, k: int, **kw: Any) -> list[str]:
        res = self.mem.search(q, user_id=self.user_id, limit=k, **kw)
        return [self.by_memory[h.id] for h in res.memories if h.id in self.by_memory]

    def result(self, q: str, k: int, **kw: Any) -> Any:
        return self.mem.search(q, user_id=self.user_id, limit=k, **kw)

    def system(self) -> System:
        return System("sage", self.search, self.mem.close)


def sage_run(
    docs: Sequence[Doc],
    emb: CachedMiniLM,
    folder: Path | None,
    *,
    user_id: str = "bench",
    infer: bool = True,
    config: Any = None,
    batch_size: int = 256,
) -> SageRun:
    """Ingest ``docs`` (in the given order) through ``add_many``, offline defaults."""
    from sage_memory import SageMemory

    mem = SageMemory(folder, config=config, embedder=emb)
    started = time.perf_counter()
    items: list[dict[str, Any]] = [
        {"text": d.text, **({"timestamp": d.when} if d.when else {})} for d in docs
    ]
    results = mem.add_many(items, user_id=user_id, infer=infer, batch_size=batch_size)
    ingest_s = time.perf_counter() - started
    by_memory = {r.memory_id: d.id for r, d in zip(results, docs, strict=True)}
    return SageRun(mem, user_id, by_memory, ingest_s)


# -- scoring ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """Evidence recall at several k, per category and overall, plus per-query latency."""

    ks: tuple[int, ...]
    recall: dict[str, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    latency_ms: list[float] = field(default_factory=list)

    def add(self, probe: Probe, found: Sequence[str], ms: float | None = None) -> None:
        for k in self.ks:
            r = len(probe.evidence & set(found[:k])) / len(probe.evidence)
            self.recall[probe.category][k].append(r)
            if probe.category != "all":
                self.recall["all"][k].append(r)
        if ms is not None:
            self.latency_ms.append(ms)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for cat, by_k in sorted(self.recall.items(), key=lambda kv: (kv[0] == "all", kv[0])):
            label = "overall" if cat == "all" else cat
            out[label] = {f"R@{k}": round(100 * statistics.fmean(by_k[k]), 1) for k in self.ks}
            out[label]["n"] = len(by_k[self.ks[0]])
        if self.latency_ms:
            out["latency_ms"] = percentiles(self.latency_ms)
        return out


def percentiles(values: Iterable[float]) -> dict[str, float]:
    lat = sorted(values)
    return {
        "p50": round(statistics.median(lat), 2),
        "p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2),
    }


def timed(search: Search, q: str, k: int) -> tuple[list[str], float]:
    t0 = time.perf_counter()
    found = search(q, k)
    return found, (time.perf_counter() - t0) * 1000


def recall_table(results: dict[str, dict[str, Any]], ks: Sequence[int]) -> str:
    """A markdown table: one row per system, one column per category (R@k1/k2/k3)."""
    cats: list[str] = []
    for res in results.values():
        for c in res:
            if c not in ("latency_ms", *cats):
                cats.append(c)
    has_latency = any("latency_ms" in r for r in results.values())
    head = "| system | " + " | ".join(f"{c} R@{'/'.join(map(str, ks))}" for c in cats)
    head += " | p50 ms | p95 ms |" if has_latency else " |"
    rows = [head, "|" + "---|" * (len(cats) + 1 + 2 * has_latency)]
    for name, res in results.items():
        cells = [
            "/".join(f"{res[c][f'R@{k}']:.1f}" for k in ks) if c in res and res[c]["n"] else "-"
            for c in cats
        ]
        line = f"| {name} | " + " | ".join(cells)
        if has_latency:
            lat = res.get("latency_ms", {})
            line += f" | {lat.get('p50', '-')} | {lat.get('p95', '-')}"
        rows.append(line + " |")
    return "\n".join(rows)


def write_section(section: str, body: str) -> None:
    """Replace (or append) one ``## `` section of bench/README.md; other sections stay."""
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    start = text.find(section + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + body.rstrip("\n") + "\n"
    else:
        nxt = text.find("\n## ", start + len(section))
        end = len(text) if nxt < 0 else nxt + 1
        text = text[:start] + body.rstrip("\n") + "\n" + ("\n" + text[end:] if nxt >= 0 else "")
    README.write_text(text)


#: The graph ablations every retrieval benchmark prints: the graph channel off, and the
#: associative walk replaced by the older BFS provenance score.
GRAPH_ABLATIONS: dict[str, dict[str, Any]] = {
    "without graph and entity evidence": {"graph": 0.0, "entity": 0.0},
    "without associative walk (BFS graph instead)": {"walk": False},
    "without the one-name associative hop": {"assoc_take": 0},
    "without concept links": {"concept": 0.0},
}


def save_report(bench: str, report: dict[str, Any], save_as: str | None = None) -> None:
    """Write ``bench/results/<bench>.json`` (and ``<bench>_<save_as>.json`` when asked)."""
    import json

    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=2) + "\n"
    (RESULTS / f"{bench}.json").write_text(text)
    if save_as:
        (RESULTS / f"{bench}_{save_as}.json").write_text(text)


def saved_runs(bench: str, describe: Callable[[dict[str, Any]], str]) -> list[str]:
    """One line per run kept with ``--save-as`` (``bench/results/<bench>_<NAME>.json``)."""
    import json

    lines = []
    for path in sorted(RESULTS.glob(f"{bench}_*.json")):
        d = json.loads(path.read_text())
        name = path.stem.removeprefix(f"{bench}_")
        lines.append(
            f"- saved run `{name}` (commit {d.get('commit', '?')}, {d.get('when', '?')}): "
            f"{describe(d)}"
        )
    return lines


def replace_weights(mem: Any, **changes: Any) -> Any:
    """Fusion weights of ``mem`` with some switched off, for ablations."""
    return dataclasses.replace(mem.retriever.weights, **changes)


def ablated_results(run: SageRun, changes: dict[str, Any]) -> Callable[..., Any]:
    """``run``'s search with some fusion weights changed, returning the whole
    RetrievalResult (``as_of`` may be given)."""
    return searcher(run, replace_weights(run.mem, **changes))


def searcher(run: SageRun, weights: Any) -> Callable[..., Any]:
    """``run``'s search with the given fusion weights, returning the whole RetrievalResult."""
    from sage_memory.types import Scope

    mem = run.mem

    def search(q: str, k: int, as_of: datetime | None = None) -> Any:
        return mem.retriever.search(
            q,
            Scope(run.user_id),
            limit=k,
            as_of=as_of,
            context_tokens=mem.config.retrieve.context_tokens,
            now=mem.now(),
            weights=weights,
        )

    return search


def ablated(run: SageRun, changes: dict[str, Any]) -> Search:
    """``run``'s search with some fusion weights changed (same store, same queries)."""
    results = ablated_results(run, changes)

    def search(q: str, k: int) -> list[str]:
        res = results(q, k)
        return [run.by_memory[h.id] for h in res.memories if h.id in run.by_memory]

    return search
