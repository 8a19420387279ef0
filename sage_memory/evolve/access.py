"""The access log: what searches returned and what callers say they used.

Every search records its best nodes and its memories as one ``retrieved`` event (weight
``EvolveConfig.retrieved_weight``, low).
``feedback`` records the items a caller actually used (``used``, weight
``EvolveConfig.feedback_weight``) or found useless (``unused``, a negative weight), paired with
the nodes of the search it follows, so "asked about backend work, then opened the FastAPI docs"
links the backend nodes to FastAPI. The evolver turns these events into edge weights.

Events are buffered and written in batches (a search must not pay for a transaction): a crash
loses at most the last few unflushed events, which are statistics, not memories.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta

from sage_memory.config import EvolveConfig
from sage_memory.store.base import EvolvingStore
from sage_memory.types import AccessEvent, RetrievalResult, Scope, new_id

#: Buffered events written in one batch.
FLUSH_AT = 64
#: A feedback call pairs with the last search of its scope when it came within this time.
SESSION = timedelta(hours=1)
#: Scopes whose last search is remembered for feedback.
_RECENT_SCOPES = 1024
#: Cap on the items of one feedback call.
MAX_FEEDBACK_ITEMS = 50


def search_event(
    result: RetrievalResult, at: datetime, *, top_nodes: int, weight: float
) -> AccessEvent:
    """The access event of one search: its best ``top_nodes`` nodes and all its memories."""
    return AccessEvent(
        id=new_id(),
        scope=result.scope,
        at=at,
        kind="retrieved",
        weight=weight,
        node_ids=tuple(dict.fromkeys(h.node.id for h in result.nodes[:top_nodes])),
        memory_ids=tuple(dict.fromkeys(h.memory.id for h in result.memories)),
    )


def feedback_event(
    scope: Scope,
    node_ids: Sequence[str],
    memory_ids: Sequence[str],
    context_ids: Sequence[str],
    *,
    used: bool,
    at: datetime,
    weight: float,
) -> AccessEvent:
    """A feedback event; context nodes that are also items count as items."""
    items = tuple(dict.fromkeys(node_ids))
    return AccessEvent(
        id=new_id(),
        scope=scope,
        at=at,
        kind="used" if used else "unused",
        weight=weight if used else -weight / 3,
        node_ids=items,
        memory_ids=tuple(dict.fromkeys(memory_ids)),
        context_ids=tuple(c for c in dict.fromkeys(context_ids) if c not in items),
    )


class AccessRecorder:
    """Buffers access events for a store and remembers each scope's last search."""

    def __init__(self, store: EvolvingStore, config: EvolveConfig) -> None:
        self.store = store
        self.config = config
        self._buffer: list[AccessEvent] = []
        self._recent: OrderedDict[str, tuple[datetime, tuple[str, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    def record_search(self, result: RetrievalResult, at: datetime) -> AccessEvent:
        event = search_event(
            result,
            at,
            top_nodes=self.config.access_top_nodes,
            weight=self.config.retrieved_weight,
        )
        with self._lock:
            key = result.scope.key
            self._recent[key] = (at, event.node_ids)
            self._recent.move_to_end(key)
            while len(self._recent) > _RECENT_SCOPES:
                self._recent.popitem(last=False)
        self._add(event)
        return event

    def record_feedback(
        self,
        scope: Scope,
        ids: Sequence[str],
        *,
        used: bool,
        at: datetime,
        result: RetrievalResult | None = None,
    ) -> AccessEvent:
        """Record feedback on memory or node ids (a memory counts for the nodes it supports).

        The context is ``result``'s best nodes, else the scope's last search within
        :data:`SESSION`, else none.
        """
        part = scope.partition
        ids = list(dict.fromkeys(ids))[:MAX_FEEDBACK_ITEMS]
        memories = [m.id for m in self.store.get_memories(scope, ids)]
        nodes = [n.id for n in self.store.get_nodes(part, ids)]
        for mid in memories:
            derived, _ = self.store.derived_from(part, mid)
            nodes += [n.id for n in derived]
        if result is not None:
            context: tuple[str, ...] = tuple(
                h.node.id for h in result.nodes[: self.config.access_top_nodes]
            )
        else:
            with self._lock:
                last = self._recent.get(scope.key)
            context = last[1] if last is not None and at - last[0] <= SESSION else ()
        event = feedback_event(
            scope,
            nodes,
            memories,
            context,
            used=used,
            at=at,
            weight=self.config.feedback_weight,
        )
        self._add(event)
        return event

    def _add(self, event: AccessEvent) -> None:
        with self._lock:
            self._buffer.append(event)
            full = len(self._buffer) >= FLUSH_AT
        if full:
            self.flush()

    def flush(self) -> int:
        """Write the buffered events; returns how many."""
        with self._lock:
            events, self._buffer = self._buffer, []
        if events:
            self.store.log_access(events)
        return len(events)
