"""Options declared once, in an options model (jury.options, issue 45): a command generated from
a model parses every field into it, with the field's help, limits and flags; the options several
commands declare one by one read the shared groups' descriptions."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import Field
from typer.testing import CliRunner

from jury.cli import app
from jury.options import Flag, OneOrMany, Options, description
from jury.options.command import command

runner = CliRunner()


def test_the_shared_options_of_commands_not_generated_yet_read_the_groups_descriptions():
    from jury.options.groups import Databases

    params = {p.name: p for p in typer.main.get_command(app).commands["report"].params}
    assert params["db_url"].help == description(Databases.model_fields["db_url"])
    assert "{db_id}" in params["db_url"].help and "\n" not in params["db_url"].help


# ------------------------------------------------------------------ the mechanism on a model of its own


class Toy(Options):
    name: str = "x"
    """A name."""
    count: int = Field(2, ge=1, le=5)
    """How many."""
    tag: OneOrMany[str] = []
    """A tag (repeatable)."""
    out: Annotated[Path | None, Flag(flags=("-o", "--out"), writable=True)] = None
    """Where to write."""
    loud: bool = False
    """Shout."""
    fold: Annotated[bool, Flag(negatable=True)] = True
    """Fold case."""


def toy_app(seen: list) -> typer.Typer:
    def run(src: str, o: Toy) -> None:
        """Run the toy."""
        seen.append((src, o))

    built = typer.Typer(rich_markup_mode=None)
    built.command("toy")(command(Toy, run, arguments=[inspect.Parameter("src", 1, default=typer.Argument(...), annotation=str)]))
    built.command("other")(lambda: None)  # two commands: `toy` is a subcommand
    return built


def test_a_generated_command_parses_every_field_into_the_model():
    seen: list = []
    result = runner.invoke(
        toy_app(seen), ["toy", "in", "--name", "n", "--count", "3", "--tag", "a", "--tag", "b", "-o", "f", "--loud", "--no-fold"]
    )
    assert result.exit_code == 0, result.output
    assert seen == [("in", Toy(name="n", count=3, tag=["a", "b"], out=Path("f"), loud=True, fold=False))]
    assert runner.invoke(toy_app(seen), ["toy", "in"]).exit_code == 0 and seen[-1] == ("in", Toy())


def test_a_generated_command_has_the_fields_help_limits_and_flags():
    shown = runner.invoke(toy_app([]), ["toy", "--help"], env={"COLUMNS": "200", "TYPER_USE_RICH": "0"}).output
    assert "Run the toy." in shown and "How many." in shown and "1<=x<=5" in shown
    assert "-o, --out" in shown and "--fold / --no-fold" in shown and "--no-loud" not in shown
    assert runner.invoke(toy_app([]), ["toy", "in", "--count", "9"]).exit_code == 2


def test_the_options_models_load_without_typer():
    code = "import sys, jury.options.groups; assert 'typer' not in sys.modules and 'jury.api' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
