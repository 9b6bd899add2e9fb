"""``jury.adjudicate``: send each model's jury-eligible failures to a blind, family-disjoint panel.

Every query is executed (or reused from the store); only mismatches reach the jury: strict
failures on correctly routed questions whose SQL executed and whose rows overlap the gold's
below the near-miss threshold. Each goes to the first k jurors of the panel whose families
differ from the model's, blind and with the answers' order shuffled. Votes are stored as they
arrive (a killed run resumes without repeating a call); the verdicts are locked in a verdict
file. ``render()`` is what ``jury adjudicate`` prints.

>>> import jury
>>> plan = jury.adjudicate("run.jsonl", panel="default", plan=True)  # doctest: +SKIP
>>> print(plan.plan.render())  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.api.juror_jobs import JurorJob, finish, guarded, juror_plan, juror_request_fields, renamed
from jury.inputs.run_files import RunFileArgs, run_files
from jury.options import validated
from jury.options.adjudicate import AdjudicateOptions
from jury.pipeline.project import Project
from jury.results.columns import AdjudicatedModel

if TYPE_CHECKING:
    from rich.console import Console

    from jury.pipeline.jobs import JobResult
    from jury.pipeline.requests import AdjudicationRequest
    from jury.progress import ProgressFactory

_HEADS = [
    "model",
    "strict",
    "adjudicated [95% CI]",
    "adjudicated failures",
    "gold defect",
    "format equiv.",
    "genuine error",
    "ambiguous",
    "no majority / undecided",
]


class Adjudication(JurorJob):
    """What ``jury.adjudicate`` returns: the plan (``plan``), and after a run the per-model rows
    (strict vs adjudicated accuracy with its 95% interval, the adjudicated failures by verdict),
    the jurors' agreement, the calls (``calls``) and the verdict file (``path``)."""

    models: list[AdjudicatedModel] = Field(default_factory=list, description="Per model: strict, adjudicated, composition, ...")
    agreement: dict[str, Any] | None = None
    records: list[dict[str, Any]] = Field(default_factory=list, exclude=True, repr=False)  # the verdict file's records
    evaluation: Any = Field(None, exclude=True, repr=False)  # jury.compare.outcomes.Evaluation

    def _display(self) -> tuple[list[dict[str, Any]], list[str]]:
        from jury.vocab import CATEGORIES, Verdict

        rows: list[dict[str, Any]] = []
        for r in self.models:
            c = r.composition
            adjudicated = r.adjudicated
            rows.append(
                {
                    "model": r.model,
                    "strict": f"{r.strict.value:.3f}" if r.strict.value is not None else "—",
                    "adjudicated": f"{adjudicated.value:.3f} [{adjudicated.low:.3f}, {adjudicated.high:.3f}]"
                    if adjudicated.value is not None
                    else "—",
                    "failures": r.adjudicated_failures,
                    **{k: c[k] for k in CATEGORIES},
                    "other": c[Verdict.NO_MAJORITY] + c[Verdict.UNDECIDED],
                }
            )
        return rows, ["model", "strict", "adjudicated", "failures", *CATEGORIES, "other"]

    def _summary_lines(self) -> list[str]:
        from jury.judging.agreement import agreement_line
        from jury.results.scoring import coverage_warning

        lines = [] if self.agreement is None else [agreement_line(self.agreement)]
        judged = {r.model for r in self.models}
        warning = coverage_warning(self.evaluation, judged) if self.evaluation is not None and judged else None
        notes = self.evaluation.input_notes if self.evaluation is not None else []
        return lines + notes + ([warning] if warning else [])

    def _draw(self, console: Console) -> None:
        from jury.api.juror_jobs import say
        from jury.results.render import to_rich_table

        rows, columns = self._display()
        console.print(to_rich_table(rows, columns, _HEADS, title="strict vs adjudicated"))
        for line in self._summary_lines():
            say(console, line)

    def _markdown(self) -> str:
        from jury.results.render import to_markdown

        rows, columns = self._display()
        return "### strict vs adjudicated\n\n" + to_markdown(rows, columns, _HEADS)

    def _csv(self) -> str:
        from jury.results.render import to_csv
        from jury.vocab import VERDICTS

        flat = []
        for r in self.models:
            flat.append(
                {
                    "model": r.model,
                    "routed": r.routed,
                    **{f"strict{s}": getattr(r.strict, k) for s, k in (("", "value"), ("_low", "low"), ("_high", "high"))},
                    **{
                        f"adjudicated{s}": getattr(r.adjudicated, k)
                        for s, k in (("", "value"), ("_low", "low"), ("_high", "high"))
                    },
                    "adjudicated_failures": r.adjudicated_failures,
                    "credited": r.credited,
                    **{str(v): r.composition[str(v)] for v in VERDICTS},
                    "reviewed_passes": r.reviewed_passes,
                    "false_passes": r.false_passes,
                }
            )
        return to_csv(flat, list(flat[0]) if flat else ["model"])


def _strings(value: Sequence[str]) -> list[str] | None:
    return [str(v) for v in value] or None


def adjudicate(
    runs: RunFileArgs,
    options: AdjudicateOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    models: str | Sequence[str] | None = None,
    plan_only: bool | None = None,
    **overrides: Any,
) -> Adjudication:
    """Execute (or reuse) every query of ``runs``, then ask each model's jury-eligible failures of the
    panel's jurors and lock their verdicts in a verdict file.

    Args:
        runs: run JSONL file(s) or published prediction files (as for ``jury.score``, ``"NAME=PATH"``
            or ``{NAME: PATH}`` naming a prediction file's model; recorded in the verdict file, the
            names with their files).
        options: an ``AdjudicateOptions`` (jury.options.adjudicate: every option of ``jury adjudicate``,
            each documented there: ``gold``, ``panel`` (a name, a TOML path or a loaded Panel),
            ``model``, ``plan``, ``max_cost``, ``repeats``, ``output``, ``store``, ``shard``, ...), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress factory: called with a task's name, returns a context manager giving a
            ``(done, total)`` callback or None (default: no progress shown).
        models: the old name of ``model``, kept as an alias.
        plan_only: the old name of ``plan``, kept as an alias.
        overrides: AdjudicateOptions' fields as keyword arguments (``panel=``, ``plan=``, ``model=``,
            ``gold=``, ...), over ``options``'.

    Returns:
        An Adjudication: the verdict file written (or reused), the verdicts' counts and the calls
        made; with ``plan``, the plan.

    Raises:
        CostCapReached: ``max_cost`` was reached (every vote so far kept).
        IncompleteRun: some ballots got no vote (a rerun asks only those).
        InputError: a bad input, named in one line.
    """
    from jury.judging.families import load_registry
    from jury.pipeline.jobs import adjudication_job
    from jury.pipeline.requests import AdjudicationRequest
    from jury.progress import no_progress

    given = dict(options) if options is not None else {}
    o: AdjudicateOptions = validated(AdjudicateOptions, "adjudicate", {**given, **overrides})
    chosen = renamed(_strings(o.model), models, "model", "models")
    plan = bool(renamed(o.plan, plan_only, "plan", "plan_only", False))
    project = project or Project.load()
    run_paths, positions = run_files(runs), project.path("positions_from", o.positions_from)
    fields = juror_request_fields(
        project, output=o.output, inputs=[*(f.path for f in run_paths), project.path("gold", o.gold), positions],
        store=o.store, db_root=o.db_root, shard=o.shard, sign=o.sign,
    )  # fmt: skip
    request = AdjudicationRequest(
        panel=project.panel(o.panel, "panel", "default.toml"),
        settings=project.settings(
            comparator=o.comparator, near_miss=o.near_miss, workers=o.workers, executor=o.executor,
            ray_address=o.ray_address, db_url=o.db_url, allow_privileged_login=o.allow_privileged_login,
        ),
        gold_path=project.gold(o.gold), run_paths=run_paths, registry=load_registry(o.families),
        seed=project.get("seed", o.seed, 0), early_stop=o.early_stop, swap=o.swap, review_passes=o.review_passes,
        repeats=o.repeats, taxonomy=o.taxonomy, max_cost=project.get("max_cost", o.max_cost, None),
        models=_strings([chosen] if isinstance(chosen, str) else chosen or []), plan_only=plan, batch=o.batch,
        positions_from=positions, dbs=_strings(o.db) or [], **fields,
    )  # fmt: skip
    with project.open_store(o.store) as st:
        job = adjudication_job(request, st, progress or no_progress)
    return _result(request, job)


def _result(request: AdjudicationRequest, job: JobResult[Any]) -> Adjudication:
    """What a run (or the plan) of an adjudication returns: the plan, the per-model rows, the
    jurors' agreement, the calls and the verdict file."""
    from jury.results.columns import adjudication_summary
    from jury.results.scoring import score_all

    unit = "failures and sampled passes" if request.review_passes else "failures"
    if request.repeats > 1:
        unit += f", each asked {request.repeats} times (--repeats)"
    asked = juror_plan(request, "adjudication", job.plan.ballots(), job.plan.items(), unit)
    result = Adjudication(
        panel=request.panel.name, plan=asked, plan_only=request.plan_only, evaluation=job.evaluation, **guarded(request)
    )
    if request.plan_only:
        return result
    if job.records is not None and job.evaluation is not None:  # not a shard's run
        result.records = job.records
        result.models = adjudication_summary(job.records, score_all(job.evaluation.pairs), set(job.plan.families))
        result.agreement = job.agreement  # the verdict file's
    finish(request, result, job)
    return result
