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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from jury.api.result import Result
from jury.errors import InputError
from jury.pipeline.project import PathLike, Project, as_paths
from jury.progress import no_progress
from jury.results.scoring import ModelScore
from jury.vocab import DEFAULT_EFFICIENCY_REPEATS

if TYPE_CHECKING:
    from jury.progress import ProgressFactory


class Score(Result):
    """What ``jury.score`` returns: one ``ModelScore`` per model (run order) and what they came from."""

    scores: list[ModelScore]
    notes: list[str] = Field(default_factory=list, description="What the command line prints on stderr.")
    merged_stores: list[dict] = Field(default_factory=list, description="Stores merged into the store used.")
    review_info: dict | None = Field(None, description="The human review's decisions and agreement (review=).")
    # what the scores came from (a report reuses them: nothing is executed again)
    evaluation: Any = Field(exclude=True, repr=False)
    gold: dict = Field(exclude=True, repr=False)  # question id -> GoldItem
    records: list = Field(exclude=True, repr=False)  # RunRecord
    gold_path: Path = Field(exclude=True, repr=False)
    runs: list[Path] = Field(exclude=True, repr=False)
    verdicts: Any = Field(exclude=True, repr=False)  # jury.pipeline.verdict_inputs.VerdictInputs

    @property
    def settings(self):
        """The evaluation's settings (``jury.compare.outcomes.Settings``)."""
        return self.evaluation.settings

    @property
    def models(self) -> list[str]:
        return [s.model for s in self.scores]

    @property
    def executed(self) -> int:
        """Queries executed by this call (the others came from the store)."""
        return self.evaluation.executed

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
    runs: PathLike | Sequence[PathLike],
    *,
    gold: PathLike | None = None,
    db_root: PathLike | None = None,
    db_url: str | None = None,
    allow_privileged_login: bool = False,
    store: PathLike | None = None,
    comparator: str | None = None,
    near_miss: float | None = None,
    timeout: float | None = None,
    row_cap: int | None = None,
    workers: int | None = None,
    executor: str | None = None,
    ray_address: str | None = None,
    casefold: bool = False,
    float_digits: int | None = None,
    audit: PathLike | None = None,
    verdicts: PathLike | Sequence[PathLike] = (),
    review: PathLike | None = None,
    allow_superseded: bool = False,
    efficiency: bool = False,
    repeats: int = DEFAULT_EFFICIENCY_REPEATS,
    function_set: str | None = None,
    dialect: str = "sqlite",
    soft_f1: bool = False,
    missing: str | None = None,
    positions_from: PathLike | None = None,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
) -> Score:
    """Execute every model's SQL and the gold SQL and score strict execution match.

    ``runs``: run JSONL file(s), or published prediction files (BIRD's predict_dev.json, one SQL
    per line), each one model named after its file, indexing ``positions_from`` (default
    jury.toml's, else the gold file) by position. ``gold``, ``db_root``, ``store`` and the settings default to
    ``project``'s jury.toml (None: the working directory's). ``audit``: a locked audit file
    (the gold-clean column); ``verdicts``: locked adjudication files (the adjudicated column);
    ``review``: a locked review file whose decisions take precedence over the jury's. A
    superseded verdict file is refused unless ``allow_superseded``. ``efficiency``: time every
    matched pair ``repeats`` times (VES, R-VES); ``function_set``: function-set accuracy over
    the names matching this glob or ``re:REGEX`` (parsed as ``dialect``); ``soft_f1``: BIRD
    mini-dev's Soft-F1 per model (jury.compare.soft_f1). ``missing``: what a gold
    question a model's run has no line for counts as, ``"exclude"`` (left out of its
    denominators; the default, else jury.toml's) or ``"fail"`` (a wrong answer, BIRD's rule);
    each score carries its coverage (``answered`` of ``gold_questions``). ``allow_privileged_login``:
    run on an engine through a login that can do more than read (refused by default; recorded
    in the JSON's provenance). ``outputs``: files
    the caller will write, refused before any work when one is an input, the store, a database
    or a locked verdict file.
    """
    from jury.compare.comparators import NormalizeOptions
    from jury.pipeline.jobs import load_and_evaluate
    from jury.pipeline.outputs import guard_outputs
    from jury.pipeline.verdict_inputs import add_verdict_columns, load_verdict_inputs, review_note
    from jury.results.scoring import add_coverage, coverage_warning, score_all

    project = project if project is not None else Project.load()
    progress = progress or no_progress
    run_paths = as_paths(runs)
    if not run_paths:
        raise InputError("no run files: give at least one run JSONL file")
    if repeats < 1:
        raise InputError(f"repeats must be at least 1, got {repeats}")
    audit_path = project.path("audit", audit)
    verdict_paths = as_paths(verdicts)
    review_path = Path(review) if review is not None else None
    store_path, root = project.store_path(store), project.db_root(db_root)
    positions = project.path("positions_from", positions_from)
    inputs = [*run_paths, project.path("gold", gold), audit_path, *verdict_paths, review_path, positions]
    guard_outputs(outputs, inputs, store=store_path, db_root=root)
    settings = project.settings(
        comparator=comparator,
        near_miss=near_miss,
        timeout=timeout,
        row_cap=row_cap,
        workers=workers,
        executor=executor,
        ray_address=ray_address,
        db_url=db_url,
        allow_privileged_login=allow_privileged_login,
        options=NormalizeOptions(casefold=casefold, float_sig_digits=project.get("float_digits", float_digits)),
        missing=missing,
    )
    locked = load_verdict_inputs(audit_path, verdict_paths, review_path, allow_superseded)  # locks first
    gold_file = project.gold(gold)
    notes: list[str] = []
    with project.open_store(store) as st:
        gold_items, records, ev = load_and_evaluate(gold_file, run_paths, root, st, settings, progress, positions)
        scores = score_all(ev.pairs)
        add_coverage(scores, ev)
        add_protocol_columns(
            scores, ev, records, gold_items, st, efficiency, repeats, function_set, dialect, progress, notes, soft_f1
        )
        merged = st.merged_sources()
    warning = coverage_warning(ev)
    if warning is not None:
        notes.insert(0, warning)
    add_verdict_columns(scores, ev, gold_items, gold_file, locked.reviewed_audit, locked.reviewed_adjudications, runs=run_paths)
    return Score(
        scores=scores,
        notes=notes + review_note(locked.review_info),
        merged_stores=merged,
        review_info=locked.review_info,
        evaluation=ev,
        gold=gold_items,
        records=records,
        gold_path=gold_file,
        runs=run_paths,
        verdicts=locked,
        inputs=[p for p in inputs if p is not None],
        store_path=store_path,
        db_root=root,
    )


def add_protocol_columns(
    scores, ev, records, gold_items, store, efficiency, repeats, function_set, dialect, progress=None, notes=None, soft_f1=False
) -> None:
    """Fill the function-set (FSA), efficiency and Soft-F1 fields asked for (jury.compare.function_sets,
    .efficiency, .soft_f1); a note on too few repeats, or on answers Soft-F1 cannot score, is added to ``notes``."""
    from jury.results.scoring import proportion

    if soft_f1:
        from jury.compare.soft_f1 import soft_f1_by_pair
        from jury.results.scoring import soft_f1_column

        ev.soft_f1 = soft_f1_by_pair(ev)
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

        fsa = function_set_accuracy(ev.pairs, function_set_matches(ev.pairs, records, gold_items, function_set, dialect))
        for s in scores:
            s.function_set = proportion(*fsa.get(s.model, (0, 0)))
    if efficiency:
        from jury.compare.efficiency import cpu_model, efficiency_scores, time_matches

        if repeats <= 10 and notes is not None:
            notes.append(
                f"note: {repeats} repeats: BIRD's outlier rule (3 standard deviations) can drop nothing "
                "below 11 repetitions; BIRD's script runs 100"
            )
        with (progress or no_progress)("timing matched pairs") as bar:
            timings = time_matches(ev, records, gold_items, store, repeats=repeats, progress=bar)
        table = efficiency_scores(ev.pairs, timings, repeats, cpu_model())
        for s in scores:
            s.efficiency = table.get(s.model)
