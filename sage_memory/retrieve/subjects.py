"""Memories about another subject: a note on Bob is no answer to a question about Alice.

A query that names a person or an organisation asks about that one. A candidate memory that
does not name it, but names another entity of the same kind, is about someone else: "Bob
lives in Rome" matches "where does Alice live?" on every word but the one that matters. In a
small folder the asked name is in most memories, so BM25 gives it almost no weight and such
a memory can outrank the asked person's own statements; in a scope holding near-twin stories
(two teams sharing task names) the other team's note outranks the asked team's.

Two tests. From the graph: the entities each memory supports (by provenance) include another
person or organisation and not the asked one. From the text, for the names no extractor made
a node of (a team named in a note's heading): the query names a proper-name phrase ("Larch
Rowing Club") and the memory names another one with the same head word ("Fern Rowing Club":
the head of a name tells its kind) and none of the words that set the asked one apart.

Neither test applies to a question that describes another entity by a relative clause ("who
directed the film that was shot in Leland?", "the actress who played ..."): it names one
entity to reach another, so a memory about a different person or team of that kind is the
next hop, not someone else's answer. Nor is a name the query itself says a rival of another
it says ("the Harbour Trust or the Dock Union?").

The graph test reads no more than the search has read (the nodes it linked, expanded and
walked, with the memories that support them) and spares a memory whose text names the asked
one by a part of its name ("Alice" for "Alice Moreau", even when the extractor made that a
node of its own). The penalty scales with how specific
the asked entity is: a speaker of a long chat (a hub) is named by hundreds of memories and the
other speaker's turns are part of the same conversation, so it costs them little.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from sage_memory.retrieve.mentions import phrases
from sage_memory.retrieve.seeds import LinkedNode
from sage_memory.retrieve.walk import specificity
from sage_memory.types import Edge, Memory, Node
from sage_memory.words import QUERY_STOPWORDS, word_tokens

#: Kinds of entity whose facts do not carry over to another of the kind: a person's address
#: is not another person's, a team's plan is not another team's. (A place or a tool named
#: beside another is not a different answer: "Rome or Milan?" asks about both.)
SUBJECT_LABELS = frozenset({"Person", "Organization"})
#: How a node was linked for it to count as named by the query (not only similar to it).
NAMED_HOW = ("named", "fuzzy")
#: The penalty a memory about another subject takes from its fused score, at full
#: specificity: as much as a memory whose facts were all superseded (``Weights.expired``),
#: since it answers the question as little.
OTHER_SUBJECT_PENALTY = 0.3
#: A relative clause: a word, then a relative pronoun ("the film that was shot", "a singer
#: whose father"). The word before must not be a stopword, so a question opening with
#: "which" or "who", or a "that" after "is"/"so", is not one.
_RELATIVE_CLAUSE = re.compile(r"\b([a-z][\w'’-]*)\s+(?:who|whom|whose|which|that)\b")


def describes_another(query: str) -> bool:
    """Whether the query reaches for an entity it does not name through a relative clause
    (a noun, then who/whom/whose/which/that): then what it names is where the hop starts."""
    return any(
        m.group(1) not in QUERY_STOPWORDS for m in _RELATIVE_CLAUSE.finditer(query.casefold())
    )


def asked_subjects(linked: Sequence[LinkedNode], query: str = "") -> list[Node]:
    """The persons and organisations the query names (by name, alias or a fuzzy match).

    A fuzzy match of a part of a longer name the query says is not that name: "Team" in
    "Team Heron's budget" is close to a node "teams", but the query names Team Heron, and
    taking "teams" for the asked subject would make every note on a person someone else's.
    """
    names = [set(_content(p)) for p in phrases(query)] if query else []
    return [
        ln.node
        for ln in linked
        if ln.node.label in SUBJECT_LABELS
        and ln.how.startswith(NAMED_HOW)
        and not (ln.how.startswith("fuzzy") and _part_of_name(ln.how, names))
    ]


def _part_of_name(how: str, names: Sequence[set[str]]) -> bool:
    """Whether the words a link matched (``how``: "fuzzy 'team'") are only a part of one of
    the query's proper names (``names``, each as its content words)."""
    matched = set(_content(how.partition("'")[2].rstrip("'")))
    return bool(matched) and any(matched < name for name in names)


def other_subject_penalty(
    query: str,
    linked: Sequence[LinkedNode],
    known: Iterable[Node],
    memories: Mapping[str, Memory],
    mids: Sequence[str],
    supports: Mapping[str, Sequence[str]],
    edges: Iterable[Edge] = (),
) -> dict[str, float]:
    """Penalty per candidate (absent = none) for being about another subject than asked.

    A memory is about another subject when, for some asked entity A, it supports another
    entity B of A's kind and neither supports A nor names a word of A's name that B's name
    lacks. Which entities a memory supports is ``supports`` (memory id -> node ids: the
    store's ``memory_nodes`` of the candidates) among ``known``, the nodes the search has
    read already (linked, expanded, walked: the walk steps from the best hits to their
    entities), so the test reads no node of its own and its cost follows the candidates,
    not how many memories a node has; the text test is
    :func:`names_rival`. An entity the asked one is related to by a fact in ``edges`` (the
    facts the search read around the query's names) is no rival: a memory about the company
    that owns the asked one, or the singer of the asked band, is the next hop of a multi-hop
    question, not another subject's answer to this one.
    """
    if describes_another(query):
        return {}
    out = _rival_names(query, memories, mids)
    asked = asked_subjects(linked, query)
    if not asked or not mids:
        return out
    asked_ids = {a.id for a in asked}
    labels = {a.label for a in asked}
    related = {
        other
        for e in edges
        for end, other in ((e.source_id, e.target_id), (e.target_id, e.source_id))
        if end in asked_ids
    }
    nodes: dict[str, Node] = {}
    for node in known:
        if node.label in labels or node.id in asked_ids:
            nodes[node.id] = node
    for mid in mids:
        own = {n for n in supports.get(mid, ()) if n in nodes}
        memory = memories.get(mid)
        if memory is None or not own or own & asked_ids:
            continue
        text = set(word_tokens(memory.text))
        worst = 0.0
        for a in asked:
            rivals = [nodes[n] for n in own if nodes[n].label == a.label and n not in related]
            if rivals and not any(_names_part(a, b, text) for b in rivals):
                worst = max(worst, specificity(a))
        if worst > 0:
            out[mid] = max(out.get(mid, 0.0), OTHER_SUBJECT_PENALTY * worst)
    return out


def _names_part(asked: Node, rival: Node, text: set[str]) -> bool:
    """Whether ``text`` (a memory's words) names ``asked`` by a word of its names that the
    rival's names lack: "Thandi" for "Thandi Mokoena", not "Bee" for "Clover Bee Co-op"
    beside "Heath Bee Co-op". Or ``rival`` is only a part of the asked name (the same one)."""
    own = _name_words(asked)
    theirs = _name_words(rival)
    if theirs and theirs <= own:
        return True
    return bool((own - theirs) & text)


def _name_words(node: Node) -> set[str]:
    return {
        w for n in (node.name, *node.aliases) for w in word_tokens(n) if w not in QUERY_STOPWORDS
    }


def _rival_names(
    query: str, memories: Mapping[str, Memory], mids: Sequence[str]
) -> dict[str, float]:
    """The text test over the candidates (see :func:`names_rival`)."""
    mids = [m for m in mids if m in memories]
    told = names_rival(query, [memories[m].text for m in mids])
    return {m: OTHER_SUBJECT_PENALTY for m, other in zip(mids, told, strict=True) if other}


def names_rival(query: str, texts: Sequence[str]) -> list[bool]:
    """Per text: whether it names a rival of a proper-name phrase of the query (same head or
    title word, other distinctive words) and no distinctive word of the asked one."""
    asked = [name for p in phrases(query) if len(name := _content(p)) >= 2]
    if not asked:
        return [False] * len(texts)
    out: list[bool] = []
    for text in texts:
        held = set(word_tokens(text))
        # A name the query says is asked too, never a rival of the other asked names.
        named = [n for p in _all_phrases(text) if (n := _content(p)) not in asked]
        out.append(
            any(
                (rivals := [q for q in named if _same_kind(q, want)])
                and not any((set(want) - set(q)) & held for q in rivals)
                for want in asked
            )
        )
    return out


def _same_kind(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two different names of one kind: one shared word that ends them (the head of the name:
    "Larch Rowing Club", "Fern Rowing Club") or one shared title word that starts them ("Team
    Larch", "Team Fern"), the rest of each its own. Names sharing more than the affix ("Larch
    Lane Club" and "Larch Lane WhatsApp") may be one name said two ways: no rivals."""
    if len(a) < 2 or len(b) < 2 or a == b:
        return False
    if a[-1] == b[-1]:
        rest_a, rest_b = _tail_apart(a, b)
    elif a[0] == b[0] and a[1] != b[1]:
        if abbreviates(a[1:], b[1:]) or abbreviates(b[1:], a[1:]):
            return False  # "Elm GC" is "Elm Garden Club" said short, not a rival
        rest_a, rest_b = set(a[1:]), set(b[1:])
    else:
        return False
    return bool(rest_a) and bool(rest_b) and not rest_a & rest_b


def abbreviates(short: Sequence[str], long: Sequence[str]) -> bool:
    """Whether the one word ``short`` is ``long`` said by its initials, one letter per word:
    "gc" for "garden club", "hq" for "head of quality" (a stopword may be left out: "of" has
    no letter in "HQ")."""
    letters = "".join(short)
    if len(short) != 1 or len(letters) < 2 or len(long) < 2:
        return False
    full = "".join(w[0] for w in long)
    bare = "".join(w[0] for w in long if w not in QUERY_STOPWORDS)
    return letters in {full, bare}


def _tail_apart(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """The words before the longest shared ending of two names."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return set(a[: len(a) - n]), set(b[: len(b) - n])


def _all_phrases(text: str) -> list[str]:
    """Proper-name phrases of ``text``, its heading included ("Notes, Fern Rowing Club: ...":
    the heading often says whose note it is, and :func:`phrases` leaves a heading out)."""
    head, colon, _ = text.partition(":")
    return [*phrases(text), *(phrases(head) if colon else [])]


def _content(phrase: str) -> tuple[str, ...]:
    """A name's words without stopwords or a possessive ("Fern Club's" is "Fern Club")."""
    bare = re.sub(r"['’]s\b", "", phrase)
    return tuple(w for w in word_tokens(bare) if w not in QUERY_STOPWORDS)
