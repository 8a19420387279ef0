"""Entities: the shared service that names and resolves them, below every stage.

    names        how a name is shown, keyed and compared; alias tables
    resolution   is a proposed node one we already have? (exact, alias, fuzzy, embedding)

The extractors, the engine's write path and the evolver's duplicate finder all use these, so
"the same entity" means the same thing everywhere. Pure functions over plain data: this
package imports only :mod:`sage_memory.types` and :mod:`sage_memory.config`.
"""
