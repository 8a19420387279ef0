"""Seed channels: where a search starts.

- dense: the nearest memories (and nodes) in the vector index;
- lexical: the store's full-text search (SQLite FTS5 BM25, or the in-memory BM25);
- entity linking: names in the query -> nodes, by exact name or alias, by fuzzy match of a
  query phrase against candidate names (rapidfuzz), and by the node channels above.

Each channel reads a bounded top-k; nothing here scans a scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.retrieve.reader import GraphReader, word_reads
from sage_memory.store.base import name_key
from sage_memory.types import Node, Scope, Vector
from sage_memory.words import QUERY_STOPWORDS

#: Ratio (0-100) from which a query phrase fuzzily names a node ("FastAPi" ~ "FastAPI").
FUZZY_CUTOFF = 88
#: Link score below which a candidate node is not taken as named by the query.
MIN_LINK = 0.35
#: The lexical channel scores this many times its seeds: its BM25 is a feature of every
#: candidate (a memory the dense channel found keeps the credit its words earn), not only of
#: the few it returns as seeds. Scoring is done for every document holding a query word
#: anyway; only reading the ids of more of them costs.
SCORED_PER_SEED = 10
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class LinkedNode:
    """A node the query names or is about, with a score in [0, 1] and how it was found."""

    node: Node
    score: float
    how: str


def dense_seeds(
    index: VectorIndex, scope: Scope, qvec: Vector, *, k: int
) -> list[tuple[str, float]]:
    """The nearest memories of the partition: ids with cosine similarity, best first."""
    return index.query(collection_name(scope.partition.key, "memory"), qvec, k)


@dataclass(frozen=True, slots=True)
class WordSeeds:
    """What the words of a query find without its vector: BM25 memories and named nodes.

    ``memories`` are the lexical seeds (best first); ``scored`` the longer BM25 list that they
    head, which gives candidates other channels found their lexical feature."""

    memories: list[tuple[str, float]]
    linked: list[LinkedNode]
    scored: list[tuple[str, float]] = field(default_factory=list)


def word_seeds(
    store: GraphReader,
    scope: Scope,
    query: str,
    *,
    phrases: tuple[str, ...],
    k: int,
    node_k: int = 10,
) -> WordSeeds:
    """Lexical memory seeds and the nodes the query names (exactly, fuzzily or by words).

    Needs no embedding, so a search runs it while the query is being embedded.
    """
    part = scope.partition
    scored, named, lexical = word_reads(
        store, scope, query, phrases, limit=k * SCORED_PER_SEED, node_limit=node_k
    )
    found: dict[str, LinkedNode] = {}
    keys = {name_key(p): p for p in phrases}
    for node in named:
        if node.only_mentioned():
            continue  # no fact was read about it: nothing of the graph to start from
        names = [node.name, *node.aliases]
        hit = next((keys[name_key(n)] for n in names if name_key(n) in keys), node.name)
        found[node.id] = LinkedNode(node, 1.0, f"named '{hit}'")
    lex_top = max((s for _, s in lexical), default=0.0) or 1.0
    lex = {i: s / lex_top for i, s in lexical}
    _score_candidates(store, part, query, phrases, found, lex, {})
    return WordSeeds(scored[:k], _best(found, node_k), scored)


def link_entities(
    store: GraphReader,
    index: VectorIndex,
    scope: Scope,
    query: str,
    *,
    phrases: tuple[str, ...],
    qvec: Vector,
    k: int = 10,
    words: WordSeeds | None = None,
) -> list[LinkedNode]:
    """Nodes of ``scope``'s partition that the query names, best first (at most ``k``).

    Exact names and aliases score 1; a fuzzy name match scores its ratio; candidates from the
    node text search score a mix of BM25 and the share of their name's words in the query.
    When words link nothing, the node vectors are searched instead (cosine similarity counts
    then): that costs a second ANN query, and names find what they find more precisely.
    """
    if words is None:
        words = word_seeds(store, scope, query, phrases=phrases, k=1, node_k=k)
    if words.linked:
        return words.linked
    part = scope.partition
    if not store.list_nodes(part, limit=1):
        return []
    found: dict[str, LinkedNode] = {}
    cos = dict(index.query(collection_name(part.key, "node"), qvec, k))
    _score_candidates(store, part, query, phrases, found, {}, cos)
    return _best(found, k)


def _best(found: dict[str, LinkedNode], k: int) -> list[LinkedNode]:
    return sorted(found.values(), key=lambda x: (-x.score, x.node.name))[:k]


def _score_candidates(
    store: GraphReader,
    part: Scope,
    query: str,
    phrases: tuple[str, ...],
    found: dict[str, LinkedNode],
    lex: dict[str, float],
    cos: dict[str, float],
) -> None:
    """Score the candidate nodes not linked by name yet, adding those that qualify."""
    todo = [i for i in dict.fromkeys([*lex, *cos]) if i not in found]
    if not todo:
        return
    # Loaded here, not with the module: most searches link their names by words and never
    # get this far, and rapidfuzz costs a command-line search about 8 ms of CPU to import.
    from rapidfuzz import fuzz, process

    words = _content_words(query)
    lowered = [p.casefold() for p in phrases]
    for node in store.get_nodes(part, todo):
        best = None
        for name in (node.name, *node.aliases):
            match = process.extractOne(
                name.casefold(), lowered, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF
            )
            if match is not None and (best is None or match[1] > best[1]):
                best = (match[0], match[1])
        if best is not None:
            found[node.id] = LinkedNode(node, 0.95 * best[1] / 100, f"fuzzy '{best[0]}'")
            continue
        name_words = _content_words(" ".join((node.name, *node.aliases)))
        cover = len(name_words & words) / len(name_words) if name_words else 0.0
        score = 0.4 * max(cos.get(node.id, 0.0), 0.0) + 0.3 * lex.get(node.id, 0.0) + 0.3 * cover
        if score >= MIN_LINK:
            how = "similar name" if cos.get(node.id, 0.0) >= lex.get(node.id, 0.0) else "name words"
            found[node.id] = LinkedNode(node, round(score, 4), how)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in QUERY_STOPWORDS}
