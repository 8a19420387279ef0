"""The lexical stemmer loads Snowball's English stemmer alone and stems as the package does.

``snowballstemmer``'s own ``__init__`` imports all of its languages; the store loads only the
English module (store/lexical.py), which must give the stems ``snowballstemmer.stemmer("english")``
gives.
"""

from __future__ import annotations

import json
import subprocess
import sys

import snowballstemmer  # type: ignore[import-untyped]

from sage_memory.store import lexical

_WORDS = [
    f"{stem}{ending}"
    for stem in ("harbor", "generous", "happi", "relat", "condition", "caress", "pony", "sky")
    for ending in ("", "s", "es", "ing", "ed", "ly", "ness", "ational", "ization", "fulness")
]


def test_the_english_module_alone_stems_as_the_package_does() -> None:
    ours = lexical._english_module().EnglishStemmer()
    theirs = snowballstemmer.stemmer("english")
    assert [ours.stemWord(w) for w in _WORDS] == [theirs.stemWord(w) for w in _WORDS]


def test_stemming_does_not_import_every_language() -> None:
    probe = (
        "import json, sys\n"
        "from sage_memory.store.lexical import stem\n"
        f"stems = [stem(w) for w in {_WORDS!r}]\n"
        "print(json.dumps({'stems': stems, 'modules': sorted(sys.modules)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["stems"] == [snowballstemmer.stemmer("english").stemWord(w) for w in _WORDS]
    languages = [m for m in got["modules"] if m.startswith("snowballstemmer")]
    assert languages == []
