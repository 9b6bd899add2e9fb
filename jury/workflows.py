"""Whole jobs: adjudicate a run, audit a gold file. Commands and re-audits call these."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from jury.errors import InputError, JuryError

ProgressFactory = Callable[[str], object]  # description -> context manager yielding (done, total) callback


class CostCapReached(JuryError):
    """--max-cost stopped the run before every ballot was asked."""


def _no_progress(_description: str):
    return nullcontext(None)


def require_keys(panel, jurors) -> None:
    missing = panel.missing_keys(list(jurors))
    if missing:
        raise InputError(f"no API key for panel {panel.name!r}: set {', '.join(missing)} (nothing was called)")


def raise_if_capped(stats) -> None:
    if stats.not_asked:
        raise CostCapReached(
            f"stopped at the cost cap: ${stats.cost_usd:.4f} spent this run, {stats.not_asked} ballots "
            "not asked; every vote so far is stored: rerun with a higher --max-cost to go on "
            "(no verdict file written for an incomplete set)"
        )


@dataclass
class JobResult:
    plan: object
    records: list[dict] | None = None
    stats: object = None
    path: Path | None = None
    reused_file: bool = False  # an identical locked file already existed: nothing was written
    evaluation: object = None
    summary: dict | None = None


def load_and_evaluate(gold_path: Path, run_paths: list[Path], db_root: Path | None, store, settings,
                      progress: ProgressFactory = _no_progress):
    """Gold and runs loaded and checked, every query executed or reused: (gold, records, evaluation)."""
    from jury.evaluate import evaluate
    from jury.io import load_gold, load_runs

    gold = load_gold(gold_path)
    records = load_runs(run_paths, gold)
    with progress("executing SQL") as bar:
        ev = evaluate(gold, records, db_root, store, settings, bar)
    return gold, records, ev


def adjudication_job(
    cfg, store, *, gold_path: Path, run_paths: list[Path], db_root: Path | None, panel, registry,
    settings, seed: int = 0, early_stop: bool = False, max_cost: float | None = None,
    models: list[str] | None = None, output: Path | None = None, plan_only: bool = False,
    supersedes: str | None = None, progress: ProgressFactory = _no_progress,
) -> JobResult:
    from jury.jury.adjudicate import plan_adjudication, run_adjudication
    from jury.verdict_files import write_adjudication

    if panel.ballot_style == "audit":
        raise InputError(f"panel {panel.name!r} ({panel.path}) is an audit panel; adjudication needs a blind or labelled one")
    gold, records, ev = load_and_evaluate(gold_path, run_paths, db_root, store, settings, progress)
    plan = plan_adjudication(ev, gold, records, panel, registry, models=models, seed=seed)
    if plan_only:
        return JobResult(plan, evaluation=ev)
    require_keys(panel, {b.juror.name: b.juror for b in plan.ballots()}.values())
    with progress("asking jurors") as bar:
        verdicts, stats = run_adjudication(plan, store, early_stop=early_stop, max_cost=max_cost, progress=bar)
    raise_if_capped(stats)
    path, reused = write_adjudication(
        cfg, output, plan, verdicts, store, ev, gold_path, run_paths,
        {"seed": seed, "early_stop": early_stop, "models": models, **settings.describe()},
        supersedes,
    )
    return JobResult(plan, verdicts, stats, path, reused, ev)


def audit_job(
    cfg, store, *, gold_path: Path, db_root: Path | None, panel, dbs: list[str] | None = None,
    question_ids: list[str] | None = None, split: str | None = None, max_cost: float | None = None,
    output: Path | None = None, plan_only: bool = False, supersedes: str | None = None,
    progress: ProgressFactory = _no_progress,
) -> JobResult:
    from jury.evaluate import execute_gold, resolve_databases
    from jury.io import load_gold
    from jury.jury.audit import plan_audit, run_audit, summarize
    from jury.verdict_files import write_audit

    if panel.ballot_style != "audit":
        raise InputError(f"panel {panel.name!r} ({panel.path}) is a {panel.ballot_style} adjudication panel; "
                         "the gold audit needs ballot_style = \"audit\"")
    items = list(load_gold(gold_path).values())
    if dbs:
        items = [i for i in items if i.db_id in set(dbs)]
    if question_ids:
        wanted = {str(q) for q in question_ids}
        items = [i for i in items if str(i.question_id) in wanted]
        missing = wanted - {str(i.question_id) for i in items}
        if missing:
            raise InputError(f"{gold_path}: no question {sorted(missing)[0]} (after --db filters)")
    if not items:
        raise InputError(f"{gold_path}: no questions to audit after the filters")
    items = [i if i.split or not split else i.model_copy(update={"split": split}) for i in items]
    databases = resolve_databases(items, db_root, store)
    results = None
    if panel.show_preview:
        with progress("executing gold SQL") as bar:
            results = execute_gold(items, databases, store, progress=bar)
    plan = plan_audit(items, panel, databases, results)
    if plan_only:
        return JobResult(plan)
    require_keys(panel, panel.jurors)
    with progress("auditing gold SQL") as bar:
        records, stats = run_audit(plan, store, max_cost=max_cost, progress=bar)
    raise_if_capped(stats)
    summary = summarize(records)
    settings = {"quorum": panel.quorum, "split": split, "dbs": dbs or None,
                "question_ids": sorted({str(q) for q in question_ids}) if question_ids else None}
    path, reused = write_audit(cfg, output, plan, records, summary, store, databases, gold_path, settings, supersedes)
    return JobResult(plan, records, stats, path, reused, summary=summary)
