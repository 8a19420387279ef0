"""Names of entities: how one is shown, keyed and compared. Pure functions, no I/O.

Every stage and the engine use these, so "the same name" means the same thing everywhere. Each
idea has one function:

- :func:`display_name`: the name as shown, case kept ("The FastAPI" -> "FastAPI");
- :func:`display_key`: the extractor's key of a shown name, case folded, code kept intact
  (``df['amount'].sum()`` must not collide with ``df.amount.sum``);
- :func:`node_key`: both steps at once, from a raw name (the labelling convention of the
  extraction benchmark);
- :func:`match_key`: the looser form entity resolution compares: punctuation and leading
  articles ignored, aliases applied;
- the store's own exact lookup key is :func:`sage_memory.store.base.name_key`.

    >>> match_key("The  Pandas library!")
    'pandas library'
    >>> match_key("pd.read_csv") == match_key("pandas.read_csv")
    True
    >>> display_name("the pd.read_csv"), node_key("The FastAPI")
    ('pandas.read_csv', 'fastapi')
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
#: A chat turn's speaker label: "Caroline: ..." or "Dr. Lee: ..." (one to three capitalised
#: words); group 1 is the speaker's name. The retriever reads the author from it; write-time
#: salience leaves it out of the words it counts.
SPEAKER_LABEL = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2})\s*:\s")


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
    """Replace a token, or the longest aliased dotted prefix of it (``pd.read_csv``).

    The rest after the prefix must be a name, not a bare version number ("py.3" stays). A token
    without an alias comes back as written (case kept).
    """
    low = token.lower()
    if low in aliases:
        return aliases[low]
    parts = low.split(".")
    # Longest prefix first, so an alias such as "tf.keras" beats the shorter "tf".
    for cut in range(len(parts) - 1, 0, -1):
        prefix, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        if prefix in aliases and rest and not rest.isdigit():
            return f"{aliases[prefix]}.{rest}"
    return token


def match_key(name: str, aliases: Mapping[str, str] | None = None, *, builtin: bool = True) -> str:
    """The form entity resolution compares two names in.

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


# --- shown names and the extractor's keys --------------------------------------------------

# Private-use characters serve the extractor as placeholders; they never belong to a name.
_PRIVATE = re.compile("[\ue000-\uf8ff]")
_CODE_LIKE = re.compile(
    r"^[A-Za-z_][\w]*(?:(?:\.[A-Za-z_]\w*)|\[[^\]]*\]|\([^)]*\))+$|^[A-Za-z]\w*_\w+$|\(\)"
)
_END_PUNCT = " \t\n.,;:!?\"'`()[]{}<>*_-–—…"
_POSSESSIVE = re.compile(r"(?<=\w)(?:'s|s')(?=\s|$)")
_SPACES = re.compile(r"\s+")
_TOKEN_SPLIT = re.compile(r"(\s+)")
_LEADING_DET = re.compile(
    r"(?i)^(?:(?:the|a|an|this|that|these|those|my|your|our|their|his|her|its|some|every|each)\s+)+"
)


def strip_private(text: str) -> str:
    """Remove private-use characters so they can serve as placeholders."""
    return _PRIVATE.sub("", text)


def looks_like_code(name: str) -> bool:
    """True for ``pd.read_csv``, ``df['amount'].sum()``, ``open()``, ``total_sales``."""
    return bool(_CODE_LIKE.search(name.strip()))


def display_name(name: str, aliases: Mapping[str, str] | None = None) -> str:
    """A cleaned name that keeps its case: no leading article, aliases applied.

    ``aliases`` is a complete, lower-case table (see :func:`merge_aliases`); the built-in one
    when None.
    """
    table = BUILTIN_ALIASES if aliases is None else aliases
    text = _SPACES.sub(" ", unicodedata.normalize("NFKC", strip_private(name))).strip()
    if not text:
        return ""
    if looks_like_code(text) and " " not in text:
        return _alias_token(text, table)
    # keep the closing bracket of "used df['x'].sum()"; strip one that has no opener
    ends = _END_PUNCT.replace(")", "") if text.count("(") == text.count(")") else _END_PUNCT
    ends = ends.replace("]", "") if text.count("[") == text.count("]") else ends
    text = _LEADING_DET.sub("", text.strip(ends))
    text = _POSSESSIVE.sub("", text).strip(ends)
    whole = table.get(text.lower())
    if whole is not None:
        return whole
    parts = _TOKEN_SPLIT.split(text)
    return "".join(p if p.isspace() else _alias_token(p, table) for p in parts).strip()


def display_key(display: str) -> str:
    """The extractor's key of a name already cleaned by :func:`display_name` (case folded)."""
    key = unicodedata.normalize("NFKC", display.casefold())
    return key if looks_like_code(key) else _SPACES.sub(" ", key).strip(_END_PUNCT)


def node_key(name: str, aliases: Mapping[str, str] | None = None) -> str:
    """The key the rule extractor gives the node a raw name denotes.

    Unlike :func:`match_key`, the resolver's looser form, this keeps the brackets, quotes and
    parentheses of code (``df['amount'].sum()`` must not collide with ``df.amount.sum``) and
    strips possessives; both share the alias table.

    Lower case; no leading article ("the", "a", "an"; also demonstratives and possessive
    pronouns); possessive ``'s`` removed; punctuation stripped at the ends; spaces collapsed;
    aliases applied to a whole name or to whole tokens (``pd`` -> ``pandas``) and to the module
    prefix of a dotted name (``pd.read_csv`` -> ``pandas.read_csv``), never inside a token
    (``node.js`` stays). Code identifiers keep their brackets and quotes.

    Args:
        name: the surface form.
        aliases: extra aliases (short form -> canonical), merged over the built-in ones.

    Returns:
        The key, possibly empty when ``name`` held only punctuation or articles.
    """
    table = BUILTIN_ALIASES if aliases is None else merge_aliases(aliases)
    return display_key(display_name(name, table))
