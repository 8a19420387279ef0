"""Stemming from several threads at once gives each word its own stem.

A search stems words on its helper thread (the lexical channels) while the main thread stems
the concept words of its best hits; one shared Snowball stemmer holds the word it works on, so
two threads at once mixed their words up (wrong stems, or an IndexError from inside it).
"""

from __future__ import annotations

import sys
import threading

from sage_memory.store import lexical


def test_threads_stemming_at_once_get_their_own_stems() -> None:
    # Made-up words with suffixes the stemmer strips, each stemmed once (the cache of stems
    # would hide a race on a repeated word).
    stems = ["harbor", "quill", "tamble", "vorn", "glisk", "pemmit", "drosk", "flenn"]
    endings = ["ing", "ed", "s", "ness", "ational", "ly", "ments", "izers"]
    words = [f"{a}{b}{n}x{e}" for a in stems for b in stems for n in range(12) for e in endings]
    expected = {w: lexical._stemmer().stemWord(w) for w in words}  # type: ignore[attr-defined]
    got: dict[str, str] = {}
    errors: list[BaseException] = []

    def work(part: list[str]) -> None:
        try:
            for w in part:
                got[w] = lexical.stem(w)
        except BaseException as exc:  # reported below, from the main thread
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(words[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert got == expected
