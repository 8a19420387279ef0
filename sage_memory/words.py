"""Words of a query: the tokens and stopwords every lexical channel agrees on.

The in-memory BM25 index, SQLite's FTS5 search and the retriever's word seeds and query
reading all take their terms from here, so they agree on which words of a query count. Pure
functions, no I/O; the bottom layer, beside :mod:`sage_memory.types`.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
#: Texts (memories, sentences, words) whose analysis a search reads keeps for the next read:
#: a search asks for the words of the same few dozen candidates many times, and the next
#: search mostly for the same memories again. Some thousands of short texts: a few MB.
TEXT_CACHE = 8192
#: Words too common to help a lexical match; they only add noise and cost.
QUERY_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def word_tokens(text: str) -> list[str]:
    """Lower-case word tokens."""
    return _WORD.findall(text.casefold())


def query_terms(text: str, limit: int = 64) -> list[str]:
    """Distinct meaningful words of a query; all words when every one is a stopword."""
    words = word_tokens(text)
    kept = list(dict.fromkeys(w for w in words if w not in QUERY_STOPWORDS))
    return (kept or list(dict.fromkeys(words)))[:limit]
