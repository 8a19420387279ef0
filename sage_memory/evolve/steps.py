"""One run's pass over one scope partition: the steps, each reading a bounded slice.

A :class:`ScopePass` feeds each step (the pure functions of the step modules) what it needs,
read through the run's workspace so a step sees what earlier steps wrote, and takes the
proposals it returns: applied now when the configuration allows, otherwise kept for the
review queue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from sage_memory.evolve import conflicts, discovery, hygiene, latent, reinforce
from sage_memory.evolve.context import EvolveContext
from sage_memory.evolve.proposal import Proposal, Workspace, apply_to, is_current, pair_key
from sage_memory.evolve.review import community_proposals, merge_candidates, split_candidates
from sage_memory.evolve.run import Run
from sage_memory.types import Edge, Memory, Node, Scope

#: High-degree nodes one run examines for a split (each embeds its edge contexts).
MAX_SPLIT_CHECKS = 20
#: Communities one run summarises.
_MAX_SUMMARIES = 20


class ScopePass:
    """The steps of one run over one partition.

    Args:
        ctx: The evolver's parts.
        ws: The run's workspace (reads see the run's own writes).
        part: The partition.
        run: The run's state; proposals and the ids they write or delete are added to it.
    """

    def __init__(self, ctx: EvolveContext, ws: Workspace, part: Scope, run: Run) -> None:
        self.ctx = ctx
        self.ws = ws
        self.part = part
        self.run = run

    # -- taking proposals ------------------------------------------------------------------
    def take(self, p: Proposal) -> bool:
        """Record a proposal; apply it to the workspace when it may apply on its own."""
        run = self.run
        if p.op not in run.operations:
            return False
        applied = self.ctx.auto(p)
        if applied:
            apply_to(self.ws, p)
            run.written.update(r.id for r in p.puts)
            run.gone.update(r.id for r in p.removes)
        run.proposed.append((self.part, p, applied))
        return applied

    def take_all(self, props: Iterable[Proposal]) -> None:
        for p in props:
            self.take(p)

    def live_nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Nodes as the run sees them (its own writes included, its deletions excluded)."""
        run, part = self.run, self.part
        wanted = [i for i in dict.fromkeys(ids) if i not in run.gone]
        out = {
            n.id: n
            for n in self.ctx.store.get_nodes(part, [i for i in wanted if i not in run.written])
        }
        for i in wanted:
            if i in run.written:
                node = self.ws.node(part, i)
                if node is not None:
                    out[i] = node
        return out

    # -- steps -----------------------------------------------------------------------------
    def access(self, *, state: Mapping[str, Any], new: dict[str, Any], budget: int) -> None:
        """Reinforce, associate and count use from the access log since the last run."""
        store, part, run = self.ctx.store, self.part, self.run
        after, until = int(state.get("access_seq", 0)), store.access_seq()
        if until <= after:
            return
        pairs = store.co_access(part, after_seq=after, until_seq=until, limit=budget)
        ids = sorted({x for a, b, _, _ in pairs for x in (a, b)})[:budget]
        edges = self.ws.edges_of(part, ids) if ids else []
        props, unlinked = reinforce.reinforce(pairs, edges, run.now, self.ctx.cfg)
        self.take_all(props)
        if unlinked and "associate" in run.operations:
            self._associate(unlinked, until)
        if "reinforce" in run.operations:
            used = store.accessed(part, after_seq=after, until_seq=until)
            ids = list(used)[:budget]
            records: list[Node | Memory] = list(self.live_nodes(ids).values())
            records += store.get_memories(part, [i for i in ids if i not in run.written])
            self.take_all(reinforce.record_use(records, used))
            new["access_seq"] = until

    def _associate(self, unlinked: Sequence[reinforce.CoAccess], until: int) -> None:
        """Learnt links for unlinked pairs used together often enough over their lifetime."""
        cfg, part, run = self.ctx.cfg, self.part, self.run
        ends = sorted({x for a, b, _, _ in unlinked for x in (a, b)})
        wanted = {(a, b) for a, b, _, _ in unlinked}
        since = run.now - timedelta(days=reinforce.horizon_days(cfg))
        lifetime = [
            t
            for t in self.ctx.store.co_access(part, until_seq=until, node_ids=ends, since=since)
            if (t[0], t[1]) in wanted
        ]
        nodes = self.live_nodes(ends)
        self.take_all(reinforce.associate(lifetime, nodes, part, run.now, cfg))

    def decay(self, edges: Sequence[Edge]) -> None:
        """Decay the weights of the edge slice (rows this run already wrote are current)."""
        run = self.run
        fresh = [e for e in edges if e.id not in run.written and e.id not in run.gone]
        self.take_all(reinforce.decay(fresh, run.now, self.ctx.cfg))

    def conflicts(self, *, changed: Sequence[str], edges: Sequence[Edge], budget: int) -> None:
        """Settle contradicting facts around changed nodes and single-valued edges."""
        part, run = self.part, self.run
        single = set(self.ctx.config.extract.single_valued)
        sources = list(changed)
        sources += [
            e.source_id
            for e in edges
            if e.relation in single or e.relation == "CONTRADICTS" or e.attributes.get("negated")
        ]
        sources = [s for s in dict.fromkeys(sources) if s not in run.gone][: max(1, budget // 5)]
        if not sources:
            return
        found = self.ws.edges_of(part, sources)
        mine = [e for e in found if e.source_id in set(sources)]
        nodes = self.live_nodes({x for e in mine for x in (e.source_id, e.target_id)})
        names = {i: n.name for i, n in nodes.items()}
        props = conflicts.edge_conflicts(mine, single, run.now, names)
        props += conflicts.contradictions(mine, nodes, run.now)
        self.take_all(props)

    def duplicates(self, pool: Sequence[str], checks: Sequence[str]) -> None:
        """Merge candidates among ``pool``; split candidates among ``checks``."""
        ctx, ws, part, run = self.ctx, self.ws, self.part, self.run
        if "merge" in run.operations:
            for p in merge_candidates(
                ctx, ws, part, gone=run.gone, written=run.written, pool=pool, now=run.now
            ):
                self.take(p)
        if "split" in run.operations:
            chosen = checks[:MAX_SPLIT_CHECKS]
            for p in split_candidates(ctx, ws, part, gone=run.gone, pool=chosen, now=run.now):
                self.take(p)

    def communities(self, changed: Sequence[str], budget: int) -> None:
        """Summaries of the communities around what changed."""
        run = self.run
        found = community_proposals(
            self.ctx, self.ws, self.part, gone=run.gone, changed=changed, budget=budget, now=run.now
        )
        for p in found[:_MAX_SUMMARIES]:
            self.take(p)

    def discovery(self, changed: Sequence[str], edges: Sequence[Edge]) -> None:
        """Typed relations for vague edges and new relation types (suggested only)."""
        part, run = self.part, self.run
        sample = self._current_sample(changed, edges)
        ends = {x for e in sample for x in (e.source_id, e.target_id)}
        labels = {i: n.label for i, n in self.live_nodes(ends).items()}
        props: list[Proposal] = []
        if "upgrade_relation" in run.operations:
            patterns = discovery.label_patterns(sample, labels)
            props += discovery.by_label_pattern(sample, labels, patterns, run.now)
            vague = [e for e in sample if e.relation == "POSSIBLY_RELATED_TO" and is_current(e)]
            if vague:
                ids = sorted({x for e in vague for x in (e.source_id, e.target_id)})
                usage = self.ctx.store.co_access(part, node_ids=ids)
                props += discovery.by_usage(vague, usage, self.ctx.cfg.associate_after, run.now)
        if "new_relation" in run.operations:
            props += discovery.new_relation_types(sample, self.ctx.relations, run.now)
        self.take_all(props)

    def _current_sample(self, changed: Sequence[str], edges: Sequence[Edge]) -> list[Edge]:
        """The edge slice and the changed nodes' edges, as the run has left them."""
        run = self.run
        pool = {e.id: e for e in edges if e.id not in run.gone}
        if changed:
            pool.update((e.id, e) for e in self.ws.edges_of(self.part, list(changed)))
        for eid in list(pool):
            if eid in run.written:
                current = self.ws.edge(self.part, eid)
                if current is None:
                    del pool[eid]
                else:
                    pool[eid] = current
        return [e for e in pool.values() if e.id not in run.gone]

    def latent(self, pool: Sequence[str]) -> None:
        """Latent-link suggestions around the changed nodes (see evolve/latent.py)."""
        ws, part, run = self.ws, self.part, self.run
        pairs: list[latent.LatentPair] = []
        for nid in pool:
            if nid in run.gone:
                continue
            first = ws.edges_of(part, [nid])
            near = sorted({x for e in first for x in (e.source_id, e.target_id)} - {nid})
            if not near:
                continue
            second = ws.edges_of(part, near[: latent.MAX_SECOND_HOP])
            reached = {x for e in second for x in (e.source_id, e.target_id)}
            vectors = self.ctx.store.get_vectors(sorted(reached | {nid}))
            pairs += latent.score_pairs(nid, first, second, vectors)
        if not pairs:
            return
        # A pair this run proposes to merge is one thing twice, not two related things.
        merging = {
            pair_key(str(p.payload.get("keep")), str(p.payload.get("drop")))
            for _, p, _ in run.proposed
            if p.op == "merge"
        }
        pairs = [p for p in pairs if pair_key(p.a, p.b) not in merging]
        ids = {x for p in pairs for x in (p.a, p.b, *p.common)}
        nodes = self.live_nodes(ids)
        self.take_all(latent.proposals(part, pairs, nodes, run.now))

    def archive(self, memories: Sequence[Memory]) -> None:
        """Archive the stale memories of the memory slice."""
        run = self.run
        fresh = [m for m in memories if m.id not in run.written]
        self.take_all(hygiene.stale_memories(fresh, run.now, self.ctx.cfg))

    def orphans(self, ids: Sequence[str]) -> None:
        """Remove nodes of ``ids`` left with no edge and no memory."""
        live = self.live_nodes(ids)
        if not live:
            return
        degree: Counter[str] = Counter()
        for e in self.ws.edges_of(self.part, list(live)):
            degree[e.source_id] += 1
            degree[e.target_id] += 1
        lonely = [n for n in live.values() if not degree[n.id]]
        mids = sorted({m for n in lonely for m in (*n.memory_ids, *n.mention_ids)})
        store = self.ctx.store
        existing = {m.id for m in store.get_memories(self.part, mids)} if mids else set()
        self.take_all(hygiene.orphans(lonely, degree, existing))
