"""Communities of the graph and a summary node for each. Pure functions over given nodes/edges.

Communities are found with Louvain (networkx) on the undirected graph of current, non-structural
edges, weighted by edge weight, so what is used together clusters together. Each community of
``min_size`` or more nodes gets a Summary node linked to every member by a SUMMARIZES edge, so
retrieval can go from the summary to its members (and from one member to the rest). The summary
text is extractive offline (the most connected members and the strongest facts among them) or
written by an LLM when one is configured. An existing summary whose members mostly match a new
community is updated rather than duplicated.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sage_memory.evolve.duplicates import SUMMARY_LABEL
from sage_memory.evolve.proposal import Proposal, is_current, pair_key
from sage_memory.evolve.reinforce import STRUCTURAL
from sage_memory.types import Edge, Node, Scope, new_id

if TYPE_CHECKING:
    import networkx as nx

#: Communities smaller than this get no summary.
MIN_SIZE = 4
#: Member overlap (Jaccard) from which a community is the one an existing summary covers.
SAME_COMMUNITY = 0.5


def detect(
    nodes: Iterable[Node], edges: Iterable[Edge], *, min_size: int = MIN_SIZE, seed: int = 0
) -> list[list[str]]:
    """Louvain communities of at least ``min_size`` node ids, largest first (deterministic)."""
    # Imported here: networkx costs a fifth of a second, and every engine imports this module
    # at open (the evolver's wiring) while only an evolution run detects communities.
    import networkx as nx

    graph: nx.Graph[str] = nx.Graph()
    ids = {n.id for n in nodes if n.label != SUMMARY_LABEL}
    graph.add_nodes_from(sorted(ids))
    for e in edges:
        if (
            not is_current(e)
            or e.relation in STRUCTURAL
            or e.source_id == e.target_id
            or e.source_id not in ids
            or e.target_id not in ids
        ):
            continue
        w = max(e.weight, 0.0) * max(e.confidence, 0.0)
        if graph.has_edge(e.source_id, e.target_id):
            graph[e.source_id][e.target_id]["weight"] += w
        else:
            graph.add_edge(e.source_id, e.target_id, weight=w)
    if graph.number_of_edges() == 0:
        return []
    found = nx.community.louvain_communities(graph, weight="weight", seed=seed)
    out = [sorted(c) for c in found if len(c) >= min_size]
    out.sort(key=lambda c: (-len(c), c[0]))
    return out


def _degrees(members: set[str], edges: Iterable[Edge]) -> Counter[str]:
    deg: Counter[str] = Counter()
    for e in edges:
        if e.source_id in members and e.target_id in members and is_current(e):
            deg[e.source_id] += 1
            deg[e.target_id] += 1
    return deg


def inner_facts(members: Sequence[Node], edges: Iterable[Edge], limit: int = 5) -> list[str]:
    """The strongest current facts between members, as sentences."""
    names = {n.id: n.name for n in members}
    inside = [
        e
        for e in edges
        if e.source_id in names
        and e.target_id in names
        and is_current(e)
        and e.relation not in STRUCTURAL
    ]
    inside.sort(key=lambda e: (-e.weight * e.confidence, e.id))
    facts = []
    for e in inside:
        fact = e.fact or f"{names[e.source_id]} {e.relation.replace('_', ' ').lower()} "
        if not e.fact:
            fact += names[e.target_id]
        if fact not in facts:
            facts.append(fact)
        if len(facts) >= limit:
            break
    return facts


def central(members: Sequence[Node], edges: Iterable[Edge]) -> list[Node]:
    """Members by their number of edges inside the community, then by support."""
    deg = _degrees({n.id for n in members}, edges)
    return sorted(members, key=lambda n: (-deg[n.id], -len(n.memory_ids), n.name))


def extractive_summary(members: Sequence[Node], edges: Sequence[Edge]) -> tuple[str, str]:
    """(title, text) from the most connected members and the strongest facts among them."""
    ranked = central(members, edges)
    title = "Topic: " + ", ".join(n.name for n in ranked[:3])
    text = f"{len(members)} related items: " + ", ".join(n.name for n in ranked[:8])
    if len(ranked) > 8:
        text += ", ..."
    facts = inner_facts(members, edges, 3)
    if facts:
        text += ". Key facts: " + "; ".join(facts)
    return title, text + "."


def match_existing(
    community: Iterable[str], summaries: Mapping[str, set[str]]
) -> tuple[str | None, float]:
    """The existing summary (id -> its member ids) covering most of ``community``."""
    members = set(community)
    best, best_score = None, 0.0
    for sid, covered in sorted(summaries.items()):
        union = members | covered
        score = len(members & covered) / len(union) if union else 0.0
        if score > best_score:
            best, best_score = sid, score
    if best_score < SAME_COMMUNITY:
        return None, best_score
    return best, best_score


def plan_summary(
    scope: Scope,
    members: Sequence[Node],
    title: str,
    text: str,
    *,
    method: str,
    now: datetime,
    existing: Node | None = None,
    existing_edges: Sequence[Edge] = (),
) -> Proposal:
    """The rows of a (new or updated) summary node and its SUMMARIZES edges.

    Args:
        scope: The partition.
        members: The community.
        title: The summary node's name.
        text: Its summary text.
        method: "extractive" or the LLM's name, recorded on the node.
        now: The run's time.
        existing: The summary node this community updates, if any.
        existing_edges: That node's SUMMARIZES edges.
    """
    ids = [n.id for n in members]
    attributes = {"members": len(ids), "method": method, "summarized_at": now.isoformat()}
    if existing is None:
        node = Node(
            id=new_id(),
            scope=scope,
            name=title,
            label=SUMMARY_LABEL,
            summary=text,
            attributes=attributes,
            confidence=0.8,
            salience=0.6,
            created_at=now,
            updated_at=now,
        )
    else:
        node = dataclasses.replace(
            existing,
            name=title,
            summary=text,
            attributes={**existing.attributes, **attributes},
            updated_at=now,
        )
    linked = {
        e.target_id: e
        for e in existing_edges
        if e.relation == "SUMMARIZES" and e.source_id == node.id
    }
    puts: list[Node | Edge] = [node]
    for n in members:
        if n.id not in linked:
            puts.append(
                Edge(
                    id=new_id(),
                    scope=scope,
                    source_id=node.id,
                    target_id=n.id,
                    relation="SUMMARIZES",
                    fact=f"{title} covers {n.name}",
                    valid_from=now,
                    created_at=now,
                )
            )
    gone = tuple(e for target, e in linked.items() if target not in set(ids))
    verb = "update" if existing is not None else "add"
    return Proposal(
        op="summarize",
        summary=f"{verb} summary {title!r} over {len(ids)} nodes",
        puts=tuple(puts),
        removes=gone,
        confidence=0.8,
        evidence={"members": [n.name for n in members[:20]], "size": len(ids), "method": method},
        key="summarize:" + (node.id if existing is not None else pair_key(*sorted(ids)[:3])),
        payload={"members": ids, "summary": None if existing is None else existing.id},
    )
