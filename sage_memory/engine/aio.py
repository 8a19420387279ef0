"""AsyncSageMemory: the same API with ``async def`` methods, for event-loop applications.

Every call runs the synchronous engine in a worker thread (``asyncio.to_thread``), so nothing
blocks the loop: SQLite, the embedder and Chroma are blocking libraries. The engine is
thread-safe, so concurrent awaits are fine.

Every public method of :class:`SageMemory` is here with the same parameters, defaults and
annotations (its return type wrapped in a coroutine); ``tests/unit/test_async_parity.py``
compares the two classes, so they cannot drift. :meth:`focus` is a plain (synchronous) context
manager in both: ``asyncio.to_thread`` copies the caller's context, so a search awaited inside
the block sees its focus.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sage_memory.config import SageConfig
from sage_memory.embed.base import Embedder
from sage_memory.engine.context import Clock
from sage_memory.engine.core import SageMemory
from sage_memory.extract.base import Extractor
from sage_memory.index.base import VectorIndex
from sage_memory.llm.base import ChatModel
from sage_memory.store.base import GraphStore
from sage_memory.types import (
    AddResult,
    Change,
    EdgeHit,
    EdgeSpec,
    Memory,
    MemoryKind,
    Node,
    NodeHit,
    NodeSpec,
    RetrievalResult,
    Scope,
    Subgraph,
    Suggestion,
)

if TYPE_CHECKING:
    from sage_memory.evolve.history import MemoryAsOf
    from sage_memory.evolve.report import EvolutionReport


class AsyncSageMemory:
    """Async twin of :class:`SageMemory`; takes the same constructor arguments.

    Args:
        sync: wrap an existing :class:`SageMemory` instead of opening one (see :meth:`wrap`).

    Example:
        >>> async with AsyncSageMemory() as mem:          # doctest: +SKIP
        ...     await mem.add("Alice lives in Paris", user_id="alice")
        ...     res = await mem.search("where does Alice live?", user_id="alice")
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        config: SageConfig | None = None,
        embedder: Embedder | str | None = None,
        llm: ChatModel | str | None = None,
        extractor: Extractor | None = None,
        store: GraphStore | None = None,
        index: VectorIndex | None = None,
        clock: Clock | None = None,
        url: str | None = None,
        read_only: bool = False,
        progress: bool = False,
        reranker: ChatModel | str | None = None,
        sync: SageMemory | None = None,
    ) -> None:
        self.sync: SageMemory = (
            sync
            if sync is not None
            else SageMemory(
                path,
                config=config,
                embedder=embedder,
                llm=llm,
                extractor=extractor,
                store=store,
                index=index,
                clock=clock,
                url=url,
                read_only=read_only,
                progress=progress,
                reranker=reranker,
            )
        )

    @classmethod
    def wrap(cls, mem: SageMemory) -> AsyncSageMemory:
        """An async view of an existing SageMemory (both can be used side by side)."""
        return cls(sync=mem)

    @classmethod
    async def load(
        cls,
        export_path: str | os.PathLike[str],
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        progress: bool = False,
        **kwargs: Any,
    ) -> AsyncSageMemory:
        """Async :meth:`SageMemory.load` (its other keywords are SageMemory's constructor's)."""
        mem = await asyncio.to_thread(
            SageMemory.load, export_path, path, user_id=user_id, progress=progress, **kwargs
        )
        return cls(sync=mem)

    async def __aenter__(self) -> AsyncSageMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Async :meth:`SageMemory.close`."""
        await asyncio.to_thread(self.sync.close)

    async def now(self) -> datetime:
        """Async :meth:`SageMemory.now`."""
        return self.sync.now()

    def focus(
        self,
        *names: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        """:meth:`SageMemory.focus` (a plain ``with`` block; see the module docstring)."""
        return self.sync.focus(*names, user_id=user_id, agent_id=agent_id, run_id=run_id)

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
        defer: bool = False,
    ) -> AddResult:
        """Async :meth:`SageMemory.add`."""
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
            defer=defer,
        )

    async def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
        progress: bool = False,
        batch_size: int | None = None,
        dedup: bool = True,
        defer: bool = False,
    ) -> list[AddResult]:
        """Async :meth:`SageMemory.add_many`."""
        return await asyncio.to_thread(
            self.sync.add_many,
            list(items),
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            infer=infer,
            progress=progress,
            batch_size=batch_size,
            dedup=dedup,
            defer=defer,
        )

    async def extract_pending(
        self,
        *,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[AddResult]:
        """Async :meth:`SageMemory.extract_pending`."""
        return await asyncio.to_thread(
            self.sync.extract_pending,
            limit=limit,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def update(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        infer: bool = True,
    ) -> AddResult:
        """Async :meth:`SageMemory.update`."""
        return await asyncio.to_thread(
            self.sync.update,
            memory_id,
            text,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            infer=infer,
        )

    async def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> None:
        """Async :meth:`SageMemory.delete`."""
        await asyncio.to_thread(
            self.sync.delete, memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id
        )

    async def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> int:
        """Async :meth:`SageMemory.delete_all`."""
        return await asyncio.to_thread(
            self.sync.delete_all, user_id=user_id, agent_id=agent_id, run_id=run_id
        )

    async def add_graph(
        self,
        text: str,
        *,
        nodes: Sequence[NodeSpec],
        edges: Sequence[EdgeSpec] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
        kind: MemoryKind | None = None,
    ) -> AddResult:
        """Async :meth:`SageMemory.add_graph`."""
        return await asyncio.to_thread(
            self.sync.add_graph,
            text,
            nodes=nodes,
            edges=edges,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            timestamp=timestamp,
            metadata=metadata,
            source=source,
            kind=kind,
        )

    async def delete_node(
        self, name_or_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Change]:
        """Async :meth:`SageMemory.delete_node`."""
        return await asyncio.to_thread(
            self.sync.delete_node, name_or_id, user_id=user_id, agent_id=agent_id
        )

    async def delete_edge(
        self, edge_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Change]:
        """Async :meth:`SageMemory.delete_edge`."""
        return await asyncio.to_thread(
            self.sync.delete_edge, edge_id, user_id=user_id, agent_id=agent_id
        )

    async def graph(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_expired: bool = False,
    ) -> Subgraph:
        """Async :meth:`SageMemory.graph`."""
        return await asyncio.to_thread(
            self.sync.graph, user_id=user_id, agent_id=agent_id, include_expired=include_expired
        )

    async def scopes(self) -> list[Scope]:
        """Async :meth:`SageMemory.scopes`."""
        return await asyncio.to_thread(self.sync.scopes)

    async def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Memory:
        """Async :meth:`SageMemory.get`."""
        return await asyncio.to_thread(
            self.sync.get, memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id
        )

    async def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        include_archived: bool = False,
    ) -> list[Memory]:
        """Async :meth:`SageMemory.get_all`."""
        return await asyncio.to_thread(
            self.sync.get_all,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            limit=limit,
            offset=offset,
            include_archived=include_archived,
        )

    async def history(self, memory_id: str) -> list[Change]:
        """Async :meth:`SageMemory.history`."""
        return await asyncio.to_thread(self.sync.history, memory_id)

    async def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        as_of: datetime | None = None,
        context_tokens: int | None = None,
        focus: str | Sequence[str] | None = None,
        kind: MemoryKind | None = None,
        rerank: bool | None = None,
    ) -> RetrievalResult:
        """Async :meth:`SageMemory.search`."""
        return await asyncio.to_thread(
            self.sync.search,
            query,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            limit=limit,
            as_of=as_of,
            context_tokens=context_tokens,
            focus=focus,
            kind=kind,
            rerank=rerank,
        )

    async def add_experience(
        self,
        *,
        task: str,
        actions: Sequence[str | Mapping[str, Any]] = (),
        outcome: str | None = None,
        lesson: str | None = None,
        success: bool | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:
        """Async :meth:`SageMemory.add_experience`."""
        return await asyncio.to_thread(
            self.sync.add_experience,
            task=task,
            actions=actions,
            outcome=outcome,
            lesson=lesson,
            success=success,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            timestamp=timestamp,
            metadata=metadata,
        )

    async def explore(
        self,
        name_or_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        hops: int = 2,
        relations: Sequence[str] | None = None,
        include_expired: bool = False,
        max_nodes: int = 200,
    ) -> Subgraph:
        """Async :meth:`SageMemory.explore`."""
        return await asyncio.to_thread(
            self.sync.explore,
            name_or_id,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            hops=hops,
            relations=relations,
            include_expired=include_expired,
            max_nodes=max_nodes,
        )

    async def find_node(
        self,
        name_or_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        exact: bool = False,
    ) -> Node:
        """Async :meth:`SageMemory.find_node`."""
        return await asyncio.to_thread(
            self.sync.find_node,
            name_or_id,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            exact=exact,
        )

    async def predecessors(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.predecessors`."""
        return await asyncio.to_thread(
            self.sync.predecessors,
            task,
            transitive=transitive,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def successors(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.successors`."""
        return await asyncio.to_thread(
            self.sync.successors,
            task,
            transitive=transitive,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def requirements(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.requirements`."""
        return await asyncio.to_thread(
            self.sync.requirements,
            task,
            transitive=transitive,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def blockers(
        self,
        task: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.blockers`."""
        return await asyncio.to_thread(
            self.sync.blockers,
            task,
            transitive=transitive,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def ancestors(
        self,
        kind: str,
        *,
        transitive: bool = True,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.ancestors`."""
        return await asyncio.to_thread(
            self.sync.ancestors,
            kind,
            transitive=transitive,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def causes(
        self,
        effect: str,
        *,
        transitive: bool = False,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.causes`."""
        return await asyncio.to_thread(
            self.sync.causes,
            effect,
            transitive=transitive,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def next_steps(
        self,
        project_or_task: str,
        *,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.next_steps`."""
        return await asyncio.to_thread(
            self.sync.next_steps,
            project_or_task,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def path_between(
        self,
        source: str,
        target: str,
        *,
        max_hops: int = 4,
        relations: Sequence[str] | None = None,
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[EdgeHit]:
        """Async :meth:`SageMemory.path_between`."""
        return await asyncio.to_thread(
            self.sync.path_between,
            source,
            target,
            max_hops=max_hops,
            relations=relations,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def neighbors(
        self,
        node: str,
        *,
        relations: Sequence[str] | None = None,
        direction: Literal["out", "in", "both"] = "both",
        as_of: datetime | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[NodeHit]:
        """Async :meth:`SageMemory.neighbors`."""
        return await asyncio.to_thread(
            self.sync.neighbors,
            node,
            relations=relations,
            direction=direction,
            as_of=as_of,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
        )

    async def stats(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Async :meth:`SageMemory.stats`."""
        return await asyncio.to_thread(
            self.sync.stats, user_id=user_id, agent_id=agent_id, run_id=run_id
        )

    async def feedback(
        self,
        ids: str | Sequence[str],
        *,
        used: bool = True,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        result: RetrievalResult | None = None,
    ) -> str:
        """Async :meth:`SageMemory.feedback`."""
        return await asyncio.to_thread(
            self.sync.feedback,
            ids,
            used=used,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            result=result,
        )

    async def evolve(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        dry_run: bool = False,
        operations: Sequence[str] | None = None,
        progress: bool = False,
    ) -> EvolutionReport:
        """Async :meth:`SageMemory.evolve`."""
        return await asyncio.to_thread(
            self.sync.evolve,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            dry_run=dry_run,
            operations=operations,
            progress=progress,
        )

    async def review(
        self, *, user_id: str | None = None, agent_id: str | None = None, status: str = "open"
    ) -> list[Suggestion]:
        """Async :meth:`SageMemory.review`."""
        return await asyncio.to_thread(
            self.sync.review, user_id=user_id, agent_id=agent_id, status=status
        )

    async def accept(self, suggestion_id: str) -> list[Change]:
        """Async :meth:`SageMemory.accept`."""
        return await asyncio.to_thread(self.sync.accept, suggestion_id)

    async def reject(self, suggestion_id: str) -> Suggestion:
        """Async :meth:`SageMemory.reject`."""
        return await asyncio.to_thread(self.sync.reject, suggestion_id)

    async def merge(
        self,
        keep: str,
        other: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Change]:
        """Async :meth:`SageMemory.merge`."""
        return await asyncio.to_thread(
            self.sync.merge, keep, other, user_id=user_id, agent_id=agent_id
        )

    async def as_of(self, at: datetime) -> MemoryAsOf:
        """Async :meth:`SageMemory.as_of`."""
        return await asyncio.to_thread(self.sync.as_of, at)

    async def undo(self, change_or_batch_id: str, *, force: bool = False) -> list[Change]:
        """Async :meth:`SageMemory.undo`."""
        return await asyncio.to_thread(self.sync.undo, change_or_batch_id, force=force)

    async def export(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        format: str = "jsonl",
        progress: bool = False,
    ) -> int:
        """Async :meth:`SageMemory.export`."""
        return await asyncio.to_thread(
            self.sync.export,
            path,
            user_id=user_id,
            agent_id=agent_id,
            format=format,
            progress=progress,
        )

    async def backup(self, target: str | os.PathLike[str]) -> Path:
        """Async :meth:`SageMemory.backup`."""
        return await asyncio.to_thread(self.sync.backup, target)
