"""The default graph schema: node labels and relation types, and how unknown ones are mapped.

Users extend it through ``ExtractConfig.node_labels`` / ``relation_types``. A label or relation
an LLM invents is mapped to a known one when a synonym is known; otherwise the edge becomes
RELATED_TO with the original label kept in its attributes (``original_relation``), never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

NODE_LABELS: tuple[str, ...] = (
    "Concept",
    "Entity",
    "Person",
    "Organization",
    "Place",
    "Project",
    "Task",
    "Step",
    "Event",
    "Tool",
    "Resource",
    "Preference",
    "Rule",
    "Error",
    "Document",
    "Summary",
    "Value",
    "Time",
)

RELATION_TYPES: tuple[str, ...] = (
    "IS_A",
    "PART_OF",
    "CONTAINS_TASK",
    "PRECEDES",
    "BLOCKED_BY",
    "DEPENDS_ON",
    "REQUIRES",
    "USES",
    "CAUSES",
    "CAUSED_BY",
    "SOLVED_BY",
    "HAS_PREFERENCE",
    "PREFERS",
    "DISLIKES",
    "RESULTED_IN",
    "REFERENCES",
    "CONTEXT_OF",
    "SUPPORTS",
    "CONTRADICTS",
    "RELATED_TO",
    "POSSIBLY_RELATED_TO",
    "MENTIONS",
    "LIVES_IN",
    "WORKS_AT",
    "HAS_STATUS",
    "HAS_ROLE",
    "HAS_PROPERTY",
    "ASSOCIATED_WITH",
    "SUMMARIZES",
    "MEMBER_OF",
    "NEXT_TURN",
    "OWNS",
    # health and advice (scenario 7): an allergy is not a dislike, advice is not a preference
    "ALLERGIC_TO",
    "RECOMMENDS",
)

#: Synonyms an LLM (or a user) may use for a built-in relation.
RELATION_SYNONYMS: dict[str, str] = {
    "TYPE_OF": "IS_A",
    "KIND_OF": "IS_A",
    "INSTANCE_OF": "IS_A",
    "SUBCLASS_OF": "IS_A",
    "BELONGS_TO": "PART_OF",
    "COMPONENT_OF": "PART_OF",
    "HAS_PART": "PART_OF",
    "HAS_TASK": "CONTAINS_TASK",
    "CONTAINS": "CONTAINS_TASK",
    "BEFORE": "PRECEDES",
    "FOLLOWED_BY": "PRECEDES",
    "THEN": "PRECEDES",
    "BLOCKS": "BLOCKED_BY",
    "WAITS_FOR": "DEPENDS_ON",
    "NEEDS": "REQUIRES",
    "USED": "USES",
    "BUILT_WITH": "USES",
    "LEADS_TO": "CAUSES",
    "LED_TO": "CAUSES",
    "FIXED_BY": "SOLVED_BY",
    "RESOLVED_BY": "SOLVED_BY",
    "FIXES": "SOLVED_BY",
    "LIKES": "PREFERS",
    "LOVES": "PREFERS",
    "HATES": "DISLIKES",
    "LOCATED_IN": "LIVES_IN",
    "RESIDES_IN": "LIVES_IN",
    "EMPLOYED_BY": "WORKS_AT",
    "WORKS_FOR": "WORKS_AT",
    "STATUS": "HAS_STATUS",
    "ROLE": "HAS_ROLE",
    "CITES": "REFERENCES",
    "ADVISES": "RECOMMENDS",
    "SUGGESTS": "RECOMMENDS",
    "INTOLERANT_TO": "ALLERGIC_TO",
}

LABEL_SYNONYMS: dict[str, str] = {
    "PERSON": "Person",
    "HUMAN": "Person",
    "USER": "Person",
    "COMPANY": "Organization",
    "ORG": "Organization",
    "LOCATION": "Place",
    "CITY": "Place",
    "COUNTRY": "Place",
    "LIBRARY": "Tool",
    "FUNCTION": "Tool",
    "API": "Tool",
    "FRAMEWORK": "Resource",
    "BUG": "Error",
    "EXCEPTION": "Error",
    "ACTIVITY": "Event",
    "GOAL": "Task",
    "TODO": "Task",
    "FILE": "Document",
    "IDEA": "Concept",
    "TOPIC": "Concept",
    "THING": "Entity",
}

_NON_WORD = re.compile(r"[^A-Z0-9]+")


def relation_key(name: str) -> str:
    """Upper snake case: 'depends on' -> 'DEPENDS_ON'."""
    return _NON_WORD.sub("_", name.strip().upper()).strip("_")


@dataclass(frozen=True, slots=True)
class Schema:
    """Known labels and relations, the built-ins plus the user's own."""

    node_labels: frozenset[str]
    relation_types: frozenset[str]

    @classmethod
    def default(cls, labels: Iterable[str] = (), relations: Iterable[str] = ()) -> Schema:
        return cls(
            frozenset(NODE_LABELS) | frozenset(labels),
            frozenset(RELATION_TYPES) | frozenset(relation_key(r) for r in relations),
        )

    def map_relation(self, name: str) -> tuple[str, str | None]:
        """Return (relation to store, original name when it had to be replaced by RELATED_TO)."""
        key = relation_key(name)
        if key in self.relation_types:
            return key, None
        if key in RELATION_SYNONYMS:
            return RELATION_SYNONYMS[key], None
        return "RELATED_TO", name

    def map_label(self, name: str) -> str:
        """A known label for ``name``: itself, a synonym's target, or 'Entity'."""
        cleaned = name.strip()
        for label in self.node_labels:
            if label.lower() == cleaned.lower():
                return label
        return LABEL_SYNONYMS.get(relation_key(cleaned), "Entity")
