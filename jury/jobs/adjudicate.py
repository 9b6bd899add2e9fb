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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from jury.errors import InputError
from jury.inputs.run_files import RunFile, RunFileArgs, run_files
from jury.jobs.juror_jobs import JurorJob, JurorRequest, finish, guarded, juror_plan, juror_request_fields, renamed, say
from jury.judging.agreement import AgreementSummary, agreement_line, agreement_summary
from jury.judging.panels import jurors_to_ask, require_keys, require_priced, warn_unknown_params
from jury.options import job_options
from jury.options.adjudicate import AdjudicateOptions
from jury.pipeline.jobs import JobResult, load_and_evaluate, raise_if_capped, raise_if_incomplete, raise_if_pending, write_failed
from jury.pipeline.project import Project
from jury.progress import ProgressFactory, no_progress
from jury.results.columns import AdjudicatedModel, adjudication_summary
from jury.vocab import CATEGORIES, JURY_ELIGIBLE, VERDICTS, Verdict

if TYPE_CHECKING:
    from rich.console import Console

    from jury.compare.outcomes import PairResult
    from jury.execution.store import Store
    from jury.inputs.records import RunRecord
    from jury.judging.adjudication import AdjudicationPlan

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
    agreement: AgreementSummary | None = None
    records: list[dict[str, Any]] = Field(default_factory=list, exclude=True, repr=False)  # the verdict file's records
    evaluation: Any = Field(None, exclude=True, repr=False)  # jury.compare.outcomes.Evaluation

    def _display(self) -> tuple[list[dict[str, Any]], list[str]]:

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
        from jury.results.scoring import coverage_warning

        lines = [] if self.agreement is None else [agreement_line(self.agreement)]
        judged = {r.model for r in self.models}
        warning = coverage_warning(self.evaluation, judged) if self.evaluation is not None and judged else None
        notes = self.evaluation.input_notes if self.evaluation is not None else []
        return lines + notes + ([warning] if warning else [])

    def _draw(self, console: Console) -> None:
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


class AdjudicationRequest(JurorRequest):
    """An adjudication: which runs, which panel, how its jurors are asked, what is recorded.

    Building one refuses an audit panel, swap or a shard with early stop, batch with early stop,
    a ``review_passes`` outside [0, 1]; ``swap`` None becomes the panel's, ``taxonomy`` (a name
    or a path; None: the panel's) is loaded."""

    run_paths: list[RunFile] = Field(
        description="Run JSONL files or published prediction files (jury.inputs.run_files: with the model NAME given)."
    )
    registry: Any = Field(description="The family registry (jury.judging.families) that keeps jurors disjoint.")
    settings: Any = Field(description="The evaluation's jury.compare.outcomes.Settings.")
    seed: int = Field(0, description="The seed of the answer-order shuffle (and of the sampled passes).")
    early_stop: bool = Field(False, description="Stop asking once a majority is settled.")
    swap: bool | None = Field(None, description="Each juror judges both answer orders (None: the panel's).")
    review_passes: float = Field(0.0, description="The seeded share of each model's strict matches also sent.")
    taxonomy: Any = Field(None, description="The error taxonomy: a name, a path or a loaded Taxonomy (None: the panel's).")
    models: list[str] | None = Field(None, description="Only these models (None: every model of the runs).")
    positions_from: Path | None = Field(None, description="The gold file prediction files index by position.")
    dbs: list[str] = Field(default_factory=list, description="Only the questions of these db_ids (none: every question).")
    repeats: int = Field(1, description="Ask the panel this many times, each repeat its own seeded order (--repeats).")

    @model_validator(mode="after")
    def _decide(self) -> AdjudicationRequest:
        panel = self.panel
        if panel.ballot_style == "audit":
            raise InputError(f"panel {panel.name!r} ({panel.path}) is an audit panel; adjudication needs a blind or labelled one")
        warn_unknown_params(panel)
        self.swap = panel.swap if self.swap is None else self.swap
        if self.swap and self.early_stop:
            raise InputError("swap and early_stop cannot be combined: a swapped vote needs both orders of every juror")
        if self.shard is not None and self.early_stop:
            raise InputError("shard and early_stop cannot be combined: a settled majority needs every juror's vote in one store")
        if self.early_stop and (self.batch or any(j.batch for j in panel.jurors)):
            raise InputError("batch and early_stop cannot be combined: a batch sends every juror's ballot at once")
        if self.repeats < 1:
            raise InputError(f"repeats must be at least 1, got {self.repeats}")
        if not 0.0 <= self.review_passes <= 1.0:
            raise InputError(f"review_passes must be a fraction in [0, 1], got {self.review_passes}")
        if self.taxonomy is None or isinstance(self.taxonomy, str | Path):  # not loaded yet
            name = self.taxonomy or panel.taxonomy
            if name is None:
                self.taxonomy = None
            else:
                from jury.judging.taxonomies import load_taxonomy

                self.taxonomy = load_taxonomy(name)
        self._refuse_foreign_output()
        return self


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
    o = job_options(AdjudicateOptions, "adjudicate", options, overrides)
    chosen = renamed(_strings(o.model), models, "model", "models")
    plan = bool(renamed(o.plan, plan_only, "plan", "plan_only", False))
    project = project or Project.load()
    request = _request(project, o, runs, _strings([chosen] if isinstance(chosen, str) else chosen or []), plan)
    with project.open_store(o.store) as st:
        job = adjudication_job(request, st, progress or no_progress)
    return _result(request, job)


def _request(
    project: Project, o: AdjudicateOptions, runs: RunFileArgs, models: list[str] | None, plan: bool
) -> AdjudicationRequest:
    """The AdjudicationRequest of ``jury.adjudicate``'s options over jury.toml's: the outputs guarded,
    the panel loaded and checked, the evaluation settings and the family registry decided."""
    from jury.judging.families import load_registry

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
        models=models, plan_only=plan, batch=o.batch, positions_from=positions, dbs=_strings(o.db) or [], **fields,
    )  # fmt: skip
    return request


def _result(request: AdjudicationRequest, job: JobResult[Any]) -> Adjudication:
    """What a run (or the plan) of an adjudication returns: the plan, the per-model rows, the
    jurors' agreement, the calls and the verdict file."""
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


def adjudication_job(
    request: AdjudicationRequest, store: Store, progress: ProgressFactory = no_progress
) -> JobResult[AdjudicationPlan]:
    """Run an adjudication as ``request`` decided it: execute (or reuse) every query, plan the
    ballots, reuse the locked file already holding this verdict set, else ask the jurors and
    write the locked file (with a shard: only its ballots, and no file)."""
    from jury.judging.adjudication import plan_adjudication, run_adjudication
    from jury.verdicts.assemble import adjudication_header, existing_verdicts, run_calls, write_verdicts

    r = request

    def checks_before_work(records: list[RunRecord]) -> None:  # keys, servers and prices before any SQL runs
        if r.plan_only and r.max_cost is None:  # a plan calls nobody: nothing to check before it
            return
        jurors = jurors_to_ask(r.panel, r.registry, records, r.models)
        if not r.plan_only:
            require_keys(r.panel, jurors)
        require_priced(r.panel, jurors, r.max_cost)

    gold, records, ev = load_and_evaluate(
        r.gold_path, r.run_paths, r.db_root, store, r.settings, progress, r.positions_from, checks_before_work, r.dbs,
        keep=shown_on_ballots(r),
    )  # fmt: skip
    plan = plan_adjudication(
        ev, gold, records, r.panel, r.registry, models=r.models, seed=r.seed, swap=bool(r.swap),
        review_passes=r.review_passes, taxonomy=r.taxonomy, repeats=r.repeats,
    )  # fmt: skip
    if r.plan_only:
        return JobResult(plan, evaluation=ev)
    # the ballots hold the results they show (previews, built once) and the SQL: the rows of every
    # execution, the run records and the gold items are let go before the calls, whose peak memory
    # (the juror client's import first) then reuses theirs instead of adding to it (issue 46)
    ev.results.clear()
    del gold, records
    head = adjudication_header(r.config, r.output, plan, store, ev, r.gold_path, r.run_paths, _recorded(r, plan), r.supersedes)
    found = existing_verdicts(r.config, r.output, head, r.supersedes)
    if found is not None:  # this verdict set is already locked there: reuse it, call nothing
        locked = [x.model_dump(mode="json") for x in found[1].records]
        return JobResult(plan, locked, None, found[0], True, ev, agreement=agreement_summary(locked, r.panel.ballot_style))
    with progress("asking jurors") as bar:
        verdicts, stats = run_adjudication(
            plan, store, early_stop=r.early_stop, max_cost=r.max_cost, progress=bar, shard=r.shard, batch=r.batch
        )
    raise_if_capped(stats)
    raise_if_pending(stats)
    raise_if_incomplete(stats)
    if r.shard is not None:  # an incomplete set by design: the votes are stored, no verdict file
        return JobResult(plan, None, stats, None, False, ev)
    agreement = agreement_summary(verdicts, r.panel.ballot_style)  # the file's and the result's, computed once
    try:
        path, reused = write_verdicts(
            "adjudication", r.config, r.output, head, plan, verdicts, agreement, store, run_calls(stats)
        )
    except OSError as exc:
        raise write_failed(exc, r.output) from None
    return JobResult(plan, verdicts, stats, path, reused, ev, agreement=agreement)


def shown_on_ballots(r: AdjudicationRequest) -> Callable[[PairResult], bool] | None:
    """The pairs whose results an adjudication's ballots show: the jury-eligible failures (of
    the models asked about); None (every pair) with review_passes, whose sample of matches is
    drawn only once every pair is known. The evaluation keeps only these pairs' results
    (jury.compare.outcomes.evaluate's ``keep``), so the rest are never all decoded at once (issue 46)."""
    if r.review_passes:
        return None
    wanted = set(r.models) if r.models else None

    def shown(pair: PairResult) -> bool:
        return pair.outcome == JURY_ELIGIBLE and (wanted is None or pair.model in wanted)

    return shown


def _recorded(r: AdjudicationRequest, plan: AdjudicationPlan) -> dict[str, Any]:
    """The settings an adjudication file records (and binds: a re-run reads them back)."""
    recorded = {"seed": r.seed, "early_stop": r.early_stop, "models": r.models, **r.settings.describe()}
    if r.swap:  # recorded only when used, so files made without them keep their bindings
        recorded["swap"] = True
    if r.taxonomy is not None:
        recorded["taxonomy"] = r.taxonomy.binding()
    if r.positions_from is not None:  # prediction files as runs: the positions they index, bound (reaudit reads it)
        from jury.verdicts.assemble import verdicts_dir
        from jury.verdicts.verify import bind_file

        recorded["positions_from"] = bind_file(r.positions_from, verdicts_dir(r.config, r.output)).model_dump()
    if r.dbs:  # only these databases' questions (recorded only when used, as swap)
        recorded["dbs"] = list(r.dbs)
    if r.repeats > 1:  # recorded only when used, as swap
        recorded["repeats"] = r.repeats
    if r.review_passes:
        recorded["review_passes"] = r.review_passes
        recorded["reviewed_passes"] = {m: {"sampled": s, "matches": n} for m, (s, n) in plan.reviewed.items()}
    return recorded
