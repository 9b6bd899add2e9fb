"""`jury adjudicate`: send jury-eligible failures to a blind, family-disjoint jury."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    DB_URL_HELP,
    EXECUTOR_HELP,
    RAY_ADDRESS_HELP,
    config,
    gold_path,
    handle_errors,
    open_store,
    progress_bar,
    settings,
)
from jury.cli.jurycommon import print_plan, print_run_stats
from jury.cli.written import after_write, missing_schema, sign_option, signer_for


@handle_errors
def adjudicate(
    runs: list[Path] = typer.Argument(..., help="Run JSONL files."),
    gold: Path | None = typer.Option(None, help="Gold file. Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
    panel: str | None = typer.Option(None, help="Panel TOML file, or the name of one in panels/ (default: default)."),
    model: list[str] = typer.Option([], "--model", help="Adjudicate only this model (repeatable)."),
    plan: bool = typer.Option(
        False, "--plan", help="Make no calls: print ballots, estimated tokens and cost per model and juror."
    ),
    max_cost: float | None = typer.Option(
        None, min=0, help="Stop cleanly before total spend of this run would pass USD; stored votes are kept."
    ),
    early_stop: bool = typer.Option(
        False, "--early-stop", help="Stop asking once a majority is settled (e.g. two of three agree)."
    ),
    seed: int | None = typer.Option(None, help="Seed of the answer-order shuffle (default 0); recorded in the verdict file."),
    swap: bool | None = typer.Option(
        None,
        "--swap/--no-swap",
        help="Each juror judges both answer orders; a juror whose two votes disagree abstains as inconsistent. "
        "Doubles the calls (see --plan). Default: the panel's swap.",
    ),
    review_passes: float = typer.Option(
        0.0,
        "--review-passes",
        min=0.0,
        max=1.0,
        help="Also send this fraction of each model's strict matches (a seeded sample) to the jury on the same "
        "blind ballot; a sampled pass judged a genuine error is a false pass (see jury report).",
    ),
    taxonomy: str | None = typer.Option(
        None,
        help="Error taxonomy (a name in panels/taxonomies/, e.g. plsqlbench or spider2-aifunc, or a TOML path): a juror "
        "voting genuine error also picks a category. Default: the panel's taxonomy, else none.",
    ),
    families: Path | None = typer.Option(None, help="Family registry TOML (default panels/families.toml)."),
    comparator: str | None = typer.Option(None, help="Comparator deciding a match (default strict)."),
    near_miss: float | None = typer.Option(
        None, help="Overlap at or above which a mismatch is a near miss and skips the jury (default 0.5)."
    ),
    workers: int | None = typer.Option(None, help="Parallel execution processes (default: CPU count)."),
    executor: str | None = typer.Option(None, "--executor", help=EXECUTOR_HELP),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Verdict file to write (default verdicts/adjudication-<time>.json)."
    ),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db)."),
    sign: Path | None = sign_option(),
    shard: str | None = typer.Option(
        None,
        help="I/N: ask only the ballots whose request hash falls in shard I of N, into this store, and write no "
        "verdict file (exit 0); merge the shards' stores with `jury store merge`, then run without --shard.",
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send the ballots of OpenAI and Anthropic jurors through their batch APIs (about half the price; "
        "results within 24 h): exits 3 while ballots are pending, rerun to collect (see jury batch status).",
    ),
) -> None:
    """Execute (or reuse) every query, then ask each model's jury-eligible failures of its jurors.

    Only mismatches reach the jury: strict failures on correctly routed questions whose
    SQL executed and whose rows overlap the gold's below the near-miss threshold. Each
    goes to the first k jurors of the panel whose families differ from the model's, blind
    and with answer positions shuffled. Votes are stored as they arrive: a killed run
    resumes without repeating a call. Writes a hash-locked verdict file and prints
    strict vs adjudicated accuracy per model, then one line of juror agreement
    (Krippendorff's alpha, pairwise Cohen's kappa, position bias on blind ballots).
    """
    from jury.cli.common import make_console  # fits a terminal; unwrapped in logs; text made safe
    from jury.judging.families import load_registry
    from jury.judging.panels import load_panel, resolve_panel_path
    from jury.pipeline.jobs import adjudication_job
    from jury.results.columns import adjudication_summary
    from jury.results.scoring import score_all

    cfg = config()
    from jury.cli.common import guard_outputs  # outputs never destroy inputs (issue 9.1)

    guard_outputs(
        [output],
        [*runs, cfg.path_of("gold", gold)],
        store=cfg.store_path(store),
        db_root=cfg.path_of("db_root", db_root),
        verdict_output=True,
    )
    from jury.judging.shards import parse_shard

    this_shard = parse_shard(shard)
    signer = signer_for(sign)
    new_schema = missing_schema(cfg, output)
    panel_obj = load_panel(resolve_panel_path(cfg.get("panel", panel), "default.toml"))
    console = make_console()
    with open_store(cfg, store) as st:
        job = adjudication_job(
            cfg,
            st,
            gold_path=gold_path(cfg, gold),
            run_paths=list(runs),
            db_root=cfg.path_of("db_root", db_root),
            panel=panel_obj,
            registry=load_registry(families),
            settings=settings(
                cfg,
                comparator=comparator,
                near_miss=near_miss,
                workers=workers,
                executor=executor,
                ray_address=ray_address,
                db_url=db_url,
            ),
            seed=cfg.get("seed", seed, 0),
            early_stop=early_stop,
            swap=swap,
            review_passes=review_passes,
            taxonomy=taxonomy,
            max_cost=cfg.get("max_cost", max_cost, None),
            models=model or None,
            output=output,
            plan_only=plan,
            progress=progress_bar,
            shard=this_shard,
            batch=batch,
        )
    if plan:
        ballots = job.plan.ballots() if this_shard is None else this_shard.ballots(job.plan.ballots())
        print_plan(
            console,
            ballots,
            f"adjudication plan: panel {panel_obj.name}"
            + (f", shard {this_shard} (only its ballots)" if this_shard else "")
            + ", no calls made",
            len(job.plan.groups),
            "failures and sampled passes" if review_passes else "failures",
            batch,
        )
        return
    if this_shard is not None and job.stats is not None:  # the shard's votes are stored: no verdict file
        from jury.judging.shards import shard_message

        console.print(shard_message(this_shard, job.stats, cfg.store_path(store)), markup=False, highlight=False)
        return
    assert job.records is not None and job.evaluation is not None  # set by every job that is not a plan
    rows = adjudication_summary(job.records, score_all(job.evaluation.pairs), set(job.plan.families))
    from jury.judging.agreement import agreement_line, agreement_summary

    agreement = agreement_line(agreement_summary(job.records, panel_obj.ballot_style))  # from the votes
    _print_summary(console, rows, job.stats, job.path, job.reused_file, agreement)
    after_write(console, job.path, signer, new_schema)


def _print_summary(console, rows, stats, path, reused_file, agreement: str | None = None) -> None:
    from jury.results.render import to_rich_table
    from jury.vocab import CATEGORIES, Verdict

    display: list[dict[str, object]] = []
    for r in rows:
        c = r["composition"]
        display.append(
            {
                "model": r["model"],
                "strict": f"{r['strict']['value']:.3f}" if r["strict"]["value"] is not None else "—",
                "adjudicated": f"{r['adjudicated']['value']:.3f} [{r['adjudicated']['low']:.3f}, {r['adjudicated']['high']:.3f}]"
                if r["adjudicated"]["value"] is not None
                else "—",
                "failures": r["adjudicated_failures"],
                **{k: c[k] for k in CATEGORIES},
                "other": c[Verdict.NO_MAJORITY] + c[Verdict.UNDECIDED],
            }
        )
    console.print(
        to_rich_table(
            display,
            ["model", "strict", "adjudicated", "failures", *CATEGORIES, "other"],
            [
                "model",
                "strict",
                "adjudicated [95% CI]",
                "adjudicated failures",
                "gold defect",
                "format equiv.",
                "genuine error",
                "ambiguous",
                "no majority / undecided",
            ],
            title="strict vs adjudicated",
        )
    )
    if agreement is not None:
        console.print(agreement, markup=False, highlight=False)
    print_run_stats(console, stats, path, reused_file)
