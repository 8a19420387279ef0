"""Writing to the SQLite store: one transaction per ``apply``, journaled row by row."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store import journal_delta as delta
from sage_memory.store import sqlite_postings as postings
from sage_memory.store.base import PROVENANCE_MENTION, PROVENANCE_NODE, name_key
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.rows import text_searchable, utf8_only
from sage_memory.store.sqlite_connection import SQLiteConnection
from sage_memory.types import Change, Vector

_TABLES = {"memory": "memories", "node": "nodes", "edge": "edges"}


def _last_link(db: sqlite3.Connection, ch: Change) -> delta.Link | None:
    """The link of the row's previous journaled change (this transaction's included).

    Called before the row is written: a previous change stored by reference to the row
    (``R``, an insert) is first given the image the row still holds, which this change is
    about to overwrite.
    """
    row = db.execute(
        "SELECT seq, substr(before, 1, 12), substr(after, 1, 17) FROM journal"
        " WHERE entity_id = ? ORDER BY seq DESC LIMIT 1",
        (ch.entity_id,),
    ).fetchone()
    if row is None:
        return None
    seq, before_col, after_col = row
    if delta.by_reference(after_col):
        # The image this change overwrites: its ``before`` when that is it (as the ``=N``
        # link checks), else the row as stored.
        images = [] if ch.before is None else [json.loads(dumps(ch.before))]
        live = delta.stored_record(db, ch.entity, ch.entity_id)
        images += [] if live is None else [live]
        for image in images:
            try:
                whole = delta.resolve(ch.entity, after_col, image)
            except ValueError:
                continue
            db.execute("UPDATE journal SET after = ? WHERE seq = ?", (whole, seq))
            break
    return delta.Link.from_columns(before_col, after_col)


def _batch_row(db: sqlite3.Connection, head: tuple[str, str, str]) -> int:
    """The ``journal_batches`` row of (batch id, time, actor), added if new."""
    db.execute("INSERT OR IGNORE INTO journal_batches (id, at, actor) VALUES (?,?,?)", head)
    row = db.execute(
        "SELECT rid FROM journal_batches WHERE id = ? AND at = ? AND actor = ?", head
    ).fetchone()
    return int(row[0])


def _provenance(db: sqlite3.Connection, nid: str, after: Mapping[str, Any] | None) -> list[str]:
    """Bring a node's provenance rows to what ``after`` lists (none when it goes); returns
    the memories its rows named before.

    Only the difference is written: a hub (a speaker, a city) supports thousands of memories
    and gains one per add, and deleting and inserting all its rows again was a sixth of a
    single add at 10,000 memories. Rows are compared as a multiset of (memory, kind) pairs,
    so the table holds the same rows as a rewrite would leave; the readers list a memory's
    nodes in the order they were last written by the journal (see ``sqlite_reads``), as a
    rewrite's row order did."""
    want = Counter(
        [(m, PROVENANCE_NODE) for m in (after or {}).get("memory_ids", ())]
        + [(m, PROVENANCE_MENTION) for m in (after or {}).get("mention_ids", ())]
    )
    gone: list[tuple[int]] = []
    was: list[str] = []
    for rowid, mid, kind in db.execute(
        "SELECT rowid, memory_id, entity FROM provenance WHERE entity_id = ?", (nid,)
    ).fetchall():
        was.append(mid)
        if want[(mid, kind)] > 0:
            want[(mid, kind)] -= 1
        else:
            gone.append((rowid,))
    db.executemany("DELETE FROM provenance WHERE rowid = ?", gone)
    db.executemany(
        "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (?,?,?)",
        [(mid, kind, nid) for (mid, kind), n in want.items() for _ in range(n)],
    )
    return was


def _appended(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """The (memory, kind) provenance pairs ``after`` adds to ``before`` when its lists only
    grew at their ends (a hub gaining a memory); None for any other change."""
    added: list[tuple[str, str]] = []
    for key, kind in (("memory_ids", PROVENANCE_NODE), ("mention_ids", PROVENANCE_MENTION)):
        old, new = before.get(key, ()), after.get(key, ())
        if len(new) < len(old) or list(new[: len(old)]) != list(old):
            return None
        added += [(m, kind) for m in new[len(old) :]]
    return added


class SQLiteWrites(SQLiteConnection):
    """``apply``: rows, their full-text entries, names, provenance and the journal."""

    def apply(self, changes: Sequence[Change], vectors: Mapping[str, Vector] | None = None) -> None:
        vectors = vectors or {}
        batches: dict[tuple[str, str, str], int] = {}
        with utf8_only(), self._tx() as db:
            # Under the lock readers take; a reader keeps what it derived only when the
            # epoch did not move while it read (a rollback only costs it those links).
            self._epoch += 1
            for ch in changes:
                if self._decoded is not None:
                    self._decoded.drop((_TABLES[ch.entity], ch.entity_id))
                if self._vectors is not None:
                    self._vectors.drop(("", ch.entity_id))
                data = None if ch.after is None else dumps(ch.after)
                before_json = None if ch.before is None else dumps(ch.before)
                link = _last_link(db, ch)  # before the row is written (it may be needed)
                if ch.entity == "memory":
                    # A memory's row leaves out its default fields (readers fill them in).
                    row = None if ch.after is None else dumps(delta.memory_row(ch.after))
                    self._write_memory(db, ch.entity_id, ch.after, row, vectors.get(ch.entity_id))
                elif ch.entity == "node":
                    # The row holds ``before`` when the journal's last image of it does (the
                    # hash): its provenance rows are then ``before``'s lists, and a write that
                    # only appends to them adds the new pairs without reading the old ones.
                    grown = None
                    if (
                        ch.before is not None
                        and ch.after is not None
                        and link is not None
                        and link.hash is not None
                        and link.hash == delta.image_hash(before_json or "")
                    ):
                        grown = _appended(ch.before, ch.after)
                    self._write_node(
                        db, ch.entity_id, ch.after, data, vectors.get(ch.entity_id), grown
                    )
                else:
                    self._write_edge(db, ch.entity_id, ch.after, data)
                before, after, _ = delta.encode(
                    ch.entity, ch.before, ch.after, link, data, before_json
                )
                if ch.before is None and after is not None:
                    # An insert's image is the row just written: keep only its hash here.
                    after = delta.reference(after)
                head = (ch.batch_id, ch.at.isoformat(), ch.actor)
                batch = batches.get(head)
                if batch is None:
                    batch = batches[head] = _batch_row(db, head)
                db.execute(
                    "INSERT INTO journal (id, batch, scope_key, entity, entity_id, op, before,"
                    " after, reason) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        ch.id,
                        batch,
                        ch.scope_key,
                        ch.entity,
                        ch.entity_id,
                        ch.op,
                        before,
                        after,
                        ch.reason,
                    ),
                )

    def _write_memory(
        self,
        db: sqlite3.Connection,
        mid: str,
        after: Mapping[str, Any] | None,
        data: str | None,
        vec: Vector | None,
    ) -> None:
        row = db.execute("SELECT rid FROM memories WHERE id = ?", (mid,)).fetchone()
        if after is None:
            if row:
                db.execute("DELETE FROM memories WHERE rid = ?", (row[0],))
                db.execute("DELETE FROM memory_vectors WHERE rid = ?", (row[0],))
                postings.unindex(db, "m", row[0])
            return
        scope = _scope_of(after)
        params = (
            scope.key,
            scope.run_id,
            after["timestamp"],
            after["created_at"],
            int(bool(after.get("archived"))),
            data,
        )
        if row:
            rid = row[0]
            db.execute(
                "UPDATE memories SET scope_key=?, run_id=?, ts=?, created_at=?, archived=?, data=?"
                " WHERE rid=?",
                (*params, rid),
            )
        else:
            cur = db.execute(
                "INSERT INTO memories (id, scope_key, run_id, ts, created_at, archived, data)"
                " VALUES (?,?,?,?,?,?,?)",
                (mid, *params),
            )
            rid = cur.lastrowid
        if vec is not None:
            db.execute(
                "INSERT OR REPLACE INTO memory_vectors (rid, vec) VALUES (?, ?)",
                (rid, self._vector_bytes(vec)),
            )
        postings.index(db, "m", rid, scope.key, after["text"])

    def _write_node(
        self,
        db: sqlite3.Connection,
        nid: str,
        after: Mapping[str, Any] | None,
        data: str | None,
        vec: Vector | None,
        grown: list[tuple[str, str]] | None = None,
    ) -> None:
        """Write a node's rows; ``grown``: the provenance pairs it gains, when its rows are
        known to hold all the others (see ``apply``), else None (they are compared)."""
        row = db.execute("SELECT rid FROM nodes WHERE id = ?", (nid,)).fetchone()
        db.execute("DELETE FROM node_names WHERE node_id = ?", (nid,))
        if grown is not None:
            db.executemany(
                "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (?,?,?)",
                [(mid, kind, nid) for mid, kind in grown],
            )
            changed: Sequence[str] = [mid for mid, _ in grown]
        else:
            changed = [*_provenance(db, nid, after), *(after or {}).get("memory_ids", ())]
        if self._links is not None:
            # The memories it gains or loses list other nodes; the others list it last (it
            # is the node written last), which the clock of its write tells them.
            self._links.drop((), changed)
            self._links.node_written(nid)
        if row:
            postings.unindex(db, "n", row[0])
        if after is None:
            if row:
                db.execute("DELETE FROM nodes WHERE rid = ?", (row[0],))
                db.execute("DELETE FROM node_vectors WHERE rid = ?", (row[0],))
            return
        scope_key = _scope_of(after).key
        if row:
            rid = row[0]
            db.execute("UPDATE nodes SET scope_key=?, data=? WHERE rid=?", (scope_key, data, rid))
        else:
            cur = db.execute(
                "INSERT INTO nodes (id, scope_key, data) VALUES (?,?,?)",
                (nid, scope_key, data),
            )
            rid = cur.lastrowid
        if vec is not None:
            db.execute(
                "INSERT OR REPLACE INTO node_vectors (rid, vec) VALUES (?, ?)",
                (rid, self._vector_bytes(vec)),
            )
        names = {name_key(after["name"]), *(name_key(a) for a in after.get("aliases", ()))}
        db.executemany(
            "INSERT INTO node_names (scope_key, key, node_id) VALUES (?,?,?)",
            [(scope_key, k, nid) for k in names if k],
        )
        if text_searchable(after):
            postings.index(db, "n", rid, scope_key, postings.node_text(dict(after)))

    def _write_edge(
        self, db: sqlite3.Connection, eid: str, after: Mapping[str, Any] | None, data: str | None
    ) -> None:
        db.execute("DELETE FROM provenance WHERE entity_id = ?", (eid,))
        if self._links is not None:
            # Its ends, before and after: their edge reads list it, or no longer do.
            was = db.execute("SELECT source_id, target_id FROM edges WHERE id = ?", (eid,))
            self._links.drop([n for r in was for n in r], ())
            if after is not None:
                self._links.drop((after["source_id"], after["target_id"]), ())
        if after is None:
            db.execute("DELETE FROM edges WHERE id = ?", (eid,))
            return
        db.execute(
            "INSERT INTO edges (id, scope_key, source_id, target_id, relation, data)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET scope_key=excluded.scope_key,"
            " source_id=excluded.source_id, target_id=excluded.target_id,"
            " relation=excluded.relation, data=excluded.data",
            (
                eid,
                _scope_of(after).key,
                after["source_id"],
                after["target_id"],
                after["relation"],
                data,
            ),
        )
        db.executemany(
            "INSERT INTO provenance (memory_id, entity, entity_id) VALUES (?,?,?)",
            [(m, "edge", eid) for m in after.get("memory_ids", ())],
        )
