"""Names a memory only mentions: linked to their node apart from the memory's facts.

An extractor marks a proposed node ``mention`` when the memory names it outside any fact it
reads ("Wow, John! ...", "we met Ines at the Lagos office" when no relation phrasing matched).
Such a link says the memory names the node, not that it says something about it, so it is kept
on the node as ``Node.mention_ids``, never in ``memory_ids`` (the provenance of facts that
retrieval reads: the walk's memory-to-entity links, the other-subject test, support counts).
That is a property of one memory's link, not of the node: "John" can be the subject of one
memory's facts and only mentioned by another's vocative.

A mention joins the node already known by its exact name (the best supported one), touching
nothing of it but the mention list: a name said in passing does not rename, relabel or alias
a node. Without one it becomes a *mention-only* node: no vector, no text-search entry (see
:func:`sage_memory.store.rows.text_searchable`), found by its exact name only. A fact that
later names it and finds no other node to join takes it over (:func:`held_by_mention`), and
from then on it is an ordinary node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from sage_memory.engine.unit import UnitOfWork
from sage_memory.entities.names import match_key
from sage_memory.schema import Schema
from sage_memory.store.base import name_key
from sage_memory.types import GraphDelta, Memory, Node, NodeSpec, new_id


def fact_specs(delta: GraphDelta | None) -> list[NodeSpec]:
    """The proposed nodes of ``delta`` that some fact of the memory is about."""
    return [] if delta is None else [s for s in delta.nodes if not s.mention]


def link_mention(
    uow: UnitOfWork,
    memory: Memory,
    spec: NodeSpec,
    schema: Schema,
    aliases: dict[str, str],
    now: datetime,
) -> Node:
    """The node ``memory`` mentions as ``spec``, with the memory in its mention list (a node
    the memory states a fact about keeps it as provenance only)."""
    scope = memory.scope.partition
    norm = match_key(spec.name, aliases, builtin=False)
    keys = {name_key(spec.name), name_key(norm)}
    found = [
        n
        for n in uow.find_nodes(scope, [spec.name, norm])
        if keys & {name_key(x) for x in (n.name, *n.aliases)}
    ]
    if found:
        node = max(found, key=lambda n: (memory.id in n.memory_ids, len(n.memory_ids)))
        if memory.id in node.memory_ids or memory.id in node.mention_ids:
            return node
        updated = dataclasses.replace(node, mention_ids=(*node.mention_ids, memory.id))
        uow.put(updated)
        return updated
    node = Node(
        id=new_id(),
        scope=scope,
        name=spec.name,
        label=schema.map_label(spec.label),
        aliases=tuple(a for a in dict.fromkeys((*spec.aliases, norm)) if a and a != spec.name),
        attributes=dict(spec.attributes),
        confidence=spec.confidence,
        salience=spec.salience,
        mention_ids=(memory.id,),
        created_at=now,
        updated_at=now,
    )
    uow.put(node)
    return node


def held_by_mention(candidates: Iterable[Node], spec: NodeSpec, norm: str) -> Node | None:
    """The mention-only node among ``candidates`` named exactly as ``spec``: a fact that finds
    no node to join takes it over (its id and mentions) instead of making a second node of the
    name. Entity resolution of a fact never weighs a mention-only node otherwise, so the graph
    of facts is the one it would be without mentions."""
    keys = {name_key(spec.name), name_key(norm)}
    for node in candidates:
        if node.only_mentioned() and keys & {name_key(x) for x in (node.name, *node.aliases)}:
            return node
    return None
