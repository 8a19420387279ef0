"""What the explorer page asks for, as plain functions of one scope over the public API.

``ExplorerApi`` holds one open ``SageMemory`` and one scope; every method returns JSON-ready
dicts (pictures as SVG strings). It knows nothing of HTTP: ``server.py`` maps requests to it,
the tests call it directly too. Only public ``SageMemory`` methods are used.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.ui.layout import MAX_DRAWN_NODES, GraphView, sample
from sage_memory.ui.plot import sparkline
from sage_memory.ui.svg import render_view

#: the most time stops the slider offers (evenly thinned beyond that)
MAX_TIME_STOPS = 200
#: the metrics plotted over runs, when a run reports them
PLOTTED = (
    "nodes",
    "current_edges",
    "isolated_nodes",
    "duplicate_candidate_rate",
    "relation_entropy",
    "mean_confidence",
)


class ReadOnlyError(ValidationError):
    """A write was asked of an explorer started without ``--allow-writes``."""


def _iso(d: datetime | None) -> str | None:
    return None if d is None else d.isoformat()


def parse_time(value: str | None) -> datetime | None:
    """An ISO-8601 moment from the page; naive means UTC."""
    if not value:
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError(f"as_of={value!r}: use ISO-8601, e.g. 2026-05-01T10:00") from exc
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


class ExplorerApi:
    """The explorer's operations for one scope of one memory."""

    def __init__(
        self,
        mem: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        allow_writes: bool = False,
    ) -> None:
        self.mem = mem
        self.scope: dict[str, str | None] = {"user_id": user_id, "agent_id": agent_id}
        self.allow_writes = allow_writes
        self._lock = threading.Lock()
        self._views: OrderedDict[str, Any] = OrderedDict()  # as_of views, newest last
        self._graphs: dict[str, GraphView] = {}  # whole-scope views by as_of key
        self._log: list[dict[str, Any]] = []  # runs, accepts and undos made from this page
        self._quality: list[dict[str, Any]] = []  # metrics after each run seen by this page

    # -- reading, possibly in the past -----------------------------------------------------
    def _reader(self, at: datetime | None) -> Any:
        """The memory, or a read-only view of it at system time ``at`` (a few kept)."""
        if at is None:
            return self.mem
        key = at.isoformat()
        with self._lock:
            if key in self._views:
                self._views.move_to_end(key)
                return self._views[key]
        view = self.mem.as_of(at)
        with self._lock:
            self._views[key] = view
            while len(self._views) > 4:
                _, old = self._views.popitem(last=False)
                old.close()
        return view

    def _changed(self) -> None:
        """Drop every cache after a write (the past can change too: an undo rewrites it)."""
        with self._lock:
            for view in self._views.values():
                view.close()
            self._views.clear()
            self._graphs.clear()

    def info(self) -> dict[str, Any]:
        stats = self.mem.stats(**self.scope)
        return {
            "scope": self.scope,
            "allow_writes": self.allow_writes,
            "stats": {k: stats[k] for k in ("memories", "nodes", "edges")},
            "times": self.time_stops(),
        }

    def time_stops(self) -> list[dict[str, str]]:
        """The moments the slider can show: after each memory was stored (system time)."""
        memories = self.mem.get_all(**self.scope, include_archived=True)
        stops = sorted(memories, key=lambda m: m.created_at)
        if len(stops) > MAX_TIME_STOPS:
            step = len(stops) / MAX_TIME_STOPS
            picked = [stops[int(i * step)] for i in range(MAX_TIME_STOPS - 1)]
            stops = [*picked, stops[-1]]
        return [{"at": m.created_at.isoformat(), "text": m.text[:80]} for m in stops]

    def graph(
        self, *, at: datetime | None = None, offset: int = 0, limit: int = MAX_DRAWN_NODES
    ) -> dict[str, Any]:
        """The whole scope's graph, its best-connected ``limit`` nodes from ``offset``."""
        key = "now" if at is None else at.isoformat()
        with self._lock:
            whole = self._graphs.get(key)
        if whole is None:
            sub = self._reader(at).graph(**self.scope, include_expired=True)
            whole = GraphView.from_subgraph(sub, start_ids=(), at=at)
            with self._lock:
                self._graphs[key] = whole
        view = sample(whole, limit=max(1, min(limit, MAX_DRAWN_NODES)), offset=max(0, offset))
        return {
            "svg": render_view(view),
            "total_nodes": view.total_nodes,
            "offset": view.offset,
            "shown": len(view.nodes),
            "as_of": _iso(at),
        }

    def search(self, query: str, *, at: datetime | None = None) -> dict[str, Any]:
        """Ranked memories with their why, the packed context, and the graph behind them."""
        reader = self._reader(at)
        res = reader.search(query, **self.scope, as_of=at)
        nodes: dict[str, Any] = {h.node.id: h.node for h in res.nodes}
        missing = {
            nid for h in res.edges for nid in (h.edge.source_id, h.edge.target_id)
        } - nodes.keys()
        for nid in sorted(missing):
            try:
                nodes[nid] = reader.find_node(nid, **self.scope)
            except NotFoundError:
                continue
        edges = [h.edge for h in res.edges]
        seeds = [h.node.id for h in res.nodes if "graph" not in h.channels]
        path = query_path(res)
        sub = _Sub(tuple(seeds), tuple(nodes.values()), tuple(edges))
        view = sample(GraphView.from_subgraph(sub, path_edge_ids=path, at=at))
        return {
            "query": res.query,
            "took_ms": round(res.took_ms, 1),
            "memories": [
                {
                    "id": h.memory.id,
                    "text": h.memory.text,
                    "timestamp": _iso(h.memory.timestamp),
                    "score": round(h.score, 4),
                    "channels": list(h.channels),
                    "why": h.why,
                }
                for h in res.memories
            ],
            "nodes": [
                {"id": h.node.id, "name": h.node.name, "why": h.why, "channels": list(h.channels)}
                for h in res.nodes
            ],
            "path_edge_ids": sorted(path),
            "context": res.context,
            "svg": render_view(view),
        }

    def node(self, node_id: str, *, at: datetime | None = None) -> dict[str, Any]:
        """A node's aliases, attributes, provenance memories (with dates) and fact history."""
        reader = self._reader(at)
        node = reader.find_node(node_id, **self.scope)
        memories = []
        for mid in node.memory_ids:
            try:
                m = reader.get(mid, **self.scope)
            except NotFoundError:  # deleted since, or another run's: not shown
                continue
            memories.append({"id": m.id, "text": m.text, "timestamp": _iso(m.timestamp)})
        around = reader.explore(node.id, **self.scope, hops=1, include_expired=True)
        names = {n.id: n.name for n in around.nodes}
        facts = [
            {
                "id": e.id,
                "source": names.get(e.source_id, e.source_id),
                "relation": e.relation,
                "target": names.get(e.target_id, e.target_id),
                "fact": e.fact,
                "confidence": e.confidence,
                "valid_from": _iso(e.valid_from),
                "valid_to": _iso(e.valid_to),
                "expired_at": _iso(e.expired_at),
            }
            for e in sorted(around.edges, key=lambda e: (e.valid_from or e.created_at, e.id))
        ]
        journal = [
            {
                "at": _iso(c.at),
                "op": c.op,
                "actor": c.actor,
                "reason": c.reason,
                "batch_id": c.batch_id,
            }
            for c in self.mem.history(node.id)
        ]
        return {
            "id": node.id,
            "name": node.name,
            "label": node.label,
            "aliases": list(node.aliases),
            "summary": node.summary,
            "attributes": {k: _plain(v) for k, v in node.attributes.items()},
            "confidence": node.confidence,
            "memories": memories,
            "facts": facts,
            "journal": journal,
        }

    def expand(self, node_id: str, *, hops: int = 1, at: datetime | None = None) -> dict[str, Any]:
        """The node's neighbourhood drawn, expired facts included (dashed)."""
        if not isinstance(hops, int) or not 1 <= hops <= 3:
            raise ValidationError(f"hops={hops!r}: use 1, 2 or 3")
        sub = self._reader(at).explore(
            node_id, **self.scope, hops=hops, include_expired=True, max_nodes=MAX_DRAWN_NODES
        )
        view = sample(GraphView.from_subgraph(sub, at=at))
        return {"svg": render_view(view), "shown": len(view.nodes), "start": list(sub.start)}

    # -- the evolver -----------------------------------------------------------------------
    def _suggestions(self, status: str) -> list[Any]:
        return list(self.mem.review(**self.scope, status=status))

    def review(self) -> dict[str, Any]:
        """The review queue with evidence, and the journal of runs (undo by batch)."""
        items = [
            {
                "id": s.id,
                "op": s.op,
                "summary": s.summary,
                "confidence": s.confidence,
                "evidence": {k: _plain(v) for k, v in s.evidence.items()},
                "created_at": _iso(s.created_at),
            }
            for s in self._suggestions("open")
        ]
        return {"suggestions": items, "runs": self.runs()}

    def runs(self) -> list[dict[str, Any]]:
        """Evolution runs and accepted suggestions of this scope, newest first.

        Known from the suggestions' own records (the run that proposed each, the batch that
        applied it) and from the runs started on this page; each undoable batch says so.
        """
        seen: dict[str, dict[str, Any]] = {}
        every = [s for st in ("open", "accepted", "rejected") for s in self._suggestions(st)]
        for s in every:
            if s.proposed_in:
                run = seen.setdefault(
                    s.proposed_in,
                    {
                        "batch_id": s.proposed_in,
                        "kind": "run",
                        "at": _iso(s.created_at),
                        "summary": "",
                        "suggested": 0,
                        "undoable": False,
                    },
                )
                run["suggested"] += 1
            if s.status == "accepted" and s.batch_id:
                seen[s.batch_id] = {
                    "batch_id": s.batch_id,
                    "kind": "accept",
                    "at": _iso(s.updated_at),
                    "summary": f"accepted: {s.summary}",
                    "suggested": 0,
                    "undoable": True,
                }
        with self._lock:
            log = list(self._log)
        for entry in log:
            seen.setdefault(entry["batch_id"], {}).update(entry)
        for run in seen.values():
            if run.get("kind") == "run" and not run.get("summary"):
                run["summary"] = f"suggested {run.get('suggested', 0)}"
        return sorted(seen.values(), key=lambda r: r.get("at") or "", reverse=True)

    def _known_batches(self) -> set[str]:
        return {r["batch_id"] for r in self.runs()}

    def _check_writes(self) -> None:
        if not self.allow_writes:
            raise ReadOnlyError(
                "this explorer is read-only; restart it with --allow-writes to change the memory"
            )

    def _own_suggestion(self, suggestion_id: str) -> Any:
        """The suggestion, if it belongs to this page's scope (never another's)."""
        for s in self._suggestions("open"):
            if s.id == suggestion_id:
                return s
        raise NotFoundError(f"no open suggestion {suggestion_id!r} in this scope")

    def accept(self, suggestion_id: str) -> dict[str, Any]:
        self._check_writes()
        s = self._own_suggestion(suggestion_id)
        changes = self.mem.accept(s.id)
        batch = changes[0].batch_id if changes else None
        self._changed()
        if batch:
            self._remember(batch, "accept", f"accepted: {s.summary}", undoable=True)
        return {"accepted": s.id, "changes": len(changes), "batch_id": batch}

    def reject(self, suggestion_id: str) -> dict[str, Any]:
        self._check_writes()
        s = self._own_suggestion(suggestion_id)
        self.mem.reject(s.id)
        return {"rejected": s.id}

    def undo(self, batch_id: str) -> dict[str, Any]:
        """Undo a run or an accept listed in this scope's journal of runs."""
        self._check_writes()
        if batch_id not in self._known_batches():
            raise NotFoundError(f"no run or accept {batch_id!r} in this scope's journal")
        changes = self.mem.undo(batch_id)
        self._changed()
        with self._lock:
            for entry in self._log:
                if entry["batch_id"] == batch_id:
                    entry.update(undoable=False, undone=True)
        if not any(e["batch_id"] == batch_id for e in self._log):
            self._remember(batch_id, "accept", "undone", undoable=False, undone=True)
        return {"undone": batch_id, "changes": len(changes)}

    def evolve(self, *, dry_run: bool = False) -> dict[str, Any]:
        """One evolution pass over this scope; its metrics join the plots."""
        self._check_writes()
        report = self.mem.evolve(**self.scope, dry_run=dry_run)
        counts = report.counts()
        self._changed()
        applied = sum(counts["applied"].values())
        suggested = sum(counts["suggested"].values())
        self._remember(
            report.batch_id,
            "dry run" if dry_run else "run",
            f"applied {applied}, suggested {suggested}",
            undoable=bool(report.changes) and not dry_run,
        )
        with self._lock:
            self._quality.append({"at": _iso(report.started_at), **dict(report.metrics)})
        return {"batch_id": report.batch_id, "applied": applied, "suggested": suggested}

    def _remember(self, batch: str, kind: str, summary: str, **flags: Any) -> None:
        with self._lock:
            self._log.append(
                {
                    "batch_id": batch,
                    "kind": kind,
                    "summary": summary,
                    "at": datetime.now(UTC).isoformat(),
                    **flags,
                }
            )

    # -- stats -----------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Counts, the last run's graph quality, and plots of metrics over runs."""
        stats = self.mem.stats(**self.scope)
        quality = stats.get("quality") or {}
        with self._lock:
            points = list(self._quality)
        if quality.get("metrics") and not points:
            points = [{"at": quality.get("last_run"), **quality["metrics"]}]
        plots = [
            sparkline(
                name, [float(p[name]) for p in points if isinstance(p.get(name), int | float)]
            )
            for name in PLOTTED
        ]
        return {
            "memories": stats["memories"],
            "nodes": stats["nodes"],
            "edges": stats["edges"],
            "quality": quality,
            "runs_plotted": len(points),
            "plots": plots,
        }


class _Sub:
    """The minimal Subgraph shape GraphView reads (start, nodes, edges)."""

    def __init__(self, start: tuple[str, ...], nodes: tuple[Any, ...], edges: tuple[Any, ...]):
        self.start, self.nodes, self.edges = start, nodes, edges


_STEP = re.compile(r" (-(?P<out>[^ ]+?)->|<-(?P<inc>[^ ]+?)-) ")


def why_path(why: str) -> list[tuple[str, str, str]]:
    """The (source, relation, target) steps of a graph hit's why, e.g.
    "blog -CONTAINS_TASK-> build the API -REQUIRES-> FastAPI; task of blog"."""
    chain = why.split(";", 1)[0].strip()
    parts = _STEP.split(chain)
    # re.split with 3 groups: [name, whole, out, inc, name, whole, out, inc, name, ...]
    names, steps = parts[0::4], list(zip(parts[2::4], parts[3::4], strict=False))
    out: list[tuple[str, str, str]] = []
    for i, (fwd, back) in enumerate(steps):
        a, b = names[i].strip(), names[i + 1].strip()
        out.append((a, fwd, b) if fwd else (b, back, a))
    return out


def query_path(res: Any) -> set[str]:
    """The edges of the path that linked the best graph hit to the query (its why, matched
    to the edge hits), so the page can highlight how the graph reached it."""
    edges = {(h.source_name, h.edge.relation, h.target_name): h.edge.id for h in res.edges}
    for hit in res.nodes:
        if "graph" not in hit.channels:
            continue
        steps = why_path(hit.why)
        ids = [edges.get(step) for step in steps]
        if steps and all(ids):
            return {i for i in ids if i}
    return set()


def _plain(value: Any) -> Any:
    """Evidence and attributes as JSON: containers kept, anything else as text."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return str(value)
