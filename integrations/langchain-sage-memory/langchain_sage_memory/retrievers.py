"""SageMemoryRetriever: memories as LangChain Documents, for RAG chains and retriever tools."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from langchain_sage_memory._common import async_engine_of, engine_of, hit_record, read_scope
from sage_memory import RetrievalResult


class SageMemoryRetriever(BaseRetriever):
    """Hybrid graph + vector recall from sage_memory, one Document per memory.

    Each Document's ``page_content`` is the memory text; its metadata holds the memory id,
    score, channels, timestamp, kind, role and the memory's own metadata.

    Example:
        .. code-block:: python

            retriever = SageMemoryRetriever(sage=mem, user_id="alice", k=4)
            docs = retriever.invoke("where does alice live?")
            docs = retriever.invoke("where does alice live?", k=1)   # per-call override

    Attributes:
        sage: the SageMemory (or AsyncSageMemory).
        user_id, agent_id, run_id: the scope to search.
        k: how many documents to return.
    """

    sage: Any = Field(exclude=True)
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    k: int = Field(default=4, ge=1)

    def _kwargs(self, k: int | None) -> dict[str, Any]:
        return {
            **read_scope(self.user_id, self.agent_id, self.run_id, recall_across_runs=False),
            "limit": k or self.k,
        }

    @staticmethod
    def _documents(result: RetrievalResult, k: int) -> list[Document]:
        docs = []
        for hit in result.memories[:k]:
            meta = hit_record(hit)
            docs.append(Document(page_content=meta.pop("text"), metadata=meta, id=hit.id))
        return docs

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        result = engine_of(self.sage).search(query, **self._kwargs(k))
        return self._documents(result, k or self.k)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        result = await async_engine_of(self.sage).search(query, **self._kwargs(k))
        return self._documents(result, k or self.k)
