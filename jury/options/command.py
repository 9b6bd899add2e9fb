"""A typer command from an options model: each field one option, with the field's type, default,
description (its help) and its Flag's flags. The field's constraints are the model's to check, not
typer's: a value out of range is the same one line (jury.options.problem) from the command line, the
library and jury.toml, naming the flag.

    command(ScoreCommand, run, arguments=[runs])

is a function typer can register: its signature is the ``arguments`` (typer Arguments declared by
the command) then one typer.Option per field; called, it builds the model from the parsed options
and calls ``run(*arguments, options)``. Typer is imported here only, when a command is built.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from jury.options import description, flag, validated

# the attribute a generated command keeps its model in (tests/test_options.py walks the commands)
MODEL_ATTRIBUTE = "options_model"


def typer_option(name: str, field: FieldInfo, help: str | None = None) -> Any:
    """The typer.Option declaring ``field`` (``help``: a command's own text instead of the field's)."""
    import typer

    shown = flag(field)
    flags = shown.flags
    if field.annotation is bool and not shown.negatable and not flags:
        flags = (f"--{name.replace('_', '-')}",)  # a switch: no --no- form
    default = ... if field.is_required() else field.get_default(call_default_factory=True)  # ...: a required option
    return typer.Option(default, *flags, help=help or description(field), writable=shown.writable, metavar=shown.metavar)


def argument(name: str, help: str, annotation: Any = Path, default: Any = ...) -> inspect.Parameter:
    """A command's positional argument (what the library takes before its options): ``default`` ...
    when it is required, None when it may be left out."""
    import typer

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Parameter(name, kind, default=typer.Argument(default, help=help), annotation=annotation)


def output_option(help: str) -> inspect.Parameter:
    """``-o/--output``: the file a command writes when it is the library's argument (required)."""
    import typer

    option = typer.Option(..., "-o", "--output", writable=True, help=help)
    return inspect.Parameter("output", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=option, annotation=Path)


def parameters(model: type[BaseModel]) -> list[inspect.Parameter]:
    """One keyword parameter per field of ``model``, in the model's order, declared as its typer.Option."""
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=typer_option(name, field), annotation=field.annotation)
        for name, field in model.model_fields.items()
    ]


def command(model: type[BaseModel], run: Callable[..., Any], arguments: Sequence[inspect.Parameter] = ()) -> Callable[..., Any]:
    """A typer command of ``arguments`` and ``model``'s fields that calls ``run(*arguments, options)``
    (its help: ``run``'s docstring)."""
    names = [p.name for p in arguments]

    @functools.wraps(run)
    def generated(**given: Any) -> Any:
        options = validated(model, run.__name__, {name: value for name, value in given.items() if name not in names}, True)
        return run(*(given[name] for name in names), options)

    signature = inspect.Signature(
        [*(p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in arguments), *parameters(model)]
    )
    generated.__signature__ = signature  # type: ignore[attr-defined]
    generated.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}  # typer reads both
    del generated.__wrapped__  # not run's signature
    setattr(generated, MODEL_ATTRIBUTE, model)
    return generated
