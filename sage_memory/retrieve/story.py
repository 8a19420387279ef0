"""Whose story a structure question asks about, and which stated links belong to it.

Near-twin stories in one scope share task names ("build the dashboards" in two teams'
plans), so one node carries the edges of several stories. A question that names its story
("Team Orca", "the Okoros") wants the links its own story states: a link belongs to the story
when a memory stating it names the story.

The story's words are the question's proper names, less a capitalised function word that
only starts the question ("Before", "Per", "Trace": the notes do not write it as a name)
and less the commoner ones: a title word many
stories use ("Team") is told apart from the distinctive name by how many memories hold it
(a bounded lexical count per name, a few names per question).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from sage_memory.retrieve import structure as st
from sage_memory.retrieve.query import QueryPlan
from sage_memory.retrieve.reader import GraphReader
from sage_memory.types import Edge, Scope
from sage_memory.words import word_tokens

#: Capitalised at the start of a question without naming anything: prepositions,
#: quantifiers and list requests (a closed class of words, no domain's nouns).
OPENERS = frozenset(
    (
        "before",
        "after",
        "per",
        "everything",
        "anything",
        "all",
        "every",
        "each",
        "list",
        "name",
        "since",
        "until",
        "during",
        "across",
        "within",
        "without",
        "among",
        "between",
        "about",
        "above",
        "below",
        "under",
        "over",
        "from",
        "with",
        "give",
        "show",
        "tell",
    )
)
#: Memories counted per name (a name held by more is common anyway).
COUNT_LIMIT = 100
#: Memories read to see that the notes write a word as a name.
CHECKED = 5
#: A name is a story word when at most this many times as common as the rarest one.
COMMONER = 2.0
#: Memories of an edge read to see whether it is told in the story (its latest ones).
MEMORIES_PER_EDGE = 3


@dataclass
class Story:
    """The stems that name the asked story (empty: the question names none)."""

    words: frozenset[str] = frozenset()
    _told: dict[str, bool] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.words)

    def names(self, text: str) -> bool:
        """Whether ``text`` names the story."""
        return bool(self.words & set(st.stems(text)))

    def told(self, store: GraphReader, scope: Scope, edges: Sequence[Edge]) -> set[str]:
        """Ids of ``edges`` some memory of which names the story (cached per edge)."""
        todo = [e for e in edges if e.id not in self._told]
        if todo:
            ids = {m for e in todo for m in e.memory_ids[-MEMORIES_PER_EDGE:]}
            named = {m.id for m in store.get_memories(scope, sorted(ids)) if self.names(m.text)}
            for e in todo:
                self._told[e.id] = any(m in named for m in e.memory_ids[-MEMORIES_PER_EDGE:])
        return {e.id for e in edges if self._told[e.id]}


def story_of(
    store: GraphReader, scope: Scope, plan: QueryPlan, subject_words: Collection[str] = ()
) -> Story:
    """The story ``plan`` names (its subject's own words are not the story's)."""
    said: dict[str, str] = {}  # stem -> the word as the question says it
    for name in plan.names:
        for word in word_tokens(name):
            stem = next(iter(st.stems(word)), "")
            if stem and word not in OPENERS and stem not in subject_words and not word.isdigit():
                said.setdefault(stem, word)
    held: dict[str, int] = {}
    for stem, word in said.items():
        ids = [i for i, _ in store.search_text(scope, word, limit=COUNT_LIMIT)]
        if _named_in(store, scope, ids[:CHECKED], word):
            held[stem] = len(ids)
    if not held:
        return Story()
    rarest = min(held.values())
    return Story(frozenset(w for w, n in held.items() if n <= COMMONER * rarest))


def _named_in(store: GraphReader, scope: Scope, ids: Sequence[str], word: str) -> bool:
    """Whether some of the memories ``ids`` write ``word`` as a name: capitalised inside a
    sentence, or with a capital past its first letter ("PyCoast", "RC"). A word a question
    capitalises only because it opens a sentence ("Trace the chain ...") is not one."""
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    for m in store.get_memories(scope, list(ids)):
        for hit in pattern.finditer(m.text):
            said = hit.group(0)
            if any(c.isupper() for c in said[1:]):
                return True
            opens = (
                not m.text[: hit.start()].strip() or m.text[: hit.start()].rstrip()[-1] in ".!?:"
            )
            if said[0].isupper() and not opens:
                return True
    return False
