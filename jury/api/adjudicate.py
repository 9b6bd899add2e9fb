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

from jury.api.juror_jobs import JurorJob, choose_panel, finish, guarded, juror_plan, juror_request_fields, renamed
from jury.inputs.run_files import RunFileArgs, run_files
from jury.pipeline.project import PathLike, Project
from jury.results.columns import AdjudicatedModel

if TYPE_CHECKING:
    from rich.console import Console

    from jury.judging.panels import Panel
    from jury.judging.shards import Shard
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


def _strings(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    values = [value] if isinstance(value, str) else [str(v) for v in value]
    return values or None


def adjudicate(
    runs: RunFileArgs,
    *,
    gold: PathLike | None = None,
    db_root: PathLike | None = None,
    db_url: str | None = None,
    allow_privileged_login: bool = False,
    panel: str | PathLike | Panel | None = None,
    model: str | Sequence[str] | None = None,
    plan: bool = False,
    max_cost: float | None = None,
    early_stop: bool = False,
    seed: int | None = None,
    swap: bool | None = None,
    review_passes: float = 0.0,
    repeats: int = 1,
    taxonomy: str | None = None,
    families: PathLike | None = None,
    comparator: str | None = None,
    near_miss: float | None = None,
    workers: int | None = None,
    executor: str | None = None,
    ray_address: str | None = None,
    output: PathLike | None = None,
    store: PathLike | None = None,
    sign: PathLike | None = None,
    shard: str | Shard | None = None,
    batch: bool = False,
    positions_from: PathLike | None = None,
    db: str | Sequence[str] | None = None,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    models: str | Sequence[str] | None = None,
    plan_only: bool | None = None,
) -> Adjudication:
    """Execute (or reuse) every query of ``runs``, then ask each model's jury-eligible failures of the
    panel's jurors and lock their verdicts in a verdict file.

    Args:
        runs: run JSONL file(s) or published prediction files (as for ``jury.score``, ``"NAME=PATH"``
            or ``{NAME: PATH}`` naming a prediction file's model; recorded in the verdict file, the
            names with their files).
        gold: the gold file (BIRD's dev.json). Default: jury.toml's ``gold``.
        db_root: the folder of ``<db_id>/<db_id>.sqlite`` databases. Default: jury.toml's
            ``db_root``.
        db_url: run on an engine (PostgreSQL, MySQL/MariaDB, DuckDB) at this URL instead of SQLite
            files. Default: jury.toml's ``[databases]``.
        allow_privileged_login: run on an engine through a login that can do more than read (refused
            by default; recorded in the provenance).
        panel: the panel: a name in panels/, a TOML path or a loaded Panel. Default: jury.toml's.
        model: only this model or these models (``--model``).
        plan: make no call: the result's ``plan`` holds the ballots and their estimated cost
            (``--plan``).
        max_cost: a cap in USD: CostCapReached when reached, every vote so far kept.
        early_stop: stop asking a ballot's jurors once its majority is settled.
        seed: the seed of the ballots' order and sampling (default 0).
        swap: each juror judges both orders (None: the panel's setting).
        review_passes: also send this seeded share of each model's strict matches.
        repeats: ask the panel this many times (``--repeats``), each repeat drawing its own
            answer orders from (seed, repeat) and stored as its own votes (a rerun asks none of
            them again); ``--plan`` prices every repeat. The published verdicts are repeat 0's
            (exactly the verdicts of a panel asked once); ``jury report`` gives each juror's
            test-retest agreement, the verdicts that change between repeats and the adjudicated
            column's spread. Not ``jury.score``'s ``repeats`` (timing runs).
        taxonomy: the error taxonomy (None: the panel's).
        families: a family registry TOML (which provider family each model belongs to).
        comparator: the comparator that decides a match: ``strict`` (default), ``bird``,
            ``relaxed``, ...
        near_miss: the overlap at or above which a mismatch is a near miss (default 0.5).
        workers: parallel execution processes (default: the CPU count).
        executor: where executions run: ``local`` (default) or ``ray``.
        ray_address: the Ray cluster (``executor="ray"``; default: a local Ray runtime).
        output: the verdict file. Default: ``verdicts/adjudication-<time>.json``; an identical
            locked one is reused.
        store: the store file. Default: jury.toml's ``store``, else ``.jury/store.db``.
        sign: an Ed25519 key that signs the new file.
        shard: ``"I/N"``: ask only that shard's ballots and write no file.
        batch: send OpenAI, Anthropic and Gemini jurors' ballots through their batch APIs (IncompleteRun
            while they are pending).
        positions_from: for published prediction files (one SQL per line): the file whose order they
            follow (default: jury.toml's, else the gold file).
        db: only the questions of this db_id or these (recorded in the verdict file).
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress factory: called with a task's name, returns a context manager giving a
            ``(done, total)`` callback or None (default: no progress shown).
        models: the old name of ``model``, kept as an alias.
        plan_only: the old name of ``plan``, kept as an alias.

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

    models = renamed(model, models, "model", "models")
    plan_only = bool(renamed(plan, plan_only, "plan", "plan_only", False))
    project = project or Project.load()
    run_paths, positions = run_files(runs), project.path("positions_from", positions_from)
    fields = juror_request_fields(
        project, output=output, inputs=[*(f.path for f in run_paths), project.path("gold", gold), positions], store=store,
        db_root=db_root, shard=shard, sign=sign,
    )  # fmt: skip
    request = AdjudicationRequest(
        panel=choose_panel(project, panel, "panel", "default.toml"),
        settings=project.settings(
            comparator=comparator, near_miss=near_miss, workers=workers, executor=executor, ray_address=ray_address,
            db_url=db_url, allow_privileged_login=allow_privileged_login,
        ),
        gold_path=project.gold(gold), run_paths=run_paths, registry=load_registry(families),
        seed=project.get("seed", seed, 0), early_stop=early_stop, swap=swap, review_passes=review_passes, repeats=repeats,
        taxonomy=taxonomy, max_cost=project.get("max_cost", max_cost, None), models=_strings(models),
        plan_only=plan_only, batch=batch, positions_from=positions, dbs=_strings(db) or [], **fields,
    )  # fmt: skip
    with project.open_store(store) as st:
        job = adjudication_job(request, st, progress or no_progress)
    return _result(request, job)


def _result(request: AdjudicationRequest, job: JobResult[Any]) -> Adjudication:
    """What a run (or the plan) of an adjudication returns: the plan, the per-model rows, the
    jurors' agreement, the calls and the verdict file."""
    from jury.judging.agreement import agreement_summary
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
        result.agreement = agreement_summary(job.records, request.panel.ballot_style)  # from the votes
    finish(request, result, job)
    return result
