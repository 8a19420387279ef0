"""Machine text: log records, code definitions and docstrings, which state no fact.

docs/relations.md leaves boilerplate and generic docstrings unlabelled; a log record written by
a program ("2026-11-28 03:14:07 INFO tick completed") is the same kind of text. What marks them
is form, not words of a fact: a clock time or a severity level opening the line, a definition
keyword before a call signature, a docstring delimiter or field label. The level and field names
are closed lists of the lexicon (``log_levels``, ``docstring_fields``).
"""

from __future__ import annotations

import re

from sage_memory.extract.lexicon import Lexicon

#: A clock time with seconds ("03:14:07", "10:22:31.118") near the start of a line.
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b")
#: "def name(", "class Name(" / "class Name:", "function name(": a code definition.
_DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|fn|func)\s+[A-Za-z_]\w*\s*[(:]")
#: A docstring or block comment delimiter opening the line.
_DOC_OPEN = re.compile(r'^\s*(?:"""|\'\'\'|/\*\*)')
#: A docstring field: "Returns:", ":param x:", "@return", "Param `x`:" (a label, then a colon).
_FIELD = re.compile(r"^\s*[:@]?([A-Za-z]+)\b[^:.!?]{0,30}:")
_FIELD_TAG = re.compile(r"^\s*@([A-Za-z]+)\b")
#: The opening words of a line where a severity level or a clock time marks a log record.
_LOG_WINDOW = 4


def opens_code(line: str, lex: Lexicon) -> bool:
    """A code definition, a docstring opening or a docstring field ("Returns:", ":param x:"):
    the memory's rest is code documentation."""
    if _DEFINITION.match(line) or _DOC_OPEN.match(line):
        return True
    found = _FIELD.match(line) or _FIELD_TAG.match(line)
    return bool(found and found.group(1).lower() in lex.words("docstring_fields"))


def log_record(line: str, lex: Lexicon) -> bool:
    """A program's log record: a severity level in capitals or a clock time with seconds among
    the line's first words ("WARN retrying ...", "2026-11-30T12:03:44Z INFO ...")."""
    opening = " ".join(line.split()[:_LOG_WINDOW])
    levels = lex.words("log_levels")
    if any(w.isupper() and w.lower() in levels for w in re.findall(r"[A-Za-z]+", opening)):
        return True
    return bool(_CLOCK.search(opening))
