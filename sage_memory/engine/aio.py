"""AsyncSageMemory: the same API with ``async def`` methods, for event-loop applications.

Every call runs the synchronous engine in a worker thread (``asyncio.to_thread``), so nothing
blocks the loop: SQLite, the embedder and Chroma are blocking libraries. The engine is
thread-safe, so concurrent awaits are fine.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sage_memory.engine.core import SageMemory
from sage_memory.evolve.runner import EvolutionReport
from sage_memory.types import (
    AddResult,
    Change,
    EdgeHit,
    Memory,
    MemoryKind,
    Node,
    NodeHit,
    RetrievalResult,
    Subgraph,
    Suggestion,
)


class AsyncSageMemory:
    """Async twin of :class:`SageMemory`; takes the same constructor arguments.

    Example:
        >>> async with AsyncSageMemory() as mem:          # doctest: +SKIP
        ...     await mem.add("Alice lives in Paris", user_id="alice")
        ...     res = await mem.search("where does Alice live?", user_id="alice")
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        sync: SageMemory | None = None,
        **kwargs: Any,
    ) -> None:
        self.sync: SageMemory = sync if sync is not None else SageMemory(path, **kwargs)

    @classmethod
    def wrap(cls, mem: SageMemory) -> AsyncSageMemory:
        """An async view of an existing SageMemory (both can be used side by side)."""
        return cls(sync=mem)

    async def __aenter__(self) -> AsyncSageMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def add(
        self,
        data: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: MemoryKind | None = None,
        source: str | None = None,
        infer: bool = True,
        dedup: bool = True,
    ) -> AddResult:
        return await asyncio.to_thread(
            self.sync.add,
            data,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            timestamp=timestamp,
            metadata=metadata,
            kind=kind,
            source=source,
            infer=infer,
            dedup=dedup,
        )

    async def add_many(
        self, items: Iterable[str | Mapping[str, Any]], **kwargs: Any
    ) -> list[AddResult]:
        return await asyncio.to_thread(self.sync.add_many, list(items), **kwargs)

    async def search(self, query: str, **kwargs: Any) -> RetrievalResult:
        return await asyncio.to_thread(self.sync.search, query, **kwargs)

    async def get(self, memory_id: str, **kwargs: Any) -> Memory:
        return await asyncio.to_thread(self.sync.get, memory_id, **kwargs)

    async def get_all(self, **kwargs: Any) -> list[Memory]:
        return await asyncio.to_thread(self.sync.get_all, **kwargs)

    async def update(self, memory_id: str, text: str, **kwargs: Any) -> AddResult:
        return await asyncio.to_thread(self.sync.update, memory_id, text, **kwargs)

    async def delete(self, memory_id: str, **kwargs: Any) -> None:
        await asyncio.to_thread(self.sync.delete, memory_id, **kwargs)

    async def delete_all(self, **kwargs: Any) -> int:
        return await asyncio.to_thread(self.sync.delete_all, **kwargs)

    async def history(self, entity_id: str) -> list[Change]:
        return await asyncio.to_thread(self.sync.history, entity_id)

    async def explore(self, name_or_id: str, **kwargs: Any) -> Subgraph:
        return await asyncio.to_thread(self.sync.explore, name_or_id, **kwargs)

    async def stats(self, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.stats, **kwargs)

    async def undo(self, change_or_batch_id: str, *, force: bool = False) -> list[Change]:
        return await asyncio.to_thread(self.sync.undo, change_or_batch_id, force=force)

    async def export(self, path: str | os.PathLike[str], **kwargs: Any) -> int:
        return await asyncio.to_thread(self.sync.export, path, **kwargs)

    async def next_steps(self, project_or_task: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.next_steps, project_or_task, **kwargs)

    async def predecessors(self, task: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.predecessors, task, **kwargs)

    async def successors(self, task: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.successors, task, **kwargs)

    async def requirements(self, task: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.requirements, task, **kwargs)

    async def blockers(self, task: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.blockers, task, **kwargs)

    async def ancestors(self, kind: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.ancestors, kind, **kwargs)

    async def causes(self, effect: str, **kwargs: Any) -> list[NodeHit]:
        return await asyncio.to_thread(self.sync.causes, effect, **kwargs)

    async def path_between(self, source: str, target: str, **kwargs: Any) -> list[EdgeHit]:
        return await asyncio.to_thread(self.sync.path_between, source, target, **kwargs)

    async def find_node(self, name_or_id: str, **kwargs: Any) -> Node:
        return await asyncio.to_thread(self.sync.find_node, name_or_id, **kwargs)

    async def feedback(self, ids: str | Sequence[str], **kwargs: Any) -> str:
        return await asyncio.to_thread(self.sync.feedback, ids, **kwargs)

    async def evolve(self, **kwargs: Any) -> EvolutionReport:
        return await asyncio.to_thread(self.sync.evolve, **kwargs)

    async def review(self, **kwargs: Any) -> list[Suggestion]:
        return await asyncio.to_thread(self.sync.review, **kwargs)

    async def accept(self, suggestion_id: str) -> list[Change]:
        return await asyncio.to_thread(self.sync.accept, suggestion_id)

    async def reject(self, suggestion_id: str) -> Suggestion:
        return await asyncio.to_thread(self.sync.reject, suggestion_id)

    async def merge(self, keep: str, other: str, **kwargs: Any) -> list[Change]:
        return await asyncio.to_thread(self.sync.merge, keep, other, **kwargs)
