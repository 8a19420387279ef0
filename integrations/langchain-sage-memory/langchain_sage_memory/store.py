"""SageStore: a LangGraph ``BaseStore`` whose items are sage_memory memories.

So ``create_agent(..., store=SageStore(mem))``, ``StateGraph.compile(store=...)``, tools that
use ``runtime.store`` and langmem's memory tools all run on the graph memory: every item put
with indexing on is embedded, extracted into the graph (``infer=True``) and found by hybrid
search; ``search(query=...)`` ranks with the engine's retriever.

How namespaces map onto sage scopes
-----------------------------------
A sage scope (``user_id``, ``agent_id``) is a partition of the graph; a namespace is a tuple of
labels. By default the label at position ``user_label`` (0: the first) is the ``user_id``, so
``("alice", "memories")`` lives in Alice's graph, next to what the other adapters remember for
her. langmem-style namespaces such as ``("memories", "{user_id}")`` want ``user_label=1``. Pass
``user_id="..."`` to keep every namespace in one partition instead. The full namespace, the key,
the value (JSON) and the creation time travel in each memory's metadata, under ``"store"``.

Semantics follow LangGraph's ``InMemoryStore``: reads in a batch see the state before the
batch's writes; the last put of a key in a batch wins; ``value=None`` deletes; ``index=False``
items are stored and listed but never scored (they come after scored items in a query search);
filters take plain values, nested dicts and ``$eq $ne $gt $gte $lt $lte``. Differences: an
update keeps the item's ``created_at`` (InMemoryStore resets it), and query scores are the
retriever's fused scores, not cosine similarities. TTLs are not supported.

The store keeps an index of its items (namespace, key, value) in process memory, loaded from the
memories on first use; edit store items through the store, not with ``SageMemory.delete``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from langchain_sage_memory._common import engine_of
from sage_memory import Memory, NotFoundError, SageMemory

#: ``Memory.source`` of every memory written by a SageStore.
STORE_SOURCE = "langgraph-store"
_META = "store"
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")


@dataclass(frozen=True, slots=True)
class _Entry:
    item: Item
    memory_id: str
    user_id: str
    indexed: bool


class SageStore(BaseStore):
    """LangGraph long-term store on sage_memory.

    Args:
        sage: the SageMemory (or AsyncSageMemory).
        user_id: put every namespace in this user's partition; None maps
            ``namespace[user_label]`` to the user.
        user_label: which namespace label names the user when ``user_id`` is None.
        agent_id: the agent part of every item's scope (optional).
        fields: the JSON paths embedded by default (``["text"]``, ``["content.content"]``,
            ``["tags[*]"]``); None embeds every string in the value.
        infer: run the extractor on indexed items, so their facts join the graph.
        max_query_hits: the most memories one query search ranks per partition.
    """

    supports_ttl: bool = False

    def __init__(
        self,
        sage: Any,
        *,
        user_id: str | None = None,
        user_label: int = 0,
        agent_id: str | None = None,
        fields: list[str] | None = None,
        infer: bool = True,
        max_query_hits: int = 200,
    ) -> None:
        self._mem: SageMemory = engine_of(sage)
        self.user_id = user_id
        self.user_label = user_label
        self.agent_id = agent_id
        self.fields = list(fields) if fields is not None else None
        self.infer = infer
        self.max_query_hits = max_query_hits
        self._items: dict[tuple[str, ...], dict[str, _Entry]] | None = None
        self._lock = threading.RLock()

    # -- scope mapping -------------------------------------------------------------------------
    def _user_of(self, namespace: tuple[str, ...]) -> str:
        if self.user_id is not None:
            return self.user_id
        if len(namespace) <= self.user_label:
            raise ValueError(
                f"namespace {namespace} has no label at position {self.user_label} to name the "
                "user; use longer namespaces, SageStore(user_label=...) or SageStore(user_id=...)"
            )
        return namespace[self.user_label]

    def _scope(self, user: str) -> dict[str, Any]:
        out: dict[str, Any] = {"user_id": user}
        if self.agent_id is not None:
            out["agent_id"] = self.agent_id
        return out

    # -- loading the item index ----------------------------------------------------------------
    def _index(self) -> dict[tuple[str, ...], dict[str, _Entry]]:
        if self._items is None:
            self._items = self._load()
        return self._items

    def _load(self) -> dict[tuple[str, ...], dict[str, _Entry]]:
        if self.user_id is not None:
            users = [self.user_id]
        else:
            users = sorted(
                {
                    s.user_id
                    for s in self._mem.scopes()
                    if s.user_id is not None and s.agent_id == self.agent_id
                }
            )
        latest: dict[tuple[tuple[str, ...], str], _Entry] = {}
        stale: list[tuple[str, str]] = []
        for user in users:
            for memory in self._mem.get_all(**self._scope(user), include_archived=True):
                entry = _entry_from(memory, user)
                if entry is None:
                    continue
                where = (entry.item.namespace, entry.item.key)
                older = latest.get(where)
                if older is not None:
                    # A put that crashed between writing the new memory and forgetting the old
                    # one leaves two; the newer wins and the older is forgotten now.
                    keep, drop = (
                        (entry, older)
                        if entry.item.updated_at >= older.item.updated_at
                        else (older, entry)
                    )
                    stale.append((drop.memory_id, drop.user_id))
                    entry = keep
                latest[where] = entry
        for memory_id, user in stale:
            self._forget(memory_id, user)
        items: dict[tuple[str, ...], dict[str, _Entry]] = {}
        for entry in sorted(latest.values(), key=lambda e: e.item.created_at):
            items.setdefault(entry.item.namespace, {})[entry.item.key] = entry
        return items

    def _forget(self, memory_id: str, user: str) -> None:
        with contextlib.suppress(NotFoundError):  # already gone: deleting is idempotent
            self._mem.delete(memory_id, **self._scope(user))

    # -- BaseStore -----------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        with self._lock:
            items = self._index()
            results: list[Result] = []
            puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
            for op in ops:
                if isinstance(op, GetOp):
                    entry = items.get(op.namespace, {}).get(op.key)
                    results.append(None if entry is None else entry.item)
                elif isinstance(op, SearchOp):
                    results.append(self._search(items, op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(_list_namespaces(items, op))
                elif isinstance(op, PutOp):
                    if op.ttl is not None:
                        raise NotImplementedError("SageStore does not support TTLs (ttl=...)")
                    puts[(op.namespace, op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"unknown store operation {type(op).__name__}")
            for op in puts.values():
                self._apply_put(items, op)
            return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The engine is blocking (SQLite, embedding): run the batch in a worker thread.
        return await asyncio.to_thread(self.batch, list(ops))

    # -- writes --------------------------------------------------------------------------------
    def _apply_put(self, items: dict[tuple[str, ...], dict[str, _Entry]], op: PutOp) -> None:
        old = items.get(op.namespace, {}).get(op.key)
        if op.value is None:
            if old is not None:
                self._forget(old.memory_id, old.user_id)
                del items[op.namespace][op.key]
                if not items[op.namespace]:
                    del items[op.namespace]
            return
        value = dict(op.value)
        user = self._user_of(op.namespace)
        indexed = op.index is not False
        paths = self.fields if op.index is None or op.index is False else list(op.index)
        text = _index_text(value, paths)[: self._mem.config.max_text_chars]
        created = old.item.created_at if old is not None else datetime.now(UTC)
        meta = {
            _META: {
                "namespace": list(op.namespace),
                "key": op.key,
                "value": json.dumps(value, ensure_ascii=False),
                "created_at": created.isoformat(),
                "indexed": indexed,
            }
        }
        res = self._mem.add(
            text,
            **self._scope(user),
            metadata=meta,
            source=STORE_SOURCE,
            infer=self.infer and indexed,
        )
        # Write the new memory before forgetting the old one: a crash in between leaves a
        # duplicate that the next load resolves, never a lost item.
        if old is not None:
            self._forget(old.memory_id, old.user_id)
        entry = _entry_from(res.memory, user)
        assert entry is not None, "a memory written by the store carries its metadata"
        if old is not None:
            items[op.namespace][op.key] = entry  # keeps its place, as InMemoryStore does
        else:
            items.setdefault(op.namespace, {})[op.key] = entry

    # -- reads ---------------------------------------------------------------------------------
    def _search(
        self, items: dict[tuple[str, ...], dict[str, _Entry]], op: SearchOp
    ) -> list[SearchItem]:
        n = len(op.namespace_prefix)
        candidates = [
            entry
            for ns, entries in items.items()
            if ns[:n] == op.namespace_prefix
            for entry in entries.values()
            if not op.filter or _matches(entry.item.value, op.filter)
        ]
        if not op.query:
            return [_search_item(e, None) for e in candidates[op.offset : op.offset + op.limit]]
        scores = self._scores(op.query, [e for e in candidates if e.indexed], op)
        scored = sorted(
            (e for e in candidates if e.memory_id in scores), key=lambda e: -scores[e.memory_id]
        )
        rest = [e for e in candidates if e.memory_id not in scores]
        ranked = [(e, scores.get(e.memory_id)) for e in (*scored, *rest)]
        return [_search_item(e, s) for e, s in ranked[op.offset : op.offset + op.limit]]

    def _scores(self, query: str, indexed: list[_Entry], op: SearchOp) -> dict[str, float]:
        by_user: dict[str, int] = {}
        for e in indexed:
            by_user[e.user_id] = by_user.get(e.user_id, 0) + 1
        wanted = {e.memory_id for e in indexed}
        scores: dict[str, float] = {}
        for user, count in by_user.items():
            limit = min(self.max_query_hits, max(count, op.offset + op.limit))
            result = self._mem.search(query, **self._scope(user), limit=limit)
            for hit in result.memories:
                if hit.id in wanted:
                    scores[hit.id] = float(hit.score)
        return scores


# -- pure helpers ------------------------------------------------------------------------------
def _entry_from(memory: Memory, user: str) -> _Entry | None:
    meta = memory.metadata.get(_META) if memory.source == STORE_SOURCE else None
    if not isinstance(meta, Mapping):
        return None
    item = Item(
        value=json.loads(meta["value"]),
        key=str(meta["key"]),
        namespace=tuple(meta["namespace"]),
        created_at=datetime.fromisoformat(meta["created_at"]),
        updated_at=memory.created_at,
    )
    return _Entry(item, memory.id, user, bool(meta.get("indexed", True)))


def _search_item(entry: _Entry, score: float | None) -> SearchItem:
    it = entry.item
    return SearchItem(
        namespace=it.namespace,
        key=it.key,
        value=it.value,
        created_at=it.created_at,
        updated_at=it.updated_at,
        score=score,
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _at_path(value: Any, path: str) -> list[Any]:
    """Values at a JSON path such as ``a.b``, ``tags[0]`` or ``tags[*].name`` (``$``: all)."""
    if path in ("$", ""):
        return [value]
    current = [value]
    for name, index in _PATH_PART.findall(path):
        nxt: list[Any] = []
        for v in current:
            if name:
                if isinstance(v, Mapping) and name in v:
                    nxt.append(v[name])
            elif isinstance(v, (list, tuple)):
                if index == "*":
                    nxt.extend(v)
                elif int(index) < len(v):
                    nxt.append(v[int(index)])
        current = nxt
    return current


def _index_text(value: Mapping[str, Any], paths: list[str] | None) -> str:
    found = [s for p in (paths or ["$"]) for v in _at_path(value, p) for s in _strings(v)]
    # A value with no text at all is still stored; its JSON is what gets embedded.
    return "\n".join(found) if found else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _matches(value: Any, expected: Any) -> bool:
    """JSONB-like matching of a filter against a stored value, as InMemoryStore does."""
    if isinstance(expected, Mapping):
        if any(str(k).startswith("$") for k in expected):
            return all(_operator(value, op, arg) for op, arg in expected.items())
        if not isinstance(value, Mapping):
            return False
        return all(_matches(value.get(k), v) for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(expected)
            and all(_matches(a, b) for a, b in zip(value, expected, strict=True))
        )
    return bool(value == expected)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if value is None:
            return False
        a, b = float(value), float(arg)
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"unsupported filter operator {op!r}; use $eq $ne $gt $gte $lt $lte")


def _matches_condition(cond: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(namespace) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif cond.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported namespace match type {cond.match_type!r}")
    return all(p in ("*", label) for label, p in pairs)


def _list_namespaces(
    items: Mapping[tuple[str, ...], Mapping[str, _Entry]], op: ListNamespacesOp
) -> list[tuple[str, ...]]:
    namespaces = [
        ns for ns in items if all(_matches_condition(c, ns) for c in (op.match_conditions or ()))
    ]
    if op.max_depth is not None:
        namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
    else:
        namespaces = sorted(namespaces)
    return namespaces[op.offset : op.offset + op.limit]
