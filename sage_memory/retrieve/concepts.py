"""Concept links for the associative walk: the topic words the best hits share with others.

A multi-hop question about a person ("what does Melanie do with her kids?") is answered by
several of that person's turns about related things, which share few words with the question
but share topic words with each other ("camping", "pottery", "kids"). Concept nodes are those
words: every memory is linked to the stems of its content words, and a stem to every memory
holding it. The adjacency is the scope's own lexical index (postings of stems), so no extra
structure is written: from the best hits, the walk steps to their concepts (the words the query
does not already say, weighted by the hits that hold them) and on to the other memories holding
them, read with one BM25 query of those words; a concept counts for less the more of its hits
hold it. When the query names a person, only that person's memories are reached: the named
speaker is the entity that links the turns, the concepts are the topic filter. What they reach
raises the walk's graph feature (``Weights.concept``), so it counts as much as the graph does.

Cost: one read of the seeds' texts, one lexical query of at most :data:`MAX_CONCEPTS` words and
one read of its hits, whatever the scope's size.
"""

from __future__ import annotations

from collections.abc import Mapping

from sage_memory.retrieve.features import author_match
from sage_memory.retrieve.query import QueryPlan
from sage_memory.retrieve.reader import GraphReader
from sage_memory.store.lexical import term_set, terms
from sage_memory.types import Memory, Scope
from sage_memory.words import QUERY_STOPWORDS, word_tokens

#: Seed memories whose concepts are read (the best of the walk's memory seeds).
CONCEPT_SEEDS = 6
#: Concepts looked up (the most seeded first), in one lexical query.
MAX_CONCEPTS = 8
#: Memories that query may return.
CONCEPT_HITS = 30
#: Shortest concept word: shorter ones are mostly chat fillers ("lol", "yay").
MIN_LETTERS = 4


def concept_words(text: str, skip: set[str]) -> list[str]:
    """The content words of a memory (speaker prefix, stopwords, names in ``skip``, numbers
    and short words left out), in order, each once."""
    body = text.split(":", 1)[1] if ":" in text[:60] else text
    out = [
        w
        for w in word_tokens(body)
        if w.isalpha() and len(w) >= MIN_LETTERS and w not in QUERY_STOPWORDS and w not in skip
    ]
    return list(dict.fromkeys(out))


def concept_scores(
    store: GraphReader,
    scope: Scope,
    plan: QueryPlan,
    seeds: Mapping[str, float],
) -> dict[str, float]:
    """Memories one concept away from the best memory ``seeds`` (memory id -> seed weight),
    scaled to the best (in [0, 1]); the seeds read are left out. Only the named person's
    memories when the query names one.

    A concept's weight is the seed weight of the seeds holding it; it hands that weight to the
    other memories holding it, divided by how many do (so a topic word two turns share says
    more than one a dozen share); a memory keeps the most one of its concepts hands it (a
    sum would favour near-copies of a seed, which share all its words and add nothing).
    """
    best = sorted(seeds, key=lambda m: -seeds[m])[:CONCEPT_SEEDS]
    if not best:
        return {}
    asked = set(word_tokens(plan.text)) | set(terms(plan.text))
    skip = asked | {w for name in plan.names for w in word_tokens(name)}
    weight: dict[str, float] = {}  # stem -> summed weight of the seeds holding it
    shown: dict[str, str] = {}  # stem -> the first word seen with it
    for m in store.get_memories(scope, best):
        for w in concept_words(m.text, skip):
            stem = next(iter(terms(w)), "")
            if stem and stem not in asked:
                weight[stem] = weight.get(stem, 0.0) + seeds[m.id]
                shown.setdefault(stem, w)
    chosen = sorted(weight, key=lambda k: (-weight[k], k))[:MAX_CONCEPTS]
    if not chosen:
        return {}
    hits = store.search_text(
        scope, " ".join(shown[k] for k in chosen), entity="memory", limit=CONCEPT_HITS
    )
    found = store.get_memories(scope, [i for i, _ in hits if i not in best])
    holders: dict[str, list[Memory]] = {k: [] for k in chosen}
    for m in found:
        held = term_set(m.text)
        for k in chosen:
            if k in held:
                holders[k].append(m)
    out: dict[str, float] = {}
    for k, held_by in holders.items():
        for m in held_by:
            if not plan.names or author_match(m, plan) > 0:
                out[m.id] = max(out.get(m.id, 0.0), weight[k] / len(held_by))
    top = max(out.values(), default=0.0) or 1.0
    return {i: v / top for i, v in out.items()}
