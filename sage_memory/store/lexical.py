"""Lexical scoring for stores without a full-text engine: a small incremental BM25 index.

The SQLite store uses FTS5 instead; both take their terms from :mod:`sage_memory.words`, so
they agree on which words of a query count.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from sage_memory.words import query_terms, word_tokens


class BM25Index:
    """Okapi BM25 over an inverted index that supports adds and removals."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._postings: dict[str, dict[str, int]] = defaultdict(dict)
        self._lengths: dict[str, int] = {}
        self._terms: dict[str, list[str]] = {}
        self._total = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, doc_id: str, text: str) -> None:
        self.remove(doc_id)
        counts = Counter(word_tokens(text))
        for term, tf in counts.items():
            self._postings[term][doc_id] = tf
        length = sum(counts.values())
        self._terms[doc_id] = list(counts)
        self._lengths[doc_id] = length
        self._total += length

    def remove(self, doc_id: str) -> None:
        length = self._lengths.pop(doc_id, None)
        if length is None:
            return
        self._total -= length
        for term in self._terms.pop(doc_id, ()):
            del self._postings[term][doc_id]
            if not self._postings[term]:
                del self._postings[term]

    def search(self, query: str, limit: int = 20) -> list[tuple[str, float]]:
        n = len(self._lengths)
        if n == 0:
            return []
        avg = self._total / n or 1.0
        scores: dict[str, float] = defaultdict(float)
        for term in query_terms(query):
            docs = self._postings.get(term)
            if not docs:
                continue
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            for doc_id, tf in docs.items():
                norm = tf + self.k1 * (1 - self.b + self.b * self._lengths[doc_id] / avg)
                scores[doc_id] += idf * tf * (self.k1 + 1) / norm
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]
