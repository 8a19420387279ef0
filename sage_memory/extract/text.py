"""Pure text helpers for the rule extractor: sentences, code identifiers, noun phrases.

Nothing here knows about graphs. The functions are small, total (they never raise on odd text)
and use only pre-compiled regular expressions and a few hand-written word lists, so the
offline extractor stays fast and dependency-free. The word lists are deliberately short: they
only need to tell a function word or a common verb from the content words of a name.

Masked text: the extractor replaces code identifiers, quoted terms and error messages by
placeholders (``\\ue000<n>\\ue001``) and time expressions by ``\\ue002`` before it runs its
patterns, so a dot in ``pandas.read_csv`` or the words inside ``relation 'x' does not exist``
cannot confuse a sentence or a relation pattern. Private-use characters cannot occur in user
text because :func:`~sage_memory.entities.names.strip_private` removes them first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from sage_memory.extract.timeparse import TimeMention, resolve_times

PH_OPEN = "\ue000"
PH_CLOSE = "\ue001"
TIME_MARK = "\ue002"
PLACEHOLDER_RE = re.compile(PH_OPEN + r"(\d+)" + PH_CLOSE)


class Segment(NamedTuple):
    """A span of a text: offsets into it and the text itself."""

    start: int
    end: int
    text: str


class Mention(NamedTuple):
    """A typed span: ``kind`` is error, call, dotted, file, var, command, construct, quoted,
    userid or proper."""

    start: int
    end: int
    text: str
    kind: str


def placeholder(index: int) -> str:
    """The masking token for the ``index``-th entity of a sentence."""
    return f"{PH_OPEN}{index}{PH_CLOSE}"


# --- word lists ---------------------------------------------------------------------------


def word_set(text: str) -> frozenset[str]:
    """The words of a space-separated list (keeps the long lists below compact)."""
    return frozenset(text.split())


DETERMINERS = word_set(
    "the a an this that these those my your our their his her its some any every each all both "
    "either neither no another such what which whose"
)
PRONOUNS = word_set(
    "i me my mine myself we us our ours you your yours he him his she her hers they them their "
    "theirs it its this that these those there here who whom someone something everyone "
    "everything anyone anything one"
)
FIRST_PERSON = word_set("i me my myself we us our ourselves")
PREPOSITIONS = word_set(
    "about above across after against along among around as at before behind below beneath "
    "beside besides between beyond by despite down during except for from in inside into like "
    "near off on onto out outside over past per since than through throughout till to toward "
    "towards under until unto up upon via with within without versus vs"
)
CONJUNCTIONS = word_set(
    "and or but nor so yet because although though while whereas if unless when whenever where "
    "wherever whether once then also plus therefore however otherwise meanwhile that which who"
)
AUXILIARIES = word_set(
    "am is are was were be been being has have had having do does did will would shall should "
    "can could may might must ought gonna gotta wanna not never"
)
ADVERBS = word_set(
    "now still just only really also already always usually often sometimes never ever "
    "currently mostly mainly typically generally actually probably definitely totally "
    "absolutely finally first then again anymore too very quite rather pretty so lately "
    "recently automatically later soon yet even maybe perhaps basically literally"
)
FILLERS = word_set(
    "hey hi hello ok okay lol hmm um uh yeah yes no thanks thank please pls wow oh well note "
    "quick btw fyi"
)
TIME_WORDS = word_set(
    "yesterday today tomorrow tonight monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december "
    "since last next morning evening afternoon weekend"
)
STOPWORDS = DETERMINERS | PRONOUNS | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES | ADVERBS
# Base forms of common verbs; inflections are generated below. Noun/verb words (design, build,
# test, return...) are listed too: the scanners treat only *inflected* forms as hard
# boundaries, so "the database design" stays one name.
VERB_BASES = word_set(
    "add ask avoid bake become begin believe book break bring build buy call cause change check "
    "choose clean clear close collect come compile compute configure contain convert create "
    "debug decide decode define delete depend deploy design develop do drink drop eat enable "
    "enjoy ensure fail feel fetch find finish fix follow get give go hate have help hire hold "
    "include install keep know launch lead learn leave let like live load look lose love make "
    "mean meet merge migrate miss move need open order paint parse pass pay pick pin plan plot "
    "prefer prepare publish pull push put query read record refactor register release remove "
    "rename replace require resolve restart return review run save say see seem sell send serve "
    "set ship show sign sketch solve sort start stop store sum switch take talk tell test think "
    "train try turn update upgrade use wait want watch work write"
)
_IRREGULAR = {
    "become": ("became",), "begin": ("began", "begun"), "break": ("broke", "broken"),
    "bring": ("brought",), "build": ("built",), "buy": ("bought",), "come": ("came",),
    "choose": ("chose", "chosen"), "do": ("did", "done", "does"), "drink": ("drank", "drunk"),
    "eat": ("ate", "eaten"), "feel": ("felt",), "find": ("found",), "get": ("got", "gotten"),
    "give": ("gave", "given"), "go": ("went", "gone", "goes"), "have": ("had", "has"),
    "hold": ("held",), "keep": ("kept",), "know": ("knew", "known"), "lead": ("led",),
    "leave": ("left",), "lose": ("lost",), "make": ("made",), "mean": ("meant",), "meet": ("met",),
    "pay": ("paid",), "run": ("ran",), "say": ("said",), "see": ("saw", "seen"), "sell": ("sold",),
    "send": ("sent",), "show": ("shown",), "take": ("took", "taken"), "tell": ("told",),
    "think": ("thought",), "write": ("wrote", "written"),
}  # fmt: skip


def _inflect(base: str) -> set[str]:
    forms = {base, *_IRREGULAR.get(base, ())}
    if base.endswith("e"):
        forms |= {base + "s", base + "d", base[:-1] + "ing"}
    elif base.endswith("y") and base[-2:-1] not in "aeiou":
        forms |= {base[:-1] + "ies", base[:-1] + "ied", base + "ing"}
    elif base.endswith(("s", "x", "ch", "sh")):
        forms |= {base + "es", base + "ed", base + "ing"}
    else:
        forms |= {base + "s", base + "ed", base + "ing"}
        if len(base) <= 4 and re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", base):
            forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return forms


VERBS = frozenset(f for b in VERB_BASES for f in _inflect(b))
#: Inflected verb forms that are hard noun-phrase boundaries (plural nouns excepted).
INFLECTED_VERBS = frozenset(VERBS - VERB_BASES) - word_set(
    "changes results returns orders updates builds plans reviews records tests uses files needs "
    "calls sets starts works signs loads drops runs ships pins sums sorts turns releases"
)
#: Well-known tools, libraries and frameworks with the label they get.
KNOWN_TOOLS: dict[str, str] = dict.fromkeys(
    word_set(
        "python javascript typescript rust go java kotlin swift ruby php sql bash pandas numpy "
        "scipy matplotlib seaborn pytorch tensorflow keras sklearn scikit-learn requests httpx "
        "beautifulsoup selenium playwright pytest docker kubernetes terraform ansible git github "
        "gitlab redis postgresql postgres mysql sqlite mongodb kafka rabbitmq airflow spark "
        "elasticsearch nginx celery stripe slack figma notion obsidian jira vscode neovim vim "
        "emacs excel tableau d3 redux graphql grpc openai chatgpt gpt-4 claude llama langchain "
        "aws gcp azure heroku vercel netlify jenkins npm pip poetry conda webpack vite eslint "
        "ruff mypy linux windows macos ubuntu chrome firefox zoom"
    ),
    "Tool",
) | dict.fromkeys(
    word_set(
        "fastapi django flask rails react vue angular svelte spring express nextjs hugo jekyll "
        "laravel"
    ),
    "Resource",
)
#: Head nouns that make a phrase tool-like ("the order lookup tool", "the orders API").
TOOL_HEADS = word_set(
    "tool api apis endpoint sdk cli library package module plugin extension function method "
    "script command service framework database db engine client bot model"
)
ROLE_NOUNS = word_set(
    "member engineer developer designer manager lead director doctor nurse teacher student "
    "customer client admin administrator owner intern ceo cto cfo coo founder analyst scientist "
    "researcher architect consultant vip subscriber employee contractor freelancer volunteer "
    "chef writer editor programmer tester officer president head assistant professor lawyer "
    "accountant pilot driver artist musician coach trainer mentor maintainer contributor "
    "reviewer moderator partner specialist technician pharmacist dentist therapist physician "
    "surgeon supervisor coordinator representative agent"
)
PERSON_NOUNS = word_set(
    "user customer client doctor dentist nurse physician therapist nutritionist dietitian "
    "cardiologist pharmacist coach trainer wife husband partner mom mother dad father grandpa "
    "grandma grandmother grandfather sister brother son daughter friend boss colleague manager "
    "teacher neighbor neighbour kid child baby aunt uncle cousin roommate"
)
_CLI_WORDS = word_set(
    "python python3 pip pip3 npm npx yarn pnpm git docker docker-compose kubectl make cargo "
    "node poetry uv conda brew apt apt-get pytest django-admin ruff mypy curl wget ssh "
    "terraform helm gcloud aws az heroku rails bundle gem go chmod chown sudo systemctl psql "
    "alembic uvicorn gunicorn celery tsc jest mvn gradle dotnet"
)
#: Command names that are also English words: a command only when its first argument looks
#: like one ("make test", "go run main.go"), never in "make sure" or "go home".
_CLI_AMBIGUOUS = word_set("make go node brew helm apt uv bundle gem rails heroku aws az ssh")
#: Subcommands that are also English verbs; a command may go on through them.
_CLI_SUBCOMMANDS = word_set(
    "install uninstall run build test migrate init add commit push pull clone checkout stash "
    "merge rebase up down start stop exec logs apply plan get describe delete create update "
    "upgrade list show serve deploy ci lint format check fetch reset status"
)
FILE_EXTENSIONS = word_set(
    "csv tsv json jsonl txt md py ipynb yaml yml toml ini cfg env xlsx xls pdf sql log html css "
    "xml parquet db sqlite zip gz tar png jpg jpeg gif svg docx doc pptx sh bat rs go java ts "
    "tsx jsx rb php c cpp h hpp"
)
_JS_TOOLS = word_set("node next vue react d3 three express nuxt angular")

# --- sentences ----------------------------------------------------------------------------

_ABBREVIATIONS = word_set(
    "e.g i.e etc vs mr mrs ms dr prof st inc ltd jr sr no approx fig cf al eg ie dept"
)
_BOUNDARY = re.compile(r"[.!?…]+[\"')\]]*\s+|;\s*|\n\s*")
_LIST_ITEM = re.compile(r"(?i)^\s*(?:[-*•]|\d{1,2}[.)]|step\s*\d+\s*[:.)-])\s+")
_BARE_NUMBER = re.compile(r"(?i)^\s*(?:\d{1,2}|[a-z])[.)]$")
_WORD_BEFORE = re.compile(r"([\w.]+)[.]+[\"')\]]*\s+$")
_BACKTICK = re.compile(r"`[^`\n]*`")


def split_sentences(text: str) -> list[Segment]:
    """Split ``text`` into sentences (and ``;``-separated clauses), keeping offsets.

    Dots inside code (``pandas.read_csv``), versions (``3.11``), abbreviations (``e.g.``,
    ``Dr.``) and list numbers (``1.``) do not end a sentence. A newline ends one unless the
    next line starts in lower case and the previous line did not end a list item.
    """
    if not text:
        return []
    protected = [(m.start(), m.end()) for m in _BACKTICK.finditer(text)]
    out: list[Segment] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if any(a <= m.start() < b for a, b in protected):
            continue
        cut = m.start()
        piece = text[start : m.end()]
        mark = m.group()
        if mark[0] in ".!?…":
            prev = _WORD_BEFORE.search(piece)
            if (
                mark.startswith(".")
                and prev
                and (
                    prev.group(1).lower().rstrip(".") in _ABBREVIATIONS
                    or re.fullmatch(r"[A-Z]", prev.group(1))
                )
            ):
                continue
            if _BARE_NUMBER.match(text[start : cut + 1]) or _inline_number(text, start, m):
                continue
            cut = m.start() + len(mark.rstrip())
        elif mark[0] == "\n":
            rest = text[m.end() : m.end() + 1]
            line = text[start:cut]
            if rest.islower() and line and line[-1:] not in ".!?:" and not _LIST_ITEM.match(line):
                continue
        _append(out, text, start, cut)
        start = m.end()
    _append(out, text, start, len(text))
    return out


_NUMBER_ENDS = re.compile(r"(?:^|[\s:(])(\d{1,2})$")


def _inline_number(text: str, start: int, m: re.Match[str]) -> bool:
    """The dot of a number of an inline list ("Steps: 1. rinse the jars 2. boil the lids"):
    a bare number of one or two digits before a word, when the number next to it in the
    count ("2." after "1.", "1." before "2.") also heads an item of the text."""
    if m.group() != ". " and not m.group().startswith(". "):
        return False
    num = _NUMBER_ENDS.search(text, start, m.start())
    after = text[m.end() : m.end() + 1]
    if num is None or not after.isalpha():
        return False
    n = int(num.group(1))
    return any(re.search(rf"(?:^|[\s:(]){k}\.\s+[A-Za-z]", text) for k in (n - 1, n + 1) if k > 0)


def _append(out: list[Segment], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    offset = start + (len(piece) - len(piece.lstrip()))
    out.append(Segment(offset, offset + len(stripped), stripped))


# --- mentions -----------------------------------------------------------------------------

_ERROR = re.compile(
    r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Fault|Failure)\b"
    r"(?::[ \t]*(?P<msg>[^\n;]*?))?"
    r"(?=\s+(?:can|could|may|might|is|was|are|were|happens|occurs|appears|shows|means|usually"
    r"|often|when|if|because|after|while|caused|fixed|solved)\b|[.;!?,](?:\s|$)|\s[-–—]\s|$|\n)"
)
_IDENT = r"[A-Za-z_][\w]*"
_CODE = re.compile(
    rf"(?<![\w.'/]){_IDENT}(?:\.{_IDENT}|\[[^\]\s]{{1,40}}\]|\([^()\n]{{0,60}}\))+(?![\w(\[])"
    rf"|(?<![\w.'/]){_IDENT}_\w*[A-Za-z0-9](?![\w(])"
)
_COMMAND = re.compile(
    r"(?<![\w./-])(?:"
    + "|".join(re.escape(w) for w in sorted(_CLI_WORDS, key=len, reverse=True))
    + r")(?:[ \t]+[^\s,;()]+){1,5}"
)
_CONSTRUCT = re.compile(
    r"(?i)\b(?:with|for|while|if|try|except|finally|async|await|yield|return|import|lambda|match"
    r"|switch|case|def|class)[ \t]+(?:statement|loop|block|clause|keyword|expression|context)s?\b"
)
_QUOTED = re.compile(
    r"`(?P<b>[^`\n]{1,80})`|(?<![\w'])'(?P<s>[^'\n]{1,60})'(?![\w'])|\"(?P<d>[^\"\n]{1,80})\""
    r"|“(?P<c>[^”\n]{1,80})”"
)
_USERID = re.compile(r"\b[A-Z]{1,3}-?\d{2,}\b")
_PROPER = re.compile(
    r"\b(?:Dr|Mr|Mrs|Ms|Prof)\.\s[A-Z][a-z]+|\b[A-Z][A-Za-z0-9]*(?:[-'][A-Z]?[a-z0-9]+)*"
    r"(?:\s+[A-Z][A-Za-z0-9]+)*"
)


def _command_end(text: str) -> int:
    """Where a command line ends: stop at the first English word that is not an argument."""
    parts = text.split()
    kept = [parts[0]]
    for word in parts[1:]:
        bare = word.rstrip(".:!?")
        low = bare.lower()
        argish = bare[:1] in "-./~" or any(c in bare for c in "./=:@") or bare.isdigit()
        if (
            not bare
            or (low in STOPWORDS and not argish)
            or (low in VERBS and low not in _CLI_SUBCOMMANDS and not argish)
        ):
            break
        kept.append(bare)
        if bare != word:
            break
    if len(kept) == 1:
        return 0
    arg = kept[1]
    if (
        parts[0] in _CLI_AMBIGUOUS
        and arg not in _CLI_SUBCOMMANDS
        and not re.search(r"[-./=:]", arg)
    ):
        return 0
    return len(" ".join(kept))


def find_code_mentions(text: str) -> list[Mention]:
    """Error messages, backticked code, CLI commands, calls, dotted and snake_case names.

    Returns non-overlapping mentions sorted by position; earlier kinds in that list win.
    """
    found: list[Mention] = []
    for m in _ERROR.finditer(text):
        found.append(Mention(m.start(), m.end(), m.group().rstrip(" ,"), "error"))
    for m in _QUOTED.finditer(text):
        if m.group("b") is not None:
            inner = m.group("b").strip()
            kind = "command" if inner.split(" ", 1)[0] in _CLI_WORDS else "call"
            found.append(Mention(m.start(), m.end(), inner, kind))
    for m in _COMMAND.finditer(text):
        end = _command_end(m.group())
        first = m.group().split(None, 1)[0]
        if end and (first != "python" or re.search(r"\s(?:-\w|\S+\.py)", m.group()[:end])):
            found.append(Mention(m.start(), m.start() + end, m.group()[:end], "command"))
    for m in _CONSTRUCT.finditer(text):
        found.append(Mention(m.start(), m.end(), m.group().lower(), "construct"))
    for m in _CODE.finditer(text):
        found.append(_classify_code(m.start(), m.group()))
    return _non_overlapping(found)


def _classify_code(start: int, token: str) -> Mention:
    stem, _, ext = token.rpartition(".")
    if ext.lower() in FILE_EXTENSIONS and "(" not in token and "[" not in token:
        return Mention(start, start + len(token), token, "file")
    if ext == "js" and "(" not in token:
        kind = "dotted" if stem.lower() in _JS_TOOLS else "file"
        return Mention(start, start + len(token), token, kind)
    if "(" in token or "[" in token:
        return Mention(start, start + len(token), token, "call")
    if "." in token:
        parts = token.split(".")
        # "e.g", "U.S": every part tiny and no call -> an abbreviation, not code
        kind = "abbrev" if all(len(p) <= 2 for p in parts) else "dotted"
        return Mention(start, start + len(token), token, kind)
    return Mention(start, start + len(token), token, "var")


def find_quoted(text: str) -> list[Mention]:
    """Terms in single, double or curly quotes (and backticks), without the quotes."""
    out: list[Mention] = []
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None).strip()
        if inner:
            out.append(Mention(m.start(), m.end(), inner, "quoted"))
    return out


def find_user_ids(text: str) -> list[Mention]:
    """Customer or user ids such as ``U123`` or ``C-889``."""
    return [Mention(m.start(), m.end(), m.group(), "userid") for m in _USERID.finditer(text)]


def find_proper_names(text: str) -> list[Mention]:
    """Capitalised words and runs of them, except at a sentence start and function words."""
    out: list[Mention] = []
    for m in _PROPER.finditer(text):
        words = m.group().split()
        start = m.start()
        while words and words[0].lower() in STOPWORDS | FILLERS | TIME_WORDS:
            start += len(words[0]) + 1
            words = words[1:]
        if not words:
            continue
        initial = start == 0 or text[:start].rstrip()[-1:] in ".!?:;\n"
        if initial and words[0].lower() in VERBS:
            continue  # sentence-initial: a name only when it is not a common word
        name = " ".join(words)
        out.append(Mention(start, start + len(name), name, "proper"))
    return out


def _non_overlapping(items: Iterable[Mention]) -> list[Mention]:
    taken: list[Mention] = []
    for item in items:  # input order is priority order
        if item.kind == "abbrev" or not item.text:
            continue
        if all(item.end <= t.start or item.start >= t.end for t in taken):
            taken.append(item)
    return sorted(taken, key=lambda t: t.start)


# --- tokens and noun phrases --------------------------------------------------------------

_TOKEN = re.compile(
    PH_OPEN
    + r"\d+"
    + PH_CLOSE
    + "|"
    + TIME_MARK
    + r"|(?:Dr|Mr|Mrs|Ms|Prof)\.|\d+(?:[.,]\d+)*%?[A-Za-z]*|[^\W\d_][\w'-]*\w|[^\W\d_]|[^\s\w]"
)


def tokens(text: str) -> list[Segment]:
    """Words, numbers, placeholders and single punctuation marks, with offsets."""
    return [Segment(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def is_placeholder(token: str) -> bool:
    return token.startswith(PH_OPEN)


def _is_word(token: str) -> bool:
    return token[:1].isalnum() or is_placeholder(token)


def _np_stop(low: str) -> bool:
    return (
        low in PREPOSITIONS
        or low in CONJUNCTIONS
        or low in AUXILIARIES
        or low in ADVERBS
        or low in FILLERS
        or low in INFLECTED_VERBS
        or low in PRONOUNS - DETERMINERS
    )


def _np_stop_next(toks: list[Segment], i: int) -> bool:
    nxt = toks[i + 1].text.lower() if i + 1 < len(toks) else ""
    return not nxt or nxt in DETERMINERS or nxt in PREPOSITIONS or nxt in PRONOUNS


def leading_np(text: str, *, max_tokens: int = 6, keep: frozenset[str] = frozenset()) -> str:
    """The noun phrase at the start of ``text`` (after determiners), as a substring.

    Stops at prepositions other than "of" (and those in ``keep``), conjunctions, auxiliaries,
    inflected verbs, pronouns, punctuation and time marks.
    """
    toks = tokens(text)
    i = 0
    while i < len(toks) and toks[i].text.lower() in DETERMINERS | {"very", "really", "so"}:
        i += 1
    first = i
    end_tok = -1
    while i < len(toks) and i - first < max_tokens:
        tok = toks[i].text
        low = tok.lower()
        if tok == TIME_MARK or (not _is_word(tok) and tok not in "%-'"):
            break
        if low == "of" or low in keep:
            if end_tok >= 0 and i + 1 < len(toks) and _is_word(toks[i + 1].text):
                i += 1
                continue
            break
        if i > first and low in DETERMINERS and toks[i - 1].text.lower() in {"of", *keep}:
            i += 1
            continue
        participle = low.endswith(("ed", "en")) and i + 1 < len(toks) and _is_word(toks[i + 1].text)
        gerund = low.endswith("ing") and len(low) > 4 and low not in AUXILIARIES
        if low in INFLECTED_VERBS and (gerund or (participle and not _np_stop_next(toks, i))):
            pass  # "free shipping", "the cleaned dataset": a participle used as a modifier
        elif _np_stop(low) and not (i == first and low in {"this", "that"}):
            break
        if is_placeholder(tok) and i + 1 < len(toks) and toks[i + 1].text.lower() in VERBS:
            end_tok = i  # "the with statement releases it": the code name ends the phrase
            break
        end_tok = i
        i += 1
    if end_tok < first:
        return ""
    return text[toks[first].start : toks[end_tok].end]


def trailing_np(text: str, *, max_tokens: int = 6) -> str:
    """The noun phrase at the end of ``text`` (the subject before a verb), as a substring.

    A clause-initial gerund phrase ("Running the notebook") is kept whole.
    """
    toks = tokens(text)
    if not toks:
        return ""
    j = len(toks) - 1
    start_tok = -1
    while j >= 0 and len(toks) - j <= max_tokens:
        tok = toks[j].text
        low = tok.lower()
        if tok == TIME_MARK or not _is_word(tok):
            break
        if low == "of" and start_tok >= 0 and j > 0 and _is_word(toks[j - 1].text):
            j -= 1
            continue
        if low in DETERMINERS:
            if start_tok >= 0 and j > 0 and toks[j - 1].text.lower().endswith("ing"):
                k = j - 1
                if k == 0 or not _is_word(toks[k - 1].text):
                    start_tok = k  # "Running the notebook needs ..." keeps the gerund
            break
        head = start_tok < 0
        if head and low in INFLECTED_VERBS and low not in AUXILIARIES:
            pass  # the word right before the verb is a noun even if it looks like one
        elif _np_stop(low) and not (head and low in PRONOUNS):
            break
        start_tok = j
        if start_tok == len(toks) - 1 and low in PRONOUNS:
            break  # a bare pronoun subject
        j -= 1
    if start_tok < 0:
        return ""
    return text[toks[start_tok].start : toks[-1].end]


_LIST_SPLIT = re.compile(r"(?i)\s*,\s*(?:and|or)\s+|\s*,\s*|\s+(?:and|or|&)\s+")


def split_list(text: str, *, split_and: bool = True) -> list[str]:
    """Split "A, B and C" / "A or B" into items (``split_and=False`` keeps "A and B")."""
    if not split_and:
        parts = re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", text)
    else:
        parts = _LIST_SPLIT.split(text)
    return [p.strip() for p in parts if p and p.strip()]


_STEM_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s")


def stem(word: str) -> str:
    """A crude stem used only to compare words ("designing" ~ "design", "tasks" ~ "task")."""
    low = word.lower()
    for suffix in _STEM_SUFFIXES:
        if low.endswith(suffix) and len(low) - len(suffix) >= 3:
            base = low[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return base + "y"
            if suffix in ("ation", "ations"):
                return base + "ate"
            if suffix == "s" and base.endswith(("s", "u", "i")):
                return low
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2]:
                return base[:-1]
            return base
    return low


def content_words(text: str) -> list[str]:
    """Stems of the words of ``text`` that are not stopwords or placeholders."""
    out = []
    for tok in tokens(text):
        low = tok.text.lower()
        if _is_word(low) and not is_placeholder(low) and low not in STOPWORDS:
            out.append(stem(low))
    return out


def head_word(text: str) -> str:
    """The last content word's stem (the head of an English noun phrase), or ''."""
    words = content_words(text)
    return words[-1] if words else ""


# --- masking ------------------------------------------------------------------------------

_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r)
    for p, r in (
        (r"[’‘]", "'"),
        (r"\bcan'?t\b|\bcannot\b", "can not"),
        (r"\bwon't\b", "will not"),
        (
            r"\b(do|does|did|is|are|was|were|has|have|had|could|should|would|must|need)n'?t\b",
            r"\1 not",
        ),
        (r"\b(i)'m\b", r"\1 am"),
        (r"(?<=\w)'re\b", " are"),
        (r"(?<=\w)'ll\b", " will"),
        (r"(?<=\w)'ve\b", " have"),
        (r"(?<=\w)'d\b", " would"),
        (r"\blet's\b", "let us"),
        (r"\b(it|he|she|that|there|what|who|here|where|this)'s\b", r"\1 is"),
        (r"\bgonna\b", "going to"),
        (r"\bgotta\b", "got to"),
        (r"\bwanna\b", "want to"),
    )
)


@dataclass(frozen=True, slots=True)
class Masked:
    """A sentence with entities replaced by placeholders and times by a time mark.

    Attributes:
        original: the sentence as written (used for edge facts).
        text: the masked working text, contractions expanded, quotes straightened.
        entities: the masked spans; placeholder ``i`` stands for ``entities[i]``.
        times: time expressions of the sentence, resolved.
    """

    original: str
    text: str
    entities: tuple[Mention, ...]
    times: tuple[TimeMention, ...]

    def unmask(self, value: str) -> str:
        """The text of ``value`` with placeholders put back and time marks removed."""
        out = PLACEHOLDER_RE.sub(lambda m: self.entities[int(m.group(1))].text, value)
        return re.sub(r"\s+", " ", out.replace(TIME_MARK, " ")).strip()

    def entity(self, value: str) -> Mention | None:
        """The entity when ``value`` is exactly one placeholder."""
        m = PLACEHOLDER_RE.fullmatch(value.strip())
        return self.entities[int(m.group(1))] if m else None


def prepare(sentence: str, anchor: datetime) -> Masked:
    """Mask code, quoted terms, ids and times of one sentence."""
    spans: list[Mention] = []
    quoted = []
    for q in find_quoted(sentence):
        if sentence[q.start] != "`":  # backticks were read as code already
            inner = find_code_mentions(q.text)  # 'notes.txt' is still a file
            kind = inner[0].kind if len(inner) == 1 and inner[0].text == q.text else q.kind
            quoted.append(q._replace(kind=kind))
    for group in (find_code_mentions(sentence), quoted, find_user_ids(sentence)):
        for m in group:
            if all(m.end <= s.start or m.start >= s.end for s in spans):
                spans.append(m)
    times = tuple(
        t
        for t in resolve_times(sentence, anchor)
        if all(t.end <= s.start or t.start >= s.end for s in spans)
    )
    spans.sort(key=lambda s: s.start)
    cuts: list[tuple[int, int, str]] = [
        (s.start, s.end, placeholder(i)) for i, s in enumerate(spans)
    ]
    cuts += [(t.start, t.end, f" {TIME_MARK} ") for t in times]
    cuts.sort()
    parts, pos = [], 0
    for start, end, rep in cuts:
        parts.append(sentence[pos:start])
        parts.append(rep)
        pos = end
    parts.append(sentence[pos:])
    text = "".join(parts)
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    # a date that opens or closes the sentence is not a clause boundary worth keeping
    text = re.sub(
        rf"^[\s,]*(?:{TIME_MARK}[\s,]*)+|(?:[\s,]*{TIME_MARK})+[\s,]*(?=[.!?]?$)", "", text
    )
    return Masked(sentence, re.sub(r"[ \t]+", " ", text).strip(), tuple(spans), times)
