"""AsyncSageMemory and SageMemory cannot drift: every public method of the sync class is on the
async twin with the same parameters (names, kinds, defaults, annotations), no ``**kwargs``
passthrough, and its return type awaited."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from sage_memory import AsyncSageMemory, SageMemory

#: Plain (not awaited) in both classes: a context manager, entered with ``with``.
SYNC_IN_BOTH = {"focus"}
#: The async class's own extras (constructor helpers, async context manager).
ASYNC_ONLY = {"wrap"}


def public_methods(cls: type) -> dict[str, Any]:
    out = {}
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (classmethod, staticmethod)):
            out[name] = value.__func__
        elif inspect.isfunction(value):
            out[name] = value
    return out


SYNC = public_methods(SageMemory)
ASYNC = public_methods(AsyncSageMemory)


def test_every_public_method_has_an_async_twin() -> None:
    missing = sorted(set(SYNC) - set(ASYNC))
    assert not missing, f"AsyncSageMemory lacks {missing}"
    assert set(ASYNC) - set(SYNC) == ASYNC_ONLY


def same_annotation(sync_ann: Any, async_ann: Any) -> bool:
    # the annotations are strings (``from __future__ import annotations``); the only allowed
    # difference is the class itself (``load`` returns its own class)
    return str(async_ann).replace("AsyncSageMemory", "SageMemory") == str(sync_ann)


@pytest.mark.parametrize("name", sorted(SYNC))
def test_same_signature(name: str) -> None:
    s = inspect.signature(SYNC[name])
    a = inspect.signature(ASYNC[name])
    assert list(s.parameters) == list(a.parameters), name
    for p in s.parameters.values():
        q = a.parameters[p.name]
        assert (p.kind, p.default) == (q.kind, q.default), f"{name}({p.name})"
        assert same_annotation(p.annotation, q.annotation), f"{name}({p.name})"
    assert same_annotation(s.return_annotation, a.return_annotation), name
    if name in SYNC_IN_BOTH:
        assert not inspect.iscoroutinefunction(ASYNC[name])
    else:
        assert inspect.iscoroutinefunction(ASYNC[name]), f"{name} must be async def"
    if name != "load":  # load's keywords are the constructor's, in both classes
        kinds = {p.kind for p in a.parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{name} passes **kwargs through"


def test_constructors_take_the_same_arguments() -> None:
    s = inspect.signature(SageMemory.__init__).parameters
    a = inspect.signature(AsyncSageMemory.__init__).parameters
    assert [n for n in a if n != "sync"] == list(s)
    for n, p in s.items():
        assert (p.kind, p.default, str(p.annotation)) == (
            a[n].kind,
            a[n].default,
            str(a[n].annotation),
        )
