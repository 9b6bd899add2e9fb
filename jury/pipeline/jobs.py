"""What every job shares: the gold and runs loaded and evaluated (``load_and_evaluate``), the
juror jobs' result (``JobResult``) and their refusals after the calls (a cost cap reached, ballots
pending or failed, a verdict file that cannot be written)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jury.errors import CostCapReached, IncompleteRun, InputError, JuryError
from jury.progress import ProgressFactory, no_progress

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation, PairResult, Settings
    from jury.execution.store import Store
    from jury.inputs.records import GoldItem, QuestionId, RunRecord
    from jury.inputs.run_files import RunFile
    from jury.judging.agreement import AgreementSummary
    from jury.judging.rules import AuditSummary
    from jury.judging.runner import RunStats

PlanT = TypeVar("PlanT")  # jury.judging.adjudication.AdjudicationPlan or jury.judging.gold_audit.AuditPlan


def raise_if_capped(stats: RunStats) -> None:
    if stats.not_asked:
        raise CostCapReached(
            f"stopped at the cost cap: ${stats.cost_usd:.4f} spent this run, {stats.not_asked} ballots "
            "not asked; every vote so far is stored: rerun with a higher max_cost to go on "
            "(no verdict file written for an incomplete set)"
        )


def raise_if_pending(stats: RunStats) -> None:
    """--batch: ballots still waiting in providers' batches are not votes yet: no verdict file.
    First, a warning per batch that could not be polled or whose results left lines out."""

    for note in getattr(stats, "batch_notes", None) or []:
        print(f"Warning: {note}", file=sys.stderr, flush=True)
    waiting = getattr(stats, "batch_pending", None)
    if not waiting:
        return
    n = sum(waiting.values())
    where = ", ".join(f"{k} ({v})" for k, v in sorted(waiting.items()))
    failed = f"; {stats.transport_failures} more got no vote and will be asked again" if stats.transport_failures else ""
    raise IncompleteRun(
        f"{n} ballot{'s' if n != 1 else ''} pending in batches: {where}{failed}; no verdict file written for an "
        "incomplete set; every reply received is stored: rerun the same command (or `jury batch collect`) once "
        "they end (`jury batch status` lists them)"
    )


def raise_if_incomplete(stats: RunStats) -> None:
    """A ballot that failed on transport or configuration is not a vote: no verdict file."""
    n = stats.transport_failures
    if not n:
        return
    reason, times = stats.failure_reasons.most_common(1)[0] if stats.failure_reasons else ("unknown", n)
    raise IncompleteRun(
        f"{n} ballot{'s' if n != 1 else ''} got no vote (transport or configuration failure; "
        f"most often: {reason}{f' ({times}x)' if times > 1 else ''}); no verdict file written for an "
        f"incomplete set; every vote received is stored: a rerun asks only " + (f"those {n} ballots" if n != 1 else "that ballot")
    )


def write_failed(exc: OSError, output: Path | None) -> JuryError:
    where = output if output is not None else "the verdicts folder"
    return JuryError(
        f"{where}: cannot write the verdict file: {exc.strerror or exc}; every vote is stored: "
        "rerun once it can be written (no call is repeated)"
    )


@dataclass
class JobResult(Generic[PlanT]):
    plan: PlanT
    records: list[dict[str, Any]] | None = None
    stats: RunStats | None = None
    path: Path | None = None
    reused_file: bool = False  # an identical locked file already existed: nothing was written
    evaluation: Evaluation | None = None
    summary: AuditSummary | None = None  # an audit's flag rates (jury.judging.audit.summarize)
    agreement: AgreementSummary | None = None  # an adjudication's agreement (jury.judging.agreement.agreement_summary)


def load_and_evaluate(
    gold_path: Path,
    runs: Sequence[RunFile | Path],
    db_root: Path | None,
    store: Store,
    settings: Settings | None,
    progress: ProgressFactory = no_progress,
    positions_from: Path | None = None,
    before_execution: Callable[[list[RunRecord]], None] | None = None,
    dbs: Sequence[str] = (),
    keep: Callable[[PairResult], bool] | None = None,
) -> tuple[dict[QuestionId, GoldItem], list[RunRecord], Evaluation]:
    """Gold and runs loaded and checked, every query executed or reused: (gold, records, evaluation).
    A run file may be a published prediction file (load_run_files); ``positions_from``: the gold
    file its entries index by position (default: the gold file); ``before_execution``: called
    with the run records once they are read, before any SQL runs (the checks before work);
    ``dbs``: only the questions of these db_ids (the gold's others and their answers left out);
    ``keep``: the pairs whose results the evaluation keeps (jury.compare.outcomes.evaluate; None: all)."""
    from jury.compare.outcomes import evaluate
    from jury.inputs.io import load_gold

    gold = load_gold(gold_path)
    notes: list[str] = []  # what reading the runs found that the outputs must say (jury.inputs.importers)
    records = load_run_files(runs, gold, gold_path, positions_from, notes)
    if dbs:
        from jury.compare.gold_checks import select_items

        gold = {g.question_id: g for g in select_items(list(gold.values()), dbs, [], gold_path, "score")}
        kept = [r for r in records if r.question_id in gold]
        lost = [m for m in dict.fromkeys(r.model for r in records) if m not in {r.model for r in kept}]
        if lost:
            raise InputError(
                f"model {lost[0]!r} answers no question of db_id {', '.join(dbs)} in {gold_path}; "
                "is its prediction file indexed by this gold's positions? (--positions-from)"
            )
        records = kept
    if before_execution is not None:
        before_execution(records)
    with progress("executing SQL") as bar:
        ev = evaluate(gold, records, db_root, store, settings, bar, keep=keep)
    ev.input_notes = notes
    return gold, records, ev


def load_run_files(
    runs: Sequence[RunFile | Path],
    gold: dict[QuestionId, GoldItem],
    gold_path: Path,
    positions_from: Path | None = None,
    notes: list[str] | None = None,
) -> list[RunRecord]:
    """Run records of run JSONL files and of published prediction files, told apart by their
    content (jury.inputs.kinds): BIRD's predict_dev.json and one SQL per line are each one model,
    named NAME when given as NAME=PATH (jury.inputs.run_files), else after the file, whose
    entries index ``positions_from`` (default: the gold file) by position; only the gold's
    questions are kept (``notes`` gets a line on entries that repeat a question). A NAME given for a run JSONL (which names its models in its lines), a
    model named twice and a model answering a question twice, across the files, are errors."""
    from jury.inputs.importers import prediction_runs
    from jury.inputs.io import load_gold_list, load_runs
    from jury.inputs.kinds import PREDICTION_KINDS, sniff_kind
    from jury.inputs.run_files import run_files

    files = run_files(runs)
    predicted = [f for f in files if sniff_kind(f.path) in PREDICTION_KINDS]
    jsonl = [f for f in files if f not in predicted]
    for f in jsonl:
        if f.model is not None:
            raise InputError(
                f"{f}: NAME=PATH names a prediction file's model, and {f.path} is a run file, "
                "which names its models in its lines; give it without NAME="
            )
    records = load_runs([f.path for f in jsonl], gold) if jsonl or not predicted else []
    if not predicted:
        if positions_from is not None:
            raise InputError(f"positions_from ({positions_from}) is for prediction files; none of the runs is one")
        return records
    positions = load_gold_list(positions_from if positions_from is not None else gold_path)
    from_files = prediction_runs(predicted, gold, positions, notes)
    mine = {r.model for r in records}
    for r in from_files:
        if r.model in mine:
            named = next((f for f in predicted if f.model == r.model), None)
            raise InputError(
                f"model {r.model!r} is both "
                + (f"the NAME of {named}" if named is not None else "a prediction file's name")
                + f" and a model of the run files ({', '.join(str(f) for f in jsonl)}); "
                + ("give it another NAME" if named is not None else "name it apart with NAME=PATH")
            )
    return records + from_files
