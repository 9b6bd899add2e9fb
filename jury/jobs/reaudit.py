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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jury.errors import CannotCheck, InputError
from jury.inputs.run_files import RunFile
from jury.jobs.juror_jobs import Calls, calls_line, fenced, keeping, load_signer, say, sign_written, unpriced_lines
from jury.jobs.result import Result, console_text
from jury.options import job_options
from jury.options.reaudit import ReauditOptions
from jury.pipeline.project import PathLike, Project, as_paths
from jury.verdicts.documents import AdjudicationFile, AuditFile
from jury.verdicts.lock import load_locked
from jury.verdicts.reaudit import (
    Staleness,
    VerdictDiff,
    adjudication_diff,
    audit_diff,
    check_file,
    describe_diff,
    heads,
    resolve_bound,
)
from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_NEAR_MISS, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

if TYPE_CHECKING:
    from rich.console import Console

    from jury.compare.outcomes import Settings
    from jury.execution.store import Store
    from jury.judging.families import FamilyRegistry
    from jury.progress import ProgressFactory

_SHOWN = {"stale": "STALE", "cannot check": "CANNOT CHECK"}


class FileState(BaseModel):
    """A locked file compared with the files it binds: ``stale`` (``reasons``: what changed),
    ``cannot check`` (``reasons``: the bound files that are absent) or ``current``."""

    path: Path
    state: Literal["stale", "cannot check", "current"]
    reasons: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, s: Staleness) -> FileState:
        """A file's state from its check (jury.verdicts.reaudit.check_file)."""
        if s.stale:
            return cls(path=s.path, state="stale", reasons=s.reasons)
        if s.blockers:
            return cls(path=s.path, state="cannot check", reasons=s.blockers)
        return cls(path=s.path, state="current")

    def line(self) -> str:
        """The file's line in ``jury reaudit``'s output: its state, path and reasons."""
        if self.state == "current":
            return f"current {self.path}"
        return f"{_SHOWN[self.state]} {self.path}: {'; '.join(self.reasons)}"


class Rerun(BaseModel):
    """One stale file re-run: the new file (it supersedes ``old``) and what changed (``diff``)."""

    old: Path
    new: Path
    diff: VerdictDiff = Field(discriminator="kind")
    written: list[str] = Field(default_factory=list, description="Unknown costs and the signature of the new file.")
    signature: Path | None = None
    calls: Calls | None = Field(None, description="What this re-run called (None: an identical file was already locked).")

    def lines(self) -> list[str]:
        """What ``jury reaudit`` prints for this re-run: the files, the calls made and what changed."""

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


class ReauditRequest(BaseModel):
    """A re-audit: which locked files are compared with the files they bind, and how the stale
    ones are re-run (each re-run's own request is built from its file: ``rerun``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    files: list[Path] = Field(description="The locked verdict files (given, else the current ones in the verdicts folder).")
    check: bool = Field(False, description="Call nothing: only say which files are stale.")
    max_cost: float | None = Field(None, description="USD: stop (CostCapReached) before a re-run's spend passes it.")
    batch: bool = Field(False, description="Send OpenAI and Anthropic jurors' ballots through their batch APIs.")
    store_path: Path = Field(description="The store the re-runs read their unchanged votes from.")
    signer: Any = Field(None, description="A jury.verdicts.signing.Signer that signs each new file.")


def _cannot_check(result: Reaudit, states: Any) -> Exception:

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

    o = job_options(ReauditOptions, "reaudit", options, overrides)
    check = o.check
    project = project or Project.load()
    request = _request(project, files, o)
    states = [check_file(p) for p in request.files]
    files_now = [FileState.of(s) for s in states]
    result = Reaudit(check=check, files=files_now, inputs=request.files, store_path=request.store_path)
    if check and result.stale:
        return result
    if not check and result.stale:
        with keeping(result), project.open_store(o.store) as st:
            for s in (s for s in states if s.stale):
                done = _rerun_one(s, st, request, progress)
                result.reruns.append(done)  # kept (with the partial result) should its signing fail
                done.signature = sign_written(done.new, request.signer, done.written)
    if result.blocked:
        raise _cannot_check(result, states)
    return result


def _rerun_one(s: Staleness, st: Store, request: ReauditRequest, progress: ProgressFactory | None) -> Rerun:
    """A stale file re-run: the new file, what changed and the calls."""
    new_path, diff, stats = rerun(s, st, max_cost=request.max_cost, progress=progress, batch=request.batch)
    calls = Calls.of(stats) if stats is not None else None
    return Rerun(old=s.path, new=new_path, diff=diff, written=unpriced_lines(new_path), calls=calls)


def _request(project: Project, files: PathLike | Sequence[PathLike] | None, o: ReauditOptions) -> ReauditRequest:
    """The ReauditRequest of ``jury.reaudit``'s arguments: the signing key loaded first, the
    files given or the current ones of the verdicts folder (none there is an error)."""

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


# ------------------------------------------------------------------ re-running a stale file


def rerun(
    st: Staleness, store: Store, *, max_cost: float | None = None, progress: ProgressFactory | None = None, batch: bool = False
) -> tuple[Path, VerdictDiff, Any]:
    """Re-run a stale file with today's panel and inputs; returns (new file, diff, the run's
    jury.judging.runner.RunStats: None when an identical file was already locked). batch: --batch."""
    from jury.judging.panels import load_panel

    if st.blockers:
        raise InputError(f"{st.path}: cannot re-run: {'; '.join(st.blockers)}")
    doc, base = st.doc, st.path.parent
    assert doc.panel.path is not None  # check_file blocks a file with no bound panel
    panel = load_panel(resolve_bound(base, doc.panel.path))
    db_root = None
    if doc.inputs.databases:
        first = next(iter(doc.inputs.databases.values()))
        db_root = resolve_bound(base, first.path).parent.parent
    # what both jobs get: the file's inputs as they are now, a new file beside the old one naming it
    same: dict[str, Any] = {
        "config": _FolderConfig(base),
        "gold_path": resolve_bound(base, doc.inputs.gold.path),
        "db_root": db_root,
        "panel": panel,
        "max_cost": max_cost,
        "output": None,
        "supersedes": doc.content_sha256,
        "batch": batch,
    }
    steps = {"progress": progress} if progress else {}
    if isinstance(doc, AuditFile):  # what a verdict file of kind "audit" validates as
        return _rerun_audit(doc, same, store, steps)
    assert isinstance(doc, AdjudicationFile)  # the other kind
    return _rerun_adjudication(doc, base, same, store, steps)


def _rerun_audit(doc: AuditFile, same: dict[str, Any], store: Store, steps: dict[str, Any]) -> tuple[Path, VerdictDiff, Any]:
    """An audit file re-run with the settings it recorded (its questions, split, checks, repeats)."""
    from jury.jobs.audit import AuditRequest, audit_job

    s, panel = doc.settings, same["panel"]
    if panel.quorum is None:  # the panel file's own quorum wins; else the one recorded (--quorum)
        panel.quorum = s.get("quorum")
    checks = s.get("checks")
    audit = audit_job(
        AuditRequest(
            question_ids=[str(r.question_id) for r in doc.records],
            split=s.get("split"),
            checks=isinstance(checks, dict),  # re-run with the checks when the file has them
            check_passes=tuple(checks["passes"]) if isinstance(checks, dict) else None,
            repeats=s.get("repeats", 1),  # every repeat re-run: unchanged jurors' votes come from the store
            **same,
        ),
        store,
        **steps,
    )
    assert audit.path is not None  # a job that is not a plan names its file
    new_audit = load_locked(audit.path)
    assert isinstance(new_audit, AuditFile)  # the audit job wrote it
    return audit.path, audit_diff(doc, new_audit), audit.stats


def _rerun_adjudication(
    doc: AdjudicationFile, base: Path, same: dict[str, Any], store: Store, steps: dict[str, Any]
) -> tuple[Path, VerdictDiff, Any]:
    """An adjudication file re-run with the settings it recorded (its runs, families, evaluation
    settings, seed, swap, sampled passes, repeats, models, positions)."""
    from jury.jobs.adjudicate import AdjudicationRequest, adjudication_job
    from jury.judging.families import load_registry

    s = doc.settings
    request = AdjudicationRequest(
        run_paths=[RunFile(resolve_bound(base, r.path), r.model) for r in doc.inputs.runs],
        dbs=s.get("dbs") or [],
        registry=_RecordedFamilies(doc, load_registry()),
        settings=_recorded_settings(s),
        seed=s.get("seed", 0),
        early_stop=s.get("early_stop", False),
        swap=s.get("swap", False),
        review_passes=s.get("review_passes", 0.0),
        repeats=s.get("repeats", 1),
        models=s.get("models"),
        positions_from=resolve_bound(base, s["positions_from"]["path"]) if s.get("positions_from") else None,
        **same,
    )
    job = adjudication_job(request, store, **steps)
    assert job.path is not None  # a job that is not a plan names its file
    new = load_locked(job.path)
    assert isinstance(new, AdjudicationFile)  # the adjudication job wrote it
    return job.path, adjudication_diff(doc, new), job.stats


def _recorded_settings(s: dict[str, Any]) -> Settings:
    """The evaluation settings an adjudication file recorded."""
    from jury.compare.comparators import NormalizeOptions
    from jury.compare.outcomes import Settings

    norm = s.get("normalize") or {}
    return Settings(
        comparator=s.get("comparator", DEFAULT_COMPARATOR),
        near_miss=s.get("near_miss_threshold", DEFAULT_NEAR_MISS),
        timeout_s=s.get("timeout_s", DEFAULT_TIMEOUT_S),
        row_cap=s.get("row_cap", DEFAULT_ROW_CAP),
        options=NormalizeOptions(casefold=norm.get("casefold", False), float_sig_digits=norm.get("float_sig_digits")),
    )


@dataclass
class _FolderConfig:
    """A config whose verdicts folder is the given one (re-audits write beside the old file)."""

    folder: Path

    def path_of(self, key: str, flag: PathLike | None = None, default: Any = None) -> Path | None:
        if key == "verdicts_dir":
            return self.folder
        return Path(flag) if flag is not None else None


@dataclass
class _RecordedFamilies:
    """The families a verdict file recorded per model win over today's registry."""

    doc: AdjudicationFile
    registry: FamilyRegistry

    def families_of(self, model: str, declared: list[str] | None = None) -> list[str]:
        for r in self.doc.records:
            if r.model == model:
                return list(r.families)
        return self.registry.families_of(model, declared)
