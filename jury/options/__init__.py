"""Options models: what a job can be asked, declared once (issue 45).

A job's options are one pydantic model, composed of shared groups (jury.options.groups). Each
field is declared once: its type, default, constraints (``Field(ge=...)``) and, in the docstring
under it, its description. The command line reads the model (jury.options.command builds a typer
command from it), the library function takes the model or its fields as keyword arguments, and
the API pages show the same docstrings.

What only the command line needs (other flags than ``--field-name``, a file the command writes,
a ``--no-`` form) is a ``Flag`` in the field's ``Annotated`` metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainValidator, ValidationError
from pydantic.fields import FieldInfo

from jury.errors import InputError

T = TypeVar("T")


def as_list(value: Any) -> Any:
    """One value or several: None is none, a str or a path is one, any other iterable is several."""
    if value is None:
        return []
    if isinstance(value, str | bytes) or hasattr(value, "__fspath__") or not hasattr(value, "__iter__"):
        return [value]
    return list(value)


# a field given one value or several (a repeatable option): always a list once validated
OneOrMany = Annotated[list[T], BeforeValidator(as_list)]


def as_strings(value: Any) -> list[str]:
    """One value or several, each as a string (question ids given as ints)."""
    return [str(v) for v in as_list(value)]


# one value or several, each made a string: a repeatable option the library may give ints
Strings = Annotated[list[str], BeforeValidator(as_strings)]


def as_given(value: Any) -> Any:
    """The value as given, unvalidated."""
    return value


# a field the library may give an object the command line cannot (a loaded Panel, a Shard): kept
# as given, its type (the command line's) checked where the job reads it
AsGiven = PlainValidator(as_given)


@dataclass(frozen=True)
class Flag:
    """How a field shows on the command line, beside what the field itself says."""

    flags: tuple[str, ...] = ()  # the option's flags (default: --field-name)
    writable: bool = False  # a file the command writes
    negatable: bool = False  # a switch with a --no- form (--casefold / --no-casefold)
    metavar: str | None = None  # the value's name in --help (KEYFILE)


class Options(BaseModel):
    """The base of every options model: unknown names refused, each field's docstring its description."""

    # defer_build: a model's validator is built when it first validates, not when its module loads
    # (`jury --help` loads every command's model and validates none)
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid", arbitrary_types_allowed=True, defer_build=True)


def flag(field: FieldInfo) -> Flag:
    """The field's Flag (its metadata's), else the default one."""
    return next((m for m in field.metadata if isinstance(m, Flag)), Flag())


def description(field: FieldInfo) -> str:
    """The field's description on one line (as help prints it)."""
    return " ".join((field.description or "").split())


def validated(model: type[BaseModel], job: str, given: dict[str, Any]) -> Any:
    """``model`` built from ``given``: a name none of its fields is the TypeError Python raises for
    an unknown keyword argument of ``job``; a bad value is one InputError line."""
    unknown = [name for name in given if name not in model.model_fields]
    if unknown:
        raise TypeError(f"{job}() got an unexpected keyword argument {unknown[0]!r}")
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        raise InputError(problem(exc)) from None


def problem(exc: ValidationError) -> str:
    """The first error of ``exc`` in one line: the field, what it must be, the value given."""
    error = exc.errors()[0]
    name = ".".join(str(part) for part in error["loc"])
    context = error.get("ctx", {})
    if error["type"] == "greater_than_equal":
        return f"{name} must be at least {context['ge']}, got {error['input']!r}"
    return f"{name}: {error['msg'].lower()}, got {error['input']!r}"
