"""SageRetriever: memories as LlamaIndex nodes, e.g. for CondensePlusContextChatEngine."""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.memory.sage._common import async_engine_of, engine_of, hit_metadata, scope_kwargs

from sage_memory import RetrievalResult


class SageRetriever(BaseRetriever):
    """Hybrid graph + vector recall from sage_memory, one ``TextNode`` per memory.

    Args:
        sage: the SageMemory (or AsyncSageMemory).
        user_id, agent_id, run_id: the scope to search.
        similarity_top_k: how many nodes to return.
    """

    def __init__(
        self,
        sage: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        similarity_top_k: int = 4,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        engine_of(sage)
        self.sage = sage
        self.scope = scope_kwargs(user_id, agent_id, run_id)
        self.similarity_top_k = similarity_top_k

    def _nodes(self, result: RetrievalResult) -> list[NodeWithScore]:
        return [
            NodeWithScore(
                node=TextNode(id_=hit.id, text=hit.text, metadata=hit_metadata(hit)),
                score=hit.score,
            )
            for hit in result.memories[: self.similarity_top_k]
        ]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = engine_of(self.sage).search(
            query_bundle.query_str, limit=self.similarity_top_k, **self.scope
        )
        return self._nodes(result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = await async_engine_of(self.sage).search(
            query_bundle.query_str, limit=self.similarity_top_k, **self.scope
        )
        return self._nodes(result)
