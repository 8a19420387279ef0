"""sage-memory-mcp: sage_memory as an MCP server, compatible with the reference knowledge-graph
memory server's tools, plus hybrid recall and graph exploration.

Run it over stdio with the ``sage-memory-mcp`` command (or ``python -m sage_memory_mcp``).
"""

from sage_memory_mcp.server import GraphMemory, create_server, main, memory_from_env

__all__ = ["GraphMemory", "create_server", "main", "memory_from_env"]
__version__ = "0.1.0"
