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

import ast
import functools
import inspect
import sys
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainValidator, ValidationError
from pydantic.fields import FieldInfo

from jury.errors import InputError

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


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
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Each field of the class's own without a description gets the docstring under it, as
        pydantic's ``use_attribute_docstrings`` gives it; read from one parse of the module's
        source for all its classes instead of one search of the source per class (~1 ms each)."""
        super().__pydantic_init_subclass__(**kwargs)
        docs = attribute_docstrings(cls)
        for name, field in cls.model_fields.items():
            if field.description is None and name in docs:
                field.description = docs[name]


def attribute_docstrings(cls: type) -> dict[str, str]:
    """The docstring under each annotated attribute of ``cls``'s body (cleaned as inspect.cleandoc
    does), from its module's source: {} when the source cannot be read. A class that is not defined
    once at its module's top level (one in a function, a name defined twice) is read by pydantic."""
    found = _top_level_classes(cls.__module__).get(cls.__qualname__)
    if found is None:
        from pydantic._internal._docs_extraction import extract_docstrings_from_cls

        return extract_docstrings_from_cls(cls)
    docs: dict[str, str] = {}
    target: str | None = None
    previous: ast.stmt | None = None
    for stmt in found.body:  # pydantic's DocstringVisitor: a string right after `name: type [= value]`
        if isinstance(stmt, ast.AnnAssign):
            target = stmt.target.id if isinstance(stmt.target, ast.Name) else None
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(previous, ast.AnnAssign)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            if target:
                docs[target] = inspect.cleandoc(stmt.value.value)
            target = None
        previous = stmt
    return docs


@functools.cache
def _top_level_classes(module: str) -> dict[str, ast.ClassDef | None]:
    """The classes defined at the top level of ``module``'s source by name (None: defined more
    than once); {} without a readable source."""
    path = getattr(sys.modules.get(module), "__file__", None)
    try:
        with tokenize.open(str(path)) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, TypeError, ValueError):
        return {}
    out: dict[str, ast.ClassDef | None] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = None if node.name in out else node
    return out


def flag(field: FieldInfo) -> Flag:
    """The field's Flag (its metadata's), else the default one."""
    return next((m for m in field.metadata if isinstance(m, Flag)), Flag())


def description(field: FieldInfo) -> str:
    """The field's description on one line (as help prints it)."""
    return " ".join((field.description or "").split())


def validated(model: type[BaseModel], job: str, given: dict[str, Any], as_options: bool = False) -> Any:
    """``model`` built from ``given``: a name none of its fields is the TypeError Python raises for
    an unknown keyword argument of ``job``; a bad value is one InputError line, naming the field
    (``as_options``: its command-line flag, as a command's user gave it)."""
    unknown = [name for name in given if name not in model.model_fields]
    if unknown:
        raise TypeError(f"{job}() got an unexpected keyword argument {unknown[0]!r}")
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        raise InputError(problem(exc, model if as_options else None)) from None


def job_options(model: type[M], job: str, options: M | None, overrides: Mapping[str, Any]) -> M:
    """A job's options: ``options``' values of ``model``'s fields (None: the defaults; a command's
    model may have more) with the keyword ``overrides`` over them, validated as one
    (jury.options.validated: an unknown keyword is Python's TypeError, a bad value one InputError line)."""
    given = {name: getattr(options, name) for name in model.model_fields} if options is not None else {}
    result: M = validated(model, job, {**given, **overrides})
    return result


def option_name(name: str, field: FieldInfo) -> str:
    """The flag a field is given by on the command line (its long one)."""
    return next((f for f in flag(field).flags if f.startswith("--")), f"--{name.replace('_', '-')}")


def problem(exc: ValidationError, options_of: type[BaseModel] | None = None) -> str:
    """The first error of ``exc`` in one line: the field (``options_of``: as the model's command-line
    flag), what it must be, the value given."""
    error = exc.errors()[0]
    name = ".".join(str(part) for part in error["loc"])
    if options_of is not None and name in options_of.model_fields:
        name = option_name(name, options_of.model_fields[name])
    return f"{name} {rule(error)}, got {error['input']!r}"


def rule(error: Any) -> str:
    """What a value must be, from one of pydantic's errors (a ``pydantic_core.ErrorDetails``):
    "must be at least 1", "must be a whole number", "must be one of local, ray", …"""
    kind, context = error["type"], error.get("ctx", {})
    bounds = {
        "greater_than": ("greater than", "gt"),
        "greater_than_equal": ("at least", "ge"),
        "less_than_equal": ("at most", "le"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {context[key]:g}" if isinstance(context[key], int | float) else f"must be {words} {context[key]}"
    if kind == "enum":  # expected: "'local' or 'ray'", "'a', 'b' or 'c'"
        choices = context["expected"].replace("'", "").replace(" or ", ", ")
        return f"must be one of {choices}"
    named = {
        "int_type": "a whole number",
        "int_from_float": "a whole number",
        "int_parsing": "a whole number",
        "float_parsing": "a number",
        "float_type": "a number",
        "finite_number": "a finite number",
        "string_type": "a string",
        "dict_type": "a table",
        "bool_type": "true or false",
        "bool_parsing": "true or false",
    }
    if kind in named:
        return f"must be {named[kind]}"
    if kind == "value_error" and str(context.get("error", "")).startswith("must "):  # a validator's own rule
        return str(context["error"])
    return f"is not valid: {error['msg'][:1].lower()}{error['msg'][1:]}"
