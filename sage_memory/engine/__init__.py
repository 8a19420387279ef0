"""The engine: the SageMemory facade and the write path behind it."""

from sage_memory.engine.core import SageMemory

__all__ = ["SageMemory"]
