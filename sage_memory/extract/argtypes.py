"""Argument types read from meaning: is a noun phrase an instrument (a tool, a device, software,
a service) rather than a place, a person, a time or an idea?

A loose phrasing such as "<verb> ... in|on|with <B>" states use only when B is an instrument:
"she mixes the track in a sequencer app" uses the app, "she mixes the track in the basement"
says where. No closed list of tool names can cover what people use, and capitals do not tell
a product from a town, so the type is read by meaning: the MiniLM embedder already shipped with
the package (offline, :mod:`sage_memory.embed.minilm`) compares the name with short prototype
descriptions of each node label, written from the label definitions of docs/relations.md (not
from any test sentence). The name is an instrument when the instrument prototypes are the
nearest by a margin; when the embedder cannot load, nothing is typed as an instrument (the
loose phrasing then makes no edge, as before).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

#: Prototype descriptions per argument type, from the node labels of docs/relations.md
#: (Tool: "software, a library, a function, a device used to do something"; Resource: "a
#: framework, service, dataset, document or material a task needs"; Place: "a city, country,
#: address, venue"; ...). Several short descriptions per type, as one long one blurs.
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "instrument": (
        "a piece of software, an app or a computer program",
        "a tool, a device, a machine or an instrument used to do something",
        "an online service, a platform or a website",
        "a utensil, an implement or a piece of equipment",
    ),
    "place": (
        "a city, a country or a region",
        "a place, a room, a building or a venue",
        "a street, a road or an address",
    ),
    "person": ("a person, a friend or a relative",),
    "group": ("a company, a team, a school or a club",),
    "time": ("a time, a day, a month or a season",),
    "idea": ("an idea, a feeling or an abstract concept",),
    "event": ("an event, a meeting, an activity or a request",),
    "substance": ("food, a drink, an ingredient or a material",),
}
#: How much nearer the instrument prototypes must be than any other type's.
MARGIN = 0.05
#: What an effect reads as: a symptom, an illness or a fault (docs/relations.md, Error: "a
#: failure, exception, symptom or problem"). Scored apart from :data:`PROTOTYPES`, so adding it
#: moves no other type's margin: a loose causal phrasing ("X gave me <B>", "<B> is from X")
#: states a cause only when B reads as one of these ("gave me a headache", not "gave me a lift").
CONDITION = (
    "an illness, a symptom, a pain or a medical condition",
    "a problem, a fault, damage or a failure",
    "an injury, a rash, a reaction or a disease",
)
#: How much nearer the condition prototypes must be than any type of :data:`PROTOTYPES`.
CONDITION_MARGIN = 0.03

#: What a role reads as: a job, an occupation or a position (docs/relations.md, role: "person
#: holds a role or job title"). Scored apart from :data:`PROTOTYPES` like :data:`CONDITION`: an
#: appositive or copular role slot ("Ana, our new <C>,") names a role when C reads as one of
#: these, so job titles no closed list holds ("sous-chef", "postdoc") are read too.
OCCUPATION = (
    "a job, an occupation or a profession",
    "a job title or a position held at work",
    "a worker, an employee or a professional",
)
#: How much nearer the occupation prototypes must be than any type of :data:`PROTOTYPES`.
OCCUPATION_MARGIN = 0.04

_lock = threading.Lock()
_state: dict[str, Any] = {}


def _embedder() -> Any:
    """The shared MiniLM embedder and the prototype matrix, loaded once (None if unavailable)."""
    with _lock:
        if "embedder" not in _state:
            try:
                import numpy as np

                from sage_memory.embed.minilm import default_embedder

                embedder = default_embedder()
                labels = [kind for kind, texts in PROTOTYPES.items() for _ in texts]
                texts = [t for ts in PROTOTYPES.values() for t in ts]
                rows = np.asarray(embedder.embed_fixed(texts))
                condition = np.asarray(embedder.embed_fixed(list(CONDITION)))
                occupation = np.asarray(embedder.embed_fixed(list(OCCUPATION)))
                _state.update(
                    embedder=embedder,
                    labels=labels,
                    rows=rows,
                    condition=condition,
                    occupation=occupation,
                )
            except Exception:  # no model files, no numpy: type nothing
                _state["embedder"] = None
        return _state["embedder"]


@lru_cache(maxsize=8192)
def type_scores(name: str) -> tuple[tuple[str, float], ...]:
    """Best prototype similarity per type for ``name``, nearest first (empty when the embedder
    is not available)."""
    vec = _vector(name)
    if vec is None:
        return ()
    best: dict[str, float] = {}
    for kind, sim in zip(_state["labels"], _state["rows"] @ vec, strict=True):
        best[kind] = max(best.get(kind, -1.0), float(sim))
    return tuple(sorted(best.items(), key=lambda kv: -kv[1]))


def is_type(name: str, kind: str, margin: float = MARGIN) -> bool:
    """True when ``name`` reads as ``kind`` (a key of :data:`PROTOTYPES`) by a clear margin."""
    scores = type_scores(name)
    if len(scores) < 2 or scores[0][0] != kind:
        return False
    return scores[0][1] - scores[1][1] >= margin


def is_instrument(name: str, margin: float = MARGIN) -> bool:
    """True when ``name`` reads as a tool, device, software or service by a clear margin."""
    return is_type(name, "instrument", margin)


@lru_cache(maxsize=1024)  # the scores of one name are read together; vectors are not small
def _vector(name: str) -> Any:
    """``name``'s embedding, computed once for every score that reads it (None when the
    embedder is not available or the name is blank)."""
    embedder = _embedder()
    if embedder is None or not name.strip():
        return None
    import numpy as np

    return np.asarray(embedder.embed([name]))[0]


def _lead_over_types(name: str, prototypes: str) -> float | None:
    """How much nearer ``name`` is to the ``prototypes`` rows of the state (a family scored
    apart) than to any type of :data:`PROTOTYPES`."""
    scores = type_scores(name)
    if not scores:
        return None
    return float(max(_state[prototypes] @ _vector(name))) - scores[0][1]


@lru_cache(maxsize=8192)
def condition_score(name: str) -> float | None:
    """How much nearer ``name`` is to a condition (:data:`CONDITION`) than to any type of
    :data:`PROTOTYPES` (None when the embedder is not available)."""
    return _lead_over_types(name, "condition")


def is_condition(name: str, margin: float = CONDITION_MARGIN) -> bool:
    """True when ``name`` reads as a symptom, an illness or a fault by a clear margin."""
    score = condition_score(name)
    return score is not None and score >= margin


@lru_cache(maxsize=8192)
def occupation_score(name: str) -> float | None:
    """How much nearer ``name`` is to a job or an occupation (:data:`OCCUPATION`) than to any
    type of :data:`PROTOTYPES` (None when the embedder is not available)."""
    return _lead_over_types(name, "occupation")


def is_occupation(name: str, margin: float = OCCUPATION_MARGIN) -> bool:
    """True when ``name`` reads as a job title or an occupation by a clear margin."""
    score = occupation_score(name)
    return score is not None and score >= margin
