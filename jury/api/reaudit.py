"""``jury.reaudit``: find locked verdict files whose panel, prompts or inputs changed and re-run them.

Each file's bindings (panel, prompt templates, gold, runs, databases) are compared with the
files as they are now. A stale file is re-run with today's panel and inputs: the votes of
unchanged jurors come from the store, only changed jurors are called, and the new locked file
names its predecessor (the old file is never touched). ``render()`` is what ``jury reaudit``
prints: each file's state, then each re-run and what it changed.

>>> import jury
>>> jury.reaudit(check=True).stale  # doctest: +SKIP
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from jury.api.juror_jobs import Calls, calls_line, fenced, keeping, load_signer, say, sign_written, unpriced_lines
from jury.api.result import Result, console_text
from jury.options import validated
from jury.options.reaudit import ReauditOptions
from jury.pipeline.project import PathLike, Project, as_paths

if TYPE_CHECKING:
    from rich.console import Console

    from jury.pipeline.requests import ReauditRequest
    from jury.progress import ProgressFactory

_SHOWN = {"stale": "STALE", "cannot check": "CANNOT CHECK"}


class FileState(BaseModel):
    """A locked file compared with the files it binds: ``stale`` (``reasons``: what changed),
    ``cannot check`` (``reasons``: the bound files that are absent) or ``current``."""

    path: Path
    state: Literal["stale", "cannot check", "current"]
    reasons: list[str] = Field(default_factory=list)

    def line(self) -> str:
        """The file's line in ``jury reaudit``'s output: its state, path and reasons."""
        if self.state == "current":
            return f"current {self.path}"
        return f"{_SHOWN[self.state]} {self.path}: {'; '.join(self.reasons)}"


class Rerun(BaseModel):
    """One stale file re-run: the new file (it supersedes ``old``) and what changed (``diff``)."""

    old: Path
    new: Path
    diff: dict[str, Any]
    written: list[str] = Field(default_factory=list, description="Unknown costs and the signature of the new file.")
    signature: Path | None = None
    calls: Calls | None = Field(None, description="What this re-run called (None: an identical file was already locked).")

    def lines(self) -> list[str]:
        """What ``jury reaudit`` prints for this re-run: the files, the calls made and what changed."""
        from jury.verdicts.reaudit import describe_diff

        called = ["  " + calls_line(self.calls)] if self.calls is not None else []
        return [
            f"re-ran {self.old} -> {self.new} (supersedes it)",
            *called,
            *self.written,
            *("  " + d for d in describe_diff(self.diff)),
        ]


class Reaudit(Result):
    """What ``jury.reaudit`` returns: each file's state (``files``) and the re-runs (``reruns``).
    With ``check``, nothing was re-run: ``exit_code`` is 1 when a file is stale."""

    check: bool = False
    files: list[FileState]
    reruns: list[Rerun] = Field(default_factory=list)

    @property
    def stale(self) -> list[Path]:
        """The files found stale (their panel, templates or inputs changed since they were locked)."""
        return [f.path for f in self.files if f.state == "stale"]

    @property
    def blocked(self) -> list[Path]:
        """The files that cannot be checked here (a bound file is absent)."""
        return [f.path for f in self.files if f.state == "cannot check"]

    @property
    def exit_code(self) -> int:
        """What ``jury reaudit`` exits with (a file that cannot be checked raises CannotCheck: 4)."""
        return 1 if self.check and self.stale else 0

    def lines(self) -> list[str]:
        """What ``jury reaudit`` prints: one line per file, then what each re-run did."""
        lines = [f.line() for f in self.files]
        if not self.check and not self.stale:
            lines.append("nothing to re-run")
        return lines + [line for r in self.reruns for line in r.lines()]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.render import to_csv, to_json

        if fmt == "json":
            return to_json(self.model_dump(mode="json"))
        if fmt == "csv":
            new = {r.old: r.new for r in self.reruns}
            rows = [
                {"file": f.path, "state": f.state, "reasons": "; ".join(f.reasons), "new_file": new.get(f.path)}
                for f in self.files
            ]
            return to_csv(rows, ["file", "state", "reasons", "new_file"])

        def draw(console: Console) -> None:
            for line in self.lines():
                say(console, line)

        text = console_text(width, draw)
        return fenced(text) if fmt == "md" else text


def _cannot_check(result: Reaudit, states: Any) -> Exception:
    from jury.errors import CannotCheck

    blocked = [s for s in states if s.blockers and not s.stale]
    first = blocked[0]
    exc = CannotCheck(
        f"cannot check {len(blocked)} of {len(states)} verdict files (first: {first.path}: "
        f"{'; '.join(first.blockers)}); restore the bound files or re-run the job"
    )
    exc.partial = result  # the command line prints what was done first
    return exc


def reaudit(
    files: PathLike | Sequence[PathLike] | None = None,
    options: ReauditOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    **overrides: Any,
) -> Reaudit:
    """Compare each locked file's bindings with the files as they are now; re-run the stale ones.

    A re-run asks only what changed: votes of unchanged jurors come from the store, and the new file
    names its predecessor in ``supersedes``.

    Args:
        files: locked verdict files. Default: the current ones in jury.toml's ``verdicts_dir``, else
            ./verdicts.
        options: a ``ReauditOptions`` (jury.options.reaudit: every option of ``jury reaudit`` but the
            verdict files, each documented there: ``check`` (call nothing, only say which files are
            stale: ``exit_code`` 1 when one is), ``max_cost``, ``batch``, ``store``, ``sign``), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress factory: called with a task's name, returns a context manager giving a
            ``(done, total)`` callback or None (default: no progress shown).
        overrides: ReauditOptions' fields as keyword arguments (``check=``, ``max_cost=``, ``store=``,
            ...), over ``options``'.

    Returns:
        A Reaudit: each file's state (current, stale, cannot check) and each re-run's calls and
        changes.

    Raises:
        CannotCheck: a file could not be checked (a bound file is absent), raised after the rest is
            done, with the result as ``exc.partial``.
        IncompleteRun: ``batch`` ballots are pending (a rerun collects them).
        InputError: no verdict files, or a bad option, named in one line.
    """
    from jury.pipeline.reaudit import rerun
    from jury.verdicts.reaudit import check_file

    given = dict(options) if options is not None else {}
    o: ReauditOptions = validated(ReauditOptions, "reaudit", {**given, **overrides})
    check = o.check
    project = project or Project.load()
    request = _request(project, files, o)
    states = [check_file(p) for p in request.files]
    result = Reaudit(
        check=check,
        files=[
            FileState(path=s.path, state="stale", reasons=s.reasons)
            if s.stale
            else FileState(path=s.path, state="cannot check", reasons=s.blockers)
            if s.blockers
            else FileState(path=s.path, state="current")
            for s in states
        ],
        inputs=request.files,
        store_path=request.store_path,
    )
    if check and result.stale:
        return result
    if not check and result.stale:
        with keeping(result), project.open_store(o.store) as st:
            for s in (s for s in states if s.stale):
                new_path, diff, stats = rerun(s, st, max_cost=request.max_cost, progress=progress, batch=request.batch)
                calls = Calls.of(stats, new_path) if stats is not None else None
                done = Rerun(old=s.path, new=new_path, diff=diff, written=unpriced_lines(new_path), calls=calls)
                result.reruns.append(done)
                done.signature = sign_written(new_path, request.signer, done.written)
    if result.blocked:
        raise _cannot_check(result, states)
    return result


def _request(project: Project, files: PathLike | Sequence[PathLike] | None, o: ReauditOptions) -> ReauditRequest:
    """The ReauditRequest of ``jury.reaudit``'s arguments: the signing key loaded first, the
    files given or the current ones of the verdicts folder (none there is an error)."""
    from jury.errors import InputError
    from jury.pipeline.requests import ReauditRequest
    from jury.verdicts.reaudit import heads

    signer = load_signer(o.sign)
    paths = as_paths(files)
    if not paths:
        folder = project.verdicts_dir()
        if not folder.is_dir():
            raise InputError(f"no verdict files given and no verdicts folder at {folder}")
        paths = heads(folder)
        if not paths:
            raise InputError(f"no locked verdict files in {folder}")
    return ReauditRequest(
        files=paths, check=o.check, max_cost=None if o.check else project.get("max_cost", o.max_cost, None),
        batch=o.batch, store_path=project.store_path(o.store), signer=signer,
    )  # fmt: skip
