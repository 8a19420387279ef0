"""The graph-reading half of the duplicate, split and community steps, and review decisions.

The pure scoring and planning live in :mod:`~sage_memory.evolve.duplicates` and
:mod:`~sage_memory.evolve.communities`; this module fetches what they need (bounded) through
the run's workspace and the store, and re-plans a queued suggestion on the graph as it is when
someone accepts it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sage_memory.errors import ValidationError
from sage_memory.evolve import communities, conflicts, discovery, duplicates, latent
from sage_memory.evolve.prompts import (
    SPLIT_SCHEMA,
    SUMMARY_SCHEMA,
    ask,
    parse_json_object,
    parse_split,
    parse_summary,
    split_prompt,
    summary_prompt,
)
from sage_memory.evolve.proposal import Proposal, Workspace, is_current, pair_key
from sage_memory.evolve.reinforce import STRUCTURAL
from sage_memory.index.base import collection_name
from sage_memory.types import Edge, Node, Scope, Suggestion

if TYPE_CHECKING:
    from sage_memory.evolve.runner import Evolver

#: Nearest names from the vector index that are worth scoring as duplicates (low on purpose:
#: scoring, not this, decides; it only keeps far-off names out).
_NEAR = 0.3
#: Neighbours whose other ends are looked at for nodes sharing two or more of them.
_MAX_SECOND_HOP = 8


def _neighbourhood(edges: Iterable[Edge]) -> tuple[dict[str, set[str]], Counter[str]]:
    neigh: dict[str, set[str]] = defaultdict(set)
    degree: Counter[str] = Counter()
    for e in edges:
        if is_current(e) and e.source_id != e.target_id:
            neigh[e.source_id].add(e.target_id)
            neigh[e.target_id].add(e.source_id)
            degree[e.source_id] += 1
            degree[e.target_id] += 1
    return neigh, degree


def _sharing_neighbours(ws: Workspace, part: Scope, nid: str) -> set[str]:
    """Nodes that share two or more neighbours with ``nid`` (through a few of its neighbours)."""
    own, _ = _neighbourhood(e for e in ws.edges_of(part, [nid]) if e.relation not in STRUCTURAL)
    near = sorted(own.get(nid, ()))
    if len(near) < 2:
        return set()
    seen: Counter[str] = Counter()
    for e in ws.edges_of(part, near[:_MAX_SECOND_HOP]):
        if not is_current(e) or e.relation in STRUCTURAL:
            continue
        for end, other in ((e.source_id, e.target_id), (e.target_id, e.source_id)):
            if end in own[nid] and other != nid:
                seen[other] += 1
    return {other for other, n in seen.items() if n >= 2}


def merge_candidates(
    ev: Evolver,
    ws: Workspace,
    part: Scope,
    *,
    gone: set[str],
    written: set[str],
    pool: Sequence[str],
    now: datetime,
) -> Iterator[Proposal]:
    """Merge proposals for the nodes of ``pool`` (lazily: the caller applies one before the
    next is planned, so a node merged away is not proposed again)."""
    seen: set[str] = set()
    vectors = ev.store.get_vectors(list(pool))
    coll = collection_name(part.key, "node")
    for nid in pool:
        node = None if nid in gone else ws.node(part, nid)
        if node is None or node.label == duplicates.SUMMARY_LABEL:
            continue
        cands: set[str] = {
            c for c in node.attributes.get("merge_candidates", ()) if isinstance(c, str)
        }
        names = {node.name, *node.aliases, *duplicates.canonical_names(node, ev.aliases)}
        cands.update(n.id for n in ev.store.find_nodes(part, sorted(names)))
        vec = vectors.get(nid)
        if vec is not None:
            cands.update(i for i, score in ev.index.query(coll, vec, 8) if score >= _NEAR)
        cands.update(_sharing_neighbours(ws, part, nid))
        cands -= {nid, *gone}
        cands = {c for c in cands if pair_key(nid, c) not in seen}
        if not cands:
            continue
        others = [o for o in (ws.node(part, c) if c in written else None for c in cands) if o]
        others += ev.store.get_nodes(part, sorted(c for c in cands if c not in written))
        edges = ws.edges_of(part, [nid, *(o.id for o in others)])
        neigh, degree = _neighbourhood(edges)
        typed: dict[str, set[tuple[str, bool, str]]] = defaultdict(set)
        for e in edges:
            if is_current(e) and e.relation not in STRUCTURAL and e.source_id != e.target_id:
                typed[e.source_id].add((e.relation, True, e.target_id))
                typed[e.target_id].add((e.relation, False, e.source_id))
        links: dict[str, set[str]] = defaultdict(set)
        for e in edges:
            if is_current(e) and nid in (e.source_id, e.target_id):
                links[e.target_id if e.source_id == nid else e.source_id].add(e.relation)
        other_vectors = ev.store.get_vectors([o.id for o in others])
        for other in sorted(others, key=lambda o: o.id):
            seen.add(pair_key(nid, other.id))
            if nid in gone or other.id in gone:
                continue
            scored = duplicates.merge_score(
                node,
                other,
                aliases=ev.aliases,
                vector_a=vec,
                vector_b=other_vectors.get(other.id),
                neighbours_a=neigh[nid],
                neighbours_b=neigh[other.id],
                linked_by=links[other.id],
                fuzzy=ev.config.extract.fuzzy_threshold,
                typed_a=typed[nid],
                typed_b=typed[other.id],
            )
            if scored is None or scored[0] < ev.cfg.merge_suggest_confidence:
                continue
            score, evidence = scored
            shared = evidence["shared_neighbours"]
            if shared:
                named = {n.id: n.name for n in ev.store.get_nodes(part, shared)}
                evidence["shared_neighbours"] = [named.get(i, i) for i in shared]
            keep, drop = duplicates.choose_keep(
                node, other, degree, ev.aliases, getattr(ev.embedder, "count_tokens", None)
            )
            touching = [e for e in edges if {keep.id, drop.id} & {e.source_id, e.target_id}]
            yield duplicates.plan_merge(
                keep, drop, touching, now, confidence=score, evidence=evidence
            )
            if nid in gone:
                break
            node = ws.node(part, nid) or node  # the kept node may have grown aliases


def split_candidates(
    ev: Evolver,
    ws: Workspace,
    part: Scope,
    *,
    gone: set[str],
    pool: Sequence[str],
    now: datetime,
) -> Iterator[Proposal]:
    """Split proposals for the high-degree nodes of ``pool`` whose edge contexts cluster."""
    for nid in pool:
        node = None if nid in gone else ws.node(part, nid)
        if node is None or node.label == duplicates.SUMMARY_LABEL:
            continue
        edges = [
            e
            for e in ws.edges_of(part, [nid])
            if is_current(e)
            and e.relation not in STRUCTURAL
            and e.relation != "ASSOCIATED_WITH"  # usage, not meaning
            and e.source_id != e.target_id
        ]
        if len(edges) < duplicates.SPLIT_MIN_DEGREE:
            continue
        edges.sort(key=lambda e: e.id)
        ends = {e.target_id if e.source_id == nid else e.source_id for e in edges}
        names = {n.id: n.name for n in ev.store.get_nodes(part, sorted(ends))}
        contexts = [duplicates.edge_context(e, nid, names) for e in edges]
        found = duplicates.split_groups(ev.embedder.embed(contexts))
        if found is None:
            continue
        index_groups, separation = found
        groups = [[edges[i] for i in g] for g in index_groups]
        senses = [node.name] + [duplicates.sense_name(node, g, names) for g in groups[1:]]
        method = "embedding clusters"
        if ev.llm is not None:
            texts = [[contexts[i] for i in g] for g in index_groups]
            answer = ask(ev.llm, split_prompt(node.name, texts), SPLIT_SCHEMA)
            if answer is not None:
                data = parse_json_object(answer)
                if data is not None and data.get("split") is False:
                    continue  # the LLM read the contexts as one thing
                named = parse_split(answer, len(groups))
                if named is not None:
                    senses = [node.name, *named[1:]]
                    method = f"llm:{ev.llm.name}"
        yield duplicates.plan_split(
            node,
            groups,
            senses,
            now,
            confidence=round(min(0.9, 0.5 + separation), 3),
            evidence={
                "separation": separation,
                "method": method,
                "examples": [[contexts[i] for i in g[:3]] for g in index_groups],
            },
        )


def summary_text(
    ev: Evolver, members: Sequence[Node], edges: Sequence[Edge], *, use_llm: bool
) -> tuple[str, str, str]:
    """(title, text, method) for a community: the LLM's when asked and usable, else extractive."""
    if use_llm and ev.llm is not None:
        ranked = communities.central(members, edges)
        facts = communities.inner_facts(members, edges, 20)
        answer = ask(ev.llm, summary_prompt([n.name for n in ranked], facts), SUMMARY_SCHEMA)
        parsed = None if answer is None else parse_summary(answer)
        if parsed is not None:
            return parsed[0], parsed[1], f"llm:{ev.llm.name}"
    title, text = communities.extractive_summary(members, edges)
    return title, text, "extractive"


def _summaries_of(
    ws: Workspace, part: Scope, members: Sequence[str]
) -> tuple[dict[str, set[str]], list[Edge]]:
    """Existing summary nodes over ``members``: summary id -> all its members, and its edges."""
    first = ws.edges_of(part, list(members), relations=["SUMMARIZES"])
    sids = sorted({e.source_id for e in first if e.target_id in set(members)})
    if not sids:
        return {}, []
    edges = [e for e in ws.edges_of(part, sids, relations=["SUMMARIZES"]) if e.source_id in sids]
    covered: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        covered[e.source_id].add(e.target_id)
    return dict(covered), edges


def community_proposals(
    ev: Evolver,
    ws: Workspace,
    part: Scope,
    *,
    gone: set[str],
    changed: Sequence[str],
    budget: int,
    now: datetime,
) -> list[Proposal]:
    """Summary proposals for the communities of the scope (whole graph when it fits the
    budget, else the neighbourhood of what changed)."""
    count, _ = ev.store.count_graph(part)
    if count <= budget:
        nodes = ev.store.list_nodes(part)
        edges = ev.store.list_edges(part)
    else:
        around = ws.edges_of(part, list(changed)[:budget])
        ids = list(
            dict.fromkeys([*changed, *(x for e in around for x in (e.source_id, e.target_id))])
        )
        nodes = ev.store.get_nodes(part, ids[:budget])
        edges = ws.edges_of(part, [n.id for n in nodes])
    nodes = [n for n in nodes if n.id not in gone]
    edges = [e for e in edges if e.id not in gone]
    by_id = {n.id: n for n in nodes}
    use_llm = ev.auto(Proposal(op="summarize", summary=""))
    out = []
    for community in communities.detect(nodes, edges):
        covered, summary_edges = _summaries_of(ws, part, community)
        sid, _ = communities.match_existing(community, covered)
        if sid is not None and covered[sid] == set(community):
            continue
        members = [by_id[i] for i in community]
        title, text, method = summary_text(ev, members, edges, use_llm=use_llm)
        existing = None if sid is None else ws.node(part, sid)
        out.append(
            communities.plan_summary(
                part,
                members,
                title,
                text,
                method=method,
                now=now,
                existing=existing,
                existing_edges=[e for e in summary_edges if e.source_id == sid],
            )
        )
        if len(out) >= 20:
            break
    return out


def manual_merge(ws: Workspace, keep: Node, other: Node, now: datetime) -> Proposal:
    """The rows of merging ``other`` into ``keep`` as a person asked."""
    if keep.id == other.id:
        raise ValidationError(f"{keep.name!r} and {other.name!r} are the same node")
    if keep.scope.key != other.scope.key:
        raise ValidationError("nodes of two scopes cannot be merged")
    edges = ws.edges_of(keep.scope, [keep.id, other.id])
    return duplicates.plan_merge(keep, other, edges, now, evidence={"by": "user"})


def _stale(s: Suggestion, what: str) -> ValidationError:
    return ValidationError(
        f"suggestion {s.id} ({s.summary}) no longer applies: {what}. Reject it with reject()."
    )


def replan(ev: Evolver, ws: Workspace, s: Suggestion, now: datetime) -> Proposal:
    """Plan a queued suggestion again, on the graph as it is now."""
    part = s.scope.partition
    pay = s.payload

    def node(nid: object) -> Node:
        found = ws.node(part, str(nid))
        if found is None:
            raise _stale(s, f"node {nid} is gone")
        return found

    def edges(ids: Iterable[object]) -> list[Edge]:
        out = [e for e in (ws.edge(part, str(i)) for i in ids) if e is not None]
        if not out:
            raise _stale(s, "its edges are gone")
        return out

    if s.op == "merge":
        keep, drop = node(pay["keep"]), node(pay["drop"])
        touching = ws.edges_of(part, [keep.id, drop.id])
        return duplicates.plan_merge(
            keep, drop, touching, now, confidence=s.confidence, evidence=s.evidence
        )
    if s.op == "split":
        target = node(pay["node"])
        groups = [
            [e for e in edges(g) if target.id in (e.source_id, e.target_id)] for g in pay["groups"]
        ]
        if any(not g for g in groups):
            raise _stale(s, "a group of its edges no longer touches the node")
        return duplicates.plan_split(
            target, groups, list(pay["names"]), now, confidence=s.confidence
        )
    if s.op == "expire_conflicts" and "edge" in pay:
        (edge,) = edges([pay["edge"]])
        return conflicts.settle_contradiction(
            edge, node(pay["winner_node"]), node(pay["loser_node"]), now
        )
    if s.op == "expire_conflicts":
        found = {e.id: e for e in edges([pay["winner"], pay["loser"]])}
        if len(found) != 2:
            raise _stale(s, "one of the two facts is gone")
        return conflicts.settle(found[pay["winner"]], found[pay["loser"]], now)
    if s.op == "summarize":
        members = [m for m in (ws.node(part, str(i)) for i in pay["members"]) if m is not None]
        if len(members) < 2:
            raise _stale(s, "its members are gone")
        inner = ws.edges_of(part, [m.id for m in members])
        title, text, method = summary_text(ev, members, inner, use_llm=True)
        existing = None if pay.get("summary") is None else ws.node(part, str(pay["summary"]))
        own = [] if existing is None else ws.edges_of(part, [existing.id], ["SUMMARIZES"])
        return communities.plan_summary(
            part,
            members,
            title,
            text,
            method=method,
            now=now,
            existing=existing,
            existing_edges=[e for e in own if existing is not None and e.source_id == existing.id],
        )
    if s.op in ("upgrade_relation", "new_relation"):
        current = [e for e in edges(pay["edges"]) if is_current(e)]
        if not current:
            raise _stale(s, "its edges are no longer current")
        return discovery.plan_upgrade(current, str(pay["relation"]), now, op=s.op)
    if s.op == "suggest_links":
        a, b = node(pay["a"]), node(pay["b"])
        if any(
            is_current(e) and {e.source_id, e.target_id} == {a.id, b.id}
            for e in ws.edges_of(part, [a.id])
        ):
            raise _stale(s, "the two nodes are linked already")
        return latent.plan_link(part, a, b, now, s.confidence, s.evidence)
    if s.op == "archive":
        memories = ev.store.get_memories(part, [str(i) for i in pay["memories"]])
        if not memories:
            raise _stale(s, "the memory is gone")
        return Proposal(
            op="archive",
            summary=s.summary,
            puts=tuple(dataclasses.replace(m, archived=True, updated_at=now) for m in memories),
        )
    if s.op == "remove_orphans":
        lonely = [node(i) for i in pay["nodes"]]
        if ws.edges_of(part, [n.id for n in lonely]):
            raise _stale(s, "the node has edges again")
        return Proposal(op="remove_orphans", summary=s.summary, removes=tuple(lonely))
    raise ValidationError(f"suggestion {s.id} has an unknown operation {s.op!r}")
