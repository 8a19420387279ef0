"""Focus on the read path: given per search, set for a block, or inferred from the session.

Three ways a search gets its focus, first one wins:

1. ``search(..., focus="personal blog")`` (a node name or id, or a list of them);
2. a ``with mem.focus("personal blog", user_id=...):`` block around the search. The block is
   held in a :class:`contextvars.ContextVar`, so it belongs to the thread or asyncio task that
   opened it: concurrent callers never see each other's focus (``asyncio.to_thread`` copies the
   caller's context, so an ``AsyncSageMemory`` call inside the block sees it too);
3. inferred, when ``RetrieveConfig.infer_focus`` is on and the search names a run (``run_id``):
   the nodes most mentioned by the run's last ``focus_recent`` memories
   (:func:`sage_memory.retrieve.focus.infer_focus`). ``focus=()`` switches inference off for
   one search.

A name that matches no node is ignored (the project may have no memories yet); the result's
``focus`` lists the nodes actually used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from sage_memory.engine.context import EngineContext
from sage_memory.engine.lookup import Lookup
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.retrieve.focus import Focus, infer_focus
from sage_memory.types import Node, Scope

#: Nodes the text search proposes per recent memory when a focus is inferred.
INFER_NODES = 10

#: What a caller may pass as a focus: one name or id, several, or None.
FocusArg = str | Sequence[str] | None


@dataclass(frozen=True, slots=True)
class _Frame:
    owner: int  # id() of the engine context that opened the block
    scope: Scope | None  # the block applies to searches of this partition (None: any)
    names: tuple[str, ...]


_ACTIVE: ContextVar[tuple[_Frame, ...]] = ContextVar("sage_memory_focus", default=())


def focus_names(focus: FocusArg) -> tuple[str, ...] | None:
    """``focus`` as a tuple of names (None stays None: no focus given).

    Raises:
        ValidationError: for an empty name or something that is not a string.
    """
    if focus is None:
        return None
    items = (focus,) if isinstance(focus, str) else tuple(focus)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ValidationError(
                f"focus={focus!r}: give a node name or id, or a list of them (e.g. 'my project')"
            )
    return tuple(items)


@contextlib.contextmanager
def focus_block(ctx: EngineContext, names: tuple[str, ...], scope: Scope | None) -> Iterator[None]:
    """Apply ``names`` as the focus of this engine's searches (of ``scope``) inside the block."""
    frame = _Frame(id(ctx), None if scope is None else scope.partition, names)
    token = _ACTIVE.set((*_ACTIVE.get(), frame))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def block_focus(ctx: EngineContext, scope: Scope) -> tuple[str, ...] | None:
    """The innermost open block's focus for a search of ``scope`` on this engine, if any."""
    for frame in reversed(_ACTIVE.get()):
        if frame.owner == id(ctx) and (frame.scope is None or frame.scope == scope.partition):
            return frame.names
    return None


def resolve(lookup: Lookup, names: Sequence[str], scope: Scope) -> Focus:
    """The nodes ``names`` name in ``scope`` (unknown names are skipped)."""
    nodes: dict[str, Node] = {}
    for name in names:
        try:
            node = lookup.find_node(name, scope)
        except NotFoundError:
            continue
        nodes.setdefault(node.id, node)
    return Focus(tuple(nodes.values()))


def infer(ctx: EngineContext, scope: Scope) -> Focus:
    """The focus inferred from the last memories of ``scope``'s run (none without a run)."""
    if scope.run_id is None or not ctx.config.retrieve.infer_focus:
        return Focus()
    store = ctx.store
    recent_n = ctx.config.retrieve.focus_recent
    total = store.count_memories(scope)
    recent = store.list_memories(scope, limit=recent_n, offset=max(0, total - recent_n))
    part = scope.partition
    candidates: dict[str, list[Node]] = {}
    for m in recent:
        found = store.derived_from(part, m.id)[0]
        named = [i for i, _ in store.search_text(part, m.text, entity="node", limit=INFER_NODES)]
        found += store.get_nodes(part, [i for i in named if i not in {n.id for n in found}])
        candidates[m.id] = found
    return infer_focus(recent, candidates)


def search_focus(ctx: EngineContext, lookup: Lookup, focus: FocusArg, scope: Scope) -> Focus | None:
    """The focus of one search: given, else the open block's, else inferred (or none)."""
    names = focus_names(focus)
    if names is None:
        names = block_focus(ctx, scope)
    if names is None:
        inferred = infer(ctx, scope)
        return inferred if inferred.nodes else None
    return resolve(lookup, names, scope) if names else None
