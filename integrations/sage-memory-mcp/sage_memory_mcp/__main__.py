"""``python -m sage_memory_mcp``: serve sage_memory over stdio."""

from sage_memory_mcp.server import main

main()
