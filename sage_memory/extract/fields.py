"""Allergy lists in patient and intake records: "Patient: Ana Ruiz. Allergies: penicillin,
latex." states that Ana Ruiz is allergic to each listed thing, though no sentence of it has a
verb. A record names its subject in a field of its own ("Patient: ...", "Name: ...") or after
the form's title ("Intake form, Mr. Ruiz"); with neither, a record that says "patient" is
about "patient". The field labels and the values that list nothing ("none known", "NKDA") are
lexicon data (``allergy_fields``, ``none_listed``, ``record_subject_fields``).
"""

from __future__ import annotations

import re

from sage_memory.extract.lexicon import Lexicon

#: A capitalised word of a name, an initial ("J.") or a title ("Mr.").
_NAME_WORD = r"[A-Z][\w'-]*\.?"
_NAME = rf"{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,3}}"


def _labels(words: frozenset[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def record_subject(text: str, lex: Lexicon) -> str:
    """Whom a record is about: a name in a subject field or after a form's title, else
    "patient" when the record says so, else "" (no subject: no edge)."""
    fields = _labels(lex.words("record_subject_fields"))
    allergy = {w.split()[-1] for w in lex.words("allergy_fields")}
    for pattern in (
        rf"\b(?i:{fields})\s*:\s*({_NAME})",
        rf"\b(?i:form)\s*[,:\-—–]\s*({_NAME})",
    ):
        # the label in any case, the name capitalised ("Patient: the usual" names no one)
        for found in re.finditer(pattern, text):
            words = found.group(1).split()
            # a name stops before the next field's label ("Tomasz K. Allergies: ...")
            cut = next((k for k, w in enumerate(words) if w.lower().strip(".:") in allergy), None)
            words = words[:cut]
            if words and words[0][:1].isupper():
                return " ".join(words).rstrip(".")
    return "patient" if re.search(r"\bpatient\b", text, flags=re.IGNORECASE) else ""


def listed_allergies(text: str, lex: Lexicon) -> list[tuple[str, str]]:
    """(subject, allergen) for each item of each allergy field of the record ``text``."""
    fields = _labels(lex.words("allergy_fields"))
    lists = list(re.finditer(rf"\b(?:{fields})\s*:\s*([^.;:\n]+)", text, flags=re.IGNORECASE))
    if not lists:
        return []
    subject = record_subject(text, lex)
    if not subject:
        return []
    none = lex.words("none_listed")
    out: list[tuple[str, str]] = []
    for found in lists:
        value = re.sub(r"\([^)]*\)", " ", found.group(1))  # "gluten (mild)": a comment
        for item in re.split(r",|/|\band\b|&", value):
            name = " ".join(item.split()).strip(" -—–").lower()
            if not name or name in none or len(name.split()) > 4:
                continue
            if name.split()[0] in ("no", "not", "none"):
                continue
            out.append((subject, name))
    return out
