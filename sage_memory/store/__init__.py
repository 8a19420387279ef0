"""The GraphStore port (base.py) and its backends: in memory, SQLite."""
