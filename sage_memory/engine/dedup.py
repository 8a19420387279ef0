"""Idempotent adds: the same content added again is recognised, not remembered twice.

A memory added with an explicit timestamp (or with a caller's id, ``metadata={"id": ...}``)
gets a content id: a hash of its scope (run included), timestamp, role and text (or of its
scope and the caller's id). Adding it again finds that id in the store (the id index every
backend has: no scan) and is reported as skipped. The n-th repeat of the same content inside
one call is a different memory (two "ok" turns of one conversation), so a call re-run as a
whole is recognised turn by turn. Without a timestamp or id a memory gets a random id: two
adds of the same words at different times are two episodes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

from sage_memory.engine.inputs import Episode
from sage_memory.types import Scope

#: The metadata key under which a caller names its own id for a memory.
CALLER_ID = "id"


def content_ids(episodes: Sequence[Episode], scope: Scope) -> list[str | None]:
    """The content id of each episode of one call (None: no timestamp nor caller id)."""
    seen: Counter[str] = Counter()
    out: list[str | None] = []
    for ep in episodes:
        run = ep.run_id if ep.run_id is not None else scope.run_id
        where = [scope.user_id, scope.agent_id, run]
        caller = (ep.metadata or {}).get(CALLER_ID)
        if caller is not None:
            key = json.dumps([where, "id", str(caller)])
        elif ep.timestamp is not None:
            key = json.dumps([where, ep.timestamp.isoformat(), ep.role, ep.text])
        else:
            out.append(None)
            continue
        seen[key] += 1
        if seen[key] > 1:
            key += f"#{seen[key]}"
        out.append(hashlib.sha256(key.encode()).hexdigest()[:32])
    return out
