"""Run files as given: a path, or ``NAME=PATH`` naming a prediction file's model.

BIRD names every system's file ``predict_dev.json``; a published prediction file is read as
one model named after its file (jury.inputs.importers.model_name), so two of them would be
one model twice. ``NAME=PATH`` names the model instead. :func:`run_files` is the one place
that reads the arguments of every command and API function taking run files:

- an argument that is an existing file is a path, even when it holds ``=``;
- otherwise ``NAME=PATH``, PATH an existing file, is that file read as model NAME (an empty
  NAME is an error); the library also takes a mapping ``{NAME: PATH}``.

Whether a name fits the file is decided when the files are read (jury.pipeline.jobs.load_run_files):
a run JSONL names its models in its lines, so a NAME given for one is an error, and so is
a NAME that is another model's.

>>> RunFile(Path("dir1/predict_dev.json"), "a")
RunFile('a=dir1/predict_dev.json')
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jury.errors import InputError


@dataclass(frozen=True)
class RunFile:
    """One run file: its ``path`` and, for ``NAME=PATH``, the ``model`` it is read as (None: a
    prediction file is named after its file; a run JSONL names its models itself). It is a
    path-like object (``open``, ``Path(...)`` and hashing read ``path``); ``str`` gives the
    argument back as it was given (``a=dir1/predict_dev.json``)."""

    path: Path
    model: str | None = None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return f"{self.model}={self.path}" if self.model is not None else str(self.path)

    def __repr__(self) -> str:
        return f"RunFile({str(self)!r})"


RunFileArgs = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, str | os.PathLike[str]] | None
"""What a job takes as run files: one path, several, NAME=PATH strings among them, or a
mapping of model name -> prediction file."""


def run_file(arg: str | os.PathLike[str]) -> RunFile:
    """One run-file argument read by the rule (the module's docstring)."""
    if isinstance(arg, RunFile):
        return arg
    text = os.fspath(arg)
    if os.path.isfile(text) or "=" not in text:
        return RunFile(Path(text))
    name, _, path = text.partition("=")
    if not os.path.isfile(path):
        raise InputError(f"{text}: no such file, nor is {path} (NAME=PATH names the model of the prediction file PATH)")
    return named(name, path, text)


def named(name: str, path: str | os.PathLike[str], given: str | None = None) -> RunFile:
    """The prediction file ``path`` read as model ``name`` (``given``: the argument, for the error)."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{given or f'{name!r}={os.fspath(path)}'}: empty model name; NAME=PATH needs a NAME")
    return RunFile(Path(os.fspath(path)), name)


def run_files(runs: RunFileArgs) -> list[RunFile]:
    """Every run file of ``runs``: one path or argument, a sequence of them, or a mapping
    ``{model name: prediction file}`` (None: none)."""
    if runs is None:
        return []
    if isinstance(runs, Mapping):
        return [named(name, path) for name, path in runs.items()]
    if isinstance(runs, str | os.PathLike):
        return [run_file(runs)]
    return [run_file(r) for r in runs]


def given_as(runs: Sequence[RunFile]) -> list[str]:
    """The run files as arguments that give them again (``NAME=PATH`` for a named one)."""
    return [str(r) for r in runs]
