"""`jury adjudicate`: send jury-eligible failures to a blind, family-disjoint jury."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import config, handle_errors, open_store, progress_bar
from jury.cli.jurycommon import print_plan, print_run_stats, raise_if_capped, require_keys
from jury.errors import InputError


@handle_errors
def adjudicate(
    runs: list[Path] = typer.Argument(..., help="Run JSONL files."),
    gold: Path | None = typer.Option(None, help="Gold file. Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    panel: str | None = typer.Option(None, help="Panel TOML file, or the name of one in panels/ (default: default)."),
    model: list[str] = typer.Option([], "--model", help="Adjudicate only this model (repeatable)."),
    plan: bool = typer.Option(False, "--plan", help="Make no calls: print ballots, estimated tokens and cost per model and juror."),
    max_cost: float | None = typer.Option(None, help="Stop cleanly before total spend of this run would pass USD; stored votes are kept."),
    early_stop: bool = typer.Option(False, "--early-stop", help="Stop asking once a majority is settled (e.g. two of three agree)."),
    seed: int | None = typer.Option(None, help="Seed of the answer-order shuffle (default 0); recorded in the verdict file."),
    families: Path | None = typer.Option(None, help="Family registry TOML (default panels/families.toml)."),
    comparator: str | None = typer.Option(None, help="Comparator deciding a match (default strict)."),
    near_miss: float | None = typer.Option(None, help="Overlap at or above which a mismatch is a near miss and skips the jury (default 0.5)."),
    workers: int | None = typer.Option(None, help="Parallel execution processes (default: CPU count)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Verdict file to write (default verdicts/adjudication-<time>.json)."),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db)."),
) -> None:
    """Execute (or reuse) every query, then ask each model's jury-eligible failures of its jurors.

    Only mismatches reach the jury: strict failures on correctly routed questions whose
    SQL executed and whose rows overlap the gold's below the near-miss threshold. Each
    goes to the first k jurors of the panel whose families differ from the model's, blind
    and with answer positions shuffled. Votes are stored as they arrive: a killed run
    resumes without repeating a call. Writes a hash-locked verdict file and prints
    strict vs adjudicated accuracy per model.
    """
    from jury.evaluate import Settings, evaluate
    from jury.io import load_gold, load_runs
    from jury.jury.adjudicate import plan_adjudication, run_adjudication, summarize
    from jury.jury.families import load_registry
    from jury.jury.panels import load_panel, resolve_panel_path
    from jury.scoring import score_all

    cfg = config()
    gold_path = cfg.path_of("gold", gold)
    if gold_path is None:
        raise InputError("no gold file: pass --gold or set gold in jury.toml")
    panel_obj = load_panel(resolve_panel_path(cfg.get("panel", panel), "default.toml"))
    registry = load_registry(families)
    gold_items = load_gold(gold_path)
    records = load_runs(runs, gold_items)
    settings = Settings(
        comparator=cfg.get("comparator", comparator, "strict"),
        near_miss=cfg.get("near_miss", near_miss, 0.5),
        workers=cfg.get("workers", workers, None) or Settings().workers,
    )
    seed_value = cfg.get("seed", seed, 0)
    cap = cfg.get("max_cost", max_cost, None)
    with open_store(cfg, store) as st:
        with progress_bar("executing SQL") as bar:
            ev = evaluate(gold_items, records, cfg.path_of("db_root", db_root), st, settings, bar)
        the_plan = plan_adjudication(ev, gold_items, records, panel_obj, registry, models=model or None, seed=seed_value)
        if plan:
            _print_plan(the_plan)
            return
        require_keys(panel_obj, {b.juror.name: b.juror for b in the_plan.ballots()}.values())
        with progress_bar("asking jurors") as bar:
            verdicts, stats = run_adjudication(
                the_plan, st, early_stop=early_stop, max_cost=cap, progress=bar
            )
        raise_if_capped(stats)
        from jury.verdict_files import write_adjudication

        path = write_adjudication(
            cfg, output, the_plan, verdicts, st, ev, gold_path, runs,
            {"seed": seed_value, "early_stop": early_stop, **settings.describe()},
        )
    rows = summarize(ev, verdicts, score_all(ev.pairs))
    _print_summary(rows, stats, path)


def _print_plan(plan) -> None:
    from rich.console import Console

    from jury.jury.runner import plan_rows

    print_plan(Console(), plan_rows(plan.ballots()), f"adjudication plan: panel {plan.panel.name}, no calls made",
               len(plan.groups), "failures")


def _print_summary(rows, stats, path) -> None:
    from rich.console import Console

    from jury.render import to_rich_table

    display = []
    for r in rows:
        c = r["composition"]
        display.append({
            "model": r["model"],
            "strict": f"{r['strict']['value']:.3f}" if r["strict"]["value"] is not None else "—",
            "adjudicated": f"{r['adjudicated']['value']:.3f} [{r['adjudicated']['low']:.3f}, {r['adjudicated']['high']:.3f}]"
            if r["adjudicated"]["value"] is not None else "—",
            "failures": r["adjudicated_failures"],
            **{k: c[k] for k in ("gold_defect", "format_equivalence", "genuine_error", "ambiguous")},
            "other": c["no_majority"] + c["undecided"],
        })
    console = Console()
    console.print(to_rich_table(
        display,
        ["model", "strict", "adjudicated", "failures", "gold_defect", "format_equivalence", "genuine_error", "ambiguous", "other"],
        ["model", "strict", "adjudicated [95% CI]", "adjudicated failures", "gold defect", "format equiv.", "genuine error", "ambiguous", "no majority / undecided"],
        title="strict vs adjudicated",
    ))
    print_run_stats(console, stats, path)
