"""The evolver's state kept in process memory: the access log and the review queue.

A part of :class:`~sage_memory.store.memory.InMemoryGraphStore`, and on its own the
process-local state given to a store without the :class:`~sage_memory.store.base.EvolverState`
port (:mod:`sage_memory.store.local_evolver`).
"""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from sage_memory.types import AccessEvent, Scope, Suggestion, SuggestionStatus


class InMemoryEvolverState:
    """Access log rows and review-queue items in lists and dicts."""

    def __init__(self) -> None:
        self._meta: dict[str, str] = {}
        # access log rows: (seq, event id, scope key, at, weight, entity, id, is context)
        self._access: list[tuple[int, str, str, datetime, float, str, str, bool]] = []
        self._access_next = 1
        self._suggestions: dict[str, Suggestion] = {}  # insertion order = queue order
        self._suggestion_keys: set[tuple[str, str]] = set()
        self._lock = threading.RLock()

    def log_access(self, events: Sequence[AccessEvent]) -> None:
        with self._lock:
            for ev in events:
                key = ev.scope.partition.key
                items = [("node", i, False) for i in dict.fromkeys(ev.node_ids)]
                items += [("memory", i, False) for i in dict.fromkeys(ev.memory_ids)]
                items += [("node", i, True) for i in dict.fromkeys(ev.context_ids)]
                for entity, eid, context in items:
                    row = (self._access_next, ev.id, key, ev.at, ev.weight, entity, eid, context)
                    self._access.append(row)
                    self._access_next += 1

    def access_seq(self) -> int:
        return self._access[-1][0] if self._access else 0

    def _window(
        self, scope: Scope, after_seq: int, until_seq: int | None
    ) -> list[tuple[int, str, str, datetime, float, str, str, bool]]:
        key, until = scope.partition.key, until_seq or 2**62
        with self._lock:
            return [r for r in self._access if after_seq < r[0] <= until and r[2] == key]

    def co_access(
        self,
        scope: Scope,
        *,
        after_seq: int = 0,
        until_seq: int | None = None,
        node_ids: Sequence[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, str, float, int]]:
        allowed = None if node_ids is None else set(node_ids)
        events: dict[str, list[tuple[str, bool, float]]] = defaultdict(list)
        for r in self._window(scope, after_seq, until_seq):
            if since is not None and r[3] < since:
                continue
            if r[5] == "node" and (allowed is None or r[6] in allowed):
                events[r[1]].append((r[6], r[7], r[4]))
        weights: dict[tuple[str, str], float] = defaultdict(float)
        counts: dict[tuple[str, str], set[str]] = defaultdict(set)
        for event_id, rows in events.items():
            for (a, a_ctx, w), (b, b_ctx, _) in itertools.permutations(rows, 2):
                if a < b and not (a_ctx and b_ctx):
                    weights[a, b] += w
                    counts[a, b].add(event_id)
        out = [(a, b, w, len(counts[a, b])) for (a, b), w in weights.items()]
        out.sort(key=lambda t: (-t[2], t[0], t[1]))
        return out if limit is None else out[:limit]

    def accessed(
        self, scope: Scope, *, after_seq: int = 0, until_seq: int | None = None
    ) -> dict[str, tuple[int, datetime]]:
        out: dict[str, tuple[int, datetime]] = {}
        for r in self._window(scope, after_seq, until_seq):
            if not r[7] and r[4] > 0:
                n, last = out.get(r[6], (0, r[3]))
                out[r[6]] = (n + 1, max(last, r[3]))
        return out

    def prune_access(self, before: datetime) -> int:
        with self._lock:
            n = len(self._access)
            self._access = [r for r in self._access if r[3] >= before]
            return n - len(self._access)

    def purge_evolver_state(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> int:
        key = scope.partition.key
        gone = None if entity_ids is None else set(entity_ids)
        with self._lock:
            n = len(self._access)
            self._access = [
                r for r in self._access if r[2] != key or (gone is not None and r[6] not in gone)
            ]
            n -= len(self._access)
            for sid, item in list(self._suggestions.items()):
                if item.scope.partition.key != key:
                    continue
                if gone is None or any(i in repr(item) for i in gone):
                    del self._suggestions[sid]
                    self._suggestion_keys.discard((key, item.key))
                    n += 1
            if gone is None:
                for name in [k for k in self._meta if k.endswith(key) and k != key]:
                    del self._meta[name]
                    n += 1
            return n

    def put_suggestions(self, items: Sequence[Suggestion]) -> list[Suggestion]:
        queued = []
        with self._lock:
            for item in items:
                k = (item.scope.partition.key, item.key)
                if k in self._suggestion_keys or item.id in self._suggestions:
                    continue
                self._suggestion_keys.add(k)
                self._suggestions[item.id] = item
                queued.append(item)
        return queued

    def list_suggestions(
        self,
        scope: Scope | None = None,
        *,
        status: str | None = "open",
        ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Suggestion]:
        wanted = None if ids is None else set(ids)
        out = [
            s
            for s in self._suggestions.values()
            if (scope is None or s.scope.partition.key == scope.partition.key)
            and (status is None or s.status == status)
            and (wanted is None or s.id in wanted)
        ]
        return out if limit is None else out[:limit]

    def set_suggestion_status(
        self,
        ids: Sequence[str],
        status: SuggestionStatus,
        at: datetime,
        batch_id: str | None = None,
    ) -> None:
        import dataclasses

        with self._lock:
            for sid in ids:
                if sid in self._suggestions:
                    self._suggestions[sid] = dataclasses.replace(
                        self._suggestions[sid], status=status, updated_at=at, batch_id=batch_id
                    )
