"""Relation types the review queue accepted, kept in the store's meta.

Read at every open (the schema learns them), so this module stays small: opening a memory to
search it must not import the evolver's planning and review code (evolve/suggestions.py).
"""

from __future__ import annotations

import json

from sage_memory.store.base import GraphStore

_LEARNED = "schema:relations"


def learned_relations(store: GraphStore) -> list[str]:
    """Relation types added by accepted suggestions."""
    raw = store.get_meta(_LEARNED)
    return list(json.loads(raw)) if raw else []


def keep_relation(store: GraphStore, relation: str) -> None:
    """Add ``relation`` to the kept ones (once)."""
    known = learned_relations(store)
    if relation not in known:
        store.set_meta(_LEARNED, json.dumps([*known, relation]))
