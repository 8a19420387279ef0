"""Structure questions told by meaning: the query's vector against prototype questions.

The query reader (:func:`sage_memory.retrieve.query.structure_intent`) knows a structure
question by its words: "what blocks", "before we can", "what kind of". A question can ask the
same in words no pattern holds ("what stands in the way", "which jobs precede", "list the
earlier steps"). When the words tell nothing, the query's embedding is compared with a few
prototype questions per structure kind, written generically (no domain's nouns), and with
prototypes of ordinary questions (where someone lives, what was said) that ask for no
structure. The nearest kind is taken only when it is close enough in absolute terms and
clearly closer than the nearest ordinary question: a question that reads like neither keeps
no structure intent, so a chat's questions stay as they were.

The prototypes are embedded once per retriever, with its own embedder, on the first query
that needs them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np

from sage_memory.embed.base import Embedder, embed_fixed, unit_rows
from sage_memory.retrieve.query import QueryPlan, Structure
from sage_memory.types import Vector, replace

#: Prototype questions per structure kind (None: questions that ask for no structure).
#: Placeholders ("the task", "it") keep them free of any domain's words; each kind has
#: several phrasings (a verb, a noun, a list request) so that no single wording dominates.
PROTOTYPES: Mapping[Structure | None, tuple[str, ...]] = {
    "blockers": (
        "what is blocking this, directly or indirectly?",
        "everything that stands in the way of the task, including what holds those up",
        "what is the task waiting on, and what are those waiting on?",
        "all the obstacles holding up the job, down the whole chain",
        "what has to be unblocked first, knock-on dependencies too",
    ),
    "before": (
        "which steps come before this task?",
        "what has to be finished earlier in the plan before we can start it?",
        "all the tasks that precede this one in the schedule",
        "what do we need to complete ahead of this step?",
        "list the earlier jobs in the sequence leading up to it",
    ),
    "kinds": (
        "what kind of thing is it, and what is that a kind of, up to the broadest category?",
        "every level of the classification above this item",
        "which categories does it belong to, from the narrowest to the most general?",
        "what type is it, and what broader groups contain that type?",
    ),
    "causes": (
        "what was the root cause of the problem?",
        "what ultimately caused this, going back through the chain of causes?",
        "what set off the trouble in the first place?",
        "trace the incident back to what started it",
    ),
    "requires": (
        "what is needed for this task?",
        "which tools and materials does the job require?",
        "what do we need to have on hand to do it?",
    ),
    "after": (
        "what comes after this step in the plan?",
        "which task follows once this one is done?",
        "what is the step after it?",
    ),
    "next": (
        "what should we do next?",
        "what is left to do now?",
        "where should I pick up the work?",
    ),
    None: (
        "where does she live now?",
        "who does he work for these days?",
        "what does she usually order for lunch?",
        "what was the status of the task in March?",
        "what did they talk about at the meeting?",
        "when did he move to the new city?",
        "what is her favourite band?",
        "what happened to the project last year?",
        "how did the trip go?",
    ),
}
#: Cosine (MiniLM) the nearest structure prototype needs: a question sharing only a word or
#: two with it ("the task", "next week") stays below.
MIN_SIMILARITY = 0.3
#: ... and how much closer it must be than the nearest ordinary question.
MARGIN = 0.1


class IntentReader:
    """Adds a structure intent told by meaning to a plan whose words told none."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()
        self._protos: tuple[Vector, tuple[Structure | None, ...]] | None = None

    def _prototypes(self) -> tuple[Vector, tuple[Structure | None, ...]]:
        with self._lock:
            if self._protos is None:
                kinds = tuple(k for k, texts in PROTOTYPES.items() for _ in texts)
                texts = [t for ts in PROTOTYPES.values() for t in ts]
                self._protos = (unit_rows(embed_fixed(self._embedder, texts)), kinds)
            return self._protos

    def read(self, plan: QueryPlan, qvec: Vector) -> QueryPlan:
        """``plan`` with the structure kind nearest ``qvec`` (when it qualifies), else as is."""
        if plan.structure is not None or plan.window is not None:
            return plan  # the words told it, or the question asks about a time
        kind = nearest_kind(qvec, *self._prototypes())
        return plan if kind is None else replace(plan, structure=kind)


def nearest_kind(
    qvec: Vector, protos: Vector, kinds: tuple[Structure | None, ...]
) -> Structure | None:
    """The structure kind whose prototypes come nearest ``qvec``, or None (see module doc)."""
    q = np.asarray(qvec, dtype=np.float32).reshape(-1)
    if protos.shape[1] != q.shape[0]:
        return None
    sims = protos @ q
    best: dict[Structure | None, float] = {}
    for kind, s in zip(kinds, sims.tolist(), strict=True):
        best[kind] = max(best.get(kind, -1.0), s)
    ordinary = best.pop(None, -1.0)
    if not best:
        return None
    top = max(best, key=lambda k: best[k])
    if best[top] < MIN_SIMILARITY or best[top] - ordinary < MARGIN:
        return None
    if top in ("before", "after") and abs(best["before"] - best["after"]) < MARGIN:
        # The vector tells an order question, not always its direction ("ahead of" reads
        # close to "after"): the plan both ways.
        return "next"
    return top
