"""Planning a run: what each partition's pass looks at, and the steps in their order.

Per partition a run reads what changed since its previous run (the journal and the access log
after the saved cursors) and the next slice of rotating sweeps over the edges, nodes and
memories, each capped by ``EvolveConfig.max_items_per_run``; the cursors it leaves behind go to
the partition's state (:mod:`~sage_memory.evolve.state`) when the run finishes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sage_memory.evolve.context import EvolveContext
from sage_memory.evolve.proposal import Overlay, Workspace
from sage_memory.evolve.run import Run
from sage_memory.evolve.state import load_state
from sage_memory.evolve.steps import MAX_SPLIT_CHECKS, ScopePass
from sage_memory.types import Node, Scope

#: Nodes one run examines for duplicates: a 50th of the budget (each costs a name lookup, a
#: lexical and a vector query, and its neighbourhood), changed nodes first.
_DUPLICATE_SHARE = 50


def plan_run(ctx: EvolveContext, ws: Workspace, scopes: Sequence[Scope], run: Run) -> None:
    """Plan ``run`` over ``scopes`` into ``ws``: auto-applied proposals are written to it, the
    rest kept in the run."""
    ws = Overlay(ws)
    for scope in scopes:
        part = scope.partition
        run.scopes.append(part)
        plan_scope(ctx, ws, part, run)
    embed_new_nodes(ctx, ws, run)


def plan_scope(ctx: EvolveContext, ws: Workspace, part: Scope, run: Run) -> None:
    """One partition's pass: read its slices, run the allowed steps, keep its new state."""
    store = ctx.store
    state = load_state(store, part)
    new = dict(state)
    if "raw" in state:
        new["prev_raw"] = state["raw"]
        new["prev_merges"] = state.get("merge_candidates", 0)
    budget = max(1, ctx.cfg.max_items_per_run)
    ops = run.operations
    steps = ScopePass(ctx, ws, part, run)
    touched_nodes = _touched(ctx, part, state, new, budget)
    edges, new["edge_offset"] = _next_slice(
        store.list_edges, part, state.get("edge_offset", 0), budget
    )
    nodes, new["node_offset"] = _next_slice(
        store.list_nodes, part, state.get("node_offset", 0), max(1, budget // 5)
    )
    if ops & {"reinforce", "associate"}:
        steps.access(state=state, new=new, budget=budget)
    if "decay" in ops:
        steps.decay(edges)
    changed = sorted(touched_nodes)[:budget]
    if "expire_conflicts" in ops:
        steps.conflicts(changed=changed, edges=edges, budget=budget)
    if ops & {"merge", "split"}:
        pool = list(dict.fromkeys([*changed, *(n.id for n in nodes)]))
        # The split check has its own cursor: the shared node slice restarts at the first
        # ids whenever the graph is smaller than it, so a fixed head would be all it saw.
        swept, new["split_offset"] = _next_slice(
            store.list_nodes, part, state.get("split_offset", 0), MAX_SPLIT_CHECKS
        )
        checks = list(dict.fromkeys([*changed, *(n.id for n in swept)]))
        steps.duplicates(pool[: max(1, budget // _DUPLICATE_SHARE)], checks)
    if "summarize" in ops and (changed or "communities_at" not in state):
        steps.communities(changed, budget)
        new["communities_at"] = run.now.isoformat()
    if ops & {"upgrade_relation", "new_relation"}:
        steps.discovery(changed, edges)
    if "suggest_links" in ops:
        steps.latent(changed[: max(1, budget // _DUPLICATE_SHARE)])
    if "archive" in ops:
        memories, new["memory_offset"] = _next_slice(
            store.list_memories, part, int(state.get("memory_offset", 0)), budget
        )
        steps.archive(memories)
    if "remove_orphans" in ops:
        steps.orphans(list(dict.fromkeys([*changed, *(n.id for n in nodes)]))[:budget])
    run.states[part.key] = new


def _touched(
    ctx: EvolveContext, part: Scope, state: Mapping[str, Any], new: dict[str, Any], budget: int
) -> set[str]:
    """Nodes written since the last run, or with edges written (the run's own excluded)."""
    entries = ctx.store.journal(
        scope=part, after_seq=int(state.get("journal_seq", 0)), limit=budget
    )
    nodes: set[str] = set()
    for _, ch in entries:
        if ch.actor == "evolver":
            continue
        rec = ch.after if ch.after is not None else ch.before
        if ch.entity == "node":
            nodes.add(ch.entity_id)
        elif ch.entity == "edge" and rec is not None:
            nodes.update((rec["source_id"], rec["target_id"]))
    if entries:
        new["journal_seq"] = entries[-1][0]
    return nodes


def _next_slice(
    reader: Callable[..., list[Any]], part: Scope, offset: int, size: int
) -> tuple[list[Any], int]:
    """The next slice of a rotating sweep, and where the following one starts."""
    items = reader(part, limit=size, offset=offset)
    if not items and offset:
        offset = 0
        items = reader(part, limit=size, offset=0)
    return items, 0 if len(items) < size else offset + len(items)


def embed_new_nodes(ctx: EvolveContext, ws: Workspace, run: Run) -> None:
    """Vectors for nodes the run created or renamed (summaries, split senses)."""
    for part in run.scopes:
        puts = [
            r
            for s, p, applied in run.proposed
            if applied and s.key == part.key
            for r in p.puts
            if isinstance(r, Node)
        ]
        if not puts:
            continue
        ids = list(dict.fromkeys(n.id for n in puts if n.id not in run.gone))
        stored = {n.id: n for n in ctx.store.get_nodes(part, ids)}
        todo = []
        for nid in ids:
            node = ws.node(part, nid)
            if node is not None and (nid not in stored or stored[nid].name != node.name):
                todo.append(node)
        if todo:
            vectors = ctx.embedder.embed([n.name for n in todo])
            for node, vec in zip(todo, vectors, strict=True):
                ws.put(node, vec)
