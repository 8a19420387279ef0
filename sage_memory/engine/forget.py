"""Forgetting a text in what survives it: rows still supported by other memories.

When a memory goes, the nodes and edges only it supported go with it (``support_removal``).
Rows other memories still support stay, but fields written from the forgotten text must not:
an edge's fact sentence, a node's name, aliases, summary and text attributes, the community
summaries quoting them, and the journal's before/after images of those rows.

The rule is by words. A field keeps its value when every word it shares with a forgotten text
also occurs in one of the memories that still support the row; otherwise the value is rebuilt
from what remains (an edge's fact from its end names and relation, a node's name from a
supported alias) or dropped. Words are checked against the remaining memories lazily, a chunk
at a time, so a hub node with thousands of memories costs one chunk when its name is common.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sage_memory.engine.unit import UnitOfWork
from sage_memory.evolve.duplicates import SUMMARY_LABEL
from sage_memory.types import Change, Edge, Memory, Node, Scope
from sage_memory.words import word_tokens

#: Remaining memories read per step when looking for a word.
_CHUNK = 64


def _words(text: str) -> set[str]:
    return set(word_tokens(text))


class Support:
    """Which words of the forgotten texts the remaining memories of one row still hold."""

    def __init__(
        self, uow: UnitOfWork, scope: Scope, remaining: Sequence[str], forgotten: set[str]
    ):
        self.uow = uow
        self.scope = scope
        self.forgotten = forgotten
        self._todo = list(remaining)
        self._seen: set[str] = set()

    def keeps(self, text: str) -> bool:
        """True when no word of ``text`` comes only from a forgotten memory."""
        risky = _words(text) & self.forgotten
        missing = risky - self._seen
        while missing and self._todo:
            chunk, self._todo = self._todo[:_CHUNK], self._todo[_CHUNK:]
            for memory in self.uow.store.get_memories(self.scope, chunk):
                self._seen |= _words(memory.text) & self.forgotten
            missing -= self._seen
        return not missing

    def value(self, value: Any) -> bool:
        """A text attribute (a string, or a list of strings) is kept when every string is."""
        if isinstance(value, str):
            return self.keeps(value)
        if isinstance(value, list | tuple):
            return all(self.value(v) for v in value)
        return True


def _attributes(attributes: Mapping[str, Any], support: Support) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if support.value(v)}


def scrub_node(data: Mapping[str, Any], support: Support, fallback: str) -> dict[str, Any]:
    """A node record (a dict, as journaled) without the forgotten text."""
    aliases = [a for a in data.get("aliases", ()) if support.keeps(a)]
    name = data["name"]
    if not support.keeps(name):
        name = aliases[0] if aliases else fallback
    return {
        **data,
        "name": name,
        "aliases": [a for a in aliases if a != name],
        "summary": data.get("summary", "") if support.keeps(data.get("summary", "")) else "",
        "attributes": _attributes(data.get("attributes", {}), support),
    }


def scrub_edge(data: Mapping[str, Any], support: Support, fallback: str) -> dict[str, Any]:
    """An edge record without the forgotten text; an unsupported fact becomes ``fallback``."""
    fact = data.get("fact", "")
    return {
        **data,
        "fact": fact if support.keeps(fact) else fallback,
        "attributes": _attributes(data.get("attributes", {}), support),
    }


def edge_fact(source: str, relation: str, target: str) -> str:
    """A fact sentence made of what remains: "Alice lives in Paris" for LIVES_IN."""
    return f"{source} {relation.lower().replace('_', ' ')} {target}"


@dataclasses.dataclass
class Scrubbed:
    """What :func:`scrub_survivors` changed: survivors (id -> its word support) and the texts
    the removed rows and old values held (community summaries quoting them go too)."""

    supports: dict[str, Support] = dataclasses.field(default_factory=dict)
    removed_texts: set[str] = dataclasses.field(default_factory=set)
    summaries: set[str] = dataclasses.field(default_factory=set)


def _memories_of(record: Node | Edge) -> tuple[str, ...]:
    """The memories whose words a row may keep: its provenance and, for a node, the
    memories that mention it (its name can come from one of those)."""
    if isinstance(record, Node):
        return (*record.memory_ids, *record.mention_ids)
    return record.memory_ids


def scrub_survivors(uow: UnitOfWork, forgotten: Sequence[Memory]) -> Scrubbed:
    """Rebuild or drop, in the rows of ``uow`` that survive, every field written from the
    ``forgotten`` memories' text; remove community summaries that quote what went."""
    from sage_memory.codec import from_dict, to_dict

    out = Scrubbed()
    words: set[str] = set()
    for memory in forgotten:
        words |= _words(memory.text)
    survivors = [r for r in uow.touched() if isinstance(r, Node | Edge) and _memories_of(r)]
    for node in [r for r in survivors if isinstance(r, Node)]:
        support = Support(uow, node.scope, _memories_of(node), words)
        data = to_dict(node)
        clean = scrub_node(data, support, node.name)
        if clean != data:
            out.supports[node.id] = support
            out.removed_texts |= _changed_texts(data, clean)
            uow.put(from_dict(Node, clean))
    for edge in [r for r in survivors if isinstance(r, Edge)]:
        scope = edge.scope
        ends = {n.id: n.name for n in _nodes(uow, scope, (edge.source_id, edge.target_id))}
        fallback = edge_fact(
            ends.get(edge.source_id, ""), edge.relation, ends.get(edge.target_id, "")
        )
        support = Support(uow, scope, edge.memory_ids, words)
        data = to_dict(edge)
        clean = scrub_edge(data, support, fallback)
        if clean != data:
            out.supports[edge.id] = support
            out.removed_texts |= _changed_texts(data, clean)
            uow.put(from_dict(Edge, clean))
    for gone in uow.removed():
        if isinstance(gone, Node):
            out.removed_texts.add(gone.name)
        elif isinstance(gone, Edge) and gone.fact:
            out.removed_texts.add(gone.fact)
    _drop_summaries(uow, out)
    return out


def _nodes(uow: UnitOfWork, scope: Scope, ids: Iterable[str]) -> list[Node]:
    return [n for n in (uow.node(scope, i) for i in ids) if n is not None]


def _changed_texts(before: Mapping[str, Any], after: Mapping[str, Any]) -> set[str]:
    texts: set[str] = set()
    for key in ("name", "summary", "fact"):
        if before.get(key) and before.get(key) != after.get(key):
            texts.add(str(before[key]))
    texts |= {a for a in before.get("aliases", ()) if a not in after.get("aliases", ())}
    return texts


def _drop_summaries(uow: UnitOfWork, out: Scrubbed) -> None:
    """Remove community summaries over a changed or removed node that quote a removed text (an
    LLM's summary may paraphrase it: those go whenever a member changed). The evolver writes
    them again from what remains on its next pass."""
    removed = list(uow.removed())
    changed = [r for r in uow.touched() if r.id in out.supports]
    members: dict[str, Scope] = {}
    for rec in (*removed, *changed):
        if isinstance(rec, Node):
            members[rec.id] = rec.scope
        elif isinstance(rec, Edge):
            members[rec.source_id] = members[rec.target_id] = rec.scope
    links = [e for e in removed if isinstance(e, Edge) and e.relation == "SUMMARIZES"]
    for scope in {s.key: s for s in members.values()}.values():
        ids = [i for i, s in members.items() if s.key == scope.key]
        links += uow.edges_of(scope, ids, relations=["SUMMARIZES"])
    quoted = [t.casefold() for t in out.removed_texts if t]
    for link in links:
        summary = uow.node(link.scope, link.source_id)
        if summary is None or summary.label != SUMMARY_LABEL:
            continue
        text = f"{summary.name} {summary.summary}".casefold()
        llm = summary.attributes.get("method", "extractive") != "extractive"
        if llm or any(t in text for t in quoted):
            for e in uow.edges_of(summary.scope, [summary.id]):
                uow.remove(e)
            uow.remove(summary)
            out.summaries.add(summary.id)


def scrub_journal(
    entries: Sequence[tuple[int, Change]], support: Support, current: Mapping[str, Any]
) -> list[tuple[int, Change]]:
    """The journal entries of a surviving row whose images quote a forgotten text, rewritten
    with the row's ``current`` (scrubbed) name or fact in place of an unsupported one."""
    out = []
    for seq, change in entries:
        if change.entity == "node":
            fix, fallback = scrub_node, str(current.get("name", ""))
        else:
            fix, fallback = scrub_edge, str(current.get("fact", ""))
        before = None if change.before is None else fix(change.before, support, fallback)
        after = None if change.after is None else fix(change.after, support, fallback)
        if before != change.before or after != change.after:
            out.append((seq, dataclasses.replace(change, before=before, after=after)))
    return out
