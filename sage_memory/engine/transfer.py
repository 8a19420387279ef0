"""Export and import: a lossless JSON-lines format, and GraphML for graph tools.

JSON lines: a header line, then one line per memory, node and edge (``{"type": ..., "data":
{...}}``) in an order that can be loaded back as it is read. Vectors are not exported; the
loader embeds again with its own embedder, so an export moves between models.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sage_memory.codec import dumps, record_from_dict, to_dict
from sage_memory.engine.journal import Batch
from sage_memory.errors import StorageError, ValidationError
from sage_memory.types import Memory, Node, Scope

if TYPE_CHECKING:
    from sage_memory.engine.context import EngineContext

FORMAT = "sage_memory.export"
VERSION = 1
_PAGE = 2000


def _records(ctx: EngineContext, scopes: Sequence[Scope]) -> Iterator[tuple[str, Any]]:
    for scope in scopes:
        offset = 0
        while page := ctx.store.list_memories(
            scope, limit=_PAGE, offset=offset, include_archived=True
        ):
            yield from (("memory", m) for m in page)
            offset += len(page)
        offset = 0
        while nodes := ctx.store.list_nodes(scope.partition, limit=_PAGE, offset=offset):
            yield from (("node", n) for n in nodes)
            offset += len(nodes)
        offset = 0
        while edges := ctx.store.list_edges(scope.partition, limit=_PAGE, offset=offset):
            yield from (("edge", e) for e in edges)
            offset += len(edges)


def export_jsonl(ctx: EngineContext, path: Path, scopes: Sequence[Scope]) -> int:
    count = 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        header = {"type": FORMAT, "version": VERSION, "embedder": ctx.embedder.name}
        fh.write(dumps(header) + "\n")
        for kind, record in _records(ctx, scopes):
            fh.write(dumps({"type": kind, "data": to_dict(record)}) + "\n")
            count += 1
    tmp.replace(path)  # a half-written export never replaces a good one
    return count


def import_jsonl(ctx: EngineContext, path: Path) -> int:
    if not path.is_file():
        raise StorageError(f"{path} does not exist or is not a file")
    count = 0
    with path.open(encoding="utf-8") as fh:
        first = fh.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{path} is not a sage_memory export (bad header)") from exc
        if header.get("type") != FORMAT or header.get("version") != VERSION:
            raise ValidationError(
                f"{path} is not a sage_memory export of version {VERSION}: header {first[:200]!r}"
            )
        chunk: list[Any] = []
        for lineno, line in enumerate(fh, start=2):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                chunk.append(record_from_dict(item["type"], item["data"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValidationError(f"{path}:{lineno}: not a valid record ({exc})") from exc
            if len(chunk) >= _PAGE:
                count += _write(ctx, chunk)
                chunk = []
        count += _write(ctx, chunk)
    return count


def _write(ctx: EngineContext, records: Sequence[Any]) -> int:
    if not records:
        return 0
    texts = {
        r.id: (r.text if isinstance(r, Memory) else r.name)
        for r in records
        if isinstance(r, (Memory, Node))
    }
    vectors = {}
    if texts:
        ids = list(texts)
        vecs = ctx.embedder.embed([texts[i] for i in ids])
        vectors = {i: np.asarray(v, dtype=np.float32) for i, v in zip(ids, vecs, strict=True)}
    batch = Batch("user", "load", ctx.now())
    for r in records:
        batch.record(None, r)
    with ctx.lock:
        ctx.store.apply(batch.changes, vectors)
        ctx.sync_index(batch.changes, vectors)
    return len(records)


def export_graphml(ctx: EngineContext, path: Path, scopes: Sequence[Scope]) -> int:
    import networkx as nx

    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    count = 0
    for kind, record in _records(ctx, scopes):
        if kind == "node":
            graph.add_node(
                record.id,
                name=record.name,
                label=record.label,
                summary=record.summary,
                confidence=record.confidence,
                scope=record.scope.key.replace("\x1f", "/"),
            )
        elif kind == "edge":
            graph.add_edge(
                record.source_id,
                record.target_id,
                key=record.id,
                relation=record.relation,
                fact=record.fact,
                weight=record.weight,
                confidence=record.confidence,
                valid_from=record.valid_from.isoformat() if record.valid_from else "",
                valid_to=record.valid_to.isoformat() if record.valid_to else "",
                expired=record.expired_at is not None,
            )
        else:
            continue
        count += 1
    nx.write_graphml(graph, path)
    return count
