"""The graph-reading half of the duplicate, split and community steps, and manual merges.

The pure scoring and planning live in :mod:`~sage_memory.evolve.duplicates` and
:mod:`~sage_memory.evolve.communities`; this module fetches what they need (bounded) through
the run's workspace and the store. Re-planning an accepted suggestion is
:mod:`~sage_memory.evolve.suggestions`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from sage_memory.errors import ValidationError
from sage_memory.evolve import communities, duplicates
from sage_memory.evolve.context import EvolveContext
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
from sage_memory.types import Edge, Node, Scope

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
    ctx: EvolveContext,
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
    vectors = ctx.store.get_vectors(list(pool))
    coll = collection_name(part.key, "node")
    for nid in pool:
        node = None if nid in gone else ws.node(part, nid)
        if node is None or node.label == duplicates.SUMMARY_LABEL:
            continue
        cands: set[str] = {
            c for c in node.attributes.get("merge_candidates", ()) if isinstance(c, str)
        }
        names = {node.name, *node.aliases, *duplicates.canonical_names(node, ctx.aliases)}
        cands.update(n.id for n in ctx.store.find_nodes(part, sorted(names)))
        vec = vectors.get(nid)
        if vec is not None:
            cands.update(i for i, score in ctx.index.query(coll, vec, 8) if score >= _NEAR)
        cands.update(_sharing_neighbours(ws, part, nid))
        cands -= {nid, *gone}
        cands = {c for c in cands if pair_key(nid, c) not in seen}
        if not cands:
            continue
        others = [o for o in (ws.node(part, c) if c in written else None for c in cands) if o]
        others += ctx.store.get_nodes(part, sorted(c for c in cands if c not in written))
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
        other_vectors = ctx.store.get_vectors([o.id for o in others])
        for other in sorted(others, key=lambda o: o.id):
            seen.add(pair_key(nid, other.id))
            if nid in gone or other.id in gone:
                continue
            scored = duplicates.merge_score(
                node,
                other,
                aliases=ctx.aliases,
                vector_a=vec,
                vector_b=other_vectors.get(other.id),
                neighbours_a=neigh[nid],
                neighbours_b=neigh[other.id],
                linked_by=links[other.id],
                fuzzy=ctx.config.extract.fuzzy_threshold,
                typed_a=typed[nid],
                typed_b=typed[other.id],
            )
            if scored is None or scored[0] < ctx.cfg.merge_suggest_confidence:
                continue
            score, evidence = scored
            shared = evidence["shared_neighbours"]
            if shared:
                named = {n.id: n.name for n in ctx.store.get_nodes(part, shared)}
                evidence["shared_neighbours"] = [named.get(i, i) for i in shared]
            keep, drop = duplicates.choose_keep(
                node, other, degree, ctx.aliases, getattr(ctx.embedder, "count_tokens", None)
            )
            touching = [e for e in edges if {keep.id, drop.id} & {e.source_id, e.target_id}]
            yield duplicates.plan_merge(
                keep, drop, touching, now, confidence=score, evidence=evidence
            )
            if nid in gone:
                break
            node = ws.node(part, nid) or node  # the kept node may have grown aliases


def split_candidates(
    ctx: EvolveContext,
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
        names = {n.id: n.name for n in ctx.store.get_nodes(part, sorted(ends))}
        contexts = [duplicates.edge_context(e, nid, names) for e in edges]
        found = duplicates.split_groups(ctx.embedder.embed(contexts))
        if found is None:
            continue
        index_groups, separation = found
        groups = [[edges[i] for i in g] for g in index_groups]
        senses = [node.name] + [duplicates.sense_name(node, g, names) for g in groups[1:]]
        method = "embedding clusters"
        if ctx.llm is not None:
            texts = [[contexts[i] for i in g] for g in index_groups]
            answer = ask(ctx.llm, split_prompt(node.name, texts), SPLIT_SCHEMA)
            if answer is not None:
                data = parse_json_object(answer)
                if data is not None and data.get("split") is False:
                    continue  # the LLM read the contexts as one thing
                named = parse_split(answer, len(groups))
                if named is not None:
                    senses = [node.name, *named[1:]]
                    method = f"llm:{ctx.llm.name}"
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


def summary_proposal(
    ctx: EvolveContext,
    part: Scope,
    members: Sequence[Node],
    edges: Sequence[Edge],
    now: datetime,
    *,
    use_llm: bool,
    existing: Node | None,
    existing_edges: Sequence[Edge],
) -> Proposal:
    """The summary node of a community of ``members`` (a new one, or ``existing`` rewritten)."""
    title, text, method = _summary_text(ctx, members, edges, use_llm=use_llm)
    return communities.plan_summary(
        part,
        members,
        title,
        text,
        method=method,
        now=now,
        existing=existing,
        existing_edges=existing_edges,
    )


def _summary_text(
    ctx: EvolveContext, members: Sequence[Node], edges: Sequence[Edge], *, use_llm: bool
) -> tuple[str, str, str]:
    """(title, text, method) for a community: the LLM's when asked and usable, else extractive."""
    if use_llm and ctx.llm is not None:
        ranked = communities.central(members, edges)
        facts = communities.inner_facts(members, edges, 20)
        answer = ask(ctx.llm, summary_prompt([n.name for n in ranked], facts), SUMMARY_SCHEMA)
        parsed = None if answer is None else parse_summary(answer)
        if parsed is not None:
            return parsed[0], parsed[1], f"llm:{ctx.llm.name}"
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
    ctx: EvolveContext,
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
    count, _ = ctx.store.count_graph(part)
    if count <= budget:
        nodes = ctx.store.list_nodes(part)
        edges = ctx.store.list_edges(part)
    else:
        around = ws.edges_of(part, list(changed)[:budget])
        ids = list(
            dict.fromkeys([*changed, *(x for e in around for x in (e.source_id, e.target_id))])
        )
        nodes = ctx.store.get_nodes(part, ids[:budget])
        edges = ws.edges_of(part, [n.id for n in nodes])
    nodes = [n for n in nodes if n.id not in gone]
    edges = [e for e in edges if e.id not in gone]
    by_id = {n.id: n for n in nodes}
    use_llm = ctx.auto(Proposal(op="summarize", summary=""))
    out = []
    for community in communities.detect(nodes, edges):
        covered, summary_edges = _summaries_of(ws, part, community)
        sid, _ = communities.match_existing(community, covered)
        if sid is not None and covered[sid] == set(community):
            continue
        members = [by_id[i] for i in community]
        out.append(
            summary_proposal(
                ctx,
                part,
                members,
                edges,
                now,
                use_llm=use_llm,
                existing=None if sid is None else ws.node(part, sid),
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
