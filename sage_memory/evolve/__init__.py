"""The evolver: a memory that improves with use, where every change is journaled and reversible.

Steps (pure functions returning :class:`~sage_memory.evolve.proposal.Proposal` data):

    access       the access log: what searches returned, what callers used (feedback)
    reinforce    edge weights from co-access, decay with disuse, learnt associations
    conflicts    contradicting facts: settle clear cases (loser expired), queue close ones
    duplicates   merge candidates with evidence, merge planning, split suggestions
    communities  Louvain communities and a summary node for each
    discovery    typed relations for vague edges, new relation types (suggest only)
    hygiene      archive stale memories, remove orphans, graph-quality metrics

:mod:`~sage_memory.evolve.runner` runs them as bounded, incremental passes and decides what
applies now and what waits in the review queue; :mod:`~sage_memory.evolve.review` re-plans a
queued suggestion when it is accepted; :mod:`~sage_memory.evolve.history` rebuilds the memory
as it was at a past time. The engine applies every change through its unit of work and the
journal, so a run, a merge or an accepted suggestion is undone as one batch.
"""
