"""``jury.suites``: PLSQLBench's test-suite metrics of runs that record test outcomes.

Single-turn tasks: MeanTestPass@1 and SuitePass@1; episodes (records sharing ``episode``):
EpisodePass@1, TurnSuitePass@1 and MeanTestPass@1, each with a 95% interval (Wilson for shares
of units, a seeded bootstrap for means of fractions); reference failures are excluded and
listed (jury.results.suites). Locked suite verdict files (or ``adjudicate=True``) add the
adjudicated metrics; a taxonomy counts the errored failing tests by category (``classify=True``:
the jurors classify the errors the rules leave). ``render(fmt)`` is what ``jury suites`` prints.

Test-suite runs: load them, send format-equivalence candidates to the jury, lock the verdicts.

A test-suite run has no gold file: the expected outputs are recorded in the run itself, so
the verdict file's ``inputs.gold`` binds the first run file (and ``inputs.runs`` every run
file). Its settings carry ``"suite": true``; its records name the judged ``test``. A file of
error classifications (``--classify``, panel ballot style ``classify``) also records
``settings.taxonomy``; each record's ``error_category`` is the jurors' majority pick.

>>> import jury
>>> print(jury.suites("examples/plsql-suite/suite.jsonl").render("md"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.errors import InputError
from jury.jobs.juror_jobs import Calls, JurorPlan, renamed, run_lines
from jury.jobs.result import Result
from jury.judging.panels import require_keys, warn_unknown_params
from jury.options import job_options
from jury.options.suites import SuitesOptions
from jury.pipeline.jobs import JobResult, raise_if_capped, raise_if_incomplete, raise_if_pending, write_failed
from jury.pipeline.project import PathLike, Project
from jury.progress import ProgressFactory, no_progress
from jury.results.suite_subsets import SubsetScores, subset_keys, subset_notes, subset_rows, subset_scores
from jury.results.suites import (
    SuiteErrorCounts,
    SuiteRow,
    format_candidates,
    render_suites,
    suite_metrics,
    suite_records,
    suite_test_key,
)
from jury.vocab import CLASSIFY_STYLE

if TYPE_CHECKING:
    from jury.execution.store import Store
    from jury.inputs.records import RunRecord
    from jury.judging.families import FamilyRegistry
    from jury.judging.panels import Panel
    from jury.judging.runner import RunStats
    from jury.judging.suite_ballots import SuitePlan
    from jury.judging.taxonomies import Taxonomy
    from jury.progress import Progress
    from jury.results.suites import TestKey
    from jury.verdicts.assemble import VerdictsConfig
    from jury.verdicts.documents import AdjudicationFile


# ask(progress bar) -> (the verdict records, the run's stats)
Ask = Callable[["Progress | None"], tuple[list[dict[str, Any]], "RunStats"]]


def load_suite_runs(run_paths: list[Path]) -> list[RunRecord]:
    """The records of test-suite run files, each checked to record its test outcomes (jury.results.suites.suite_records)."""
    from jury.inputs.io import load_runs

    return suite_records(load_runs(run_paths), ", ".join(str(p) for p in run_paths))


def suite_job(
    cfg: VerdictsConfig,
    store: Store,
    *,
    run_paths: list[Path],
    panel: Panel,
    registry: FamilyRegistry,
    classify: Taxonomy | None = None,
    seed: int = 0,
    early_stop: bool = False,
    max_cost: float | None = None,
    output: Path | None = None,
    plan_only: bool = False,
    progress: ProgressFactory = no_progress,
    batch: bool = False,
) -> JobResult[SuitePlan]:
    """Ask the panel's jurors about every format-equivalence candidate, or with ``classify`` (a
    jury.judging.taxonomies.Taxonomy) for the category of every errored failing test its rules
    leave unclassified; write a locked adjudication file (or reuse the identical one already
    written). ``batch``: format ballots through the providers' batch APIs. The first run file
    stands for the gold (it holds the expected outputs)."""
    from jury.judging.agreement import agreement_summary
    from jury.verdicts.assemble import existing_verdicts, header, verdicts_dir, write_verdicts

    what, symmetric = (
        ("suite adjudication", "a test-suite ballot is symmetric")
        if classify is None
        else ("error classification", "a classification ballot has no answer order")
    )
    if panel.ballot_style == "audit":
        raise InputError(f"panel {panel.name!r} ({panel.path}) is an audit panel; {what} needs a blind or labelled one")
    if panel.swap:
        raise InputError(f"panel {panel.name!r} ({panel.path}) sets swap: {symmetric}, use a panel without swap")
    warn_unknown_params(panel)
    plan, ask, settings = _suite_plan(
        load_suite_runs(run_paths), store, panel, registry, classify, seed, early_stop, max_cost, batch
    )
    if plan_only:
        return JobResult(plan)
    folder = verdicts_dir(cfg, output)
    head = header("adjudication", folder, plan.panel, plan.template, run_paths[0], run_paths, {}, settings, store, [])
    found = existing_verdicts(cfg, output, head)
    if found is not None:
        return JobResult(plan, [r.model_dump(mode="json") for r in found[1].records], None, found[0], True)
    require_keys(plan.panel, {b.juror.name: b.juror for b in plan.ballots()}.values())
    with progress("asking jurors") as bar:
        verdicts, stats = ask(bar)
    raise_if_capped(stats)
    raise_if_pending(stats)
    raise_if_incomplete(stats)
    try:
        agreement = agreement_summary(verdicts, plan.panel.ballot_style)
        path, reused = write_verdicts("adjudication", cfg, output, head, plan, verdicts, agreement, store)
    except OSError as exc:
        raise write_failed(exc, output) from None
    return JobResult(plan, verdicts, stats, path, reused, agreement=agreement)


def _suite_plan(
    records: list[RunRecord],
    store: Store,
    panel: Panel,
    registry: FamilyRegistry,
    classify: Taxonomy | None,
    seed: int,
    early_stop: bool,
    max_cost: float | None,
    batch: bool,
) -> tuple[SuitePlan, Ask, dict[str, Any]]:
    """(plan, ask(progress) -> (records, stats), the verdict file's settings) of format ballots,
    or of classification ballots with the taxonomy ``classify``."""
    settings: dict[str, Any] = {"suite": True, "seed": seed, "early_stop": early_stop}
    if classify is None:
        from jury.judging.suite_ballots import plan_suite, run_suite

        plan = plan_suite(format_candidates(records), panel, registry, seed=seed)
        return (
            plan,
            lambda bar: run_suite(plan, store, early_stop=early_stop, max_cost=max_cost, progress=bar, batch=batch),
            settings,
        )
    from jury.judging.suite_classify import classify_candidates, plan_classify, run_classify

    cplan = plan_classify(classify_candidates(records, classify), panel, registry, classify, seed=seed)
    return (
        cplan,
        lambda bar: run_classify(cplan, store, early_stop=early_stop, max_cost=max_cost, progress=bar),
        {**settings, "taxonomy": classify.binding()},
    )


def suite_verdict_docs(
    verdict_paths: list[Path], run_paths: list[Path], allow_superseded: bool = False
) -> list[tuple[Path, AdjudicationFile]]:
    """(path, document) of locked suite verdict files (format ballots or error classifications);
    a file made for other run files (or not a suite file) is refused."""
    from jury.inputs.io import sha256_file
    from jury.verdicts.lock import load_current

    runs = {sha256_file(p) for p in run_paths}
    docs: list[tuple[Path, AdjudicationFile]] = []
    for path in verdict_paths:
        doc = load_current(path, "adjudication", allow_superseded=allow_superseded)
        if not doc.settings.get("suite"):
            raise InputError(f"{path}: not a test-suite verdict file (made by `jury adjudicate`, not `jury suites --adjudicate`)")
        bound = {b.sha256 for b in doc.inputs.runs}
        if not bound <= runs:
            raise InputError(f"{path}: was made for other run files than {', '.join(map(str, run_paths))} (their sha256 differ)")
        docs.append((path, doc))
    return docs


def is_classification(doc: AdjudicationFile) -> bool:
    """A suite verdict file of error classifications (`jury suites --classify`), not format ballots."""
    return doc.panel.ballot_style == CLASSIFY_STYLE


def credited_of(docs: list[tuple[Path, AdjudicationFile]]) -> set[TestKey]:
    """The key (jury.results.suites.suite_test_key) of every test the format-ballot files credit."""

    return {
        suite_test_key(r.model, r.question_id, r.episode, r.turn, r.test)
        for _, doc in docs
        if not is_classification(doc)
        for r in doc.records
        if r.credited and r.test is not None
    }


def classified_of(docs: list[tuple[Path, AdjudicationFile]], taxonomy: Taxonomy) -> dict[TestKey, str | None]:
    """Test key -> the category the jurors' majority picked (None: none) of the error-classification
    files; one made with another taxonomy file (its sha256), or two disagreeing on a test, is refused."""

    out: dict[TestKey, str | None] = {}
    for path, doc in docs:
        if not is_classification(doc):
            continue
        tax = doc.settings.get("taxonomy") or {}
        if tax.get("sha256") != taxonomy.sha256:
            raise InputError(
                f"{path}: classified with taxonomy {tax.get('name')!r} (sha256 {str(tax.get('sha256'))[:12]}…), not with "
                f"{taxonomy.path} (sha256 {taxonomy.sha256[:12]}…): give that taxonomy, or classify again with --classify"
            )
        for r in doc.records:
            assert r.test is not None  # load_current's rules refuse a classification without a test
            key = suite_test_key(r.model, r.question_id, r.episode, r.turn, r.test)
            if key in out and out[key] != r.error_category:
                raise InputError(
                    f"{path}: classifies test {r.test!r} of model {r.model!r} otherwise than another --verdicts file"
                )
            out[key] = r.error_category
    return out


class SuiteScores(Result):
    """What ``jury.suites`` returns: per model the strict metrics (``strict``, jury.results.suites.SuiteRow)
    and, with verdicts, the adjudicated ones (``adjudicated``); when the records name their
    ``subset`` (and ``split``), the metrics per subset and the overall means of PLSQLBench's
    tables (``subsets``, ``adjudicated_subsets``: jury.results.suite_subsets); with a taxonomy, the errored
    failing tests by category (``error_counts``). ``plan_only``: no call was made and ``plan``
    holds the ballots and their estimated cost (``render`` is the plan's). ``path``: the verdict
    file a juror run wrote or reused; ``notes``: what the command line prints on stderr."""

    strict: list[SuiteRow] = Field(default_factory=list)
    adjudicated: list[SuiteRow] | None = None
    subsets: list[SubsetScores] | None = None
    adjudicated_subsets: list[SubsetScores] | None = None
    error_counts: SuiteErrorCounts | None = None
    plan: JurorPlan | None = None
    plan_only: bool = False
    path: Path | None = None
    records: list[dict[str, Any]] = Field(default_factory=list, exclude=True, repr=False)  # the juror run's verdict records
    notes: list[str] = Field(default_factory=list, description="What the command line prints on stderr.")

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:

        if self.plan_only:
            assert self.plan is not None
            return self.plan.render(fmt, width=width, wide=wide)
        extra = None
        if self.error_counts is not None:
            from jury.results.report.taxonomy import suite_counts_note

            extra = {"error_categories": self.error_counts} if fmt == "json" else {"note": suite_counts_note(self.error_counts)}
        subsets = notes = None
        if self.subsets is not None:
            subsets, notes = subset_rows(self.subsets, self.adjudicated_subsets), subset_notes(self.subsets)
        return render_suites(self.strict, self.adjudicated, fmt, extra=extra, subsets=subsets, subset_notes=notes)


def suites(
    runs: PathLike | Sequence[PathLike],
    options: SuitesOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    plan_only: bool | None = None,
    **overrides: Any,
) -> SuiteScores:
    """PLSQLBench's metrics per model of test-suite runs (run JSONL with ``tests``), and per
    subset with the overall means when the records name their ``subset`` and ``split``.

    Args:
        runs: test-suite run JSONL file(s).
        options: a ``SuitesOptions`` (jury.options.suites: every option of ``jury suites`` but how it
            shows the metrics, each documented there; ``panel`` also a loaded Panel), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress-bar factory (jury.progress; default: no progress shown).
        outputs: files the caller will write, refused before any work when one is an input or the store.
        plan_only: the old name of ``plan``, kept as an alias.
        overrides: SuitesOptions' fields as keyword arguments (``verdicts=``, ``adjudicate=``,
            ``taxonomy=``, ...), over ``options``'.

    Returns:
        SuiteScores: the metrics per model, the reference failures and, with a taxonomy, the error
        categories.

    Raises:
        CostCapReached: ``max_cost`` was reached.
        InputError: a bad input.
    """
    from jury.pipeline.outputs import guard_outputs

    o = job_options(SuitesOptions, "suites", options, overrides)
    plan_only = bool(renamed(o.plan, plan_only, "plan", "plan_only", False))
    project = project if project is not None else Project.load()
    run_paths, verdict_paths = _run_paths(runs), o.verdicts
    store_path = project.store_path(o.store)
    guard_outputs([*outputs, o.verdicts_out], [*run_paths, *verdict_paths], store=store_path, verdict_output=True)
    _refuse_combinations(o.adjudicate, o.classify, plan_only or o.verdicts_out is not None, o.taxonomy)
    records = load_suite_runs(run_paths)
    subset_keys(records, ", ".join(map(str, run_paths)))  # a bad subset is refused before any juror call
    tax = _taxonomy(o.taxonomy)  # checked before any juror call
    docs = suite_verdict_docs(verdict_paths, run_paths, o.allow_superseded) if verdict_paths else []
    credited, adjudicated, juror_categories = _locked(docs, tax)
    result = SuiteScores(inputs=[*run_paths, *verdict_paths], store_path=store_path, plan_only=plan_only)
    if o.adjudicate or o.classify:
        chosen = {"seed": project.get("seed", o.seed, 0), "max_cost": project.get("max_cost", o.max_cost, None)}
        asked = _JurorRun(o.model_copy(update=chosen), tax if o.classify else None).run(result, project, run_paths, progress)
        if plan_only:
            return result
        if o.classify:
            juror_categories = {**(juror_categories or {}), **{k: r.get("error_category") for k, r in asked.items()}}
        else:
            credited, adjudicated = credited | {k for k, r in asked.items() if r["credited"]}, True
    _add_metrics(result, records, credited if adjudicated else None, tax, juror_categories)
    return result


def _run_paths(runs: PathLike | Sequence[PathLike]) -> list[Path]:
    """The test-suite run files: run JSONL, which name their models in their lines (no NAME=PATH)."""
    from jury.inputs.run_files import run_files

    files = run_files(runs)
    named = next((f for f in files if f.model is not None), None)
    if named is not None:
        raise InputError(
            f"{named}: NAME=PATH names a prediction file's model; jury suites reads run JSONL files, "
            "which name their models in their lines: give it without NAME="
        )
    if not files:
        raise InputError("no run files: give at least one test-suite run JSONL file")
    return [f.path for f in files]


def _add_metrics(
    result: SuiteScores,
    records: list[RunRecord],
    credited: set[TestKey] | None,
    tax: Taxonomy | None,
    juror_categories: dict[TestKey, str | None] | None,
) -> None:
    """PLSQLBench's metrics per model (and per subset), strict and, with ``credited`` (the answers the
    jury credited), adjudicated; with a taxonomy, the error categories."""

    result.strict = suite_metrics(records)
    result.adjudicated = suite_metrics(records, credited) if credited is not None else None
    result.subsets = subset_scores(records)
    result.adjudicated_subsets = subset_scores(records, credited) if credited is not None and result.subsets is not None else None
    if tax is not None:
        from jury.results.report.taxonomy import suite_error_counts

        result.error_counts = suite_error_counts(records, tax, juror_categories)


def _refuse_combinations(adjudicate: bool, classify: bool, asks: bool, taxonomy: Any) -> None:
    """The options that do not go together (``asks``: a plan or a verdict file is asked for)."""

    if adjudicate and classify:
        raise InputError("adjudicate and classify each write a verdict file: run them one at a time")
    if not (adjudicate or classify) and asks:
        raise InputError("plan and verdicts_out go with adjudicate or classify")
    if classify and taxonomy is None:
        raise InputError("classify needs a taxonomy (the categories the jurors pick from), e.g. plsqlbench")


def _taxonomy(path: str | None) -> Taxonomy | None:
    """The error taxonomy ``--taxonomy`` names, loaded (None: not asked)."""
    if path is None:
        return None
    from jury.judging.taxonomies import load_taxonomy

    return load_taxonomy(str(path))


def _locked(docs: list[Any], tax: Any) -> tuple[set[Any], bool, dict[tuple[Any, ...], str | None] | None]:
    """What the locked suite verdict files say: (the credited tests, whether they hold format
    verdicts, the jurors' categories of the classification files: they need the taxonomy)."""

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
    return credited, adjudicated, juror_categories


@dataclass
class _JurorRun:
    """A juror job of ``jury.suites``: format ballots, or classification ballots with the taxonomy
    ``classify``; ``options``: its panel, cost cap, batch APIs, families, seed (jury.toml's when
    not given), early stop and verdict file."""

    options: SuitesOptions
    classify: Any

    def run(self, result: SuiteScores, project: Project, run_paths: list[Path], progress: Any) -> dict[Any, Any]:
        """Ask (or plan) into ``result``: its plan, and after a run its verdict file, records and
        the lines on its calls. Returns the run's records by test key (jury.results.suites.suite_test_key)."""
        from jury.judging.families import load_registry

        o, tax = self.options, self.classify
        chosen = project.panel(o.panel, "panel", "default.toml")
        with project.open_store(result.store_path) as st:
            job = suite_job(
                project.config,
                st,
                run_paths=run_paths,
                panel=chosen,
                registry=load_registry(o.families),
                classify=tax,
                seed=0 if o.seed is None else o.seed,  # jury.toml's, else 0: suites()
                early_stop=o.early_stop,
                max_cost=o.max_cost,
                output=o.verdicts_out,
                plan_only=result.plan_only,
                progress=progress or no_progress,
                batch=o.batch,
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
            batch=o.batch and tax is None,
            ballots=job.plan.ballots(),
        )
        if result.plan_only:
            return {}
        assert job.records is not None
        result.path, result.records = job.path, job.records
        result.notes = run_lines(None if job.stats is None else Calls.of(job.stats), job.path, job.reused_file)
        return {suite_test_key(r["model"], r["question_id"], r.get("episode"), r.get("turn"), r["test"]): r for r in job.records}
