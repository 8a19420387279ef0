"""The ``sage-memory`` command line: the engine from a shell.

    sage-memory --path ./memory --user alice add "Alice moved to Berlin"
    sage-memory --path ./memory --user alice search "where does alice live?" --json
    sage-memory demo

``add`` stores the memory and returns; a background process (``sage_memory.worker``) builds
its nodes and edges. ``add --extract now`` builds them before returning; ``extract`` runs
what is still pending in the foreground.

``--json`` output is stable for scripts: top-level keys and item fields only ever get added.
Errors go to stderr as ``error: ...`` with exit status 2; success exits 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sage_memory.errors import NotFoundError, SageMemoryError, ValidationError

if TYPE_CHECKING:
    from sage_memory.types import Scope

Handler = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Handler] = {}


def command(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        _COMMANDS[name] = fn
        return fn

    return register


# -- output -------------------------------------------------------------------------------------
def _iso(d: datetime | None) -> str | None:
    return None if d is None else d.isoformat()


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str))
    else:
        print(text)


def memory_json(m: Any) -> dict[str, Any]:
    return {
        "id": m.id,
        "text": m.text,
        "timestamp": _iso(m.timestamp),
        "kind": m.kind,
        "role": m.role,
        "metadata": dict(m.metadata),
        "extraction": m.extraction,
        "scope": m.scope.as_dict(),
    }


def node_json(n: Any) -> dict[str, Any]:
    return {
        "id": n.id,
        "name": n.name,
        "label": n.label,
        "aliases": list(n.aliases),
        "attributes": dict(n.attributes),
        "confidence": n.confidence,
        "memory_ids": list(n.memory_ids),
    }


def edge_json(e: Any, names: dict[str, str]) -> dict[str, Any]:
    return {
        "id": e.id,
        "source": names.get(e.source_id, e.source_id),
        "target": names.get(e.target_id, e.target_id),
        "source_id": e.source_id,
        "target_id": e.target_id,
        "relation": e.relation,
        "fact": e.fact,
        "weight": e.weight,
        "confidence": e.confidence,
        "valid_from": _iso(e.valid_from),
        "valid_to": _iso(e.valid_to),
        "expired_at": _iso(e.expired_at),
        "memory_ids": list(e.memory_ids),
    }


# -- opening the memory -------------------------------------------------------------------------
#: Commands that only read: on a folder another process owns they open it read-only.
_READS = frozenset({"search", "explore", "plan", "path", "stats", "export", "get", "history"})


def _open(args: argparse.Namespace, path: str | None = None) -> Any:
    """The memory: server mode, or the folder. A folder another process owns is opened
    read-only for read commands; a write waits up to ``--wait`` seconds for the owner."""
    import time

    from sage_memory.engine.core import SageMemory
    from sage_memory.errors import FolderBusyError

    reranker = getattr(args, "rerank", None)  # search --rerank MODEL
    if path is None and getattr(args, "db", None):
        # server mode (PostgreSQL)
        return SageMemory(url=args.db, embedder=args.embedder, reranker=reranker)
    folder = path or args.path
    start = time.monotonic()
    asked = max(0.0, getattr(args, "wait", 0.0) or 0.0)
    told = False
    while True:
        try:
            return SageMemory(
                folder, embedder=args.embedder, progress=_bars(args), reranker=reranker
            )
        except FolderBusyError:
            if args.command in _READS:
                return SageMemory(folder, embedder=args.embedder, read_only=True, reranker=reranker)
            waited = time.monotonic() - start
            if waited >= asked and not (waited < _WORKER_PATIENCE and _worker_busy(folder)):
                raise
            if not told and waited >= 1.0 and _worker_busy(folder):
                told = True  # a worker can take a while on a long queue: never a silent wait
                print("note: waiting for the background extraction to finish", file=sys.stderr)
            time.sleep(0.05)


#: How long a write waits for the background extraction worker that holds the folder (it
#: holds it only while it extracts, a second or so per batch of new memories).
_WORKER_PATIENCE = 300.0


def _worker_busy(folder: str | os.PathLike[str]) -> bool:
    from sage_memory.worker import worker_owns

    return worker_owns(Path(folder))


def _bars(args: argparse.Namespace) -> bool:
    """Progress bars: on a terminal, unless --quiet."""
    from sage_memory.engine.progress import wanted

    return wanted(bool(getattr(args, "quiet", False)))


def _scope(args: argparse.Namespace) -> dict[str, str | None]:
    return {"user_id": args.user, "agent_id": args.agent, "run_id": args.run}


def _resolve(prefix: str, candidates: Iterable[str], what: str) -> str:
    """A full id from the prefix the CLI printed (search shows 8 characters).

    Unknown prefixes pass through unchanged so the engine reports them as not found."""
    pool = set(candidates)
    if prefix in pool:
        return prefix
    matches = sorted(c for c in pool if c.startswith(prefix))
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:10]) + (", ..." if len(matches) > 10 else "")
        raise ValidationError(
            f"{what} id {prefix!r} is ambiguous: {len(matches)} ids start with it ({shown}); "
            "give more characters"
        )
    return prefix


def _memory_id(mem: Any, args: argparse.Namespace) -> str:
    ids = (m.id for m in mem.get_all(include_archived=True, **_scope(args)))
    return _resolve(args.id, ids, "memory")


def _timestamp(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError(
            f"--timestamp {value!r}: use ISO-8601, e.g. 2026-05-01T10:00"
        ) from exc


# -- commands -----------------------------------------------------------------------------------
@command("add")
def cmd_add(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    # A folder: store now, extract in a background worker. Server mode extracts inline (its
    # worker would need the server's credentials on a command line).
    background = args.extract == "background" and not args.no_infer and not args.db
    with _open(args) as mem:
        r = mem.add(
            text,
            timestamp=_timestamp(args.timestamp),
            infer=not args.no_infer,
            kind=args.kind,
            defer=background,
            **_scope(args),
        )
    pending = r.memory.extraction == "pending"
    if pending:  # after the folder is closed, so the worker can open it at once
        from sage_memory.worker import spawn

        try:
            spawn(Path(args.path).resolve(), args.embedder)
        except OSError as exc:  # the memory is stored; only its graph waits
            print(
                f"warning: could not start the background extraction ({exc}); the memory is "
                "stored, run `sage-memory extract` to build its graph",
                file=sys.stderr,
            )
    data = {
        "memory_id": r.memory_id,
        "node_ids": list(r.node_ids),
        "edge_ids": list(r.edge_ids),
        "expired_edge_ids": list(r.expired_edge_ids),
        "extraction_error": r.extraction_error,
        "extraction": r.memory.extraction,
    }
    if pending:
        shown = f"added {r.memory_id} (its graph is being extracted in the background)"
    else:
        shown = (
            f"added {r.memory_id} ({len(r.node_ids)} nodes, {len(r.edge_ids)} edges"
            + (f", {len(r.expired_edge_ids)} facts expired" if r.expired_edge_ids else "")
            + ")"
        )
    _emit(args, data, shown)
    return 0


@command("extract")
def cmd_extract(args: argparse.Namespace) -> int:
    """Build the graph of memories still pending (added in the background, or whose worker
    was stopped), in the foreground."""
    with _open(args) as mem:
        scoped = not args.all and (args.user is not None or args.agent is not None)
        who = _scope(args) if scoped else {}
        done = mem.extract_pending(limit=args.limit, **who)
        left = mem.stats(**who)["pending"]
    failed = [r.memory_id for r in done if r.extraction_error is not None]
    data = {
        "extracted": len(done),
        "memory_ids": [r.memory_id for r in done],
        "failed": failed,
        "node_ids": sorted({n for r in done for n in r.node_ids}),
        "edge_ids": sorted({e for r in done for e in r.edge_ids}),
        "pending": left,
    }
    text = (
        f"extracted {len(done)} memories"
        + (f" ({len(failed)} failed: see `get ID`)" if failed else "")
        + (f"; {left} still pending" if left else "")
    )
    _emit(args, data, text)
    return 0


#: What ``import`` accepts, shown in ``import --help`` and the README.
IMPORT_FORMAT = """\
A .txt file (or stdin): one memory per non-empty line.
A .jsonl/.ndjson file: one JSON value per line, either a string (the text) or a record
  {"text": "...", "timestamp": "2026-05-01T10:00:00Z", "metadata": {...},
   "kind": "knowledge"|"experience", "role": "user"|"assistant"|..., "source": "..."}
  where only "text" (or "content") is required.
Lines that are not JSON, not UTF-8 or not such a record are reported with their line
number and skipped; --strict stops at the first. A file written by `export` is a
snapshot, not a list of memories: restore it with `sage-memory load FILE`."""


def _bad(path: str, lineno: int, why: str, strict: bool, skipped: list[dict[str, Any]]) -> None:
    if strict:
        raise ValidationError(f"{path}:{lineno}: {why} (without --strict such lines are skipped)")
    skipped.append({"line": lineno, "reason": why})


def _read_items(
    path: str, *, strict: bool, skipped: list[dict[str, Any]]
) -> Iterator[str | dict[str, Any]]:
    """The good lines of a .txt/.jsonl file; each bad one goes to ``skipped`` with its number."""
    fh = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    try:
        jsonl = path.endswith((".jsonl", ".ndjson"))
        for lineno, raw in enumerate(fh, start=1):
            try:  # line by line, so one undecodable line costs only itself
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                _bad(path, lineno, f"not UTF-8 (byte {exc.start})", strict, skipped)
                continue
            line = line.removeprefix("\ufeff") if lineno == 1 else line
            if "\x00" in line:  # UTF-16 or binary data decodes "fine" byte by byte
                _bad(path, lineno, "holds NUL bytes (UTF-16 or binary?)", strict, skipped)
                continue
            if not line.strip():
                continue
            if not jsonl:
                yield line.rstrip("\r\n")
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                _bad(path, lineno, f"not JSON ({exc.msg})", strict, skipped)
                continue
            if lineno == 1 and isinstance(item, dict) and item.get("type") == EXPORT_FORMAT:
                raise ValidationError(
                    f"{path} is a sage-memory export, not a list of memories; "
                    f"restore it with: sage-memory --path NEW_FOLDER load {path}"
                )
            text = item.get("text", item.get("content")) if isinstance(item, dict) else item
            if isinstance(text, str) and text.strip():
                yield item
            else:
                _bad(path, lineno, 'not a string or a {"text": ...} record', strict, skipped)
    finally:
        if path != "-":
            fh.close()


#: The header ``export`` writes on line 1 (sage_memory.engine.transfer.FORMAT).
EXPORT_FORMAT = "sage_memory.export"


@command("import")
def cmd_import(args: argparse.Namespace) -> int:
    if args.file != "-" and not Path(args.file).is_file():
        raise ValidationError(f"{args.file} does not exist")
    skipped: list[dict[str, Any]] = []
    items = list(_read_items(args.file, strict=args.strict, skipped=skipped))
    for bad in skipped:
        print(f"warning: {args.file}:{bad['line']}: {bad['reason']}; skipped", file=sys.stderr)
    if not items:
        raise ValidationError(
            f"{args.file}: no line could be imported"
            + (f" ({len(skipped)} bad lines, see the warnings)" if skipped else " (it is empty)")
        )
    with _open(args) as mem:
        results = mem.add_many(
            items,
            infer=not args.no_infer,
            progress=_bars(args),
            dedup=not args.no_dedup,
            **_scope(args),
        )
    lines = ", ".join(str(b["line"]) for b in skipped)
    stored = [r.memory_id for r in results if r.skipped]
    new = len(results) - len(stored)
    _emit(
        args,
        {
            "imported": new,
            "already_stored": len(stored),
            "memory_ids": [r.memory_id for r in results],
            "skipped": skipped,
        },
        f"imported {new} memories"
        + (f"; {len(stored)} already stored (same text, scope and time)" if stored else "")
        + (f"; skipped {len(skipped)} bad line(s): {lines}" if skipped else ""),
    )
    return 0


@command("search")
def cmd_search(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        res = mem.search(
            args.query,
            limit=args.limit,
            as_of=_timestamp(args.as_of),
            focus=args.focus,
            kind=args.kind,
            rerank=True if args.rerank else None,
            **_scope(args),
        )
    names = {h.node.id: h.node.name for h in res.nodes}
    names.update({h.edge.source_id: h.source_name for h in res.edges})
    names.update({h.edge.target_id: h.target_name for h in res.edges})
    data = {
        "query": res.query,
        "took_ms": round(res.took_ms, 2),
        "memories": [
            {**memory_json(h.memory), "score": h.score, "channels": list(h.channels), "why": h.why}
            for h in res.memories
        ],
        "nodes": [{**node_json(h.node), "score": h.score, "why": h.why} for h in res.nodes],
        "edges": [{**edge_json(h.edge, names), "score": h.score, "why": h.why} for h in res.edges],
        "context": res.context,
        "focus": list(res.focus),
        "focus_inferred": res.focus_inferred,
        "rerank": None if res.rerank is None else dataclasses.asdict(res.rerank),
    }
    for item, h in zip(data["memories"], res.memories, strict=True):
        item["expired"] = h.expired
    lines = [
        f"{h.score:.3f}  {h.text}  [{h.id[:8]}; {'+'.join(h.channels)}]"
        + ("  (facts no longer hold)" if h.expired else "")
        for h in res.memories
    ]
    _emit(args, data, "\n".join(lines) or "no memories found")
    return 0


@command("explore")
def cmd_explore(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        sub = mem.explore(
            args.name,
            hops=args.hops,
            relations=args.relation or None,
            include_expired=args.history,
            **_scope(args),
        )
    if args.format in ("svg", "html"):
        from sage_memory.ui import render_svg, subgraph_html

        picture = (
            render_svg(sub)
            if args.format == "svg"
            else subgraph_html(sub, title=f"{args.name}: {args.hops} hops")
        )
        if args.output:
            Path(args.output).write_text(picture, encoding="utf-8")
            print(f"wrote {args.output}")
        else:
            print(picture)
        return 0
    names = {n.id: n.name for n in sub.nodes}
    data = {
        "start": list(sub.start),
        "nodes": [node_json(n) for n in sub.nodes],
        "edges": [edge_json(e, names) for e in sub.edges],
    }
    lines = [f"{n.name} ({n.label})" for n in sub.nodes if n.id in sub.start]
    for e in sub.edges:
        when = ""
        if e.valid_to is not None:
            when = f"  [until {e.valid_to.date()}]"
        lines.append(f"  {names[e.source_id]} -{e.relation}-> {names[e.target_id]}{when}")
    _emit(args, data, "\n".join(lines))
    return 0


def _hits_json(hits: Sequence[Any]) -> list[dict[str, Any]]:
    return [{**node_json(h.node), "score": h.score, "why": h.why} for h in hits]


@command("plan")
def cmd_plan(args: argparse.Namespace) -> int:
    """Structure queries: what comes next, before, after, or is needed, for a task/project."""
    with _open(args) as mem:
        ask = {
            "next": mem.next_steps,
            "before": mem.predecessors,
            "after": mem.successors,
            "needs": mem.requirements,
            "blockers": mem.blockers,
            "kinds": mem.ancestors,
            "causes": mem.causes,
        }[args.question]
        kwargs: dict[str, Any] = _scope(args)
        if args.question in ("before", "after", "needs", "blockers", "causes"):
            kwargs["transitive"] = args.all_steps
        hits = ask(args.name, **kwargs)
    lines = [f"{i}. {h.node.name} ({h.node.label})  {h.why}" for i, h in enumerate(hits, 1)]
    _emit(args, {"question": args.question, "steps": _hits_json(hits)}, "\n".join(lines) or "-")
    return 0


@command("path")
def cmd_path(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        hits = mem.path_between(args.source, args.target, max_hops=args.hops, **_scope(args))
    data = [
        {
            "source": h.source_name,
            "relation": h.relation,
            "target": h.target_name,
            "fact": h.edge.fact,
            "edge_id": h.edge.id,
        }
        for h in hits
    ]
    lines = [f"{h.source_name} -{h.relation}-> {h.target_name}" for h in hits]
    _emit(args, {"path": data}, "\n".join(lines) or "no path")
    return 0


@command("stats")
def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        scoped = args.user is not None or args.agent is not None or args.run is not None
        stats = mem.stats(**_scope(args)) if scoped and not args.all else mem.stats()
    _emit(args, stats, "\n".join(f"{k}: {v}" for k, v in stats.items()))
    return 0


@command("export")
def cmd_export(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        who = {} if args.all else {"user_id": args.user, "agent_id": args.agent}
        n = mem.export(args.file, format=args.format, progress=_bars(args), **who)
    _emit(args, {"written": n, "file": args.file}, f"wrote {n} records to {args.file}")
    return 0


@command("load")
def cmd_load(args: argparse.Namespace) -> int:
    from sage_memory.engine.core import SageMemory

    # Server mode (--db / $SAGE_MEMORY_URL) loads into PostgreSQL, under each partition's lock.
    server = {"url": args.db} if getattr(args, "db", None) else {}
    with SageMemory.load(
        args.file,
        None if server else args.path,
        embedder=args.embedder,
        user_id=args.user,
        progress=_bars(args),
        **server,
    ) as mem:
        stats = mem.stats()
    target = "the server" if server else args.path
    _emit(args, stats, f"loaded {args.file} into {target}: {stats['memories']} memories")
    return 0


@command("get")
def cmd_get(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        m = mem.get(_memory_id(mem, args), **_scope(args))
    _emit(args, memory_json(m), f"{m.id}  [{m.timestamp.date()}]  {m.text}")
    return 0


@command("delete")
def cmd_delete(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        if args.id == "all":
            count = len(mem.get_all(include_archived=True, **_scope(args)))
            if not args.yes and not _confirm(f"forget all {count} memories of {_who(args)}?"):
                raise ValidationError(
                    f"delete all would forget {count} memories of {_who(args)} for good "
                    "(it cannot be undone); pass --yes to confirm"
                )
            n = mem.delete_all(**_scope(args))
            _emit(args, {"deleted": n}, f"deleted {n} memories")
        else:
            memory_id = _memory_id(mem, args)
            mem.delete(memory_id, **_scope(args))
            _emit(args, {"deleted": 1, "id": memory_id}, f"deleted {memory_id}")
    return 0


def _who(args: argparse.Namespace) -> str:
    scope = (("user", args.user), ("agent", args.agent), ("run", args.run))
    return ", ".join(f"{k} {v!r}" for k, v in scope if v is not None)


def _confirm(question: str) -> bool:
    """Ask on a terminal; a script (no terminal) must say --yes instead."""
    if not sys.stdin.isatty():
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


@command("history")
def cmd_history(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        journal = [c for _, c in mem.store.journal()]
        entity_id = _resolve(args.id, (c.entity_id for c in journal), "memory, node or edge")
        changes = mem.history(entity_id)
    if not changes:
        raise NotFoundError(f"no memory, node or edge with id {args.id!r} has any history")
    data = [
        {
            "id": c.id,
            "batch_id": c.batch_id,
            "op": c.op,
            "entity": c.entity,
            "at": _iso(c.at),
            "actor": c.actor,
            "reason": c.reason,
            "before": c.before,
            "after": c.after,
        }
        for c in changes
    ]
    # Both ids: `undo` takes the change (this row alone) or its batch (the whole call, e.g.
    # an add with the facts extracted from it), and the batch is what a user usually means.
    lines = [
        f"{c.at:%Y-%m-%d %H:%M:%S} {c.op:<6} by {c.actor} ({c.reason}) "
        f"change {c.id} batch {c.batch_id}"
        for c in changes
    ]
    _emit(args, data, "\n".join(lines) or "no history")
    return 0


@command("undo")
def cmd_undo(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        journal = [c for _, c in mem.store.journal()]
        ids = {c.id for c in journal} | {c.batch_id for c in journal}
        try:
            changes = mem.undo(_resolve(args.id, ids, "change or batch"), force=args.force)
        except ValidationError as exc:  # the engine speaks Python; name the CLI flag
            raise ValidationError(str(exc).replace("pass force=True", "pass --force")) from exc
    _emit(args, {"undone": len(changes)}, f"undid {len(changes)} change(s)")
    return 0


@command("evolve")
def cmd_evolve(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        scope = {} if args.all else _scope(args)
        report = mem.evolve(
            dry_run=not args.apply, operations=args.op, progress=_bars(args), **scope
        )
    counts = report.counts()
    data = {
        "batch_id": report.batch_id,
        "dry_run": report.dry_run,
        "changes": report.changes,
        "applied": counts["applied"],
        "suggested": counts["suggested"],
        "suggestions": [suggestion_json(x) for x in report.suggestions],
        "proposed": [
            {"op": x.op, "summary": x.summary, "confidence": x.confidence, "applied": x.applied}
            for x in report.proposed
        ],
        "metrics": dict(report.metrics),
        "deltas": dict(report.deltas),
        "took_ms": report.took_ms,
    }
    verb = "would apply" if report.dry_run else "applied"
    lines = [
        f"{'dry run' if report.dry_run else 'run'} {report.batch_id} in {report.took_ms:.0f} ms",
        f"{verb}: {counts['applied'] or 'nothing'}",
        f"suggested: {counts['suggested'] or 'nothing'}",
        *(f"  [{x.op}] {x.summary}" for x in report.proposed if not x.applied),
        "metrics: " + ", ".join(f"{k}={v}" for k, v in report.metrics.items()),
    ]
    if report.deltas:
        lines.append(
            "since last run: " + ", ".join(f"{k}={v:+g}" for k, v in report.deltas.items())
        )
    if not report.dry_run and report.changes:
        lines.append(f"undo the whole run with: sage-memory undo {report.batch_id}")
    _emit(args, data, "\n".join(lines))
    return 0


def suggestion_json(x: Any) -> dict[str, Any]:
    return {
        "id": x.id,
        "op": x.op,
        "summary": x.summary,
        "confidence": x.confidence,
        "status": x.status,
        "evidence": dict(x.evidence),
        "created_at": _iso(x.created_at),
        "batch_id": x.batch_id,
    }


@command("review")
def cmd_review(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        if args.action == "list":
            items = mem.review(user_id=args.user, agent_id=args.agent)
            lines = [f"{x.id}  [{x.op}] {x.summary} ({x.confidence:.2f})" for x in items]
            _emit(
                args, [suggestion_json(x) for x in items], "\n".join(lines) or "nothing to review"
            )
            return 0
        if not args.id:
            raise ValidationError(f"review {args.action} needs a suggestion id (see: review list)")
        pending = (x.id for x in mem.review(user_id=args.user, agent_id=args.agent))
        args.id = _resolve(args.id, pending, "suggestion")
        if args.action == "accept":
            changes = mem.accept(args.id)
            batch = changes[0].batch_id if changes else None
            text = f"accepted: {len(changes)} change(s); undo with: sage-memory undo {batch}"
            _emit(args, {"accepted": args.id, "changes": len(changes), "batch_id": batch}, text)
        else:
            mem.reject(args.id)
            _emit(args, {"rejected": args.id}, f"rejected {args.id}")
    return 0


@command("backup")
def cmd_backup(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        dest = mem.backup(args.dest)
    _emit(args, {"backup": str(dest)}, f"backed up to {dest}")
    return 0


def _scope_flags(scope: Scope) -> str:
    """A scope as the CLI flags that select it."""
    parts = [
        f"--user {scope.user_id}" if scope.user_id else "",
        f"--agent {scope.agent_id}" if scope.agent_id else "",
    ]
    return " ".join(p for p in parts if p)


@command("ui")
def cmd_ui(args: argparse.Namespace) -> int:
    """The graph explorer in the browser, for one scope, on 127.0.0.1."""
    import webbrowser

    from sage_memory.ui.api import ExplorerApi
    from sage_memory.ui.server import ExplorerServer

    if not Path(args.path).is_dir():
        raise ValidationError(
            f"--path {args.path}: no memory folder there (run `sage-memory demo` for one)"
        )
    with _open(args) as mem:
        user, agent = args.user, args.agent
        if user is None and agent is None:
            # no scope named: the folder's only scope (the demo's), else the CLI's default
            # user when it has data; never an empty page for a scope nobody wrote to
            scopes = mem.scopes()
            if len(scopes) == 1:
                user, agent = scopes[0].user_id, scopes[0].agent_id
            elif any(s.user_id == DEFAULT_USER and s.agent_id is None for s in scopes):
                user = DEFAULT_USER
            elif scopes:
                names = ", ".join(_scope_flags(s) for s in scopes[:10])
                more = ", ..." if len(scopes) > 10 else ""
                raise ValidationError(
                    f"{args.path} holds {len(scopes)} scopes ({names}{more}); "
                    "choose one with --user / --agent"
                )
            else:
                user = DEFAULT_USER
        api = ExplorerApi(mem, user_id=user, agent_id=agent, allow_writes=args.allow_writes)
        server = ExplorerServer(api, port=args.port)
        shown = ", ".join(f"{k}={v}" for k, v in api.scope.items() if v is not None)
        mode = "writes allowed (token-protected)" if args.allow_writes else "read-only"
        print(f"sage_memory explorer for {shown} ({mode}) at {server.url}", flush=True)
        print("press Ctrl-C to stop", flush=True)
        if not args.no_browser:
            webbrowser.open(server.url)
        try:
            server.serve_forever()
        finally:
            server.server_close()
    return 0


@command("demo")
def cmd_demo(args: argparse.Namespace) -> int:
    """Scenario 1 of the product stories, offline: a project plan recalled days later."""
    from sage_memory.engine.core import SageMemory

    folder = args.demo_path or tempfile.mkdtemp(prefix="sage-demo-")
    day1 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    say = print
    say(f"sage_memory demo (offline) - memory folder: {folder}\n")
    with SageMemory(folder, embedder=args.embedder) as mem:
        story = (
            "I want to build a personal blog. First I'll design the database, then build the "
            "backend API, and finally the frontend. The backend will use Python's FastAPI."
        )
        say(f"Day 1, the user says:\n  {story}\n")
        r = mem.add(story, user_id="demo", timestamp=day1)
        say(f"Stored memory {r.memory_id[:8]}: {len(r.node_ids)} nodes, {len(r.edge_ids)} edges.")
        sub = mem.explore("personal blog", user_id="demo", hops=3)
        names = {n.id: n.name for n in sub.nodes}
        for e in sub.edges:
            say(f"  {names[e.source_id]} -{e.relation}-> {names[e.target_id]}")
        question = "What should I do next on my blog's backend?"
        say(f"\nDays later, the user asks: {question!r}\nThe context the agent gets:\n")
        res = mem.search(question, user_id="demo")
        say(_indent(res.context))
        done = "The database design is done."
        say(f"\nLater still: {done!r}")
        mem.add(done, user_id="demo", timestamp=day1 + timedelta(days=5))
        res = mem.search(question, user_id="demo")
        say("\nThe same question now gets:\n")
        say(_indent(res.context))
    say(
        f"\nExplore it yourself:\n  sage-memory --path {folder} --user demo explore 'personal blog'"
        f"\nSee it as a graph in your browser:\n  sage-memory ui --path {folder}"
    )
    return 0


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# -- parser -------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    env = os.environ
    p = argparse.ArgumentParser(
        prog="sage-memory",
        description="Graph-structured long-term memory for LLM agents.",
        epilog="Ids: wherever an id is asked for, a unique prefix of it will do (e.g. the 8 "
        "characters search prints).",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    # Both default to None here and are filled from the environment by _where(): an --path
    # typed on the command line must win over a $SAGE_MEMORY_URL left in the shell.
    p.add_argument(
        "--path",
        default=None,
        help="memory folder (default: $SAGE_MEMORY_PATH or ./memory; given, it wins over "
        "$SAGE_MEMORY_URL)",
    )
    p.add_argument(
        "--db",
        default=None,
        help="server mode: postgresql://... URL, used instead of --path "
        "(default: $SAGE_MEMORY_URL)",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="when another process owns the folder, wait up to SECONDS for it before a write "
        "fails (reads open the folder read-only at once; a background extraction worker is "
        "always waited for)",
    )
    p.add_argument("--user", default=env.get("SAGE_MEMORY_USER"), help="user_id scope")
    p.add_argument("--agent", default=None, help="agent_id scope")
    p.add_argument("--run", default=None, help="run_id (session) scope")
    p.add_argument(
        "--embedder",
        default=env.get("SAGE_EMBEDDER", "minilm"),
        help="minilm (default, local), hashing, or litellm:<model>",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help, description=help)
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        return sp

    sp = add("add", "remember a text (use - to read stdin)")
    sp.add_argument("text")
    sp.add_argument("--timestamp", help="when it happened (ISO-8601)")
    sp.add_argument("--no-infer", action="store_true", help="store without extracting a graph")
    sp.add_argument(
        "--extract",
        choices=["background", "now"],
        default=env.get("SAGE_MEMORY_EXTRACT", "background"),
        help="background (default, or $SAGE_MEMORY_EXTRACT): return once the memory is stored "
        "and searchable, and build its graph in a background process; now: build the graph "
        "before returning (for a script that explores it next)",
    )
    sp.add_argument(
        "--kind",
        choices=["knowledge", "experience"],
        help="what the text is: a fact that holds, or a record of something done",
    )
    sp = add("extract", "build the graph of memories still pending (see add --extract)")
    sp.add_argument("--limit", type=int, help="at most this many (default: all)")
    sp.add_argument("--all", action="store_true", help="every scope, not just --user/--agent")
    sp = add("import", "remember every line of a text file, or every record of a .jsonl file")
    sp.epilog = IMPORT_FORMAT
    sp.formatter_class = argparse.RawDescriptionHelpFormatter
    sp.add_argument("file", help="a .txt/.jsonl file, or - for stdin")
    sp.add_argument("--no-infer", action="store_true")
    sp.add_argument("--strict", action="store_true", help="stop at the first bad line")
    sp.add_argument(
        "--no-dedup",
        action="store_true",
        help="store records again even when the same text, scope and timestamp (or id) is stored",
    )
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp = add("search", "hybrid search; prints ranked memories (or everything with --json)")
    sp.add_argument("query")
    sp.add_argument("--limit", type=int, default=10)
    sp.add_argument("--as-of", help="read facts as they were at this time (ISO-8601)")
    sp.add_argument(
        "--focus",
        action="append",
        help="what you work on (a node name or id; repeatable): lifts what is near it",
    )
    sp.add_argument(
        "--kind", choices=["knowledge", "experience"], help="only memories of this kind"
    )
    sp.add_argument(
        "--rerank",
        metavar="MODEL",
        help="let this litellm model rerank the best candidates (one call, with a timeout)",
    )
    sp = add("explore", "show the graph around a node")
    sp.add_argument("name", help="node name, alias or id")
    sp.add_argument("--hops", type=int, default=2)
    sp.add_argument("--relation", action="append", help="follow only this relation (repeatable)")
    sp.add_argument("--history", action="store_true", help="include expired facts")
    sp.add_argument(
        "--format",
        choices=["text", "svg", "html"],
        default="text",
        help="svg or html: write the subgraph as a picture (to --output, else stdout)",
    )
    sp.add_argument("--output", "-o", help="file for --format svg/html")
    sp = add("plan", "structure: what comes next / before / after / is needed for a task")
    sp.add_argument(
        "question", choices=["next", "before", "after", "needs", "blockers", "kinds", "causes"]
    )
    sp.add_argument("name", help="task or project name, alias or id")
    sp.add_argument(
        "--all-steps",
        action="store_true",
        help="follow the relation transitively (before/after/needs/blockers/causes)",
    )
    sp = add("path", "a shortest chain of facts between two nodes")
    sp.add_argument("source")
    sp.add_argument("target")
    sp.add_argument("--hops", type=int, default=4)
    sp = add("stats", "counts for the scope (or everything with --all)")
    sp.add_argument("--all", action="store_true")
    sp = add("export", "write memories and graph to a file")
    sp.add_argument("file")
    sp.add_argument("--format", choices=["jsonl", "graphml"], default="jsonl")
    sp.add_argument("--all", action="store_true", help="every scope, not just --user/--agent")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp = add(
        "load",
        "load a jsonl export or a GraphML file into --path (GraphML nodes without a scope go"
        " to --user)",
    )
    sp.add_argument("file")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp = add("get", "show one memory")
    sp.add_argument("id")
    sp = add("delete", "forget a memory (or 'all' memories of the scope)")
    sp.add_argument("id", help="a memory id (a unique prefix will do), or all")
    sp.add_argument("--yes", action="store_true", help="delete all without asking")
    sp = add("history", "the journal of a memory, node or edge")
    sp.add_argument("id")
    sp = add("undo", "undo a change or a whole batch by id")
    sp.add_argument("id")
    sp.add_argument("--force", action="store_true", help="also overwrite later changes")
    sp = add("evolve", "one evolution pass: reinforce, decay, settle conflicts, find duplicates")
    mode = sp.add_mutually_exclusive_group(required=True)
    mode.add_argument("--dry-run", action="store_true", help="report what would change")
    mode.add_argument("--apply", action="store_true", help="apply what the config allows")
    sp.add_argument("--op", action="append", help="only this operation (repeatable)")
    sp.add_argument("--all", action="store_true", help="every scope, not just --user/--agent")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp = add("review", "list suggestions, or accept/reject one by id")
    sp.add_argument("action", nargs="?", choices=["list", "accept", "reject"], default="list")
    sp.add_argument("id", nargs="?", help="suggestion id (for accept/reject)")
    sp = add("backup", "consistent copy of the memory folder while it is in use")
    sp.add_argument("dest")
    sp = add("ui", "the graph explorer in your browser (127.0.0.1 only; read-only by default)")
    # accepted after the command too (`sage-memory ui --path X`); SUPPRESS keeps the global value
    sp.add_argument("--path", "--db", default=argparse.SUPPRESS, help="memory folder")
    sp.add_argument("--user", default=argparse.SUPPRESS, help="user_id scope")
    sp.add_argument("--agent", default=argparse.SUPPRESS, help="agent_id scope")
    sp.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free)")
    sp.add_argument("--no-browser", action="store_true", help="only print the URL")
    sp.add_argument(
        "--allow-writes",
        action="store_true",
        help="let the page accept/reject suggestions, undo and run the evolver",
    )
    sp = add("demo", "an offline walk-through of a project plan recalled days later")
    sp.add_argument("--demo-path", help="folder for the demo memory (default: a temp folder)")
    return p


def _version() -> str:
    from sage_memory import __version__

    return __version__


#: Commands that only read or change what is stored: on a folder that does not exist they say
#: so, instead of creating an empty memory and answering "nothing found".
_NEEDS_FOLDER = frozenset(
    {"search", "explore", "plan", "path", "stats", "export", "get", "delete", "history"}
    | {"undo", "evolve", "review", "backup", "extract"}
)
#: The scope used when no --user/--agent/--run (nor $SAGE_MEMORY_USER) is given.
DEFAULT_USER = "default"


def _where(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """Settle folder or server from the flags, then the environment; an error message or None.

    A flag beats an environment variable: ``--path`` with ``$SAGE_MEMORY_URL`` set opens the
    folder (it used to open the server and ignore the folder named on the command line).
    """
    if args.path is not None and args.db is not None:
        return "give --path (a folder) or --db (a server), not both"
    if args.path is None and args.db is None:
        args.db = env.get("SAGE_MEMORY_URL") or None
    if args.path is None:
        args.path = env.get("SAGE_MEMORY_PATH", "./memory")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = _where(args, os.environ)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    scopeless = args.user is None and args.agent is None and args.run is None
    if scopeless and args.command not in (
        "demo",
        "load",
        "stats",
        "export",
        "backup",
        "ui",
        "extract",
    ):
        args.user = DEFAULT_USER
        # Named on every run (stderr, so --json output stays parseable): never a silent scope.
        print(
            f"note: no --user given; using user {DEFAULT_USER!r} (set --user or $SAGE_MEMORY_USER)",
            file=sys.stderr,
        )
    server = getattr(args, "db", None)  # server mode has no folder to check
    if args.command in _NEEDS_FOLDER and not server and not Path(args.path).exists():
        print(
            f"error: no memory folder at {args.path}; check --path (or $SAGE_MEMORY_PATH), "
            "or create one with add/import",
            file=sys.stderr,
        )
        return 2
    try:
        return _COMMANDS[args.command](args)
    except SageMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
