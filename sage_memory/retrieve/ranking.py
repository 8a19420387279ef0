"""Ranking memories: candidates from every channel, neighbouring turns, features, fusion, MMR.

Candidates are the dense and lexical seeds plus the memories only the graph found (when what
found them is specific enough). The turns just before and after the best candidates join, so a
reply can borrow the score of the question it answers. Features are computed as one array per
feature and fused by the preset (:mod:`sage_memory.retrieve.fusion`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from sage_memory.config import ExtractConfig, RetrieveConfig
from sage_memory.retrieve.current import (
    current_first,
    historical,
    newer_values,
    read_slots,
    reference_time,
)
from sage_memory.retrieve.features import author_match, freshness, time_match
from sage_memory.retrieve.fusion import (
    Columns,
    Features,
    lexical_feature,
    mmr,
    own_scores,
    promote,
    smooth,
)
from sage_memory.retrieve.graph import Ask, GraphEvidence, entity_scores, explain, graph_reason
from sage_memory.retrieve.reader import candidate_reads
from sage_memory.retrieve.subjects import other_subject_penalty
from sage_memory.types import Memory, MemoryHit, Vector

#: Candidates whose neighbouring turns are looked up.
NEIGHBOUR_CANDIDATES = 30
#: Turns further apart than this (seconds) are not one conversation for neighbour scoring:
#: half an hour of silence ends a session (the usual threshold). Six hours let notes of
#: different stories written the same day borrow each other's score and push out what the
#: dense channel found (bench/structure.py, prerequisites).
MAX_TURN_GAP_S = 30 * 60
#: Graph evidence a memory needs to join the candidates when no other channel found it.
GRAPH_MIN = 0.2
#: The default single-valued relations (``ExtractConfig.single_valued``).
SINGLE_VALUED = ExtractConfig().single_valued


def rank_memories(
    ask: Ask,
    dense: list[tuple[str, float]],
    lexical: list[tuple[str, float]],
    g: GraphEvidence,
    config: RetrieveConfig,
    single_valued: Sequence[str] = SINGLE_VALUED,
    lexical_scored: Sequence[tuple[str, float]] = (),
) -> list[MemoryHit]:
    """Candidates from every channel, the turns around the best, features, fusion, MMR.

    ``lexical`` are the lexical seeds; ``lexical_scored`` the longer BM25 list they head
    (:data:`~sage_memory.retrieve.seeds.SCORED_PER_SEED`), which gives the candidates other
    channels found their lexical feature. ``single_valued``: the relations with one value at
    a time (``ExtractConfig``), whose values order the statements of one slot by world time
    (:mod:`.current`)."""
    scope, w, limit, as_of = ask.scope, ask.weights, ask.limit, ask.as_of
    lex = lexical_feature(lexical_scored or lexical)
    found = {i for i, _ in lexical}
    cos = dict(dense)
    graph_feat = graph_feature(g, w.walk)
    pool = list(dict.fromkeys([*cos, *(i for i, _ in lexical)]))
    if w.walk:
        # The walk's best memories that no word channel found join as candidates.
        evidence = graph_feat
        floor = 0.0
    else:
        # Memories only the graph found join when what found them is specific enough.
        found_by = entity_scores(g, ask.store.memory_nodes(scope, list(graph_feat)))
        evidence = {i: f + found_by.get(i, 0.0) for i, f in graph_feat.items()}
        floor = GRAPH_MIN
    # Equal evidence keeps the walk's order (stable sort): a random id would pick which of
    # several memories of one entity make the cut differently on each ingest.
    extra = sorted(
        (i for i, v in evidence.items() if v > floor and i not in cos and i not in found),
        key=lambda i: -evidence[i],
    )
    pool += extra[: config.seeds_per_channel]
    pool += [i for i, _ in g.assoc[: w.assoc_take] if i not in pool]
    if not pool:
        return []
    first = sorted(
        pool,
        key=lambda i: (
            -(
                w.dense * cos.get(i, 0.0)
                + w.lexical * lex.get(i, 0.0)
                + w.graph * graph_feat.get(i, 0.0)
            )
        ),
    )
    # The turns around the best, every candidate's row and its vector: one read.
    adjacent, rows, stored = candidate_reads(
        ask.store, scope, pool, first[:NEIGHBOUR_CANDIDATES] if w.neighbour > 0 else []
    )
    around = [n for pair in adjacent.values() for n in pair if n is not None]
    ids = list(dict.fromkeys([*pool, *around]))
    memories = {m.id: m for m in rows if not m.archived and (as_of is None or m.timestamp <= as_of)}
    adjacent = _same_conversation(adjacent, memories)
    vectors = {i: v for i, v in stored.items() if i in memories}
    mids = [i for i in ids if i in memories]
    if not mids:
        return []
    # The nodes each candidate supports: its entity feature, whose story it tells, and why
    # the graph found it, from what the search touches (not from the nodes' memory lists).
    supports = ask.store.memory_nodes(scope, mids)
    cols = _columns(mids, memories, vectors, cos, lex, g, ask, entity_scores(g, supports))
    sym = _symmetric(adjacent)
    own = own_scores(cols, w)
    at = {m: r for r, m in enumerate(mids)}
    prev = np.array([at.get(sym.get(m, (None, None))[0] or "", -1) for m in mids])
    nxt = np.array([at.get(sym.get(m, (None, None))[1] or "", -1) for m in mids])
    smoothed = smooth(own, prev, nxt, w.neighbour)
    # The time window counts after smoothing: a turn is not "in June" for its neighbour.
    final = smoothed + w.time * cols["time"]
    # A memory about another person or team than the one asked sinks (subjects.py).
    known = [*g.walk_nodes.values(), *g.nodes.values(), *(ln.node for ln in g.linked)]
    others = other_subject_penalty(
        ask.plan.text, g.linked, known, memories, mids, supports, g.edges.values()
    )
    for m, cost in others.items():
        final[at[m]] -= cost
    scores = {m: float(v) for m, v in zip(mids, final, strict=True)}
    ranked = sorted(scores, key=lambda i: (-scores[i], memories[i].text))
    assoc = [i for i, _ in g.assoc]
    ranked = promote(ranked, scores, assoc, keep=w.assoc_keep, take=w.assoc_take)
    lam = min(config.mmr_lambda, w.mmr_lambda)
    chosen = mmr(ranked[: limit * 3], scores, vectors, lam, limit)
    brought: list[str] = []
    if not historical(ask.plan):
        # Among the chosen, the statement of the asked time before the others of its slot
        # (current value first), and the update of a stated fact that no channel found.
        chosen, brought = _current_first(
            ask, chosen, scores, memories, vectors, single_valued, others.keys()
        )
    if w.walk:
        explain(g, supports, chosen)
    in_dense = {i: r for r, (i, _) in enumerate(dense)}
    own_of = {m: float(v) for m, v in zip(mids, own, strict=True)}
    hits = [_brought_hit(memories[i], scores[i]) for i in brought]
    for i in chosen:
        if i in brought:
            continue
        r = at[i]
        f = Features.row(cols, r)
        lifted = _lift(own_of[i], float(smoothed[r]))
        hits.append(
            MemoryHit(
                memories[i],
                round(scores[i], 6),
                _channels(i, in_dense=in_dense, lex=lex, g=g, f=f, lifted=lifted),
                _why(
                    i,
                    in_dense=in_dense,
                    lex=lex,
                    g=g,
                    f=f,
                    neighbour=_best_neighbour(i, sym, own_of) if lifted else None,
                ),
                bool(f.expired),
            )
        )
    # MMR picks which memories make the cut; they are listed by the score they carry, so a
    # caller reading scores never sees a lower one above a higher one.
    return sorted(hits, key=lambda h: -h.score)


def _current_first(
    ask: Ask,
    chosen: list[str],
    scores: dict[str, float],
    memories: dict[str, Memory],
    vectors: dict[str, Vector],
    single_valued: Sequence[str],
    others: Collection[str] = (),
) -> tuple[list[str], list[str]]:
    """Reorder the chosen so each slot's statement of the asked time leads it; bring in the
    memory stating the value that holds when a chosen one states a superseded value of it.

    Updates ``scores``, ``memories`` and ``vectors`` in place; returns the chosen (with the
    memories brought in) and the ids brought in. A memory brought in stays only when it
    leads its slot (it is then the answer); what was chosen is never dropped here. A memory
    about another subject than asked (``others``) states no value of the asked slot: it
    keeps its score and takes no part.
    """
    when = reference_time(ask.plan, ask.as_of, ask.now)
    named = bool(ask.plan.names)  # a subject's name is compared only with a name asked
    slots = read_slots(ask.store, ask.scope, chosen, single_valued, names=named)
    pairs = [(m, by) for m, by in newer_values(slots, chosen, when) if m not in chosen]
    found = {
        m.id: m
        for m in ask.store.get_memories(ask.scope, [m for m, _ in pairs])
        if not m.archived and (ask.as_of is None or m.timestamp <= ask.as_of)
    }
    pairs = [(m, by) for m, by in pairs if m in found]
    if pairs:
        memories.update(found)
        vectors.update(ask.store.get_vectors(list(found)))
        slots = read_slots(ask.store, ask.scope, [*chosen, *found], single_valued, names=named)
    # A memory brought in enters just below the one whose slot it updates, and stays only
    # when it then leads that slot.
    pairs = [(m, by) for m, by in pairs if by not in others]
    pool = {i: scores[i] for i in chosen if i not in others}
    pool |= {m: scores[by] - 1e-6 for m, by in pairs}
    ordered = current_first(pool, memories, vectors, ask.qvec, ask.plan, when, slots)
    brought = [m for m, by in pairs if ordered[m] > ordered[by]]
    if len(brought) < len(pairs):
        pool = {i: pool[i] for i in [*chosen, *brought] if i in pool}
        ordered = current_first(pool, memories, vectors, ask.qvec, ask.plan, when, slots)
    scores.update(ordered)
    return [*chosen, *brought], brought


def _brought_hit(memory: Memory, score: float) -> MemoryHit:
    return MemoryHit(
        memory,
        round(score, 6),
        ("graph",),
        "states the value that holds now of a fact a better hit states an older value of",
        False,
    )


def graph_feature(g: GraphEvidence, walk: bool) -> Mapping[str, float]:
    """The graph channel of each memory: the associative walk's mass, or (``walk=False``) the
    weight of the nodes and facts near the linked nodes that it supports."""
    return g.walk if walk else g.memory_score


def _same_conversation(
    adjacent: Mapping[str, tuple[str | None, str | None]], memories: Mapping[str, Memory]
) -> dict[str, tuple[str | None, str | None]]:
    """Keep a neighbour only when it is close in time: a turn of the same conversation, not the
    first turn of the next session days later."""

    def near(a: str, b: str | None) -> str | None:
        if b is None or b not in memories or a not in memories:
            return None
        gap = abs((memories[a].timestamp - memories[b].timestamp).total_seconds())
        return b if gap <= MAX_TURN_GAP_S else None

    return {m: (near(m, p), near(m, n)) for m, (p, n) in adjacent.items()}


def _symmetric(
    adjacent: Mapping[str, tuple[str | None, str | None]],
) -> dict[str, tuple[str | None, str | None]]:
    """Adjacency for the looked-up memories and, reversed, for their neighbours."""
    out: dict[str, tuple[str | None, str | None]] = dict(adjacent)
    for mid, (prev, nxt) in adjacent.items():
        if prev is not None and prev not in adjacent:
            p = out.get(prev, (None, None))
            out[prev] = (p[0], mid)
        if nxt is not None and nxt not in adjacent:
            n = out.get(nxt, (None, None))
            out[nxt] = (mid, n[1])
    return out


def _columns(
    mids: Sequence[str],
    memories: Mapping[str, Memory],
    vectors: Mapping[str, Vector],
    cos: Mapping[str, float],
    lex: Mapping[str, float],
    g: GraphEvidence,
    ask: Ask,
    entity: Mapping[str, float],
) -> Columns:
    """The features of the candidate memories, one array per feature (rows follow ``mids``)."""
    n = len(mids)
    dense = np.array([cos.get(m, 0.0) for m in mids], dtype=np.float64)
    have = [r for r, m in enumerate(mids) if m in vectors and m not in cos]
    if have:
        mat = np.stack([vectors[mids[r]] for r in have])
        dense[have] = mat @ np.asarray(ask.qvec, dtype=np.float32)
    w = ask.weights
    return {
        "dense": np.maximum(dense, 0.0),
        "lexical": np.array([lex.get(m, 0.0) for m in mids]),
        "graph": np.array([graph_feature(g, w.walk).get(m, 0.0) for m in mids]),
        "entity": np.array([entity.get(m, 0.0) for m in mids]),
        "author": np.array([author_match(memories[m], ask.plan) for m in mids]),
        "time": np.array([time_match(memories[m], ask.plan) for m in mids]),
        "recency": (
            np.array([freshness(memories[m], ask.now) for m in mids]) if w.recency else np.zeros(n)
        ),
        "salience": np.array([memories[m].salience for m in mids]),
        "expired": np.array([m in g.superseded for m in mids]),
    }


def _best_neighbour(
    mid: str, adjacent: Mapping[str, tuple[str | None, str | None]], own: Mapping[str, float]
) -> tuple[str, str] | None:
    prev, nxt = adjacent.get(mid, (None, None))
    near = [n for n in (prev, nxt) if n is not None]
    if not near:
        return None
    best = max(near, key=lambda n: own.get(n, 0.0))
    return ("reply to" if best == prev else "turn before"), best


def _lift(own: float, smoothed: float) -> bool:
    """Whether an adjacent turn's score lifted this one by more than half its own."""
    return smoothed - own > 0.5 * max(own, 0.0)


def _channels(
    mid: str,
    *,
    in_dense: Mapping[str, int],
    lex: Mapping[str, float],
    g: GraphEvidence,
    f: Features,
    lifted: bool,
) -> tuple[str, ...]:
    flags = (
        ("dense", mid in in_dense),
        ("lexical", mid in lex),
        ("entity", f.entity > 0),
        ("graph", mid in g.memory_score or g.walk.get(mid, 0.0) > 0),
        ("neighbour", lifted),
        ("time", f.time > 0),
    )
    return tuple(name for name, on in flags if on) or ("dense",)


def _why(
    mid: str,
    *,
    in_dense: Mapping[str, int],
    lex: Mapping[str, float],
    g: GraphEvidence,
    f: Features,
    neighbour: tuple[str, str] | None,
) -> str:
    bits: list[str] = []
    if mid in in_dense:
        bits.append(f"dense #{in_dense[mid] + 1} (cos {f.dense:.2f})")
    if mid in lex:
        bits.append(f"lexical (bm25 {lex[mid]:.2f} of best)")
    if mid in g.memory_why:
        bits.append(f"graph: {graph_reason(g, g.memory_why[mid])}")
    if g.walk.get(mid, 0.0) > 0:
        bits.append(f"associative walk ({g.walk[mid]:.2f} of best)")
    if any(m == mid for m, _ in g.assoc):
        bits.append("names what a best hit names (associative hop)")
    if f.author:
        bits.append("said by a person the query names")
    if f.time:
        bits.append("in the time the query names")
    if neighbour is not None:
        bits.append(f"{neighbour[0]} mem {neighbour[1][:8]}")
    if f.expired:
        bits.append("its facts no longer hold")
    return "; ".join(bits) or "weak match"
