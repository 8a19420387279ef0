"""Finding one record: a memory by id, a node by id or name, the journal of an id.

Every other part looks things up through here, so "which node does this name mean" has one
answer across explore, merge, delete_node and the structure queries.
"""

from __future__ import annotations

from sage_memory.engine.context import EngineContext
from sage_memory.errors import NotFoundError, ValidationError
from sage_memory.types import Change, Memory, Node, Scope


class Lookup:
    """Reads of single records by id or name over the context's store."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def get(self, memory_id: str, scope: Scope | None) -> Memory:
        """One memory by id; with a scope, a memory of another scope is not found."""
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError(f"memory_id must be a non-empty string, got {memory_id!r}")
        store = self.ctx.store
        if scope is None:
            found = store.find_memory(memory_id)
        else:
            hits = store.get_memories(scope, [memory_id])
            found = hits[0] if hits else None
        if found is None:
            raise NotFoundError(f"no memory with id {memory_id!r} in this scope")
        return found

    def history(self, entity_id: str) -> list[Change]:
        """The journal of one memory, node or edge id, oldest first."""
        return [c for _, c in self.ctx.store.journal(entity_id=entity_id)]

    def find_node(self, name_or_id: str, scope: Scope, *, exact: bool = False) -> Node:
        """A node of ``scope``'s partition by id, exact name or alias, or (unless ``exact``) the
        best lexical match of its name."""
        part = scope.partition
        if not isinstance(name_or_id, str) or not name_or_id.strip():
            raise ValidationError("give a node name or id to explore from")
        store = self.ctx.store
        by_id = store.get_nodes(part, [name_or_id])
        if by_id:
            return by_id[0]
        from sage_memory.entities.names import match_key, merge_aliases

        aliases = merge_aliases(self.ctx.config.extract.aliases)
        norm = match_key(name_or_id, aliases, builtin=False)
        named = store.find_nodes(part, [name_or_id, norm])
        if named:
            return max(named, key=lambda n: (len(n.memory_ids), n.salience))
        lexical = [] if exact else store.search_text(part, name_or_id, entity="node", limit=1)
        if lexical:
            return store.get_nodes(part, [lexical[0][0]])[0]
        raise NotFoundError(f"no node named or with id {name_or_id!r} in this scope")
