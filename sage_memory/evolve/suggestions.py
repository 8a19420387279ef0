"""The review queue's decisions: look a suggestion up, accept it, remember learned relations.

Accepting plans the suggestion again on the graph as it is now (its payload says how): the rows
it named may have changed or gone since the run that queued it, and a suggestion whose rows are
gone no longer applies (the error says to reject it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from datetime import datetime

from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.evolve import conflicts, discovery, duplicates, latent, learned
from sage_memory.evolve.context import EvolveContext
from sage_memory.evolve.planner import embed_new_nodes
from sage_memory.evolve.proposal import Proposal, Workspace, apply_to, is_current
from sage_memory.evolve.review import summary_proposal
from sage_memory.evolve.run import OPERATIONS, Run
from sage_memory.types import Edge, Node, Suggestion, new_id


def get_suggestion(ctx: EvolveContext, suggestion_id: str) -> Suggestion:
    """A queued suggestion by id, whatever its status."""
    found = ctx.store.list_suggestions(status=None, ids=[suggestion_id])
    if not found:
        raise NotFoundError(f"no suggestion with id {suggestion_id!r}; list them with review()")
    return found[0]


def accept(
    ctx: EvolveContext, ws: Workspace, suggestion_id: str, now: datetime
) -> tuple[Suggestion, Proposal]:
    """Plan an open suggestion again on the current graph and write it into ``ws``."""
    s = get_suggestion(ctx, suggestion_id)
    if s.status != "open":
        raise ValidationError(f"suggestion {suggestion_id} is already {s.status}")
    p = replan(ctx, ws, s, now)
    apply_to(ws, p)
    run = Run(new_id(), now, False, frozenset(OPERATIONS), [s.scope.partition])
    run.proposed.append((s.scope.partition, p, True))
    embed_new_nodes(ctx, ws, run)
    if p.op == "new_relation":
        learn_relation(ctx, str(p.payload["relation"]))
    return s, p


def learned_relations(ctx: EvolveContext) -> list[str]:
    """Relation types added by accepted suggestions (kept in the store)."""
    return learned.learned_relations(ctx.store)


def learn_relation(ctx: EvolveContext, relation: str) -> None:
    """Keep an accepted relation type, and know it from now on."""
    learned.keep_relation(ctx.store, relation)
    ctx.relations.add(relation)


# -- planning again --------------------------------------------------------------------------


class _Rows:
    """A suggestion's rows as the graph has them now; one that is gone makes it stale."""

    def __init__(self, ws: Workspace, s: Suggestion) -> None:
        self.ws = ws
        self.s = s
        self.part = s.scope.partition

    def stale(self, what: str) -> ValidationError:
        s = self.s
        return ValidationError(
            f"suggestion {s.id} ({s.summary}) no longer applies: {what}. Reject it with reject()."
        )

    def node(self, nid: object) -> Node:
        found = self.ws.node(self.part, str(nid))
        if found is None:
            raise self.stale(f"node {nid} is gone")
        return found

    def edges(self, ids: Iterable[object]) -> list[Edge]:
        out = [e for e in (self.ws.edge(self.part, str(i)) for i in ids) if e is not None]
        if not out:
            raise self.stale("its edges are gone")
        return out


def _merge(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    s = rows.s
    keep, drop = rows.node(s.payload["keep"]), rows.node(s.payload["drop"])
    touching = rows.ws.edges_of(rows.part, [keep.id, drop.id])
    return duplicates.plan_merge(
        keep, drop, touching, now, confidence=s.confidence, evidence=s.evidence
    )


def _split(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    pay = rows.s.payload
    target = rows.node(pay["node"])
    groups = [
        [e for e in rows.edges(g) if target.id in (e.source_id, e.target_id)] for g in pay["groups"]
    ]
    if any(not g for g in groups):
        raise rows.stale("a group of its edges no longer touches the node")
    return duplicates.plan_split(
        target, groups, list(pay["names"]), now, confidence=rows.s.confidence
    )


def _conflict(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    pay = rows.s.payload
    if "edge" in pay:  # a fact contradicted by another memory's (conflicts.contradictions)
        (edge,) = rows.edges([pay["edge"]])
        return conflicts.settle_contradiction(
            edge, rows.node(pay["winner_node"]), rows.node(pay["loser_node"]), now
        )
    found = {e.id: e for e in rows.edges([pay["winner"], pay["loser"]])}
    if len(found) != 2:
        raise rows.stale("one of the two facts is gone")
    return conflicts.settle(found[pay["winner"]], found[pay["loser"]], now)


def _summary(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    ws, part, pay = rows.ws, rows.part, rows.s.payload
    members = [m for m in (ws.node(part, str(i)) for i in pay["members"]) if m is not None]
    if len(members) < 2:
        raise rows.stale("its members are gone")
    inner = ws.edges_of(part, [m.id for m in members])
    existing = None if pay.get("summary") is None else ws.node(part, str(pay["summary"]))
    own = [] if existing is None else ws.edges_of(part, [existing.id], ["SUMMARIZES"])
    return summary_proposal(
        ctx,
        part,
        members,
        inner,
        now,
        use_llm=True,
        existing=existing,
        existing_edges=[e for e in own if existing is not None and e.source_id == existing.id],
    )


def _relation(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    s = rows.s
    current = [e for e in rows.edges(s.payload["edges"]) if is_current(e)]
    if not current:
        raise rows.stale("its edges are no longer current")
    return discovery.plan_upgrade(current, str(s.payload["relation"]), now, op=s.op)


def _link(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    s = rows.s
    a, b = rows.node(s.payload["a"]), rows.node(s.payload["b"])
    if any(
        is_current(e) and {e.source_id, e.target_id} == {a.id, b.id}
        for e in rows.ws.edges_of(rows.part, [a.id])
    ):
        raise rows.stale("the two nodes are linked already")
    return latent.plan_link(rows.part, a, b, now, s.confidence, s.evidence)


def _archive(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    s = rows.s
    memories = ctx.store.get_memories(rows.part, [str(i) for i in s.payload["memories"]])
    if not memories:
        raise rows.stale("the memory is gone")
    return Proposal(
        op="archive",
        summary=s.summary,
        puts=tuple(dataclasses.replace(m, archived=True, updated_at=now) for m in memories),
    )


def _orphans(ctx: EvolveContext, rows: _Rows, now: datetime) -> Proposal:
    s = rows.s
    lonely = [rows.node(i) for i in s.payload["nodes"]]
    if rows.ws.edges_of(rows.part, [n.id for n in lonely]):
        raise rows.stale("the node has edges again")
    return Proposal(op="remove_orphans", summary=s.summary, removes=tuple(lonely))


#: How each operation's suggestion is planned again (the operations a run can queue).
_REPLANNERS: dict[str, Callable[[EvolveContext, _Rows, datetime], Proposal]] = {
    "merge": _merge,
    "split": _split,
    "expire_conflicts": _conflict,
    "summarize": _summary,
    "upgrade_relation": _relation,
    "new_relation": _relation,
    "suggest_links": _link,
    "archive": _archive,
    "remove_orphans": _orphans,
}


def replan(ctx: EvolveContext, ws: Workspace, s: Suggestion, now: datetime) -> Proposal:
    """Plan a queued suggestion again, on the graph as it is now."""
    planner = _REPLANNERS.get(s.op)
    if planner is None:
        raise ValidationError(f"suggestion {s.id} has an unknown operation {s.op!r}")
    return planner(ctx, _Rows(ws, s), now)
