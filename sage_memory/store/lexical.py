"""Lexical scoring: Okapi BM25 over one scope partition's own statistics.

A score depends on the partition's documents only (its document count, average length and each
term's document frequency), never on another scope's data: one user's memories must not move
another user's ranking, not even through a corpus statistic. (SQLite's FTS5 ``bm25()`` counts
over the whole table, which is why the SQLite store keeps its own postings per partition.)

Terms are the word tokens of :mod:`sage_memory.words`, diacritics folded; the SQLite store
also stems them (Snowball English) and weighs terms as FTS5's ``bm25()`` did, so a memory of
one scope scores as it did before, while the in-memory store keeps plain words and the
Lucene-style weight that never goes negative.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import math
import sys
import threading
import types
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from typing import Any

import numpy as np

from sage_memory.words import TEXT_CACHE, query_terms, word_tokens

K1 = 1.2
B = 0.75

#: Postings read per query term at most (the newest first). A term held by more of the
#: partition's documents is common: its weight is small, its full list would make a query's
#: cost grow with the partition, and its newest postings stand for it (both stores' searches:
#: :func:`sage_memory.store.sqlite_postings.search`).
TERM_POSTINGS = 100


#: One stemmer per thread: a Snowball stemmer keeps the word it works on in itself, so two
#: threads stemming at once (a search reads words on its helper thread too) corrupt each other.
_STEMMERS = threading.local()


def _stemmer() -> object:
    own = getattr(_STEMMERS, "stemmer", None)
    if own is None:
        own = _STEMMERS.stemmer = _english_stemmer()
    return own


#: The package name the English stemmer module is loaded under (see _english_stemmer).
_ENGLISH_ONLY = "_sage_memory_snowball_english"
_ENGLISH_LOCK = threading.Lock()


def _english_stemmer() -> object:
    """A new stemmer, the one ``snowballstemmer.stemmer("english")`` returns.

    That package's ``__init__`` imports every one of its 36 stemmers to fill its table: about
    15 ms of CPU, a thirtieth of a command-line search, which stems a few English words. So
    unless the package is loaded already, its English module is loaded on its own, under a
    private package name over the same folder (its relative imports of ``basestemmer`` and
    ``among`` resolve there): the same code, so the same stems. When PyStemmer is installed,
    snowballstemmer hands out that C implementation instead, and so does this.
    """
    loaded = sys.modules.get("snowballstemmer")
    if loaded is None:
        try:
            import Stemmer  # type: ignore[import-not-found]  # PyStemmer, optional
        except ImportError:
            with contextlib.suppress(ImportError, AttributeError):
                return _english_module().EnglishStemmer()
        else:
            return Stemmer.Stemmer("english")
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("english")


def _english_module() -> Any:
    """snowballstemmer's ``english_stemmer`` module, without running the package's __init__."""
    with _ENGLISH_LOCK:
        if _ENGLISH_ONLY not in sys.modules:
            spec = importlib.util.find_spec("snowballstemmer")  # finds; imports nothing
            if spec is None or not spec.submodule_search_locations:
                raise ImportError("snowballstemmer is not installed")
            package = types.ModuleType(_ENGLISH_ONLY)
            package.__path__ = list(spec.submodule_search_locations)
            sys.modules[_ENGLISH_ONLY] = package
        return importlib.import_module(f"{_ENGLISH_ONLY}.english_stemmer")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word ("lives" and "living" -> "live")."""
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def _fold(text: str) -> str:
    """Casefold and drop combining marks ("Café" -> "cafe"), like FTS5's remove_diacritics."""
    if text.isascii():
        # ASCII has nothing to decompose and no combining mark; its casefold is its lower().
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def terms(text: str, *, stemmed: bool = True) -> list[str]:
    """The indexed terms of a document, in order (repeats kept: they are the term counts)."""
    words = word_tokens(_fold(text))
    return [stem(w) for w in words] if stemmed else words


@functools.lru_cache(maxsize=TEXT_CACHE)
def term_set(text: str) -> frozenset[str]:
    """The distinct indexed terms of ``text``, kept per text: the concept hop reads the terms
    of the same memories from one search to the next."""
    return frozenset(terms(text))


def query_term_set(query: str, *, stemmed: bool = True) -> list[str]:
    """The distinct terms a query looks for (stopwords dropped unless all are stopwords)."""
    words = query_terms(_fold(query))
    return list(dict.fromkeys(stem(w) for w in words) if stemmed else words)


def term_key(term: str) -> int:
    """A signed 64-bit key for a term: postings tables store keys, never the words themselves,
    so a deleted text leaves no word behind in an index page."""
    digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lucene_idf(docs: int, df: int) -> float:
    """log(1 + (N - n + 0.5) / (n + 0.5)): positive for every term (rank-bm25, Lucene)."""
    return math.log(1 + (docs - df + 0.5) / (df + 0.5))


def fts5_idf(docs: int, df: int) -> float:
    """Robertson's log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 as SQLite FTS5 does: a term
    in more than half the documents counts (almost) nothing."""
    return max(math.log((docs - df + 0.5) / (df + 0.5)), 1e-6)


def bm25(
    query: Iterable[str],
    postings: Mapping[str, Mapping[str, int]],
    lengths: Mapping[str, int],
    docs: int,
    total_length: int,
    idf: Callable[[int, int], float] = lucene_idf,
) -> dict[str, float]:
    """BM25 scores of the documents that hold a query term.

    Args:
        query: Distinct query terms.
        postings: term -> {document -> term count}, complete for the partition.
        lengths: document -> its number of terms (at least every document in ``postings``).
        docs: Documents in the partition.
        total_length: Terms in the partition.
        idf: The term weight from (documents, documents holding the term).
    """
    if docs <= 0:
        return {}
    avg = total_length / docs or 1.0
    scores: dict[str, float] = defaultdict(float)
    for term in query:
        found = postings.get(term)
        if not found:
            continue
        weight = idf(docs, len(found))
        for doc, tf in found.items():
            norm = tf + K1 * (1 - B + B * lengths[doc] / avg)
            scores[doc] += weight * tf * (K1 + 1) / norm
    return scores


def ranked(
    scores: Mapping[str, float], limit: int, order: Mapping[str, int] | None = None
) -> list[tuple[str, float]]:
    """Best first; ties by ``order`` (storage order) when given, else by id, so equal scores
    keep one order."""
    if order is None:
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))[:limit]


def bm25_rows(
    rows: list[tuple[int, int, int, int]],
    keys: list[int],
    docs: int,
    total_length: int,
    df: dict[int, int],
) -> tuple[np.ndarray, np.ndarray]:
    """(document numbers, BM25 scores) of the documents in ``rows`` (term key, tf, length,
    document number), each term weighted by its document frequency in ``df``: how both stores
    score the postings a bounded read returned.

    The same arithmetic as :func:`bm25`, term by term in query order, so every score is the
    same float (when every term was read whole).
    """
    # Each document's terms are added in query order, as bm25() adds them: its rows are
    # ordered by their term's place in the query (a numpy sort of the term column; within a
    # term no document repeats, so the rest of the order does not change a sum).
    arr = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=4 * len(rows))
    arr = arr.reshape(len(rows), 4)
    query_keys = np.array(keys, dtype=np.int64)
    by_key = np.argsort(query_keys)
    place = by_key[np.searchsorted(query_keys, arr[:, 0], sorter=by_key)]
    order = np.argsort(place, kind="stable")
    arr = arr[order]
    tf, length, doc = arr[:, 1].astype(np.float64), arr[:, 2], arr[:, 3]
    avg = total_length / docs or 1.0
    # Each row's term weight, looked up by its term's place in the query.
    idf = np.array([fts5_idf(docs, min(df.get(k, 0), docs)) for k in keys], dtype=np.float64)
    weight = idf[place[order]]
    norm = tf + K1 * (1 - B + B * length / avg)
    contrib = weight * tf * (K1 + 1) / norm
    unique, slot = np.unique(doc, return_inverse=True)
    return unique, np.bincount(slot, weights=contrib, minlength=len(unique))


def estimated_df(read: int, newest: int, oldest_read: int, first: int) -> int:
    """The document frequency of a common term of which only the ``read`` newest postings were
    read (document numbers ``newest`` down to ``oldest_read``; ``first`` its oldest document):
    the postings read fill their share of the term's whole span at the density they show."""
    span, read_span = newest - first + 1, newest - oldest_read + 1
    return round(read * span / read_span)


class BM25Index:
    """An incremental BM25 index of one partition (adds and removals).

    Args:
        stemmed: Index Snowball stems instead of plain words.
    """

    def __init__(self, *, stemmed: bool = False) -> None:
        self.stemmed = stemmed
        self._postings: dict[str, dict[str, int]] = defaultdict(dict)
        self._lengths: dict[str, int] = {}
        self._terms: dict[str, list[str]] = {}
        self._total = 0
        # Each document's place in storage order (kept across a re-add): equal scores rank
        # in it, as the stores' row numbers rank them.
        self._order: dict[str, int] = {}
        self._added = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, doc_id: str, text: str) -> None:
        self.remove(doc_id, keep_place=True)
        if doc_id not in self._order:
            self._order[doc_id] = self._added
            self._added += 1
        counts = Counter(terms(text, stemmed=self.stemmed))
        for term, tf in counts.items():
            self._postings[term][doc_id] = tf
        length = sum(counts.values())
        self._terms[doc_id] = list(counts)
        self._lengths[doc_id] = length
        self._total += length

    def remove(self, doc_id: str, *, keep_place: bool = False) -> None:
        if not keep_place:
            self._order.pop(doc_id, None)
        length = self._lengths.pop(doc_id, None)
        if length is None:
            return
        self._total -= length
        for term in self._terms.pop(doc_id, ()):
            del self._postings[term][doc_id]
            if not self._postings[term]:
                del self._postings[term]

    def search(self, query: str, limit: int = 20) -> list[tuple[str, float]]:
        scores = bm25(
            query_term_set(query, stemmed=self.stemmed),
            self._postings,
            self._lengths,
            len(self._lengths),
            self._total,
        )
        return ranked(scores, limit, self._order)
