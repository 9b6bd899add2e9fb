"""``jury.score``: strict execution match per model, with every comparator side by side.

Every query of the runs and the gold is executed (or reused from the store) and each
(model, question) gets one outcome; a model's accuracy is over the questions it routed to
the right database, with a Wilson 95% interval. Locked verdict files add the gold-clean
(``audit``) and adjudicated (``verdicts``) columns, after every check the command line makes
(jury.pipeline.verdict_inputs). ``render(fmt)`` is exactly what ``jury score`` prints.

>>> import jury
>>> ev = jury.score("run.jsonl", gold="dev.json", db_root="databases")  # doctest: +SKIP
>>> print(ev.render("md"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.compare.efficiency import all_solved_time_ratios, cpu_model, efficiency_scores, time_matches
from jury.errors import InputError
from jury.execution.merged import MergedSource
from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.inputs.run_files import RunFile, RunFileArgs, run_files
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.score import ScoreOptions
from jury.pipeline.project import PathLike, Project
from jury.progress import no_progress
from jury.results.review_report import ReviewInfo
from jury.results.scoring import ModelScore, add_coverage, coverage_warning, proportion, score_all, soft_f1_column

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation, Settings
    from jury.execution.store import Store
    from jury.progress import ProgressFactory


class Score(Result):
    """What ``jury.score`` returns: one ``ModelScore`` per model (run order) and what they came from."""

    scores: list[ModelScore]
    notes: list[str] = Field(default_factory=list, description="What the command line prints on stderr.")
    merged_stores: list[MergedSource] = Field(default_factory=list, description="Stores merged into the store used.")
    review_info: ReviewInfo | None = Field(None, description="The human review's decisions and agreement (review=).")
    # what the scores came from (a report reuses them: nothing is executed again)
    evaluation: Any = Field(exclude=True, repr=False)
    gold: dict[QuestionId, GoldItem] = Field(exclude=True, repr=False)
    records: list[RunRecord] = Field(exclude=True, repr=False)
    gold_path: Path = Field(exclude=True, repr=False)
    runs: list[RunFile] = Field(exclude=True, repr=False)
    dbs: list[str] = Field(default_factory=list, exclude=True, repr=False)  # db=: only these databases' questions
    verdicts: Any = Field(exclude=True, repr=False)  # jury.pipeline.verdict_inputs.VerdictInputs

    @property
    def settings(self) -> Settings:
        """The evaluation's settings (``jury.compare.outcomes.Settings``)."""
        settings: Settings = self.evaluation.settings
        return settings

    @property
    def models(self) -> list[str]:
        """The models scored, in run order."""
        return [s.model for s in self.scores]

    @property
    def executed(self) -> int:
        """Queries executed by this call (the others came from the store)."""
        return int(self.evaluation.executed)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.pipeline.verdict_inputs import review_text
        from jury.results.score_table import render_scores

        text = render_scores(self.scores, self.evaluation, fmt, width=width, wide=wide, merged_stores=self.merged_stores)
        return text + review_text(self.review_info, fmt)

    def per_question_jsonl(self) -> str:
        """One JSON line per (model, question): outcome, routing, overlap and every comparator's decision."""
        from jury.results.score_table import per_question_jsonl

        return per_question_jsonl(self.evaluation.pairs, self.evaluation.soft_f1)

    def write_per_question(self, path: PathLike) -> Path:
        """Write ``per_question_jsonl()`` to ``path`` (never one of the inputs, the store, a
        database or a locked verdict file)."""
        from jury.inputs.writer import write_output
        from jury.pipeline.outputs import guard_outputs

        path = Path(path)
        guard_outputs([path], self.inputs, store=self.store_path, db_root=self.db_root)
        write_output(path, self.per_question_jsonl())
        return path


def score(
    runs: RunFileArgs,
    options: ScoreOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    **overrides: Any,
) -> Score:
    """Execute every model's SQL and the gold SQL and score strict execution match.

    Every comparator is scored beside the deciding one; with locked files, the gold-clean and
    adjudicated columns too. Executions are cached in the store: a warm call executes nothing.

    Args:
        runs: run JSONL file(s) or published prediction files (BIRD's predict_dev.json), each one
            model, named after its file or as ``"NAME=PATH"`` or ``{NAME: PATH}`` (jury.inputs.run_files).
        options: a ``ScoreOptions`` (jury.options.score: every option of ``jury score`` but how the
            result is shown, each documented there), or none.
        project: the jury.toml the paths and settings left None default to (None: the working
            directory's).
        progress: a progress-bar factory.
        outputs: files the caller will write, refused before any work when one is an input, the
            store, a database or a locked verdict file.
        overrides: ScoreOptions' fields as keyword arguments (``gold=``, ``db_root=``, ``verdicts=``,
            ...), over ``options``'.

    Returns:
        A Score: one ModelScore per model (run order) with its coverage, and what they came from.

    Raises:
        InputError: a bad or missing input, named in one line.
    """
    from jury.pipeline.jobs import load_and_evaluate
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.verdict_inputs import add_verdict_columns, load_verdict_inputs, review_note

    o = job_options(ScoreOptions, "score", options, overrides)
    project, progress = project if project is not None else Project.load(), progress or no_progress
    run_paths = run_files(runs)
    if not run_paths:
        raise InputError("no run files: give at least one run JSONL file")
    f = _ScoreFiles.of(project, o, run_paths)
    guard_outputs(outputs, f.inputs, store=f.store, db_root=f.root)
    settings = _settings(project, o)
    locked = load_verdict_inputs(f.audit, o.verdicts, o.review, o.allow_superseded)  # locks first
    gold_file = project.gold(o.gold)
    notes: list[str] = []
    with project.open_store(o.store) as st:
        gold_items, records, ev = load_and_evaluate(gold_file, run_paths, f.root, st, settings, progress, f.positions, dbs=o.db)
        scores = _scored(ev, records, gold_items, st, o, progress, notes)
        merged = st.merged_sources()
    notes[:0] = [*ev.input_notes, *(w for w in (coverage_warning(ev),) if w is not None)]
    add_verdict_columns(scores, ev, gold_items, gold_file, locked.reviewed_audit, locked.reviewed_adjudications, runs=run_paths)
    # every value is of its field's type already: Score's validator is skipped (~4 ms warm; issue 46)
    return Score.model_construct(
        scores=scores, notes=notes + review_note(locked.review_info), merged_stores=merged, review_info=locked.review_info,
        evaluation=ev, gold=gold_items, records=records, gold_path=gold_file, runs=run_paths, dbs=o.db, verdicts=locked,
        inputs=[p for p in f.inputs if p is not None], store_path=f.store, db_root=f.root,
    )  # fmt: skip


@dataclass(frozen=True)
class _ScoreFiles:
    """What a score reads, as paths (jury.toml's where an option is left None)."""

    audit: Path | None
    store: Path
    root: Path | None
    positions: Path | None
    inputs: list[Path | None]  # every file read: none may be an output

    @classmethod
    def of(cls, project: Project, o: ScoreOptions, run_paths: list[RunFile]) -> _ScoreFiles:
        audit, positions = project.path("audit", o.audit), project.path("positions_from", o.positions_from)
        inputs = [*(f.path for f in run_paths), project.path("gold", o.gold), audit, *o.verdicts, o.review, positions]
        return cls(audit, project.store_path(o.store), project.db_root(o.db_root), positions, inputs)


def _settings(project: Project, o: ScoreOptions) -> Settings:
    """The evaluation's settings: the options over jury.toml's."""
    from jury.compare.comparators import NormalizeOptions

    normalize = NormalizeOptions(casefold=o.casefold, float_sig_digits=project.get("float_digits", o.float_digits))
    return project.settings(
        options=normalize, timeout_retries=o.timeout_retries, same_window=o.same_window, **evaluation_settings(dict(o))
    )


def db_filter(db: str | Sequence[str] | None) -> list[str]:
    """The db_ids of ``db=`` (one or several; None: none, every question)."""
    if db is None:
        return []
    return [db] if isinstance(db, str) else list(db)


def evaluation_settings(o: dict[str, Any]) -> dict[str, Any]:
    """The arguments of Project.settings among the evaluation options (all but the normalisation)."""
    names = (
        "comparator",
        "near_miss",
        "timeout",
        "row_cap",
        "workers",
        "executor",
        "ray_address",
        "db_url",
        "missing",
        "gold_errors",
    )
    return {**{n: o[n] for n in names}, "allow_privileged_login": o["allow_privileged_login"]}


def _scored(
    ev: Evaluation,
    records: list[RunRecord],
    gold_items: dict[QuestionId, GoldItem],
    st: Store,
    o: ScoreOptions,
    progress: ProgressFactory,
    notes: list[str],
) -> list[ModelScore]:
    """Every model's scores from the evaluation: the comparators' columns, the coverage, the execution
    errors and the protocol columns the options ask for (``notes`` gets what they say)."""
    from jury.results.aifunc_columns import add_execution_errors

    scores = score_all(ev.pairs)
    add_coverage(scores, ev)
    add_execution_errors(scores, ev.pairs, ev.reruns if ev.settings.timeout_retries else None)
    add_protocol_columns(
        scores, ev, records, gold_items, st, o.efficiency, o.repeats, o.function_set, o.dialect, progress, notes, o.soft_f1
    )
    return scores


def add_protocol_columns(
    scores: list[ModelScore],
    ev: Any,
    records: list[RunRecord],
    gold_items: Any,
    store: Any,
    efficiency: bool,
    repeats: int,
    function_set: str | None,
    dialect: Any,
    progress: Any = None,
    notes: list[str] | None = None,
    soft_f1: bool = False,
) -> None:
    """Fill the function-set (FSA), efficiency and Soft-F1 fields asked for (jury.compare.function_sets,
    .efficiency, .soft_f1); a note on too few repeats, or on answers Soft-F1 cannot score, is added to ``notes``."""

    if soft_f1:
        from jury.compare.soft_f1 import soft_f1_by_pair

        ev.soft_f1 = soft_f1_by_pair(ev, gold_items, records)
        column = soft_f1_column(ev.pairs, ev.soft_f1)
        for s in scores:
            s.soft_f1 = column.get(s.model)
        undecided = sum(c["undecided"] for c in column.values())
        if undecided and notes is not None:
            notes.append(
                f"note: Soft-F1 left out for the models with one of {undecided} answers whose rows are not all known here "
                "(a result over the row cap: raise --row-cap; or recorded as preview text)"
            )
    if function_set is not None:
        from jury.compare.function_sets import function_set_accuracy, function_set_matches
        from jury.compare.function_types import function_type_accuracy

        sets = function_set_matches(ev.pairs, records, gold_items, function_set, dialect)
        fsa = function_set_accuracy(ev.pairs, sets)
        types = function_type_accuracy(ev.pairs, sets)
        for s in scores:
            s.function_set = proportion(*fsa.get(s.model, (0, 0)))
            s.function_types = {name: proportion(k, n) for name, (k, n) in types.get(s.model, {}).items()}
    if efficiency:
        if repeats <= 10 and notes is not None:
            notes.append(
                f"note: {repeats} repeats: BIRD's outlier rule (3 standard deviations) can drop nothing "
                "below 11 repetitions; BIRD's script runs 100"
            )
        with (progress or no_progress)("timing matched pairs") as bar:
            timings = time_matches(ev, records, gold_items, store, repeats=repeats, progress=bar)
        table = efficiency_scores(ev.pairs, timings, repeats, cpu_model())
        solved = all_solved_time_ratios(ev.pairs, timings)
        for s in scores:
            s.efficiency = {**table[s.model], **solved[s.model]} if s.model in table else None
