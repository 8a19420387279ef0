"""Light coreference: who "she", "it", "the former" and "the latter" stand for.

Kept per memory, sentence by sentence: the last person named, the things named as arguments
(newest last) and the last pair named together ("X and Y ... the former"). A pronoun with no
antecedent resolves to nothing, and the fact that needed it is dropped: precision first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_PERSON = frozenset({"he", "him", "his", "she", "her", "hers", "himself", "herself"})
_THING = frozenset({"it", "its", "this", "that", "these", "those", "itself"})
_PLURAL = frozenset({"they", "them", "their", "themselves"})
_SPEAKER = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
_SINGULAR = frozenset({"i", "me", "my", "mine", "myself"})


@dataclass(slots=True)
class Antecedents:
    """What earlier text of the memory named, for pronouns to point back to."""

    user: str = "user"
    #: who says the text when it names them ("Jon: I lost my job"): "I" is the speaker, while
    #: "we" ("Northgate: we frame the walls") keeps standing for the user the memory is about
    speaker: str = ""
    last_person: str = ""
    things: list[str] = field(default_factory=list)
    pair: tuple[str, str] | None = None
    plural: str = ""

    def resolve(self, word: str) -> str:
        """The name a pronoun stands for ("" when unknown)."""
        low = word.lower()
        if low in _SINGULAR and self.speaker:
            return self.speaker
        if low in _SPEAKER:
            return self.user
        if low in _PERSON:
            return self.last_person
        if low in _THING:
            return self.things[-1] if self.things else ""
        if low in _PLURAL:
            return self.plural or (self.things[-1] if self.things else "") or self.last_person
        if low == "the former":
            return self.pair[0] if self.pair else ""
        if low == "the latter":
            return self.pair[1] if self.pair else ""
        return ""

    def saw_person(self, name: str) -> None:
        if name and name not in (self.user, self.speaker):
            self.last_person = name

    def saw_thing(self, name: str, *, plural: bool = False) -> None:
        if not name:
            return
        if name in self.things:
            self.things.remove(name)
        self.things.append(name)
        del self.things[:-8]
        if plural:
            self.plural = name

    def saw_pair(self, first: str, second: str) -> None:
        if first and second and first != second:
            self.pair = (first, second)
