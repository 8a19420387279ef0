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

A name that matches no node still counts as text: memories that say it, and the sessions
they were said in, are near the focus. The result's ``focus`` lists the node names and text
terms used.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sage_memory.engine.context import EngineContext
from sage_memory.engine.lookup import Lookup
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.types import Node, Scope
from sage_memory.words import QUERY_STOPWORDS

if TYPE_CHECKING:
    # Loaded by the functions that search (with the seeds it brings): a process that only
    # writes (the command line's ``add``) opens the engine without them.
    from sage_memory.retrieve.focus import Focus

#: Nodes the text search proposes per recent memory when a focus is inferred.
INFER_NODES = 10
#: Longest part of a recent memory used as that text search's query.
INFER_QUERY_CHARS = 500

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


def resolve(ctx: EngineContext, lookup: Lookup, names: Sequence[str], scope: Scope) -> Focus:
    """The nodes ``names`` name in ``scope``; a name that names no node stays a text term.

    A name matches a node by id, exact name or alias, or else a node the text search finds
    whose name's words and the focus's words are one within the other ("Osprey" and
    "Project Osprey"): never a node that merely shares a word ("Project Kestrel" is not
    "Project Osprey").
    """
    from sage_memory.retrieve.focus import Focus

    nodes: dict[str, Node] = {}
    terms: list[str] = []
    for name in names:
        node: Node | None
        try:
            node = lookup.find_node(name, scope, exact=True)
        except NotFoundError:
            node = _contained(ctx, scope, name)
        if node is None:
            terms.append(name.strip())
        else:
            nodes.setdefault(node.id, node)
    return Focus(tuple(nodes.values()), terms=tuple(dict.fromkeys(terms)))


def _contained(ctx: EngineContext, scope: Scope, name: str) -> Node | None:
    words = _words(name)
    if not words:
        return None
    part = scope.partition
    found = ctx.store.search_text(part, name, entity="node", limit=5)
    for node in ctx.store.get_nodes(part, [i for i, _ in found]):
        other = _words(node.name)
        if other and (other <= words or words <= other):
            return node
    return None


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if w not in QUERY_STOPWORDS}


def infer(ctx: EngineContext, scope: Scope) -> Focus:
    """The focus inferred from the last memories of ``scope``'s run (none without a run)."""
    from sage_memory.retrieve.focus import Focus, infer_focus

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
        query = m.text[:INFER_QUERY_CHARS]  # a long memory's opening says what it is about
        named = [i for i, _ in store.search_text(part, query, entity="node", limit=INFER_NODES)]
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
        return inferred if inferred else None
    if not names:
        return None
    return resolve(ctx, lookup, names, scope)
