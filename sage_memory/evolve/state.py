"""Each partition's run state, kept in the store's meta table between runs.

The state holds the sweep cursors (journal, access log, edge, node, split and memory offsets),
when communities were last summarised, and the graph-quality figures of the last run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sage_memory.store.base import EvolvingStore
from sage_memory.types import Scope

_PREFIX = "evolve:state:"


def load_state(store: EvolvingStore, scope: Scope) -> dict[str, Any]:
    """The saved state of a partition's last run (cursors, metrics); {} before any run."""
    raw = store.get_meta(_PREFIX + scope.partition.key)
    return dict(json.loads(raw)) if raw else {}


def save_state(store: EvolvingStore, scope: Scope, state: Mapping[str, Any]) -> None:
    """Keep a partition's state for the next run."""
    store.set_meta(_PREFIX + scope.partition.key, json.dumps(state, sort_keys=True))
