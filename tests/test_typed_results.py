"""Issue 45, "typed to the leaves": the result models ``jury`` exports declare every serialized
field down to its leaves: no ``Any`` in a field, in a TypedDict it holds or in a model nested in
it. ALLOWED lists the fields still open; the list can only shrink (a field typed since must
leave it, and a new ``Any`` fails)."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel
from typing_extensions import is_typeddict

import jury

# model.field -> why it is still open
ALLOWED: dict[str, str] = {}


def _exported_models() -> list[type[BaseModel]]:
    out = []
    for name in dir(jury):
        obj = getattr(jury, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel) and not name.endswith("Options"):
            out.append(obj)
    return out


def _open_leaves(tp: Any, models: list[type[BaseModel]], seen: set[Any]) -> bool:
    """True when ``tp`` has an ``Any`` anywhere in it (TypedDicts walked; models queued)."""
    if tp is Any:
        return True
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        models.append(tp)
        return False
    if is_typeddict(tp):
        if tp in seen:
            return False
        seen.add(tp)
        return any(_open_leaves(t, models, seen) for t in typing.get_type_hints(tp).values())
    return any(_open_leaves(a, models, seen) for a in typing.get_args(tp))


def open_fields() -> set[str]:
    """Every non-excluded field of the exported result models (and the models they nest) with an Any."""
    models, done, seen, out = _exported_models(), set(), set(), set()
    while models:
        cls = models.pop()
        if cls in done:
            continue
        done.add(cls)
        for name, f in cls.model_fields.items():
            if not f.exclude and _open_leaves(f.annotation, models, seen):
                out.add(f"{cls.__module__}.{cls.__name__}.{name}")
    return out


def test_result_models_are_typed_to_the_leaves() -> None:
    found = open_fields()
    assert not found - set(ALLOWED), f"fields with Any outside the allow-list: {sorted(found - set(ALLOWED))}"
    assert not set(ALLOWED) - found, f"typed now: take them off ALLOWED: {sorted(set(ALLOWED) - found)}"


def test_the_walk_finds_an_any_inside_a_typeddict() -> None:
    from typing_extensions import TypedDict

    class Leaf(TypedDict):
        x: dict[str, Any]

    class Root(BaseModel):
        ok: int
        leaf: list[Leaf] | None

    seen: set[Any] = set()
    assert _open_leaves(Root.model_fields["leaf"].annotation, [], seen)
    assert not _open_leaves(Root.model_fields["ok"].annotation, [], seen)
