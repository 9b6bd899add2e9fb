"""``jury.suites``: PLSQLBench's test-suite metrics of runs that record test outcomes.

Single-turn tasks: MeanTestPass@1 and SuitePass@1; episodes (records sharing ``episode``):
EpisodePass@1, TurnSuitePass@1 and MeanTestPass@1, each with a 95% interval (Wilson for shares
of units, a seeded bootstrap for means of fractions); reference failures are excluded and
listed (jury.results.suites). Locked suite verdict files (or ``adjudicate=True``) add the
adjudicated metrics; a taxonomy counts the errored failing tests by category (``classify=True``:
the jurors classify the errors the rules leave). ``render(fmt)`` is what ``jury suites`` prints.

>>> import jury
>>> print(jury.suites("examples/plsql-suite/suite.jsonl").render("md"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.api.juror_jobs import JurorPlan, renamed
from jury.api.result import Result
from jury.pipeline.project import PathLike, Project, as_paths
from jury.results.suites import SuiteRow

if TYPE_CHECKING:
    from jury.judging.panels import Panel
    from jury.progress import ProgressFactory


class SuiteScores(Result):
    """What ``jury.suites`` returns: per model the strict metrics (``strict``, jury.results.suites.SuiteRow)
    and, with verdicts, the adjudicated ones (``adjudicated``); with a taxonomy, the errored
    failing tests by category (``error_counts``). ``plan_only``: no call was made and ``plan``
    holds the ballots and their estimated cost (``render`` is the plan's). ``path``: the verdict
    file a juror run wrote or reused; ``notes``: what the command line prints on stderr."""

    strict: list[SuiteRow] = Field(default_factory=list)
    adjudicated: list[SuiteRow] | None = None
    error_counts: dict | None = None
    plan: JurorPlan | None = None
    plan_only: bool = False
    path: Path | None = None
    records: list[dict] = Field(default_factory=list, exclude=True, repr=False)  # the juror run's verdict records
    notes: list[str] = Field(default_factory=list, description="What the command line prints on stderr.")

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.suites import render_suites

        if self.plan_only:
            assert self.plan is not None
            return self.plan.render(fmt, width=width, wide=wide)
        extra = None
        if self.error_counts is not None:
            from jury.results.taxonomy_report import suite_counts_note

            extra = {"error_categories": self.error_counts} if fmt == "json" else {"note": suite_counts_note(self.error_counts)}
        return render_suites(self.strict, self.adjudicated, fmt, extra=extra)


def suites(
    runs: PathLike | Sequence[PathLike],
    *,
    verdicts: PathLike | Sequence[PathLike] = (),
    adjudicate: bool = False,
    classify: bool = False,
    taxonomy: str | PathLike | None = None,
    panel: str | PathLike | Panel | None = None,
    families: PathLike | None = None,
    seed: int | None = None,
    early_stop: bool = False,
    max_cost: float | None = None,
    batch: bool = False,
    plan: bool = False,
    verdicts_out: PathLike | None = None,
    store: PathLike | None = None,
    allow_superseded: bool = False,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    plan_only: bool | None = None,
) -> SuiteScores:
    """PLSQLBench's metrics per model of the test-suite ``runs`` (run JSONL with ``tests``).

    ``verdicts``: locked suite verdict files (format ballots: the adjudicated metrics; error
    classifications: the jurors' categories, with ``taxonomy``); a superseded one is refused
    unless ``allow_superseded``. ``taxonomy`` (a name in panels/taxonomies/ or a TOML path):
    count each model's errored failing tests by category. ``adjudicate``: send failing tests
    whose outputs differ as text only to ``panel``'s jurors as format-equivalence ballots
    (``batch``: through the providers' batch APIs); ``classify``: send the errors the taxonomy's
    rules leave for a category; either locks the verdicts in ``verdicts_out`` (default
    verdicts/adjudication-<time>.json) and ``plan`` makes no call (``--plan``; ``plan_only=`` is its
    old name, kept as an alias). ``panel``, ``seed``
    (default 0), ``max_cost`` and ``store``: default jury.toml's; ``families``: the family
    registry; ``early_stop``: stop asking once a majority is settled. ``outputs``: files the
    caller will write, refused before any work when one is an input or the store."""
    from jury.errors import InputError
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.suite_jobs import classified_of, credited_of, is_classification, load_suite_runs, suite_verdict_docs
    from jury.results.suites import suite_metrics

    plan_only = bool(renamed(plan, plan_only, "plan", "plan_only", False))
    project = project if project is not None else Project.load()
    run_paths, verdict_paths = as_paths(runs), as_paths(verdicts)
    if not run_paths:
        raise InputError("no run files: give at least one test-suite run JSONL file")
    out = Path(verdicts_out) if verdicts_out is not None else None
    store_path = project.store_path(store)
    guard_outputs([*outputs, out], [*run_paths, *verdict_paths], store=store_path, verdict_output=True)
    if adjudicate and classify:
        raise InputError("adjudicate and classify each write a verdict file: run them one at a time")
    if not (adjudicate or classify) and (plan_only or out is not None):
        raise InputError("plan and verdicts_out go with adjudicate or classify")
    if classify and taxonomy is None:
        raise InputError("classify needs a taxonomy (the categories the jurors pick from), e.g. plsqlbench")
    records = load_suite_runs(run_paths)
    tax = None
    if taxonomy is not None:  # checked before any juror call
        from jury.judging.taxonomies import load_taxonomy

        tax = load_taxonomy(str(taxonomy))
    docs = suite_verdict_docs(verdict_paths, run_paths, allow_superseded) if verdict_paths else []
    credited = credited_of(docs)
    adjudicated = any(not is_classification(d) for _, d in docs)
    juror_categories = None
    if any(is_classification(d) for _, d in docs):
        if tax is None:
            path, doc = next((p, d) for p, d in docs if is_classification(d))
            raise InputError(
                f"{path}: holds error classifications (`jury suites --classify`): give the taxonomy "
                f"{doc.settings.get('taxonomy', {}).get('name')} to count them"
            )
        juror_categories = classified_of(docs, tax)
    result = SuiteScores(inputs=[*run_paths, *verdict_paths], store_path=store_path, plan_only=plan_only)
    if adjudicate or classify:
        seed, max_cost = project.get("seed", seed, 0), project.get("max_cost", max_cost, None)
        job = _JurorRun(panel, families, tax if classify else None, seed, early_stop, max_cost, out, batch)
        asked = job.run(result, project, run_paths, progress)
        if plan_only:
            return result
        if classify:
            juror_categories = {**(juror_categories or {}), **{k: r.get("error_category") for k, r in asked.items()}}
        else:
            credited |= {k for k, r in asked.items() if r["credited"]}
            adjudicated = True
    result.strict = suite_metrics(records)
    result.adjudicated = suite_metrics(records, credited) if adjudicated else None
    if tax is not None:
        from jury.results.taxonomy_report import suite_error_counts

        result.error_counts = suite_error_counts(records, tax, juror_categories)
    return result


@dataclass
class _JurorRun:
    """A juror job of ``jury.suites``: format ballots, or classification ballots with the taxonomy
    ``classify``."""

    panel: Any
    families: PathLike | None
    classify: Any
    seed: int
    early_stop: bool
    max_cost: float | None
    output: Path | None
    batch: bool

    def run(self, result: SuiteScores, project: Project, run_paths: list[Path], progress) -> dict:
        """Ask (or plan) into ``result``: its plan, and after a run its verdict file, records and
        the lines on its calls. Returns the run's records by test key (jury.results.suites.suite_test_key)."""
        from jury.api.juror_jobs import Calls, choose_panel, run_lines
        from jury.judging.families import load_registry
        from jury.pipeline.suite_jobs import suite_job
        from jury.progress import no_progress
        from jury.results.suites import suite_test_key

        chosen, tax = choose_panel(project, self.panel, "panel", "default.toml"), self.classify
        with project.open_store(result.store_path) as st:
            job = suite_job(
                project.config,
                st,
                run_paths=run_paths,
                panel=chosen,
                registry=load_registry(self.families),
                classify=tax,
                seed=self.seed,
                early_stop=self.early_stop,
                max_cost=self.max_cost,
                output=self.output,
                plan_only=result.plan_only,
                progress=progress or no_progress,
                batch=self.batch,
            )
        title = (
            f"suite plan: panel {chosen.name}"
            if tax is None
            else f"error classification plan: panel {chosen.name}, taxonomy {tax.name}"
        )
        result.plan = JurorPlan(
            title=title + (", no calls made" if result.plan_only else ""),
            groups=len(job.plan.groups),
            unit="failing tests" if tax is None else "errors the rules leave",
            batch=self.batch and tax is None,
            ballots=job.plan.ballots(),
        )
        if result.plan_only:
            return {}
        assert job.records is not None
        result.path, result.records = job.path, job.records
        result.notes = run_lines(None if job.stats is None else Calls.of(job.stats, job.path), job.path, job.reused_file)
        return {suite_test_key(r["model"], r["question_id"], r.get("episode"), r.get("turn"), r["test"]): r for r in job.records}
