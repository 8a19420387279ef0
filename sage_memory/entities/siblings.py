"""Siblings: two names of one family (``PosixPath`` / ``WindowsPath``), not one thing twice.

Names of siblings look alike to string similarity and embeddings because they share most of
their words; what tells them apart is the one token where they differ. When the differing
token of each side is a wholly other word (``Posix`` / ``Windows``, ``Real`` / ``Complex``,
``Iterable`` / ``Iterator``), the names denote two members of a family. When it is the same
word misspelt or inflected (``Corporatoin`` / ``Corporation``, ``colour`` / ``color``,
``Path`` / ``Paths``), they may well be one thing. Pure functions, no word lists.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^0-9a-z]+")
#: Tokens shorter than this differ "wholly" too easily ("a" / "b"): a typo needs room.
_MIN_TYPO_LENGTH = 4


def name_tokens(name: str) -> list[str]:
    """The words of a name, camelCase and dotted paths split, case folded."""
    spaced = _CAMEL.sub(" ", name)
    return [t for t in _SPLIT.split(spaced.casefold()) if t]


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    two adjacent letters each cost one (so "Corporatoin" is one edit from "Corporation")."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def same_word(a: str, b: str) -> bool:
    """Whether two tokens are one word spelt two ways: equal, one a prefix of the other
    (``path`` / ``paths``, ``catalog`` / ``catalogue``), or one edit apart when long enough."""
    if a == b or a.startswith(b) or b.startswith(a):
        return True
    if min(len(a), len(b)) < _MIN_TYPO_LENGTH:
        return False
    return edit_distance(a, b) <= 1 + (min(len(a), len(b)) >= 10)


def distinctive_difference(a: str, b: str) -> tuple[str, str] | None:
    """The one differing token of each name when the names share their other words and those
    two tokens are not one word spelt two ways; None otherwise.

    ``numbers.Real`` / ``numbers.Complex`` -> ("real", "complex"); ``Acme Corporatoin`` /
    ``Acme Corporation`` -> None (a typo); ``deep learning`` / ``learning`` -> None (a
    modifier: the parent/child check is another matter).
    """
    ta, tb = Counter(name_tokens(a)), Counter(name_tokens(b))
    only_a, only_b = list((ta - tb).elements()), list((tb - ta).elements())
    if len(only_a) != 1 or len(only_b) != 1 or not (ta & tb):
        return None
    x, y = only_a[0], only_b[0]
    if same_word(x, y) or x.isdigit() or y.isdigit():
        return None
    return x, y


def are_siblings(names_a: Iterable[str], names_b: Iterable[str]) -> bool:
    """Whether the two nodes' names look like two members of one family: some pair of names
    shares words, and every such pair differs in one distinctive token. An identical name
    (once split and case folded) on both sides says they are not siblings."""
    pairs = [(x, y) for x in names_a for y in names_b]
    if any(name_tokens(x) == name_tokens(y) for x, y in pairs):
        return False
    comparable = [(x, y) for x, y in pairs if set(name_tokens(x)) & set(name_tokens(y))]
    return bool(comparable) and all(distinctive_difference(x, y) for x, y in comparable)
