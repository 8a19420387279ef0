"""Name normalisation shared by every extractor and by entity resolution.

This is the one canonical :func:`normalize_name`: the rule extractor (``extract/text.py``) and
the resolver (``extract/resolve.py``) both import it, so "the same name" means the same thing
everywhere. Pure functions, no I/O.

    >>> normalize_name("The  Pandas library!")
    'pandas library'
    >>> normalize_name("pd.read_csv") == normalize_name("pandas.read_csv")
    True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

#: Short forms people (and LLMs) use for well-known tools. Keys and values are lower case.
#: ``ExtractConfig.aliases`` is merged over these; a user alias wins on conflict.
BUILTIN_ALIASES: Mapping[str, str] = {
    "pd": "pandas",
    "np": "numpy",
    "k8s": "kubernetes",
    "js": "javascript",
    "ts": "typescript",
    "tf": "tensorflow",
    "sklearn": "scikit-learn",
    "plt": "matplotlib.pyplot",
    "py": "python",
}

#: Leading words that do not change which entity a name denotes ("the Beatles" = "Beatles").
#: Only leading ones are dropped: "vitamin a" must keep its "a".
ARTICLES: frozenset[str] = frozenset({"the", "a", "an"})

# Characters that stay inside a token: word characters plus the punctuation that is part of
# technical names ("c++", "c#", "node.js", "scikit-learn", "read_csv").
_NOT_TOKEN = re.compile(r"[^\w.+#-]+")
# Punctuation that only decorates a token's edges ("pandas." at a sentence end, "-x-").
_EDGE_PUNCT = ".-"


def merge_aliases(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The built-in aliases with ``extra`` merged over them, keys and values lower-cased.

    Call once and pass the result as ``aliases=`` with ``builtin=False`` to skip the merge on a
    hot path.
    """
    merged = dict(BUILTIN_ALIASES)
    if extra:
        merged.update({_fold(k).strip(): _fold(v).strip() for k, v in extra.items()})
    return merged


def _fold(text: str) -> str:
    # NFKC turns full-width letters and ligatures into plain ones; casefold beats lower() on
    # letters such as the German sharp s.
    return unicodedata.normalize("NFKC", text).casefold()


def _alias_token(token: str, aliases: Mapping[str, str]) -> str:
    """Replace a token, or the longest aliased dotted prefix of it (``pd.read_csv``)."""
    if token in aliases:
        return aliases[token]
    if "." not in token:
        return token
    parts = token.split(".")
    # Longest prefix first, so an alias such as "tf.keras" beats the shorter "tf".
    for cut in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in aliases:
            return ".".join([aliases[prefix], *parts[cut:]])
    return token


def normalize_name(
    name: str, aliases: Mapping[str, str] | None = None, *, builtin: bool = True
) -> str:
    """The comparison form of an entity name.

    Steps: Unicode NFKC + casefold; apostrophes removed ("don't" -> "dont"); any other
    punctuation except ``. + # - _`` inside a token becomes a space; leading articles dropped;
    aliases applied to the whole name, then per token and on dotted prefixes, so
    ``pd.read_csv`` and ``pandas.read_csv`` compare equal.

    Args:
        name: The raw name, as written in text or proposed by an LLM.
        aliases: Extra aliases (short form -> canonical form), typically
            ``ExtractConfig.aliases``; merged over :data:`BUILTIN_ALIASES`.
        builtin: Merge the built-in aliases. Pass ``False`` together with the output of
            :func:`merge_aliases` to avoid re-merging for every name in a loop.

    Returns:
        The normalised name; ``""`` when nothing name-like is left.
    """
    table: Mapping[str, str]
    if builtin:
        table = merge_aliases(aliases) if aliases else BUILTIN_ALIASES
    else:
        table = aliases or {}

    text = _fold(name).replace("'", "").replace("\u2019", "")
    tokens = [t.strip(_EDGE_PUNCT) for t in _NOT_TOKEN.sub(" ", text).split()]
    tokens = [t for t in tokens if t]
    while len(tokens) > 1 and tokens[0] in ARTICLES:
        tokens.pop(0)
    if not tokens:
        return ""

    whole = " ".join(tokens)
    if whole in table:  # multi-word aliases ("big apple" -> "new york city")
        return table[whole]
    return " ".join(_alias_token(t, table) for t in tokens)
