"""LlamaIndex integration for sage_memory (graph-structured long-term memory).

==========================  ===========================================================
name                        plugs into
==========================  ===========================================================
``SageChatMemory``          chat engines and agents (``memory=...``): write-through
``SageMemoryBlock``         ``Memory.from_defaults(memory_blocks=[...])``
``SageMemoryToolSpec``      agent tools: query, explore, save, forget
``SageRetriever``           any retriever slot (CondensePlusContextChatEngine...)
``SageChatModel``           your LlamaIndex LLM as sage_memory's LLM
``SageEmbedder``            your LlamaIndex embedding model as sage_memory's embedder
==========================  ===========================================================
"""

from llama_index.memory.sage.base import SageChatMemory
from llama_index.memory.sage.block import SageMemoryBlock
from llama_index.memory.sage.models import SageChatModel, SageEmbedder
from llama_index.memory.sage.retriever import SageRetriever
from llama_index.memory.sage.tools import SageMemoryToolSpec

__all__ = [
    "SageChatMemory",
    "SageChatModel",
    "SageEmbedder",
    "SageMemoryBlock",
    "SageMemoryToolSpec",
    "SageRetriever",
]
