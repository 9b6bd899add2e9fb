"""`jury audit-gold`: a panel of one juror per family judges every gold query."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import DB_URL_HELP, config, db_urls, handle_errors, open_store, progress_bar
from jury.cli.jurycommon import print_plan, print_run_stats
from jury.cli.written import after_write, missing_schema, sign_option, signer_for
from jury.errors import InputError


@handle_errors
def audit_gold(
    gold: Path | None = typer.Argument(None, help="Gold file (BIRD dev.json / train.json). Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
    panel: str | None = typer.Option(None, help="Audit panel TOML, or a name in panels/ (default: audit)."),
    db: list[str] = typer.Option([], "--db", help="Audit only questions of this db_id (repeatable)."),
    question_id: list[str] = typer.Option([], "--question-id", help="Audit only this question (repeatable)."),
    split: str | None = typer.Option(None, help="Split label (e.g. train, dev) for items without a `split` field."),
    quorum: int | None = typer.Option(
        None, min=1, help="Defective votes needed to flag (default: a strict majority of the panel, abstentions included)."
    ),
    plan: bool = typer.Option(False, "--plan", help="Make no calls: print ballots, estimated tokens and cost per juror."),
    max_cost: float | None = typer.Option(
        None, min=0, help="Stop cleanly before total spend of this run would pass USD; stored votes are kept."
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Verdict file to write (default verdicts/audit-<time>.json)."
    ),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db)."),
    sign: Path | None = sign_option(),
    checks: bool = typer.Option(
        True,
        "--checks/--no-checks",
        help="First run the deterministic gold checks of `jury check-gold` (no model, no cost) and record them in "
        "the audit file; the panel's show_checks shows them to the jurors as facts.",
    ),
    shard: str | None = typer.Option(
        None,
        help="I/N: ask only the ballots whose request hash falls in shard I of N, into this store, and write no "
        "audit file (exit 0); merge the shards' stores with `jury store merge`, then run without --shard.",
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send the ballots of OpenAI and Anthropic jurors through their batch APIs (about half the price; "
        "results within 24 h): exits 3 while ballots are pending, rerun to collect (see jury batch status).",
    ),
) -> None:
    """Audit the gold SQL itself: each juror judges each gold query alone, never seeing model output.

    A juror sees the question, the evidence (panel option), the gold SQL and the column
    lists of the tables it touches (optionally a preview of the gold result). A query is
    flagged when a strict majority of the panel says defective (abstentions that could
    have flagged it make it undecided, not flagged). Prints flag rates
    overall, by difficulty, by split and per juror, Fleiss' kappa, defect types and
    agreement (Krippendorff's alpha, the range of pairwise Cohen's kappa), and
    writes a hash-locked audit file (use it with `jury score --audit`).
    """
    from jury.cli.common import make_console  # fits a terminal; unwrapped in logs; text made safe
    from jury.judging.panels import load_panel, resolve_panel_path
    from jury.pipeline.jobs import audit_job

    cfg = config()
    from jury.cli.common import guard_outputs  # outputs never destroy inputs (issue 9.1)

    guard_outputs(
        [output],
        [cfg.path_of("gold", gold)],
        store=cfg.store_path(store),
        db_root=cfg.path_of("db_root", db_root),
        verdict_output=True,
    )
    from jury.judging.shards import parse_shard

    this_shard = parse_shard(shard)
    signer = signer_for(sign)
    new_schema = missing_schema(cfg, output)
    gold_path = cfg.path_of("gold", gold)
    if gold_path is None:
        raise InputError("no gold file: pass it as an argument or set gold in jury.toml")
    panel_obj = load_panel(resolve_panel_path(cfg.get("audit_panel", panel), "audit.toml"))
    if cfg.get("quorum", quorum) is not None:
        panel_obj.quorum = cfg.get("quorum", quorum)
    console = make_console()
    with open_store(cfg, store) as st:
        job = audit_job(
            cfg,
            st,
            gold_path=gold_path,
            db_root=cfg.path_of("db_root", db_root),
            db_urls=db_urls(cfg, db_url),
            panel=panel_obj,
            dbs=db or None,
            question_ids=question_id or None,
            split=cfg.get("split", split, None),
            max_cost=cfg.get("max_cost", max_cost, None),
            output=output,
            plan_only=plan,
            progress=progress_bar,
            checks=checks,
            shard=this_shard,
            batch=batch,
        )
    if plan:
        ballots = job.plan.ballots() if this_shard is None else this_shard.ballots(job.plan.ballots())
        where = f", shard {this_shard} (only its ballots)" if this_shard else ""
        print_plan(
            console,
            ballots,
            f"audit plan: panel {panel_obj.name}{where}, no calls made",
            len(job.plan.items),
            "gold queries",
            batch,
        )
        return
    if this_shard is not None and job.stats is not None:  # the shard's votes are stored: no audit file
        from jury.judging.shards import shard_message

        console.print(shard_message(this_shard, job.stats, cfg.store_path(store)), markup=False, highlight=False)
        return
    assert job.summary is not None  # set by every job that is not a plan
    print_audit_summary(console, job.summary)
    print_check_summary(console, job.records or [])
    print_run_stats(console, job.stats, job.path, job.reused_file)
    after_write(console, job.path, signer, new_schema)


def print_check_summary(console, records: list[dict]) -> None:
    """One line: how many gold queries each deterministic check flagged (records with checks)."""
    from jury.vocab import GOLD_CHECKS

    checked = [r["checks"] for r in records if r.get("checks") is not None]
    if not checked:
        return
    counts = {name: sum(any(f["name"] == name for f in c) for c in checked) for name in GOLD_CHECKS}
    console.print(
        f"gold checks flagged {sum(bool(c) for c in checked)} of {len(checked)} gold queries: "
        + ("; ".join(f"{name} {n}" for name, n in counts.items() if n) or "none"),
        markup=False,
        highlight=False,
    )


def print_audit_summary(console, summary: dict) -> None:
    o = summary["overall"]
    pct = lambda r: "—" if r["rate"] is None else f"{100 * r['rate']:.1f}%"  # noqa: E731
    console.print(f"flagged {o['flagged']} of {o['questions']} gold queries ({pct(o)}); undecided {summary['undecided']}")
    for title, key in (("by difficulty", "by_difficulty"), ("by split", "by_split")):
        parts = [f"{k}: {v['flagged']}/{v['questions']} ({pct(v)})" for k, v in summary[key].items()]
        console.print(f"  {title}: " + "; ".join(parts))
    for name, j in summary["jurors"].items():
        rate = "—" if j["flag_rate"] is None else f"{100 * j['flag_rate']:.1f}%"
        console.print(f"  juror {name}: flags {j['defective']} of {j['valid_votes']} ({rate}), abstained {j['abstentions']}")
    kappa = summary["fleiss_kappa"]
    console.print(f"  Fleiss' kappa: {'—' if kappa is None else f'{kappa:.3f}'}")
    if summary["defect_types"]:
        console.print("  defect types (votes): " + ", ".join(f"{k} {v}" for k, v in summary["defect_types"].items()))
    if summary.get("agreement") is not None:
        from jury.judging.agreement import agreement_line

        console.print("  " + agreement_line(summary["agreement"]), markup=False, highlight=False)
