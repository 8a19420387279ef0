"""Evolution runs: bounded, incremental passes that plan changes and queue suggestions.

One run is one journal batch (undo it whole with ``mem.undo(report.batch_id)``). Per scope
partition it looks at what changed since the previous run and at a rotating slice of the rest,
never at the whole graph at once (except communities on graphs no bigger than the budget):

    access log window  -> reinforce / associate (and access counts)
    edge slice         -> decay; relation discovery
    changed nodes      -> conflicts, duplicates (merge / split), communities, orphans
    memory slice       -> archive

``EvolveConfig.max_items_per_run`` caps each of those reads, so a run costs about the same on
a graph of 1k or 1M nodes; the slices rotate, so every item is visited over successive runs.
Weights decay exactly however late a run visits an edge (each edge keeps ``weight_at``).

What applies on its own is ``EvolveConfig.auto_apply``; the rest goes to the review queue.
Schema changes never apply on their own; nor does anything a step marks for review (close
conflicts, relation upgrades), and a merge only auto-applies at ``merge_auto_confidence``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sage_memory.config import SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.entities.names import merge_aliases
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.evolve import conflicts, discovery, hygiene, reinforce
from sage_memory.evolve.proposal import Overlay, Proposal, Workspace, apply_to, is_current
from sage_memory.index.base import VectorIndex
from sage_memory.llm.base import ChatModel
from sage_memory.store.base import EvolvingStore
from sage_memory.types import Edge, Memory, Node, Scope, Suggestion, new_id

#: Every operation a run knows, in the order a run performs them.
OPERATIONS: tuple[str, ...] = (
    "reinforce",
    "associate",
    "decay",
    "expire_conflicts",
    "merge",
    "split",
    "summarize",
    "upgrade_relation",
    "new_relation",
    "archive",
    "remove_orphans",
)
_STATE = "evolve:state:"
#: Nodes one run examines for duplicates: a 50th of the budget (each costs a name lookup, a
#: lexical and a vector query, and its neighbourhood), changed nodes first.
_DUPLICATE_SHARE = 50
#: High-degree nodes one run examines for a split (each embeds its edge contexts).
_MAX_SPLIT_CHECKS = 20
#: Communities one run summarises.
_MAX_SUMMARIES = 20


@dataclass(frozen=True, slots=True)
class ProposedChange:
    """One proposal of a run, as reported: applied now, or queued as a suggestion."""

    op: str
    summary: str
    confidence: float
    applied: bool
    key: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    suggestion_id: str | None = None


@dataclass(frozen=True, slots=True)
class EvolutionReport:
    """What one evolution run did (or, for a dry run, would do).

    Attributes:
        batch_id: The run's journal batch: ``mem.undo(batch_id)`` reverts the whole run.
        dry_run: True when nothing was written.
        scopes: The partitions the run covered.
        operations: The operations it was allowed to perform.
        proposed: Every proposal, applied or not.
        suggestions: The review items it queued (for a dry run: would queue).
        changes: Journal entries written.
        metrics: Graph quality after the run (see :mod:`sage_memory.evolve.hygiene`).
        deltas: Change of each metric since the previous run.
        started_at: The run's time.
        took_ms: Wall time of the run.
    """

    batch_id: str
    dry_run: bool
    scopes: tuple[Scope, ...]
    operations: tuple[str, ...]
    proposed: tuple[ProposedChange, ...]
    suggestions: tuple[Suggestion, ...]
    changes: int
    metrics: Mapping[str, float]
    deltas: Mapping[str, float]
    started_at: datetime
    took_ms: float

    @property
    def applied(self) -> tuple[ProposedChange, ...]:
        return tuple(p for p in self.proposed if p.applied)

    def counts(self) -> dict[str, dict[str, int]]:
        """Proposals per operation: ``{"applied": {...}, "suggested": {...}}``."""
        applied = Counter(p.op for p in self.proposed if p.applied)
        suggested = Counter(p.op for p in self.proposed if not p.applied)
        return {"applied": dict(applied), "suggested": dict(suggested)}


@dataclass
class _Run:
    """The mutable state of one run while it plans."""

    batch_id: str
    now: datetime
    dry_run: bool
    operations: frozenset[str]
    scopes: list[Scope] = field(default_factory=list)
    proposed: list[tuple[Scope, Proposal, bool]] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)


def check_operations(operations: Iterable[str] | None) -> frozenset[str]:
    """The operations a run may perform; all when None."""
    if operations is None:
        return frozenset(OPERATIONS)
    ops = frozenset(operations)
    unknown = sorted(ops - set(OPERATIONS))
    if unknown:
        raise ValidationError(
            f"unknown evolution operation(s) {unknown}; choose from {', '.join(OPERATIONS)}"
        )
    return ops


class Evolver:
    """Plans evolution runs and review decisions for the engine, which applies them.

    Args:
        store: The graph store (read; the evolver writes only its own state: cursors,
            metrics, the review queue).
        index: The vector index (nearest names for duplicates).
        embedder: Embeds new node names and edge contexts.
        config: The memory's configuration.
        llm: When set, community summaries and split names come from it.
        relations: Relation types the schema knows (for new-type discovery).
    """

    def __init__(
        self,
        store: EvolvingStore,
        index: VectorIndex,
        embedder: Embedder,
        config: SageConfig,
        *,
        llm: ChatModel | None = None,
        relations: Iterable[str] = (),
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.config = config
        self.cfg = config.evolve
        self.llm = llm
        self.relations = set(relations)
        self.aliases = merge_aliases(config.extract.aliases)

    # -- runs ------------------------------------------------------------------------------
    def plan(
        self,
        ws: Workspace,
        scopes: Sequence[Scope],
        *,
        now: datetime,
        batch_id: str,
        dry_run: bool = False,
        operations: Iterable[str] | None = None,
    ) -> _Run:
        """Plan a run into ``ws``: auto-applied proposals are written to it, the rest kept."""
        run = _Run(batch_id, now, dry_run, check_operations(operations))
        ws = Overlay(ws)
        for scope in scopes:
            part = scope.partition
            run.scopes.append(part)
            self._plan_scope(ws, part, run)
        self._embed_new_nodes(ws, run)
        return run

    def finish(self, run: _Run, changes: int) -> EvolutionReport:
        """Queue the suggestions, save cursors and metrics (unless a dry run); the report."""
        suggestions: list[Suggestion] = []
        ids: dict[int, str] = {}
        for i, (scope, p, applied) in enumerate(run.proposed):
            if applied:
                continue
            s = to_suggestion(p, scope, run.now, run.batch_id)
            suggestions.append(s)
            ids[i] = s.id
        queued = suggestions if run.dry_run else self.store.put_suggestions(suggestions)
        queued_ids = {s.id for s in queued}
        proposed = tuple(
            ProposedChange(
                op=p.op,
                summary=p.summary,
                confidence=p.confidence,
                applied=applied,
                key=p.key,
                evidence=p.evidence,
                suggestion_id=ids[i] if ids.get(i) in queued_ids else None,
            )
            for i, (_, p, applied) in enumerate(run.proposed)
        )
        raws: list[Mapping[str, Any]] = []
        previous: list[tuple[Mapping[str, Any], int]] = []
        merges = 0
        for part in run.scopes:
            state = run.states.setdefault(part.key, {})
            raw = self.store.graph_metrics(part)
            open_merges = sum(
                1 for s in self.store.list_suggestions(part, status="open") if s.op == "merge"
            )
            before = None
            if "prev_raw" in state:
                prev = (state.pop("prev_raw"), int(state.pop("prev_merges", 0)))
                previous.append(prev)
                before = hygiene.quality(*prev)
            state.update(raw=raw, merge_candidates=open_merges)
            state["metrics"] = hygiene.quality(raw, open_merges)
            state["deltas"] = hygiene.deltas(state["metrics"], before)
            state.update(last_run=run.now.isoformat(), last_batch=run.batch_id)
            raws.append(raw)
            merges += open_merges
        metrics = hygiene.quality(hygiene.combine(raws), merges)
        before_all = None
        if previous and len(previous) == len(run.scopes):
            before_all = hygiene.quality(
                hygiene.combine(r for r, _ in previous), sum(n for _, n in previous)
            )
        deltas = hygiene.deltas(metrics, before_all)
        if not run.dry_run:
            for part in run.scopes:
                state = run.states[part.key]
                self.store.set_meta(_STATE + part.key, json.dumps(state, sort_keys=True))
            self.store.prune_access(run.now - timedelta(days=self.cfg.access_retention_days))
        return EvolutionReport(
            batch_id=run.batch_id,
            dry_run=run.dry_run,
            scopes=tuple(run.scopes),
            operations=tuple(op for op in OPERATIONS if op in run.operations),
            proposed=proposed,
            suggestions=tuple(queued),
            changes=changes,
            metrics=metrics,
            deltas=deltas,
            started_at=run.now,
            took_ms=round((time.perf_counter() - run.started) * 1000, 2),
        )

    def state(self, scope: Scope) -> dict[str, Any]:
        """The saved state of a partition's last run (cursors, metrics); {} before any run."""
        raw = self.store.get_meta(_STATE + scope.partition.key)
        return dict(json.loads(raw)) if raw else {}

    def quality(self, scopes: Sequence[Scope]) -> dict[str, Any] | None:
        """Graph quality as measured by the last run of each scope, and its change."""
        states = [self.state(s) for s in scopes]
        states = [s for s in states if "raw" in s]
        if not states:
            return None
        if len(states) == 1:
            st = states[0]
            return {
                "metrics": st["metrics"],
                "deltas": st.get("deltas", {}),
                "last_run": st.get("last_run"),
            }
        metrics = hygiene.quality(
            hygiene.combine(s["raw"] for s in states),
            sum(int(s.get("merge_candidates", 0)) for s in states),
        )
        return {"metrics": metrics, "deltas": {}, "last_run": max(s["last_run"] for s in states)}

    # -- one scope -------------------------------------------------------------------------
    def _plan_scope(self, ws: Workspace, part: Scope, run: _Run) -> None:
        state = self.state(part)
        new = dict(state)
        if "raw" in state:
            new["prev_raw"] = state["raw"]
            new["prev_merges"] = state.get("merge_candidates", 0)
        budget = max(1, self.cfg.max_items_per_run)
        ops = run.operations
        touched_nodes = self._touched(part, state, new, budget)
        edges, new["edge_offset"] = self._slice(
            self.store.list_edges, part, state.get("edge_offset", 0), budget
        )
        nodes, new["node_offset"] = self._slice(
            self.store.list_nodes, part, state.get("node_offset", 0), max(1, budget // 5)
        )
        if ops & {"reinforce", "associate"}:
            self._access(ws, part, run, state=state, new=new, budget=budget)
        if "decay" in ops:
            fresh = [e for e in edges if e.id not in run.written and e.id not in run.gone]
            self._take_all(ws, part, run, reinforce.decay(fresh, run.now, self.cfg))
        changed = sorted(touched_nodes)[:budget]
        if "expire_conflicts" in ops:
            self._conflicts(ws, part, run, changed=changed, edges=edges, budget=budget)
        if ops & {"merge", "split"}:
            pool = list(dict.fromkeys([*changed, *(n.id for n in nodes)]))
            # The split check has its own cursor: the shared node slice restarts at the first
            # ids whenever the graph is smaller than it, so a fixed head would be all it saw.
            swept, new["split_offset"] = self._slice(
                self.store.list_nodes, part, state.get("split_offset", 0), _MAX_SPLIT_CHECKS
            )
            checks = list(dict.fromkeys([*changed, *(n.id for n in swept)]))
            self._duplicates(ws, part, run, pool[: max(1, budget // _DUPLICATE_SHARE)], checks)
        if "summarize" in ops and (changed or "communities_at" not in state):
            self._communities(ws, part, run, changed, budget)
            new["communities_at"] = run.now.isoformat()
        if ops & {"upgrade_relation", "new_relation"}:
            self._discovery(ws, part, run, changed, edges)
        if ops & {"archive", "remove_orphans"}:
            self._hygiene(
                ws,
                part,
                run,
                state=state,
                new=new,
                changed=changed,
                nodes=nodes,
                budget=budget,
            )
        run.states[part.key] = new

    def _touched(
        self, part: Scope, state: Mapping[str, Any], new: dict[str, Any], budget: int
    ) -> set[str]:
        """Nodes written since the last run, or with edges written (the run's own excluded)."""
        entries = self.store.journal(
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

    @staticmethod
    def _slice(
        reader: Callable[..., list[Any]], part: Scope, offset: int, size: int
    ) -> tuple[list[Any], int]:
        """The next slice of a rotating sweep, and where the following one starts."""
        items = reader(part, limit=size, offset=offset)
        if not items and offset:
            offset = 0
            items = reader(part, limit=size, offset=0)
        return items, 0 if len(items) < size else offset + len(items)

    # -- taking proposals ------------------------------------------------------------------
    def auto(self, p: Proposal) -> bool:
        """Whether a proposal may apply without review under the configuration."""
        if p.schema_change or p.needs_review or p.op not in self.cfg.auto_apply:
            return False
        return not (p.op == "merge" and p.confidence < self.cfg.merge_auto_confidence)

    def _take(self, ws: Workspace, part: Scope, run: _Run, p: Proposal) -> bool:
        if p.op not in run.operations:
            return False
        applied = self.auto(p)
        if applied:
            apply_to(ws, p)
            run.written.update(r.id for r in p.puts)
            run.gone.update(r.id for r in p.removes)
        run.proposed.append((part, p, applied))
        return applied

    def _take_all(self, ws: Workspace, part: Scope, run: _Run, props: Iterable[Proposal]) -> None:
        for p in props:
            self._take(ws, part, run, p)

    def _live_nodes(
        self, ws: Workspace, part: Scope, run: _Run, ids: Iterable[str]
    ) -> dict[str, Node]:
        """Nodes as the run sees them (its own writes included, its deletions excluded)."""
        wanted = [i for i in dict.fromkeys(ids) if i not in run.gone]
        out = {
            n.id: n for n in self.store.get_nodes(part, [i for i in wanted if i not in run.written])
        }
        for i in wanted:
            if i in run.written:
                node = ws.node(part, i)
                if node is not None:
                    out[i] = node
        return out

    # -- steps -----------------------------------------------------------------------------
    def _access(
        self,
        ws: Workspace,
        part: Scope,
        run: _Run,
        *,
        state: Mapping[str, Any],
        new: dict[str, Any],
        budget: int,
    ) -> None:
        after, until = int(state.get("access_seq", 0)), self.store.access_seq()
        if until <= after:
            return
        pairs = self.store.co_access(part, after_seq=after, until_seq=until, limit=budget)
        ids = sorted({x for a, b, _, _ in pairs for x in (a, b)})[:budget]
        edges = ws.edges_of(part, ids) if ids else []
        props, unlinked = reinforce.reinforce(pairs, edges, run.now, self.cfg)
        self._take_all(ws, part, run, props)
        if unlinked and "associate" in run.operations:
            ends = sorted({x for a, b, _, _ in unlinked for x in (a, b)})
            wanted = {(a, b) for a, b, _, _ in unlinked}
            since = run.now - timedelta(days=reinforce.horizon_days(self.cfg))
            lifetime = [
                t
                for t in self.store.co_access(part, until_seq=until, node_ids=ends, since=since)
                if (t[0], t[1]) in wanted
            ]
            nodes = self._live_nodes(ws, part, run, ends)
            self._take_all(
                ws, part, run, reinforce.associate(lifetime, nodes, part, run.now, self.cfg)
            )
        if "reinforce" in run.operations:
            used = self.store.accessed(part, after_seq=after, until_seq=until)
            ids = list(used)[:budget]
            records: list[Node | Memory] = list(self._live_nodes(ws, part, run, ids).values())
            records += self.store.get_memories(part, [i for i in ids if i not in run.written])
            self._take_all(ws, part, run, reinforce.record_use(records, used))
            new["access_seq"] = until

    def _conflicts(
        self,
        ws: Workspace,
        part: Scope,
        run: _Run,
        *,
        changed: Sequence[str],
        edges: Sequence[Edge],
        budget: int,
    ) -> None:
        single = set(self.config.extract.single_valued)
        sources = list(changed)
        sources += [
            e.source_id
            for e in edges
            if e.relation in single or e.relation == "CONTRADICTS" or e.attributes.get("negated")
        ]
        sources = [s for s in dict.fromkeys(sources) if s not in run.gone][: max(1, budget // 5)]
        if not sources:
            return
        found = ws.edges_of(part, sources)
        mine = [e for e in found if e.source_id in set(sources)]
        nodes = self._live_nodes(
            ws, part, run, {x for e in mine for x in (e.source_id, e.target_id)}
        )
        names = {i: n.name for i, n in nodes.items()}
        props = conflicts.edge_conflicts(mine, single, run.now, names)
        props += conflicts.contradictions(mine, nodes, run.now)
        self._take_all(ws, part, run, props)

    def _duplicates(
        self, ws: Workspace, part: Scope, run: _Run, pool: Sequence[str], checks: Sequence[str]
    ) -> None:
        from sage_memory.evolve.review import merge_candidates, split_candidates

        if "merge" in run.operations:
            for p in merge_candidates(
                self, ws, part, gone=run.gone, written=run.written, pool=pool, now=run.now
            ):
                self._take(ws, part, run, p)
        if "split" in run.operations:
            chosen = checks[:_MAX_SPLIT_CHECKS]
            for p in split_candidates(self, ws, part, gone=run.gone, pool=chosen, now=run.now):
                self._take(ws, part, run, p)

    def _communities(
        self, ws: Workspace, part: Scope, run: _Run, changed: Sequence[str], budget: int
    ) -> None:
        from sage_memory.evolve.review import community_proposals

        found = community_proposals(
            self, ws, part, gone=run.gone, changed=changed, budget=budget, now=run.now
        )
        for p in found[:_MAX_SUMMARIES]:
            self._take(ws, part, run, p)

    def _discovery(
        self, ws: Workspace, part: Scope, run: _Run, changed: Sequence[str], edges: Sequence[Edge]
    ) -> None:
        pool = {e.id: e for e in edges if e.id not in run.gone}
        if changed:
            pool.update((e.id, e) for e in ws.edges_of(part, list(changed)))
        for eid in list(pool):
            if eid in run.written:
                current = ws.edge(part, eid)
                if current is None:
                    del pool[eid]
                else:
                    pool[eid] = current
        sample = [e for e in pool.values() if e.id not in run.gone]
        ends = {x for e in sample for x in (e.source_id, e.target_id)}
        labels = {i: n.label for i, n in self._live_nodes(ws, part, run, ends).items()}
        props: list[Proposal] = []
        if "upgrade_relation" in run.operations:
            patterns = discovery.label_patterns(sample, labels)
            props += discovery.by_label_pattern(sample, labels, patterns, run.now)
            vague = [e for e in sample if e.relation == "POSSIBLY_RELATED_TO" and is_current(e)]
            if vague:
                ids = sorted({x for e in vague for x in (e.source_id, e.target_id)})
                usage = self.store.co_access(part, node_ids=ids)
                props += discovery.by_usage(vague, usage, self.cfg.associate_after, run.now)
        if "new_relation" in run.operations:
            props += discovery.new_relation_types(sample, self.relations, run.now)
        self._take_all(ws, part, run, props)

    def _hygiene(
        self,
        ws: Workspace,
        part: Scope,
        run: _Run,
        *,
        state: Mapping[str, Any],
        new: dict[str, Any],
        changed: Sequence[str],
        nodes: Sequence[Node],
        budget: int,
    ) -> None:
        if "archive" in run.operations:
            memories, new["memory_offset"] = self._slice(
                self.store.list_memories, part, int(state.get("memory_offset", 0)), budget
            )
            fresh = [m for m in memories if m.id not in run.written]
            self._take_all(ws, part, run, hygiene.stale_memories(fresh, run.now, self.cfg))
        if "remove_orphans" in run.operations:
            ids = list(dict.fromkeys([*changed, *(n.id for n in nodes)]))[:budget]
            live = self._live_nodes(ws, part, run, ids)
            if not live:
                return
            degree: Counter[str] = Counter()
            for e in ws.edges_of(part, list(live)):
                degree[e.source_id] += 1
                degree[e.target_id] += 1
            lonely = [n for n in live.values() if not degree[n.id]]
            mids = sorted({m for n in lonely for m in n.memory_ids})
            existing = {m.id for m in self.store.get_memories(part, mids)} if mids else set()
            self._take_all(ws, part, run, hygiene.orphans(lonely, degree, existing))

    def _embed_new_nodes(self, ws: Workspace, run: _Run) -> None:
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
            stored = {n.id: n for n in self.store.get_nodes(part, ids)}
            todo = []
            for nid in ids:
                node = ws.node(part, nid)
                if node is not None and (nid not in stored or stored[nid].name != node.name):
                    todo.append(node)
            if todo:
                vectors = self.embedder.embed([n.name for n in todo])
                for node, vec in zip(todo, vectors, strict=True):
                    ws.put(node, vec)

    # -- review ----------------------------------------------------------------------------
    def get_suggestion(self, suggestion_id: str) -> Suggestion:
        found = self.store.list_suggestions(status=None, ids=[suggestion_id])
        if not found:
            raise NotFoundError(f"no suggestion with id {suggestion_id!r}; list them with review()")
        return found[0]

    def accept(
        self, ws: Workspace, suggestion_id: str, now: datetime
    ) -> tuple[Suggestion, Proposal]:
        """Plan an open suggestion again on the current graph and write it into ``ws``."""
        from sage_memory.evolve.review import replan

        s = self.get_suggestion(suggestion_id)
        if s.status != "open":
            raise ValidationError(f"suggestion {suggestion_id} is already {s.status}")
        p = replan(self, ws, s, now)
        apply_to(ws, p)
        run = _Run(new_id(), now, False, frozenset(OPERATIONS), [s.scope.partition])
        run.proposed.append((s.scope.partition, p, True))
        self._embed_new_nodes(ws, run)
        if p.op == "new_relation":
            self.learn_relation(str(p.payload["relation"]))
        return s, p

    def learned_relations(self) -> list[str]:
        """Relation types added by accepted suggestions (kept in the store)."""
        raw = self.store.get_meta("schema:relations")
        return list(json.loads(raw)) if raw else []

    def learn_relation(self, relation: str) -> None:
        known = self.learned_relations()
        if relation not in known:
            self.store.set_meta("schema:relations", json.dumps([*known, relation]))
        self.relations.add(relation)


def to_suggestion(p: Proposal, scope: Scope, now: datetime, run_id: str | None) -> Suggestion:
    """The review-queue item for a proposal that did not apply."""
    return Suggestion(
        id=new_id(),
        scope=scope.partition,
        op=p.op,
        key=p.key or f"{p.op}:{new_id()}",
        summary=p.summary,
        confidence=round(float(p.confidence), 4),
        created_at=now,
        evidence=dict(p.evidence),
        payload=dict(p.payload),
        proposed_in=run_id,
    )


# -- triggers ------------------------------------------------------------------------------


class Triggers:
    """Decides after each add whether a scope is due for a run (every N adds, growth by X%)."""

    def __init__(self, store: EvolvingStore, config: SageConfig) -> None:
        self.store = store
        self.cfg = config.evolve
        self._adds: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.cfg.every_n_adds > 0 or self.cfg.every_growth_percent > 0

    def after_add(self, scope: Scope, count: int) -> bool:
        """Count ``count`` adds to ``scope``; True when a run is due (the counter restarts)."""
        if not self.enabled:
            return False
        key = scope.partition.key
        with self._lock:
            self._adds[key] += count
            due = 0 < self.cfg.every_n_adds <= self._adds[key]
        if not due and self.cfg.every_growth_percent > 0:
            raw = self.store.get_meta(_STATE + key)
            base = int(json.loads(raw).get("raw", {}).get("nodes", 0)) if raw else 0
            nodes, _ = self.store.count_graph(scope.partition)
            due = nodes >= max(1, base) * (1 + self.cfg.every_growth_percent / 100)
        if due:
            with self._lock:
                self._adds[key] = 0
        return due


class Schedule:
    """The opt-in background thread: calls ``job`` every ``seconds`` until stopped."""

    def __init__(self, seconds: float, job: Callable[[], object]) -> None:
        self.seconds = seconds
        self.job = job
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sage-evolver", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.job()
            except Exception as exc:  # a failed run must not kill the schedule; keep the last few
                self.errors = [*self.errors[-9:], exc]

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
