"""The evolver: a memory that improves with use, where every change is journaled and reversible.

Steps (pure functions returning :class:`~sage_memory.evolve.proposal.Proposal` data):

    access       the access log: what searches returned, what callers used (feedback)
    reinforce    edge weights from co-access, decay with disuse, learnt associations
    conflicts    contradicting facts: settle clear cases (loser expired), queue close ones
    duplicates   merge candidates with evidence, merge planning, split suggestions
    communities  Louvain communities and a summary node for each
    discovery    typed relations for vague edges, new relation types (suggest only)
    hygiene      archive stale memories, remove orphans, graph-quality metrics

:mod:`~sage_memory.evolve.runner` (the ``Evolver``) runs them as bounded, incremental passes:
:mod:`~sage_memory.evolve.planner` chooses what each partition's pass reads and
:mod:`~sage_memory.evolve.steps` feeds the steps, applying what the configuration allows;
:mod:`~sage_memory.evolve.report` queues the rest for review and measures the graph;
:mod:`~sage_memory.evolve.suggestions` re-plans a queued suggestion when it is accepted;
:mod:`~sage_memory.evolve.triggers` starts runs after adds or on a timer;
:mod:`~sage_memory.evolve.history` rebuilds the memory as it was at a past time. The engine
applies every change through its unit of work and the journal, so a run, a merge or an accepted
suggestion is undone as one batch.
"""
