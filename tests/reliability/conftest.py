"""The three backends every trust test runs on: in memory, a SQLite folder, PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_kit import open_memory, scan_folder


class Backend:
    """Opens SageMemory instances on one backend and finds text left anywhere in it."""

    def __init__(self, kind: str, tmp_path: Path, url: str | None) -> None:
        self.kind = kind
        self.folder = tmp_path / "mem" if kind == "folder" else None
        self.url = url
        self.opened: list[Any] = []
        self._memory: Any = None

    def open(self, **kwargs: Any) -> Any:
        """A SageMemory on this backend (the in-memory one is one instance)."""
        if self.kind == "memory":
            if self._memory is None:
                self._memory = open_memory(None, **kwargs)
                self.opened.append(self._memory)
            return self._memory
        if self.kind == "folder":
            mem = open_memory(self.folder, **kwargs)
        else:
            mem = open_memory(None, url=self.url, **kwargs)
        self.opened.append(mem)
        return mem

    def residue(self, mem: Any, needles: list[str]) -> list[str]:
        """Where any of ``needles`` (case-insensitive) is still stored: every file byte of a
        folder (after close), every row of every PostgreSQL table, or every record and journal
        image of the in-memory store."""
        wanted = [n.casefold() for n in needles]
        if self.kind == "folder":
            mem.close()
            assert self.folder is not None
            raw = [*(n.encode() for n in needles), *(n.encode() for n in wanted)]
            return [f"{n} in {p}" for n, p in scan_folder(self.folder, raw)]
        if self.kind == "postgres":
            tables = mem.store._rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema ="
                " current_schema()"
            )
            found = []
            for (table,) in tables:
                for (row,) in mem.store._rows(f'SELECT t::text FROM "{table}" t'):
                    found += [f"{n} in {table}" for n in wanted if n in row.casefold()]
            return found
        store = mem.store
        texts = [repr(c) for _, c in store.journal()]
        for part in store.partitions():
            texts += [repr(r) for r in store.list_memories(part, include_archived=True)]
            texts += [repr(r) for r in (*store.list_nodes(part), *store.list_edges(part))]
        texts += [repr(s) for s in store.list_suggestions(None, status=None)]
        return [
            f"{n} in the in-memory store" for n in wanted if any(n in t.casefold() for t in texts)
        ]

    def close(self) -> None:
        for mem in self.opened:
            mem.close()


@pytest.fixture(params=["memory", "folder", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    url = None
    if request.param == "postgres":
        base = request.getfixturevalue("postgres_url")
        sep = "&" if "?" in base else "?"
        url = f"{base}{sep}schema=t_{uuid.uuid4().hex[:12]}"
    b = Backend(request.param, tmp_path, url)
    yield b
    b.close()
