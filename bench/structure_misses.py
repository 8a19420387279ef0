"""Why a structure question's answer is not in the context: ``bench/structure.py --misses TYPE``.

For each failed question of the chosen types it prints the expected answers (each marked
found or not), the context's "Next steps" section, and for each missing answer where the
chain breaks in the graph:

- ``no node``: no node's name holds the answer (the extractor never named it);
- ``no link``: a node holds it, but no edge of the question's relations touches it;
- ``apart``: it has such edges, but no walk along them from the question's subject reaches it;
  the nearest pair of nodes, one on each side, whose names share a content word is printed
  (the same thing named two ways: two nodes where the walk needed one);
- ``reached``: the walk reaches it, so the answer was dropped later (story filter, budget).

The subject is the node whose name the question holds most words of. Walks follow the
question's relations in the direction the question asks, as ``sage_memory.retrieve.structure``
does, over the current graph; the diagnosis reads the whole graph, so it is for the bench only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sage_memory.words import QUERY_STOPWORDS

#: Per question type: (relation, the end of ``a REL b`` the walk goes to). Forward for a
#: "target" end: from a to b.
WALKS: dict[str, tuple[tuple[str, str], ...]] = {
    "prerequisites": (("PRECEDES", "source"), ("BLOCKED_BY", "target"), ("DEPENDS_ON", "target")),
    "next_step": (("PRECEDES", "target"), ("BLOCKED_BY", "source"), ("DEPENDS_ON", "source")),
    "indirect_blockers": (("BLOCKED_BY", "target"), ("DEPENDS_ON", "target")),
    "blockers": (("BLOCKED_BY", "target"), ("DEPENDS_ON", "target")),
    "taxonomy_levels": (("IS_A", "target"),),
    "deepest_cause": (("CAUSED_BY", "target"), ("CAUSES", "source")),
    "causes": (("CAUSED_BY", "target"), ("CAUSES", "source")),
    "requirements": (("REQUIRES", "target"), ("USES", "target"), ("DEPENDS_ON", "target")),
}


def words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in QUERY_STOPWORDS or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _norm(text: str) -> str:
    return " " + re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip() + " "


class Misses:
    """The graph of one bench store, read once, and the report of each failed question."""

    def __init__(self, mem: Any, user_id: str, types: Sequence[str]) -> None:
        self.types = set(types)
        graph = mem.graph(user_id=user_id) if types else None  # nothing asked: no read
        self.nodes = {n.id: n for n in graph.nodes} if graph else {}
        self.edges = list(graph.edges) if graph else []
        self.by_node: dict[str, list[Any]] = defaultdict(list)
        for e in self.edges:
            self.by_node[e.source_id].append(e)
            self.by_node[e.target_id].append(e)
        self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def note(self, q: dict[str, Any], ok: bool, context: str, world: str) -> None:
        """Print the report of ``q`` when it failed and its type is asked for."""
        if not ok and q["type"] in self.types:
            print(self.report(q, context, world), flush=True)

    def holding(self, answer: str) -> list[str]:
        """Nodes whose name holds the answer (or the answer holds their whole name, two
        words at least)."""
        a = _norm(answer)
        out = []
        for nid, n in self.nodes.items():
            name = _norm(n.name)
            if a in name or (name in a and len(name.split()) >= 2):
                out.append(nid)
        return out

    def subject(self, question: str, answers: Sequence[str]) -> str | None:
        asked = words(question)
        taken = {w for a in answers for w in words(a)}
        best: tuple[tuple[int, int], str] | None = None
        for nid, n in self.nodes.items():
            nw = words(n.name)
            if not nw or not nw <= asked or nw <= taken:
                continue
            score = (len(nw), len(self.by_node.get(nid, ())))
            if best is None or score > best[0]:
                best = (score, nid)
        return best[1] if best else None

    def walk(self, start: str, links: tuple[tuple[str, str], ...]) -> dict[str, int]:
        lead = dict(links)
        seen = {start: 0}
        frontier = [start]
        depth = 0
        while frontier and depth < 10:
            depth += 1
            nxt = []
            for nid in frontier:
                for e in self.by_node.get(nid, ()):
                    if e.relation not in lead:
                        continue
                    end = lead[e.relation]
                    ends = (e.source_id, e.target_id)
                    src, dst = ends if end == "target" else ends[::-1]
                    if src == nid and dst not in seen:
                        seen[dst] = depth
                        nxt.append(dst)
            frontier = nxt
        return seen

    def component(self, start: str, relations: set[str]) -> set[str]:
        seen = {start}
        frontier = [start]
        while frontier:
            nxt = []
            for nid in frontier:
                for e in self.by_node.get(nid, ()):
                    if e.relation in relations:
                        for o in (e.source_id, e.target_id):
                            if o not in seen:
                                seen.add(o)
                                nxt.append(o)
            frontier = nxt
        return seen

    def name(self, nid: str) -> str:
        n = self.nodes.get(nid)
        return f"'{n.name}'" if n else "?"

    def report(self, q: dict[str, Any], context: str, world: str) -> str:
        links = WALKS.get(q["type"], ())
        relations = {r for r, _ in links}
        answers = [a for a in q["answers"] if a.strip()]
        have = {a: _norm(a) in _norm(context) for a in answers}
        lines = [
            f"=== MISS {world} {q['id']} [{q['type']}]: {q['question']}",
            "  expected: " + ", ".join(f"{a} {'+' if ok else '-'}" for a, ok in have.items()),
        ]
        section = re.search(r"## Next steps\n(.*?)(?:\n## |\Z)", context, re.S)
        lines.append("  next steps:" + ("" if section else " (none)"))
        if section:
            lines += ["    " + ln for ln in section.group(1).strip().splitlines()]
        subj = self.subject(q["question"], answers)
        lines.append(f"  subject: {self.name(subj) if subj else '(no node)'}")
        reach = self.walk(subj, links) if subj else {}
        comp = self.component(subj, relations) if subj else set()
        for a, ok in have.items():
            if ok:
                continue
            nodes = self.holding(a)
            if not nodes:
                verdict, detail = "no node", ""
            elif any(n in reach for n in nodes):
                verdict = "reached"
                detail = f"at depth {min(reach[n] for n in nodes if n in reach)}"
            elif not any(e.relation in relations for n in nodes for e in self.by_node[n]):
                verdict = "no link"
                rels = sorted({e.relation for n in nodes for e in self.by_node[n]})
                detail = f"{[self.nodes[n].name for n in nodes]} has only {rels}"
            else:
                verdict = "apart"
                detail = self._gap(nodes, comp, relations)
            self.counts[q["type"]][verdict] += 1
            lines.append(f"  missing {a!r}: {verdict} {detail}")
        return "\n".join(lines)

    def _gap(self, nodes: Sequence[str], comp: set[str], relations: set[str]) -> str:
        """The most alike pair of names across the break, and the answer's own links."""
        theirs: set[str] = set()
        for n in nodes:
            theirs |= self.component(n, relations)
        own = [
            f"{self.name(e.source_id)} {e.relation} {self.name(e.target_id)}"
            for n in nodes
            for e in self.by_node[n]
            if e.relation in relations
        ][:4]
        if theirs & comp:
            return f"(linked, wrong direction) {own}"
        best = None
        for x in comp:
            wx = words(self.nodes[x].name) if x in self.nodes else set()
            for y in theirs:
                wy = words(self.nodes[y].name) if y in self.nodes else set()
                shared = len(wx & wy)
                if shared and (best is None or shared > best[0]):
                    best = (shared, x, y)
        pair = "no alike names"
        if best:
            pair = f"closest names {self.name(best[1])} / {self.name(best[2])}"
        return f"{pair}; its links {own}"

    def summary(self) -> None:
        """Print each asked type's missing answers by verdict (nothing when none is asked)."""
        for t, c in sorted(self.counts.items()):
            print(f"misses {t}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
