"""Export and import: a lossless JSON-lines format, and GraphML for graph tools.

JSON lines: a header line, then one line per memory, node and edge (``{"type": ..., "data":
{...}}``) in an order that can be loaded back as it is read. Vectors are not exported; the
loader embeds again with its own embedder, so an export moves between models.

GraphML: the graph (nodes and edges; memories are not part of it). Each node and edge carries
readable columns for graph tools (name, label, relation, fact, weight...) and ``sage_record``,
its whole record as JSON, so export -> load -> export gives the same graph. A column edited in
a graph tool wins over the record. A GraphML file from elsewhere (networkx, Gephi, yEd) is
mapped as :func:`graphml_records` describes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from sage_memory.codec import dumps, record_from_dict, to_dict
from sage_memory.engine.journal import Batch
from sage_memory.engine.progress import Progress
from sage_memory.errors import StorageError, ValidationError
from sage_memory.schema import Schema
from sage_memory.types import Edge, Memory, Node, Scope, new_id

R = TypeVar("R", Node, Edge)

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


def export_jsonl(
    ctx: EngineContext, path: Path, scopes: Sequence[Scope], *, progress: bool = False
) -> int:
    count = 0
    tmp = path.with_name(path.name + ".tmp")
    with (
        tmp.open("w", encoding="utf-8") as fh,
        Progress(None, "exporting", "record", enabled=progress) as bar,
    ):
        header = {"type": FORMAT, "version": VERSION, "embedder": ctx.embedder.name}
        fh.write(dumps(header) + "\n")
        for kind, record in _records(ctx, scopes):
            fh.write(dumps({"type": kind, "data": to_dict(record)}) + "\n")
            count += 1
            bar.update()
    tmp.replace(path)  # a half-written export never replaces a good one
    return count


def _is_graphml(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(512).lstrip()
    return head.startswith((b"<?xml", b"<graphml"))


def load_file(
    ctx: EngineContext, path: Path, *, user_id: str | None = None, progress: bool = False
) -> int:
    """Load a jsonl export or a GraphML file (recognised by its first bytes)."""
    if not path.is_file():
        raise StorageError(f"{path} does not exist or is not a file")
    if _is_graphml(path):
        return import_graphml(ctx, path, user_id=user_id, progress=progress)
    return import_jsonl(ctx, path, progress=progress)


def import_jsonl(ctx: EngineContext, path: Path, *, progress: bool = False) -> int:
    if not path.is_file():
        raise StorageError(f"{path} does not exist or is not a file")
    count = 0
    with (
        path.open(encoding="utf-8") as fh,
        Progress(path.stat().st_size, "loading", "B", enabled=progress) as bar,
    ):
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
            bar.update(len(line.encode("utf-8")))
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
    # Under each partition's lock, as an add: a process resolving an entity name of the same
    # partition meanwhile sees the loaded nodes or none of them (never half a page).
    with ctx.writing(*{c.scope_key for c in batch.changes}):
        ctx.store.apply(batch.changes, vectors)
        ctx.sync_index(batch.changes, vectors)
    return len(records)


#: The GraphML graph attribute that marks our own exports.
GRAPHML_FORMAT = "sage_memory.graphml"
#: Readable node columns (and the record fields they set).
_NODE_COLUMNS = ("name", "label", "summary", "confidence", "salience")
_EDGE_COLUMNS = ("relation", "fact", "weight", "confidence")


def _iso(value: object) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else ""


def export_graphml(
    ctx: EngineContext, path: Path, scopes: Sequence[Scope], *, progress: bool = False
) -> int:
    import networkx as nx

    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph(format=GRAPHML_FORMAT, version=VERSION)
    count = 0
    with Progress(None, "exporting", "record", enabled=progress) as bar:
        for _kind, record in _records(ctx, scopes):
            if isinstance(record, Node):
                graph.add_node(
                    record.id,
                    name=record.name,
                    label=record.label,
                    summary=record.summary,
                    confidence=record.confidence,
                    salience=record.salience,
                    scope=record.scope.key.replace("\x1f", "/"),
                    sage_record=dumps(to_dict(record)),
                )
            elif isinstance(record, Edge):
                graph.add_edge(
                    record.source_id,
                    record.target_id,
                    key=record.id,
                    relation=record.relation,
                    fact=record.fact,
                    weight=record.weight,
                    confidence=record.confidence,
                    valid_from=_iso(record.valid_from),
                    valid_to=_iso(record.valid_to),
                    expired=record.expired_at is not None,
                    sage_record=dumps(to_dict(record)),
                )
            else:
                continue
            count += 1
            bar.update()
    tmp = path.with_name(path.name + ".tmp")
    nx.write_graphml(graph, tmp)
    tmp.replace(path)
    return count


def import_graphml(
    ctx: EngineContext, path: Path, *, user_id: str | None = None, progress: bool = False
) -> int:
    """Load the nodes and edges of a GraphML file (see :func:`graphml_records`)."""
    import networkx as nx

    try:
        graph = nx.read_graphml(path, force_multigraph=True)
    except Exception as exc:  # networkx raises several kinds for malformed XML
        raise ValidationError(f"{path} is not a readable GraphML file: {exc}") from exc
    fallback = Scope(user_id) if user_id else None
    records = graphml_records(graph, ctx.schema, fallback, now=ctx.now())
    count = 0
    with Progress(len(records), "loading", "record", enabled=progress) as bar:
        for i in range(0, len(records), _PAGE):
            chunk = records[i : i + _PAGE]
            count += _write(ctx, chunk)
            bar.update(len(chunk))
    return count


def _number(value: object, what: str, default: float) -> float:
    if value is None or value == "":
        return default
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValidationError(f"GraphML {what} must be a number, got {value!r}") from None


def _scope_from(data: Mapping[str, object], fallback: Scope | None, what: str) -> Scope:
    ids = {k: data.get(k) for k in ("user_id", "agent_id", "run_id")}
    if any(isinstance(v, str) and v for v in ids.values()):
        return Scope(*(str(v) if v else None for v in ids.values()))
    raw = data.get("scope")
    if isinstance(raw, str) and raw.strip("/"):
        parts = ([*raw.split("/"), "", "", ""])[:3]
        return Scope(*(p or None for p in parts))
    if fallback is not None:
        return fallback
    raise ValidationError(
        f"GraphML {what} has no scope (no user_id / agent_id / run_id / scope attribute): "
        "load it with user_id=... (command line: --user NAME) to put it in one"
    )


def graphml_records(
    graph: object,
    schema: Schema,
    fallback: Scope | None,
    *,
    now: datetime,
) -> list[Node | Edge]:
    """Nodes, then edges, from a networkx graph read from GraphML.

    Our own exports carry ``sage_record`` (the whole record); a readable column edited in a
    graph tool overrides it. Anything else is mapped:

    - node name: ``name``, else ``label``, else ``title``, else the GraphML node id;
    - node label (its kind): ``type``, ``kind`` or ``category``, else ``label`` when ``name``
      was there; mapped onto the schema (unknown kinds become Entity, kept as ``kind``);
    - edge relation: ``relation``, ``type`` or ``label``, else RELATED_TO; an unknown one is
      stored as RELATED_TO with ``original_relation``;
    - ``summary``, ``fact``/``description``, ``confidence``, ``weight`` as such; every other
      attribute is kept in the record's ``attributes``, and the GraphML id as ``graphml_id``;
    - the scope: ``user_id``/``agent_id``/``run_id`` or ``scope`` ("user/agent/run"), else the
      ``user_id`` the load was given; without either, a ValidationError names the node.
    """
    import networkx as nx

    assert isinstance(graph, nx.Graph)
    ids: dict[str, str] = {}
    nodes: list[Node] = []
    for gid, data in graph.nodes(data=True):
        node = _node_from(str(gid), data, schema, fallback, now)
        ids[str(gid)] = node.id
        nodes.append(node)
    by_id = {n.id: n for n in nodes}
    edges: list[Edge] = []
    for src, dst, key, data in graph.edges(keys=True, data=True):
        a, b = by_id[ids[str(src)]], by_id[ids[str(dst)]]
        if a.scope.partition != b.scope.partition:
            raise ValidationError(
                f"GraphML edge {src} -> {dst} joins two scopes ({a.scope.key!r}, {b.scope.key!r})"
            )
        edges.append(_edge_from(str(key), data, a, b, schema, now))
    return [*nodes, *edges]


def _sage_record(data: Mapping[str, object], kind: Literal["node", "edge"], gid: str) -> object:
    """The record an export of ours kept whole in ``sage_record``, or None for foreign GraphML."""
    raw = data.get("sage_record")
    if not isinstance(raw, str):
        return None
    try:
        return record_from_dict(kind, json.loads(raw))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValidationError(f"GraphML {kind} {gid}: a broken sage_record ({exc})") from exc


def _node_from(
    gid: str, data: Mapping[str, object], schema: Schema, fallback: Scope | None, now: datetime
) -> Node:
    node = _sage_record(data, "node", gid)
    if node is not None:
        assert isinstance(node, Node)
        return _override(node, data, _NODE_COLUMNS)
    name = next((str(data[k]) for k in ("name", "label", "title") if data.get(k)), gid)
    kind = next((str(data[k]) for k in ("type", "kind", "category") if data.get(k)), None)
    if kind is None and data.get("name") and data.get("label"):
        kind = str(data["label"])
    label = schema.map_label(kind) if kind else "Entity"
    used = {"name", "title", "type", "kind", "category", "summary", "confidence", "salience"}
    used |= {"user_id", "agent_id", "run_id", "scope"}
    if data.get("name"):
        used.add("label")
    attributes = {k: v for k, v in data.items() if k not in used}
    if label == "Entity" and kind and kind.lower() != "entity":
        attributes["kind"] = kind
    attributes["graphml_id"] = gid
    return Node(
        id=new_id(),
        scope=_scope_from(data, fallback, f"node {gid}").partition,
        name=name,
        label=label,
        summary=str(data.get("summary") or ""),
        attributes=attributes,
        confidence=min(1.0, max(0.0, _number(data.get("confidence"), "confidence", 1.0))),
        salience=min(1.0, max(0.0, _number(data.get("salience"), "salience", 0.5))),
        created_at=now,
        updated_at=now,
    )


def _edge_from(
    key: str, data: Mapping[str, object], a: Node, b: Node, schema: Schema, now: datetime
) -> Edge:
    edge = _sage_record(data, "edge", key)
    if edge is not None:
        assert isinstance(edge, Edge)
        edge = _override(edge, data, _EDGE_COLUMNS)
        return edge if (edge.source_id, edge.target_id) == (a.id, b.id) else _repoint(edge, a, b)
    name = next((str(data[k]) for k in ("relation", "type", "label") if data.get(k)), None)
    relation, original = schema.map_relation(name) if name else ("RELATED_TO", None)
    used = {"relation", "type", "label", "fact", "description", "weight", "confidence"}
    attributes: dict[str, object] = {k: v for k, v in data.items() if k not in used}
    if original is not None:
        attributes["original_relation"] = original
    attributes["graphml_id"] = key
    return Edge(
        id=new_id(),
        scope=a.scope,
        source_id=a.id,
        target_id=b.id,
        relation=relation,
        fact=str(data.get("fact") or data.get("description") or ""),
        weight=_number(data.get("weight"), "weight", 1.0),
        confidence=min(1.0, max(0.0, _number(data.get("confidence"), "confidence", 1.0))),
        attributes=attributes,
        created_at=now,
    )


def _override(record: R, data: Mapping[str, object], columns: Sequence[str]) -> R:
    """``record`` with the readable columns a graph tool may have edited."""
    import dataclasses

    changes: dict[str, Any] = {}
    for col in columns:
        if col not in data:
            continue
        current = getattr(record, col)
        value = data[col]
        if isinstance(current, float):
            value = _number(value, col, current)
        elif isinstance(current, str):
            value = str(value)
        if value != current:
            changes[col] = value
    return dataclasses.replace(record, **changes) if changes else record


def _repoint(edge: Edge, a: Node, b: Node) -> Edge:
    import dataclasses

    return dataclasses.replace(edge, source_id=a.id, target_id=b.id)
