"""Test helpers and contract suites for sage_memory backends."""
