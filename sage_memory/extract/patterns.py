"""Relation patterns of the rule extractor: trigger phrases and the text around them.

A *trigger* is a compiled regex for the verb phrase of one relation ("depends on", "is caused
by", "moved to"...), run over a sentence masked by :func:`.text.prepare`. The subject of a
match comes from the text on its left and its objects from the text on its right, cut with the
noun-phrase helpers of :mod:`.text`. This module only returns :class:`RawRelation` values
(masked strings); :mod:`.rules` turns them into nodes and edges, resolves pronouns and links
names to tasks it already knows.

A trigger may be preceded by auxiliaries, adverbs and negations ("is not", "no longer", "will
probably"): they join the match, so the subject ends before them, and a negation among them
sets ``negated``. Overlapping matches are settled by priority, then length, so "is a big fan
of" is a preference and not a taxonomy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from sage_memory.extract.text import (
    DETERMINERS,
    INFLECTED_VERBS,
    KNOWN_TOOLS,
    PERSON_NOUNS,
    PH_CLOSE,
    PH_OPEN,
    PREPOSITIONS,
    PRONOUNS,
    TIME_MARK,
    VERB_BASES,
    Masked,
    leading_np,
    split_list,
    tokens,
    trailing_np,
    word_set,
)

# --- triggers -----------------------------------------------------------------------------

_AUX = (
    r"am|is|are|was|were|be|been|being|has|have|had|do|does|did|will|would|shall|should|can"
    r"|could|may|might|must|going\s+to|got\s+to|need\s+to|needs\s+to|has\s+to|have\s+to"
    r"|had\s+to|used\s+to|seems\s+to|tends\s+to"
)
_NEG = r"not|never|no\s+longer|no\s+more"
_ADV = (
    r"now|still|just|only|really|also|already|always|usually|often|sometimes|currently|mostly"
    r"|mainly|typically|generally|actually|probably|definitely|totally|absolutely|finally"
    r"|primarily|heavily|recently|even|apparently|obviously|clearly|truly|largely|partly"
    r"|fully|completely|reportedly|mostly|somehow"
)
#: Marks a trigger that may be preceded by auxiliaries, negations and adverbs ("is not",
#: "will probably"). They are found by a backward word scan after the match
#: (:func:`_prefix_start`), which is far cheaper than an optional regex prefix tried at
#: every position of the sentence.
PRE = "(?P<pre>)"
_PRE_WORDS = frozenset(w for w in f"{_AUX}|{_NEG}|{_ADV}".split("|") if "\\" not in w)
_PRE_PAIRS = frozenset(tuple(w.split("\\s+")) for w in f"{_AUX}|{_NEG}".split("|") if "\\s+" in w)
_NEG_RE = re.compile(rf"(?i)\b(?:{_NEG})\b")
_MODAL_RE = re.compile(
    r"(?i)\b(?:will|going to|should|must|shall|need to|needs to|has to|have to)\b"
)
_BE_RE = re.compile(r"(?i)\b(?:is|are|was|were|be|been|got)\b")

STATUS_WORDS: dict[str, str] = {
    **dict.fromkeys(
        word_set("done finished complete completed shipped deployed merged released approved live"),
        "done",
    ),
    **dict.fromkeys(word_set("blocked stalled"), "blocked"),
    **dict.fromkeys(
        word_set("underway ongoing started wip began begun working kicked"), "in progress"
    ),
    **dict.fromkeys(word_set("paused delayed postponed"), "on hold"),
    **dict.fromkeys(word_set("pending todo"), "pending"),
    **dict.fromkeys(word_set("cancelled canceled abandoned dropped"), "cancelled"),
    "ready": "ready",
}
_STATUS_ALT = (
    r"done|finished|complete|completed|blocked|in\s+progress|underway|ongoing|on\s+hold|paused"
    r"|pending|started|cancell?ed|canceled|shipped|deployed|merged|released|ready|wip|stalled"
    r"|delayed|postponed|abandoned|dropped|approved|live"
)


def status_value(word: str) -> str:
    """The canonical status for a status word ("finished" -> "done")."""
    low = " ".join(word.lower().split())
    if low in ("in progress", "on hold"):
        return low
    return STATUS_WORDS.get(low.split()[0], low)


@dataclass(frozen=True, slots=True)
class Trigger:
    """One relation pattern.

    ``subject``: "np" (noun phrase left of the match), "clause" (the whole clause on the left),
    "group" (named group ``s``; None means the focus of the memory) or "right" (the noun
    phrase on the right: "I finished the report"). ``obj``: "np", "phrase" (up to the clause
    end), "group" (named group ``o``) or "none". ``guard`` names the extra check in
    :data:`GUARDS` that the trigger needs beyond its regex.
    """

    family: str
    relation: str
    regex: re.Pattern[str]
    subject: str = "np"
    obj: str = "np"
    reverse: bool = False
    split: str = "and"
    confidence: float = 0.85
    priority: int = 1
    negated: bool = False
    guard: str = ""
    keep: frozenset[str] = frozenset()


def _t(family: str, relation: str, pattern: str, **kw: object) -> Trigger:
    return Trigger(family, relation, re.compile(pattern, re.IGNORECASE), **kw)  # type: ignore[arg-type]


_NOT_USED_FOR = r"(?!\s+(?:for|to|as|by|up|in\s+production)\b)"
_PLACE_KEEP = frozenset({"near", "outside"})
# fmt: off
# One trigger per entry: family, relation, regex, then options. Kept hand-aligned because the
# table reads as a grammar; the formatter would spread it over four hundred lines.
TRIGGERS: tuple[Trigger, ...] = (
    # usage and requirement
    _t("usage", "USES", PRE + r"\b(?:uses?|used|using|utili[sz](?:es?|ed|ing)|leverag(?:es?|ed"
       r"|ing)|relies\s+on|rely\s+on|relied\s+on|relying\s+on|runs?\s+on|ran\s+on|running\s+on"
       r"|switched\s+to|switching\s+to|migrated\s+to|moved\s+over\s+to)\b" + _NOT_USED_FOR),
    _t("usage", "USES", r"\b(?:is|are|was|were|been|be)\s+(?:\w+ly\s+)?(?:built|made|written"
       r"|developed|implemented|coded|created|powered|hosted|deployed|run|served|done)\s+"
       r"(?:with|in|using|by|on|via|through)\b", priority=2),
    _t("usage", "USES", r"\b(?:with|using|via|through)\b", subject="with", guard="tool",
       confidence=0.7, priority=0),
    _t("usage", "USES", PRE + r"\bstopped\s+using\b", negated=True, priority=2),
    _t("requirement", "REQUIRES", PRE + r"\b(?:needs?|needed|requires?|required|requiring"
       r"|calls?\s+for|called\s+for|demands?)\b(?!\s+(?:to|that|by)\b)"),
    _t("requirement", "REQUIRES", PRE + r"\b(?:is|are)\s+(?:a\s+|an\s+)?(?:prerequisite"
       r"|requirement|required|needed|necessary|mandatory|essential)\s+(?:for|to)\b",
       reverse=True, priority=3),
    # dependency
    _t("dependency", "DEPENDS_ON", PRE + r"\b(?:depends?|depended|depending|dependent)\s+"
       r"(?:up)?on\b", obj="phrase"),
    _t("dependency", "DEPENDS_ON", PRE + r"\b(?:waits?|waited|waiting)\s+(?:for|on)\b",
       obj="phrase"),
    _t("dependency", "BLOCKED_BY", PRE + r"\bblocked\s+(?:by|on)\b", obj="phrase", priority=2),
    _t("dependency", "BLOCKED_BY", PRE + r"\bblocks\b", reverse=True, obj="phrase"),
    _t("dependency", "DEPENDS_ON", PRE + r"\b(?:only\s+(?:works?|runs?|succeeds?|happens?)"
       r"|(?:works?|runs?|succeeds?)\s+only)\s+(?:when|if|once|after)\b", obj="phrase",
       confidence=0.8),
    _t("dependency", "DEPENDS_ON", r"\buntil\b", subject="clause", obj="phrase",
       guard="needs_neg", confidence=0.75),
    # taxonomy and roles
    _t("taxonomy", "IS_A", r"\b(?:is|was)\s+(?:(?:also|still|basically|essentially|just|really"
       r"|actually)\s+)?(?:a|an|one\s+of\s+the)\s+(?:(?:kind|type|sort|form|variety|flavou?r"
       r"|subtype|subclass|instance|example)\s+of\s+(?:a\s+|an\s+|the\s+)?)?",
       confidence=0.8, priority=0),
    _t("taxonomy", "IS_A", r"\bare\s+(?:(?:kinds?|types?|sorts?|forms?)\s+of\s+)?"
       r"(?=[a-z-]+s\b)", confidence=0.6, priority=0, guard="plural"),
    _t("taxonomy", "IS_A", r"\bsuch\s+as\b", reverse=True, confidence=0.75),
    _t("state", "HAS_ROLE", PRE + r"\b(?:(?:became|becomes|become|becoming)\s+(?:a|an|the)"
       r"|(?:is|am|are|was)\s+now\s+(?:a|an|the)|(?:promoted|promotion)\s+to(?:\s+(?:a|an"
       r"|the))?|(?:is|am|are)\s+the\s+new|(?:works?|worked|working|serves?|served|serving"
       r"|hired|started|joined)\s+as(?:\s+(?:a|an|the))?|took\s+over\s+as)\b", priority=3),
    # part-whole
    _t("part_whole", "PART_OF", PRE + r"\b(?:(?:a|an|one)\s+)?(?:part|component|piece"
       r"|section|subset|element|module)s?\s+of\b", priority=3),
    _t("part_whole", "PART_OF", PRE + r"\b(?:belongs?|belonged|belonging)\s+to\b"),
    _t("part_whole", "MEMBER_OF", PRE + r"\b(?:(?:a|an)\s+)?members?\s+of\b", priority=3),
    _t("part_whole", "PART_OF", PRE + r"\b(?:consists?\s+of|consisted\s+of|consisting\s+of"
       r"|(?:is|are)\s+(?:made\s+up|composed|comprised)\s+of|comprises?|comprised|comprising"
       r"|includes?|included|contains?|contained|containing)\b", reverse=True),
    # causality
    _t("causality", "CAUSED_BY", PRE + r"\b(?:caused|triggered|induced|produced)\s+by\b",
       obj="phrase", split="or", priority=2),
    _t("causality", "CAUSED_BY", PRE + r"\b(?:due\s+to|because\s+of|owing\s+to|as\s+a\s+result"
       r"\s+of)\b", subject="clause", obj="phrase", split="or", priority=2),
    _t("causality", "CAUSED_BY", r"\bbecause\b(?!\s+of)", subject="clause", obj="phrase",
       split="none"),
    _t("causality", "CAUSED_BY", r"\bsince\b(?=\s+(?:the|a|an|my|our|your|his|her|their|it|he"
       r"|she|they|we|i|you)\b)", subject="clause", obj="phrase", split="none",
       confidence=0.6),
    _t("causality", "CAUSED_BY", PRE + r"\b(?:comes?|came|stems?|stemmed|stemming|arises?"
       r"|arose|originates?|originated)\s+from\b", obj="phrase", split="or"),
    _t("causality", "CAUSES", PRE + r"\b(?:causes|caused|cause|causing|leads?\s+to|led\s+to"
       r"|leading\s+to|results?\s+in|resulted\s+in|resulting\s+in|gives?\s+rise\s+to|gave\s+"
       r"rise\s+to|triggers|brings?\s+about)\b(?!\s+(?:by|of|is|are|was)\b)",
       subject="clause", obj="phrase", split="or"),
    _t("causality", "CAUSED_BY", r"\b(?:it|this|that|which)\s+(?:(?:usually|often|typically"
       r"|probably|most\s+likely|generally)\s+)?means\s+(?:that\s+)?(?P<o>.+)$", subject="group",
       obj="group", split="or", confidence=0.7, priority=3),
    _t("causality", "CAUSED_BY", r"\b(?:the\s+)?(?:usual|common|main|likely|probable|root|real"
       r"|most\s+likely|typical)?\s*(?:cause|reason)s?\s+(?:of\s+(?P<s>[^,;]+?)\s+)?(?:is|are"
       r"|was|were|:)\s+(?:that\s+)?(?P<o>.+)$", subject="group", obj="group", split="or",
       priority=3),
    # fixes
    _t("fixes", "SOLVED_BY", PRE + r"\b(?:fixed|solved|resolved|addressed|handled|cured"
       r"|repaired|remedied|mitigated|sorted\s+out|worked\s+around)\s+(?:by|with|via)\b",
       obj="phrase", split="or", priority=2),
    _t("fixes", "SOLVED_BY", PRE + r"\b(?:fix(?:es|ed)?|solves?|solved|resolves?|resolved"
       r"|cures?|cured|repairs?|repaired)\b(?!\s+(?:by|with|via)\b)", reverse=True,
       subject="clause", obj="phrase", split="none", confidence=0.8),
    _t("fixes", "SOLVED_BY", r"(?:^|[,:]\s*)to\s+(?:fix|solve|resolve|avoid|prevent|get\s+rid"
       r"\s+of|work\s+around)\s+(?P<s>[^,;]+?)\s*,\s*(?P<o>.+)$", subject="group",
       obj="group", split="or", priority=4),
    _t("fixes", "SOLVED_BY", r"^(?P<o>[^,;]+?)\s+to\s+(?:fix|solve|resolve|get\s+rid\s+of"
       r"|work\s+around)\s+(?P<s>[^,;]+)", subject="group", obj="group", split="none",
       priority=4),
    _t("fixes", "SOLVED_BY", r"\b(?:fix|solution|workaround|remedy|cure)\s+(?:for|to)\s+"
       r"(?P<s>[^:;]+?)\s*(?::|\bis\b|\bwas\b)\s*(?:to\s+)?(?P<o>.+)$", subject="group",
       obj="group", split="or", priority=4),
    _t("fixes", "SOLVED_BY", r"\b(?:the\s+)?(?:fix|solution|workaround|remedy)\s*(?::|\bis\b"
       r"|\bwas\b)\s*(?:to\s+)?(?P<o>.+)$", subject="group", obj="group", split="or",
       priority=3),
    _t("fixes", "SOLVED_BY", PRE + r"\b(?:went\s+away|disappeared|stopped|was\s+gone|got\s+"
       r"better)\s+(?:after|once|when)\b", obj="phrase", split="none", confidence=0.75,
       priority=2),
    _t("fixes", "SOLVED_BY", r"^if\s+(?:that|this|it)\s+(?:does\s+not|did\s+not|can\s+not)\s+"
       r"(?:help|work|fix\s+it)\s*,\s*(?:try\s+)?(?P<o>.+)$", subject="group", obj="group",
       split="or", confidence=0.75, priority=4),
    _t("fixes", "SOLVED_BY", r"\b(?:solve|fix|resolve)\s+(?P<s>[^,;]+?)\s+by\s+(?P<o>.+)$",
       subject="group", obj="group", split="or", priority=4),
    # preferences (the subject must be a person)
    _t("preference", "PREFERS", PRE + r"\b(?:likes?|liked|loves?|loved|enjoys?|enjoyed|adores?"
       r"|adored|prefers?|preferred|favou?rs?|(?:is|am|are)\s+into|(?:is|am|are)\s+fond\s+of)"
       r"\b(?!\s+(?:to|it|that|this)\b)", guard="person", priority=2),
    _t("preference", "PREFERS", PRE + r"\b(?:(?:a|an)\s+)?(?:big\s+|huge\s+|massive\s+"
       r"|great\s+)?fan\s+of\b", guard="person", priority=3),
    _t("preference", "DISLIKES", PRE + r"\b(?:dislikes?|disliked|hates?|hated|detests?"
       r"|detested|loathes?|loathed|despises?|can\s+not\s+stand|could\s+not\s+stand)\b",
       guard="person", priority=2),
    _t("preference", "ALLERGIC_TO", PRE + r"\b(?:(?:allergic|intolerant)\s+to|(?:has|have|had)"
       r"\s+an?\s+(?:\w+\s+)?allergy\s+to)\b", confidence=0.9, priority=3),
    _t("preference", "PREFERS", r"(?P<s>\bmy|\bhis|\bher|\btheir|\bour|(?<!\w)[\w" + PH_OPEN
       + PH_CLOSE + r"]+'s)\s+(?:favou?rite|preferred)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are"
       r"|was)\s+", subject="group", priority=3),
    # states that change
    _t("state", "LIVES_IN", PRE + r"\b(?:(?:lives?|lived|living|resides?|resided|residing"
       r"|stays?|stayed|staying)\s+in|(?:is|am|are|was|were)\s+based\s+in|settled\s+"
       r"(?:down\s+)?in)\b", keep=_PLACE_KEEP, priority=2),
    _t("state", "LIVES_IN", PRE + r"\b(?:moved|moving|moves|relocated|relocating|relocates"
       r"|emigrated)\s+(?:back\s+)?(?:from\s+[^,.;]+?\s+)?to\b", keep=_PLACE_KEEP,
       priority=2, guard="moved"),
    _t("state", "WORKS_AT", PRE + r"\b(?:(?:works?|worked|working)\s+(?:at|for)|(?:is|am|are"
       r"|was|were)\s+employed\s+(?:at|by)|(?:got|landed|started|accepted|took)\s+(?:a|an"
       r"|the)\s+(?:new\s+)?(?:job|position|role|offer)\s+(?:at|with)|(?:was|got|were)\s+"
       r"hired\s+(?:by|at)|started\s+at)\b", priority=2),
    _t("state", "WORKS_AT", PRE + r"\b(?:joined|joins|joining)\b(?!\s+as\b)", guard="proper"),
    _t("state", "WORKS_AT", PRE + r"\b(?:left|quit|quits|resigned\s+from|(?:was|got)\s+"
       r"(?:fired|laid\s+off)\s+from)\b", negated=True, guard="proper"),
    # task status
    _t("status", "HAS_STATUS", PRE + rf"(?P<st>{_STATUS_ALT})\b(?!\s+(?:by|on|with|to|for|in"
       r"|from|at|of|the|a)\b)(?:\s+(?:yet|now|already|today|finally|again))?\s*(?:[^\w\s]"
       r"|$)", obj="none", guard="be"),
    _t("status", "HAS_STATUS", r"(?:^|\b(?:i|we)\s+)(?:(?:have|had|just|finally|already|am|are"
       r"|was|were|also)\s+)*(?P<st>finished|completed|wrapped\s+up|done\s+with|shipped"
       r"|started\s+working\s+on|started|began|begun|working\s+on|kicked\s+off|paused"
       r"|dropped|cancell?ed)\s+", subject="right", obj="none", priority=2),
    _t("status", "HAS_STATUS", rf"^(?P<s>[^:]{{1,60}}):\s*(?P<st>{_STATUS_ALT}|todo)\b",
       subject="group", obj="none", priority=3),
    # health and advice
    _t("health", "HAS_PROPERTY", r"(?P<s>(?<![\w.-])[\w" + PH_OPEN + PH_CLOSE + r".-]+?)(?:'s)?\s+"
       r"(?P<m>blood\s+pressure|cholesterol|blood\s+sugar|heart\s+rate|weight|temperature"
       r"|glucose|pulse|iron(?:\s+levels?)?|sugar\s+levels?|vitamin\s+d)\s+(?:(?:has|have"
       r"|had|been|is|was|are|were|seems?|looks?|got|gotten|went|stayed|remains?)\s+)*"
       r"(?:(?:a\s+bit|very|quite|really|too|slightly|a\s+little|pretty|way)\s+)?(?P<adj>"
       r"high|low|elevated|normal|up|down|rising|dropping|unstable|better|worse)\b",
       subject="group", obj="none", priority=3),
    _t("health", "HAS_PROPERTY", PRE + r"\b(?:has|have|had|got|suffers?\s+from|suffered\s+"
       r"from|(?:was|were|is|been)\s+diagnosed\s+with|lives?\s+with|living\s+with)\s+(?="
       r"(?:type\s+\d\s+)?(?:diabetes|asthma|hypertension|high\s+blood\s+pressure"
       r"|migraines?|arthritis|celiac|coeliac|an?\s+\w+\s+allergy|allergies|anxiety"
       r"|depression|adhd|eczema|insomnia|gout|covid|the\s+flu|flu|back\s+pain|sleep\s+"
       r"apnea|ibs|crohn))", priority=3),
    _t("health", "HAS_PROPERTY", r"\b(?:is|am|are|was)\s+(?:a\s+)?(?:strict\s+)?(?=vegetarian"
       r"|vegan|pescatarian|lactose[- ]intolerant|gluten[- ]intolerant|diabetic|pregnant"
       r"|celiac|coeliac|kosher|halal|teetotal|sober|keto)", priority=4),
    _t("health", "RECOMMENDS", PRE + r"\b(?:advised|advises|advise|recommended|recommends"
       r"|suggested|suggests|prescribed|prescribes|told\s+(?:me|him|her|them|us|\S+)\s+to"
       r"|said\s+to|wants\s+(?:me|him|her|them|us)\s+to)\b", obj="phrase", split="none",
       priority=2),
    # rules about classes of people ("premium members get ...")
    _t("rule", "HAS_PROPERTY", PRE + r"\b(?:gets?|receives?|(?:are|is)\s+eligible\s+for"
       r"|qualif(?:y|ies)\s+for|(?:are|is)\s+entitled\s+to|(?:have|has)\s+access\s+to)\b",
       guard="class", confidence=0.75),
    # code and tools
    _t("code", "RELATED_TO", r"\binstead\s+of\b", confidence=0.6),
)
# fmt: on


class RawRelation(NamedTuple):
    """A relation found in a masked sentence, before it becomes nodes and edges.

    ``subject`` None means "the memory's current focus" (the last problem or thing named).
    """

    family: str
    relation: str
    subject: str | None
    objects: tuple[str, ...]
    negated: bool
    confidence: float
    start: int
    guard: str
    attrs: tuple[tuple[str, str], ...] = ()


# --- contexts -----------------------------------------------------------------------------

_CLAUSE_BOUNDARY = re.compile(
    r"(?i)[,;:()]|\s[-–—]\s|\b(?:and|but|so|while|whereas|although|though|because|if|when|which)\b"
    + "|"
    + TIME_MARK
)
_HARD_STOP = re.compile(
    r"(?i)\s*(?:;|\s[-–—]\s|,\s*(?:so|but|which|then|and\s+then|because|although|though|while"
    r"|when|if|it|this|that|i|we|you|he|she|they|and\s+(?:i|we|it|she|he|they))\b|\s(?:but|so"
    r"\s+that|which|because|although|though|whereas|so)\s)"
)
_LEAD_SUBJECT = re.compile(
    r"(?i)^(?:(?:so|and|but|then|also|plus|quick\s+note|note|btw|ok|okay|well|if|once|sadly)\b[\s,:-]*)*"
    r"(?:(?:i|we|you|they|he|she|it|one|let\s+us)\s+)?(?:(?:"
    + _AUX
    + "|"
    + _NEG
    + "|"
    + _ADV
    + r")\s+)*"
)
_TRAIL_JUNK = re.compile(
    r"(?i)(?:\s+(?:first|anymore|any\s+more|automatically|again|too|as\s+well|though|lately|now|yet"
    r"|already|please|pls|plz|beforehand|upfront|today|either|instead|for\s+sure|so\s+far|ok)"
    r"|\s*[^\w\s" + PH_CLOSE + r"%)\]'])+$"
)
_LEAD_FIX = re.compile(
    r"(?i)^(?:(?:by|via|with)\s+)?(?:(?:running|executing|using|doing|calling|run|execute|use|try"
    r"|trying)\s+(?=" + PH_OPEN + r"))?"
)
_PAREN = re.compile(r"\s*\([^()]*\)")
_DONE_TAIL = re.compile(
    r"(?i)\s+(?:finishes|is\s+done|is\s+finished|completes|is\s+complete|is\s+completed|is\s+ready"
    r"|is\s+over|ends|lands|is\s+merged|is\s+approved)$"
)
_GERUND_NOT = word_set("nothing something everything anything morning evening thing string")


def clause_start(text: str, pos: int, floor: int = 0) -> int:
    """Offset just after the last clause boundary before ``pos`` (not before ``floor``)."""
    last = _last_boundary(text, pos, floor)
    return last[1] if last else floor


def _last_boundary(text: str, pos: int, floor: int) -> tuple[int, int] | None:
    last = None
    for m in _CLAUSE_BOUNDARY.finditer(text, floor, pos):
        last = (m.start(), m.end())
    return last


def strip_subject(text: str) -> str:
    """Drop a leading discourse word, pronoun subject and auxiliaries: "we can not start X"
    -> "start X"."""
    out = _LEAD_SUBJECT.sub("", text.strip(" ,;:-"), count=1)
    return out.strip() or text.strip()


def clean_phrase(text: str, *, done_tail: bool = False, keep_det: bool = False) -> str:
    """Trim a phrase object: parentheticals, leading "by running", trailing adverbs."""
    out = _PAREN.sub("", text).replace(TIME_MARK, " ")
    out = re.sub(r"\s+", " ", out).strip(" ,;:-")
    out = _LEAD_FIX.sub("", out).strip()
    if out.lower().startswith("to "):
        out = out[3:]
    out = strip_subject(out) if out.split(" ", 1)[0].lower() in PRONOUNS - DETERMINERS else out
    for _ in range(3):
        new = _TRAIL_JUNK.sub("", out).strip()
        if done_tail:
            new = _DONE_TAIL.sub("", new).strip()
        if new == out:
            break
        out = new
    words = out.split()
    while (
        not keep_det
        and words
        and words[0].lower() in DETERMINERS - {"no", "all", "both", "another"}
    ):
        words = words[1:]
    return " ".join(words[:14])


def _right_end(text: str, start: int, end: int) -> int:
    m = _HARD_STOP.search(text, start, end)
    return m.start() if m else end


def is_gerund_clause(text: str) -> bool:
    """True when ``text`` starts with a gerund ("Running the notebook", "deploying to prod")."""
    first = text.split(" ", 1)[0].lower()
    return len(first) > 4 and first.endswith("ing") and first.isalpha() and first not in _GERUND_NOT


def person_like(text: str, masked: Masked) -> bool:
    """A pronoun, a user id, a capitalised name or a person noun ("the doctor")."""
    value = text.strip()
    ent = masked.entity(value)
    if ent is not None:
        return ent.kind == "userid"
    words = value.split()
    if not words:
        return False
    low = [w.lower() for w in words]
    if len(words) == 1 and low[0] in {"i", "we", "he", "she", "they", "me", "you"}:
        return True
    if low[-1] in PERSON_NOUNS:
        return True
    if low[0] in ("user", "customer", "client") and masked.entity(" ".join(words[1:])):
        return True
    caps = [w for w in words if w[:1].isupper() or w.startswith(("Dr.", "Mr.", "Ms."))]
    return len(caps) == len(words) <= 3 and low[-1] not in KNOWN_TOOLS and not words[-1].isupper()


def _class_like(text: str) -> bool:
    low = text.lower().split()
    if not low or low[0] in PRONOUNS:
        return False
    return low[-1].endswith("s") or low[-1] in {"member", "customer", "user", "account", "plan"}


_LIST_CONJ = re.compile(r"(?i)\s(?:and|or|&)\s")


def _np_items(right: str, split: str, keep: frozenset[str]) -> list[str]:
    items = split_list(right, split_and=split == "and") if split != "none" else [right]
    # a comma alone does not make a list: "Utrecht, loving it so far" is not a second place
    is_list = bool(_LIST_CONJ.search(right))
    out: list[str] = []
    for i, item in enumerate(items):
        np = leading_np(item, keep=keep)
        if not np:
            if i == 0:
                continue
            break
        out.append(np)
        if split == "none" or not is_list:
            break
    return out


def _phrase_items(right: str, split: str, done_tail: bool) -> list[str]:
    cleaned = clean_phrase(right, done_tail=done_tail)
    if not cleaned:
        return []
    if split == "none":
        return [cleaned]
    items: list[str] = []
    for item in split_list(cleaned, split_and=False):
        parts = [p.strip() for p in re.split(r"\s+and\s+", item)]
        short = len(parts) > 1 and all(0 < len(p.split()) <= 4 for p in parts)
        items.extend(parts if short else [item])
    out = [clean_phrase(i, done_tail=done_tail) for i in items]
    return [o for o in out if o]


@dataclass(frozen=True, slots=True)
class _Hit:
    """A trigger match whose start was moved back over the auxiliaries before it."""

    begin: int
    stop: int
    groups: dict[str, str | None]

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.stop

    def group(self, name: str) -> str | None:
        return self.groups.get(name)

    def groupdict(self) -> dict[str, str | None]:
        return self.groups


_WORD = re.compile(r"\S+")


def _prefix_start(text: str, pos: int) -> int:
    """Where the run of at most five auxiliaries/adverbs/negations ending at ``pos`` starts."""
    words = [
        (m.start() + max(0, pos - 80), m.group().lower())
        for m in _WORD.finditer(text[max(0, pos - 80) : pos])
    ]
    start, taken, i = pos, 0, len(words) - 1
    while i >= 0 and taken < 5:
        if i > 0 and (words[i - 1][1], words[i][1]) in _PRE_PAIRS:
            start, i = words[i - 1][0], i - 2
        elif words[i][1] in _PRE_WORDS:
            start, i = words[i][0], i - 1
        else:
            break
        taken += 1
    return start


def _hit(m: re.Match[str], text: str) -> _Hit:
    groups = m.groupdict()
    if "pre" not in groups:
        return _Hit(m.start(), m.end(), groups)
    begin = _prefix_start(text, m.start())
    return _Hit(begin, m.end(), {**groups, "pre": text[begin : m.start()]})


def find_relations(masked: Masked) -> list[RawRelation]:
    """All trigger matches of one masked sentence, as raw relations in text order."""
    text = masked.text
    found: list[tuple[Trigger, _Hit]] = []
    for trig in TRIGGERS:
        for match in trig.regex.finditer(text):
            m = _hit(match, text)
            if m.end() > m.start() and GUARDS[trig.guard].admits(masked, m):
                found.append((trig, m))
    found.sort(key=lambda tm: (-tm[0].priority, -(tm[1].end() - tm[1].start()), tm[1].start()))
    chosen: list[tuple[Trigger, _Hit]] = []
    for trig, m in found:
        if all(m.end() <= o.start() or m.start() >= o.end() for _, o in chosen):
            chosen.append((trig, m))
    chosen.sort(key=lambda tm: tm[1].start())
    out: list[RawRelation] = []
    for i, (trig, m) in enumerate(chosen):
        prev_end = chosen[i - 1][1].end() if i else 0
        if i + 1 < len(chosen):
            nxt = chosen[i + 1][1].start()
            last = _last_boundary(text, nxt, m.end())
            right_end = last[0] if last else nxt
        else:
            right_end = len(text)
        rel = _relation(masked, trig, m, prev_end, max(right_end, m.end()))
        if rel is not None:
            out.append(rel)
            out.extend(_chained(masked, rel, m, trig))
    return out


_AS_ROLE = re.compile(r"(?i)^\s*as\s+(?:a|an|the)\s+(?P<x>.+)$")
_AT_ORG = re.compile(r"(?i)^\s*(?:at|for|with)\s+(?P<x>.+)$")


def _chained(masked: Masked, rel: RawRelation, m: _Hit, trig: Trigger) -> list[RawRelation]:
    """ "joined Stripe as a data engineer" adds the role; "works as a designer at Canva" the
    employer."""
    if rel.relation not in ("WORKS_AT", "HAS_ROLE") or not rel.objects or rel.negated:
        return []
    rest = masked.text[m.end() :]
    head = rest.lower().find(rel.objects[0].lower())
    if head < 0:
        return []
    rest = rest[head + len(rel.objects[0]) :].replace(TIME_MARK, " ")  # "at X in March as a Y"
    follow = _AS_ROLE.match(rest) if rel.relation == "WORKS_AT" else _AT_ORG.match(rest)
    if follow is None or not (np := leading_np(follow.group("x"))):
        return []
    relation = "HAS_ROLE" if rel.relation == "WORKS_AT" else "WORKS_AT"
    del trig
    return [rel._replace(relation=relation, objects=(np,), start=rel.start + 1, attrs=())]


def _subject(masked: Masked, trig: Trigger, m: _Hit, prev_end: int) -> str | None:
    text = masked.text
    if trig.subject == "group":
        s = m.groupdict().get("s")
        if not s:
            return _if_clause(text[: m.start()])
        return clean_phrase(s) or s.strip()
    start = clause_start(text, m.start(), prev_end)
    clause = text[start : m.start()].strip()
    if trig.subject == "clause":
        return clean_phrase(strip_subject(clause)) if clause else ""
    if trig.relation in ("CAUSED_BY", "SOLVED_BY") and not trig.reverse and clause:
        return clean_phrase(strip_subject(clause))
    if is_gerund_clause(clause) and len(clause.split()) <= 8:
        return clean_phrase(clause)
    return trailing_np(text[prev_end : m.start()])


_IF_CLAUSE = re.compile(
    r"(?i)\bif\s+(?:you\s+(?:see|get|hit|encounter|run\s+into)\s+)?(?P<x>[^,;]+?)\s*,"
)
_HYPOTHETICAL = re.compile(r"(?i)^\s*(?:once|after|when|if|until|before|whenever)\b")


def _if_clause(before: str) -> str | None:
    m = _IF_CLAUSE.search(before)
    return clean_phrase(m.group("x")) if m else None


def _objects(trig: Trigger, m: _Hit, right: str) -> list[str]:
    """The objects a trigger reads: its own group, a phrase, noun phrases, or none."""
    if trig.obj == "group":
        raw = m.groupdict().get("o") or ""
        return _phrase_items(raw[: _right_end(raw, 0, len(raw))], trig.split, False)
    if trig.obj == "phrase":
        return _phrase_items(right, trig.split, trig.family == "dependency")
    if trig.obj == "none":
        return []
    return _np_items(right, trig.split, trig.keep)


def _relation(
    masked: Masked, trig: Trigger, m: _Hit, prev_end: int, right_end: int
) -> RawRelation | None:
    text = masked.text
    pre = m.groupdict().get("pre") or ""
    negated = trig.negated or bool(_NEG_RE.search(pre))
    relation, conf = trig.relation, trig.confidence
    attrs: list[tuple[str, str]] = []
    right_raw = text[m.end() : right_end]
    right = (
        right_raw[: _right_end(right_raw, 0, len(right_raw))] if trig.obj != "group" else right_raw
    )
    subject = _subject(masked, trig, m, prev_end)
    if trig.subject == "with":
        subject = with_source(text, m.start(), prev_end)
    objects: list[str]
    if trig.subject == "right":
        subject, objects = leading_np(right, max_tokens=8), []
    else:
        objects = _objects(trig, m, right)
    if st := m.group("st"):
        attrs.append(("status", status_value(st)))
        if negated:
            attrs.append(("negated_status", "1"))
    measure, level = m.group("m"), m.group("adj")
    if measure and level:  # "U123's blood pressure has been high" -> "high blood pressure"
        objects = [f"{level.lower()} {' '.join(measure.lower().split())}"]
    if relation == "REQUIRES":
        relation, subject = _requirement(text[: m.start()], subject, right_raw, bool(objects))
    if relation == "PREFERS" and re.search(r"\bnow\b", pre, re.IGNORECASE):
        attrs.append(("change", "now"))
    first_obj = objects[0].split()[0].lower() if objects else ""
    if (
        trig.family == "taxonomy"
        and subject is not None
        and (subject.lower() in PRONOUNS or not objects or first_obj in _NOT_CLASS)
    ):
        return None
    draft = GUARDS[trig.guard].refine(
        Draft(masked, m, prev_end, pre, subject, tuple(objects), negated, tuple(attrs))
    )
    if draft is None:
        return None
    subject, objects, negated, attrs = (
        draft.subject,
        list(draft.objects),
        draft.negated,
        list(draft.attrs),
    )
    if relation == "USES" and _MODAL_RE.search(pre):
        attrs.append(("modal", "1"))
    if not objects and trig.obj != "none" and trig.subject != "right":
        return None
    if subject == "" or (subject is None and trig.subject != "group"):
        return None
    return RawRelation(
        trig.family,
        relation,
        subject,
        tuple(objects),
        negated,
        conf,
        m.start(),
        trig.guard,
        (*attrs, ("reverse", "1")) if trig.reverse else tuple(attrs),
    )


_NOT_CLASS = word_set(
    "bit lot little good great nice bad huge big fan way idea point day time thing question "
    "problem must shame pity joke mess pain lovely beautiful really very pretty"
)


def _plural_pair(subject: str | None, objects: list[str]) -> bool:
    if not subject or not objects or len(objects[0].split()) > 3 or len(subject.split()) > 3:
        return False
    obj = objects[0].lower()
    return subject.lower().endswith("s") and not obj.endswith(("ous", "ss", "us", "is"))


def _requirement(
    before: str, subject: str | None, right: str, has_object: bool
) -> tuple[str, str | None]:
    """REQUIRES, or DEPENDS_ON for "needs X first"; "to X, you need Y" / "you need Y for X"
    make X the subject."""
    relation = "DEPENDS_ON" if _FIRST.search(right) else "REQUIRES"
    if subject is not None and subject.lower() in {"you", "we", "i", "one", "they"}:
        lead = _TO_LEAD.search(before)
        after = re.search(r"(?i)\b(?:for|to)\s+(?P<x>.+)$", right)
        if lead:
            subject = clean_phrase(lead.group("x"))
        elif after and has_object:
            subject = clean_phrase(after.group("x"))
        else:
            subject = None
    return relation, subject


_FIRST = re.compile(r"(?i)\b(?:first|beforehand|upfront|before\s+anything\s+else)\b")
_TO_LEAD = re.compile(
    r"(?i)(?:^|[,;:]\s*)(?:to|for)\s+(?P<x>[^,;:]+?),?\s+(?:you|we|i|one|they)\s*$"
)
_BUILD_VERBS = word_set(
    "built made created developed wrote implemented designed plotted rendered trained hosted "
    "deployed tested coded styled summed loaded opened closed read parsed computed queried "
    "fetched processed analyzed analysed cleaned filtered visualized visualised generated "
    "converted calculated scraped looked"
)


def with_source(text: str, pos: int, floor: int) -> str | None:
    """What a trailing "with X" / "using X" attaches to: "built the dashboard with React" ->
    the dashboard; "a file opened with open()" -> a file; "I loaded it with" -> "it"."""
    start = clause_start(text, pos, floor)
    left = tokens(text[start:pos])
    for i in range(len(left) - 1, -1, -1):
        low = left[i].text.lower()
        if low in _BUILD_VERBS or (low.endswith("ed") and len(low) > 4 and i > 0):
            after = text[start + left[i].end : pos].strip()
            if after and low in _BUILD_VERBS and leading_np(after):
                return leading_np(after)
            before = text[start : start + left[i].start]
            before = re.sub(rf"(?:\b(?:{_AUX}|{_NEG}|{_ADV})\s*)+$", "", before.strip(), flags=re.I)
            return trailing_np(before) or None
    verbs = [t for t in left if t.text.lower() in INFLECTED_VERBS]
    if verbs:  # "the app talks to the backend through GraphQL": the app, not the backend
        return trailing_np(text[start : start + verbs[0].start]) or None
    return trailing_np(text[start:pos]) or None


def tool_like(value: str, masked: Masked) -> bool:
    """A code entity, a known tool, a capitalised product name or a "... API/tool" phrase."""
    ent = masked.entity(value)
    if ent is not None:
        return ent.kind not in ("quoted", "userid", "error")
    words = value.split()
    if not words:
        return False
    low = value.lower()
    return (
        low in KNOWN_TOOLS
        or words[-1].lower() in {"api", "tool", "sdk", "cli", "library", "endpoint", "service"}
        or (all(w[:1].isupper() or w[:1].isdigit() for w in words) and len(words) <= 3)
    )


def verb_phrase(name: str) -> bool:
    """ "run migrations", "set up CI", "build the API" but not "order number" or "return"."""
    words = name.lower().split()
    if len(words) < 2 or words[0] not in VERB_BASES:
        return False
    nxt = words[1]
    return nxt in DETERMINERS or nxt in PREPOSITIONS or nxt.endswith(("s", "ing")) or nxt == "it"


# --- guards -------------------------------------------------------------------------------


class Draft(NamedTuple):
    """A relation as a trigger found it, before its guard narrows or drops it."""

    masked: Masked
    hit: _Hit
    prev_end: int
    pre: str
    subject: str | None
    objects: tuple[str, ...]
    negated: bool
    attrs: tuple[tuple[str, str], ...]


def _always(masked: Masked, m: _Hit) -> bool:
    return True


def _unchanged(draft: Draft) -> Draft | None:
    return draft


@dataclass(frozen=True, slots=True)
class Guard:
    """An extra check a trigger needs beyond its regex.

    Attributes:
        admits: made on the bare match before overlapping matches are resolved, so a weak
            trigger cannot hide a real one.
        refine: made on the drafted relation: returns it, possibly narrowed, or None to drop it.
        chains_to_user: "X with Y": Y is used with X, so the builder gives Y to X's user.
    """

    admits: Callable[[Masked, _Hit], bool] = _always
    refine: Callable[[Draft], Draft | None] = _unchanged
    chains_to_user: bool = False


def _tool_follows(masked: Masked, m: _Hit) -> bool:
    return tool_like(leading_np(masked.text[m.end() :]), masked)


def _only_tools(d: Draft) -> Draft:
    return d._replace(objects=tuple(o for o in d.objects if tool_like(o, d.masked)))


def _not_hypothetical(masked: Masked, m: _Hit) -> bool:
    start = clause_start(masked.text, m.start())
    return not _HYPOTHETICAL.match(masked.text[start : m.start()])


def _with_be(d: Draft) -> Draft | None:
    return None if d.hit.group("st") and not _BE_RE.search(d.pre) else d


def _after_negation(d: Draft) -> Draft | None:
    # "it does not work until X": the negation is the condition's, not the relation's
    if not _NEG_RE.search(d.masked.text[d.prev_end : d.hit.start()]):
        return None
    return d._replace(negated=False)


def _person_subject(d: Draft) -> Draft | None:
    return d if d.subject is not None and person_like(d.subject, d.masked) else None


def _class_subject(d: Draft) -> Draft | None:
    if d.subject is None or not (_class_like(d.subject) or person_like(d.subject, d.masked)):
        return None
    return d


def _plural(d: Draft) -> Draft | None:
    return d if _plural_pair(d.subject, list(d.objects)) else None


def _moved(d: Draft) -> Draft:
    return d._replace(attrs=(*d.attrs, ("change", "moved")))


def _proper_object(d: Draft) -> Draft:
    kept = tuple(o for o in d.objects[:1] if o[:1].isupper() or d.masked.entity(o))
    return d._replace(objects=kept)


#: The guards by the name a trigger gives (``Trigger.guard``); "" is no guard.
GUARDS: Mapping[str, Guard] = {
    "": Guard(),
    "tool": Guard(admits=_tool_follows, refine=_only_tools, chains_to_user=True),
    "be": Guard(admits=_not_hypothetical, refine=_with_be),
    "needs_neg": Guard(refine=_after_negation),
    "person": Guard(refine=_person_subject),
    "class": Guard(refine=_class_subject),
    "plural": Guard(refine=_plural),
    "moved": Guard(refine=_moved),
    "proper": Guard(refine=_proper_object),
}
if _unknown := {t.guard for t in TRIGGERS} - set(GUARDS):  # a typo in the table fails at import
    raise ValueError(f"triggers name guards that do not exist: {sorted(_unknown)}")
