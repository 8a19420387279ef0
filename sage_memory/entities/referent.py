"""Same name, same thing? The context check before a write-time merge. Pure functions.

Entity resolution (:mod:`sage_memory.entities.resolution`) matches names. A name match alone
is weak evidence when the name is ambiguous: "Java" the language and "Java" the island,
"Springfield, Illinois" and "Springfield, Massachusetts". Before a new mention is merged into
an existing node, the engine gathers what the new memory says around the mention and what the
node already stands for, and asks :func:`referent_check`:

- **agreeing evidence** (any one suffices): the mention shares a neighbour with the node (the
  same co-mentioned thing), or the new memory's text is close to one of the texts that
  support the node (cosine of memory embeddings at least ``CONTEXT_AGREES``). A shared label
  is not evidence: extractors label a name from the name itself ("Java" is a Tool in the
  island sentence too), and incompatible labels never reach this check;
- **disagreeing evidence**: the mention is qualified differently ("Springfield, Illinois"
  then "Springfield, Massachusetts": a capitalised qualifier after a comma, ending the
  clause): two things, whatever else agrees;
- **doubt**: the name is ambiguous (:func:`ambiguous_name`: a capitalised name that is also
  a common English noun, "Java", "Mercury", "Jaguar"), no evidence agrees, and the node is
  thinly attested (at most ``THIN_SUPPORT`` memories): a second sense of the name is as likely
  as a second mention, so the mention gets its own node. A well-attested node is the name's
  usual referent and keeps the mention; any other name ("Alice", "Berlin") is merged unless
  evidence disagrees, since a repeated proper name is nearly always a repeated mention.

A kept-apart mention is recorded on its node (``kept_apart_from``) with the reason; the
evolver's merge pass (``evolve/duplicates.py``) suggests the merge only once agreeing evidence
(a shared neighbour) appears. Nothing is lost either way, and ``merge`` joins them by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from sage_memory.entities.siblings import name_tokens

#: Cosine of memory embeddings (MiniLM) from which two texts speak of the same context.
CONTEXT_AGREES = 0.35
#: A node supported by more memories than this is the name's usual referent.
THIN_SUPPORT = 3
#: Supporting memories of a node compared with a new mention (the most recent ones).
CONTEXT_SAMPLE = 8


#: "Name, Qualifier" closing a clause: capitalised words after the comma, then punctuation or
#: the end ("Springfield, MA." but not "Bob, Alice and I").
_QUALIFIER = r"\s*,\s*((?:[A-Z][\w.'-]*)(?:\s+[A-Z][\w.'-]*){{0,3}})\s*(?=[.,;:!?)]|$)"


def qualifiers_in(text: str, name: str) -> set[str]:
    """Case-folded qualifiers that follow ``name`` after a comma in ``text``."""
    pattern = re.compile(r"(?<!\w)" + re.escape(name) + _QUALIFIER.format())
    return {m.group(1).casefold().rstrip(".") for m in pattern.finditer(text)}


@lru_cache(maxsize=4096)
def ambiguous_name(name: str) -> bool:
    """A one-word capitalised name that is also a common noun (the lexicon of lemminflect, a
    core dependency): "Java", "Mercury", "Apple" may each name two things."""
    words = name_tokens(name)
    if len(words) != 1 or len(words[0]) < 3 or not name[:1].isupper():
        return False
    from lemminflect import getAllLemmas

    return "NOUN" in getAllLemmas(words[0])


def ambiguous_pair(mention: str, node_name: str) -> bool:
    """Whether a mention and the node its name matched may be two senses of one word: either
    spelling is ambiguous (:func:`ambiguous_name`). "A python is a constrictor" matches the node
    "Python" (the language) through its lower-case spelling, which alone looks like a plain
    noun."""
    return ambiguous_name(mention) or ambiguous_name(node_name)


@dataclass(frozen=True, slots=True)
class ReferentCheck:
    """The verdict on merging a mention into a node of the same name.

    Attributes:
        merge: Whether the mention joins the node.
        reason: Which evidence decided ("shared neighbour", "context",
            "well attested", or "no agreeing evidence").
        context: The best cosine between the new memory and the node's memories (None
            when either had no vector).
    """

    merge: bool
    reason: str
    context: float | None = None


def referent_check(
    *,
    co_mentioned: Iterable[str],
    neighbours: Iterable[str],
    context: float | None,
    support: int,
    qualifiers: Iterable[str] = (),
    node_qualifiers: Iterable[str] = (),
    ambiguous: bool = True,
) -> ReferentCheck:
    """Whether a mention whose name matched a node is that node.

    Args:
        co_mentioned: Name keys of the other things the new memory mentions.
        neighbours: Name keys of the node's current neighbours.
        context: Best cosine between the new memory and the node's supporting memories.
        support: How many memories support the node.
        qualifiers: Qualifiers of the mention in the new memory (:func:`qualifiers_in`).
        node_qualifiers: Qualifiers seen with the node before.
        ambiguous: Whether the name may name two things (:func:`ambiguous_name`); when not,
            the mention merges unless evidence disagrees.
    """
    mine, theirs = set(qualifiers), set(node_qualifiers)
    if mine and theirs and not mine & theirs:
        return ReferentCheck(False, "different qualifier", context)
    if set(co_mentioned) & set(neighbours):
        return ReferentCheck(True, "shared neighbour", context)
    if context is not None and context >= CONTEXT_AGREES:
        return ReferentCheck(True, "context", context)
    if support > THIN_SUPPORT:
        return ReferentCheck(True, "well attested", context)
    if not ambiguous:
        return ReferentCheck(True, "unambiguous name", context)
    return ReferentCheck(False, "no agreeing evidence", context)


__all__ = [
    "CONTEXT_AGREES",
    "CONTEXT_SAMPLE",
    "THIN_SUPPORT",
    "ReferentCheck",
    "ambiguous_name",
    "ambiguous_pair",
    "qualifiers_in",
    "referent_check",
]
