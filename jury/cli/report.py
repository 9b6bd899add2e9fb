"""`jury report`: strict, gold-clean and adjudicated columns with intervals, ranks and figures."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import check_format, emit, handle_errors, job_options, option, progress_bar, table_width
from jury.errors import InputError

# the help of `jury report`'s own options
_HELP = {
    "runs": (
        "Run JSONL files (one line per model and question), or BIRD prediction files as published, NAME=PATH "
        "naming one's model (see jury score); none with --gold-defects."
    ),
    "verdicts": "Locked adjudication file(s): the adjudicated column (repeatable).",
    "strength": (
        "Column the gold-defect share is correlated with: adjudicated, strict or gold_clean (default: "
        "adjudicated with --verdicts, else gold_clean with an audit, else strict)."
    ),
    "control": "Negative-control model: its strict → adjudicated lift and its gap to the next row.",
    "families": "Family registry TOML for models the verdict files do not name (default: the run records' family fields).",
    "fmt": "Output format: table, csv, json, md, or html (a static site written to the -o folder).",
    "wide": "Table and md: also show each model's near-miss and not-executed counts; csv and json always hold every column.",
    "review": ("Locked review file (`jury review lock`): people's decisions take precedence over the jury's; shows reviewer κ."),
    "rank_resamples": "Bootstrap resamples of the questions for each model's rank interval (at least 1,000).",
    "model": "Report only this model of the runs (repeatable): one a demo panel judged, say.",
    "gold_defects": (
        "Instead: the gold queries the --audit file flagged, as a table to send upstream (md, csv, json or "
        "table): each with its defect types, every vote's reasons, the deterministic checks' evidence, a "
        "preview of the gold's result and the audit file's hash. Needs no run files."
    ),
    "review_sample": (
        "Locked sample file (jury review sample) two reviewers decided: the report gets a 'corrected' section, "
        "the panel's gold defect rate (and credited rate) corrected by them with intervals, and the panel's "
        "sensitivity and specificity on the sample, as jury review corrected computes them."
    ),
    "sample_review": "With --review-sample: a reviewer's locked review file of that sample (give it twice: A and B).",
    "settled": "With --review-sample: the adjudication round file (jury review settle) settling the two reviewers' disagreements.",
}


@handle_errors
def report(
    ctx: typer.Context,
    runs: list[Path] | None = typer.Argument(None, help=_HELP["runs"]),
    gold: Path | None = option("gold"),
    db_root: Path | None = option("db_root"),
    db: list[str] = option("db"),
    db_url: str | None = option("db_url"),
    allow_privileged_login: bool = option("allow_privileged_login"),
    audit: Path | None = typer.Option(None, help="Locked audit file: the gold-clean column. Default: jury.toml's audit."),
    verdicts: list[Path] = typer.Option([], "--verdicts", help=_HELP["verdicts"]),
    strength: str | None = typer.Option(None, help=_HELP["strength"]),
    control: str | None = typer.Option(None, help=_HELP["control"]),
    families: Path | None = typer.Option(None, help=_HELP["families"]),
    fmt: str = typer.Option("table", "--format", "-f", help=_HELP["fmt"]),
    output: Path | None = option("output"),
    plots: Path | None = typer.Option(None, "--plots", writable=True, help="Also write the report's figures to this folder."),
    comparator: str | None = option("comparator"),
    near_miss: float | None = option("near_miss"),
    timeout: float | None = option("timeout"),
    row_cap: int | None = option("row_cap"),
    workers: int | None = option("workers"),
    executor: str | None = option("executor"),
    ray_address: str | None = option("ray_address"),
    casefold: bool = option("casefold"),
    float_digits: int | None = option("float_digits"),
    store: Path | None = option("store"),
    wide: bool = typer.Option(False, "--wide", help=_HELP["wide"]),
    allow_superseded: bool = option("allow_superseded"),
    review: Path | None = typer.Option(None, "--review", help=_HELP["review"]),
    rank_resamples: int = typer.Option(1000, "--rank-resamples", help=_HELP["rank_resamples"]),
    seed: int = typer.Option(0, "--seed", help="Seed of the rank-stability bootstrap (the same seed, the same intervals)."),
    missing: str | None = option("missing"),
    gold_errors: str | None = option("gold_errors"),
    positions_from: Path | None = option("positions_from"),
    model: list[str] = typer.Option([], "--model", help=_HELP["model"]),
    gold_defects: bool = typer.Option(False, "--gold-defects", help=_HELP["gold_defects"]),
    compare_panels: list[Path] = typer.Option(
        [],
        "--compare-panels",
        help="-f html: two verdict files of two panels (give it twice: two audits of this gold, or two adjudications "
        "of these runs): the site gets a 'Two panels compared' section, as jury compare-panels prints it.",
    ),
    review_sample: Path | None = typer.Option(None, "--review-sample", help=_HELP["review_sample"]),
    sample_review: list[Path] = typer.Option([], "--sample-review", help=_HELP["sample_review"]),
    settled: Path | None = typer.Option(None, "--settled", help=_HELP["settled"]),
) -> None:
    """Publish strict, gold-clean and adjudicated accuracy per model, from locked verdict files.

    Columns (each a Wilson 95% interval over the questions the model routed to the right
    database; gold queries that fail are left out everywhere): strict = execution match
    under the comparator; gold-clean = strict without the questions the audit flagged
    (they never count as successes); adjudicated = strict matches plus the failures the
    jury credited (gold defect, format equivalence). Also: ranks and the strict →
    adjudicated rank shift, the composition of each model's jury-reached misses (gold
    defect / format equivalence / genuine error / ambiguous / no majority), near misses
    and non-executed answers (never sent to the jury), jury cost, Spearman of gold-defect
    share vs strength, Pearson of routing accuracy vs the difficulty of the model's
    denominator, format-equivalent shares by family, an optional negative control, and
    the oracle-routing table (the three columns on the questions every model routed
    correctly). Every verdict file's lock is checked before anything else is read.
    """
    from jury.api.report import report as run_report

    if gold_defects:
        return _gold_defects(runs, audit, gold, db_root, db_url, store, allow_superseded, fmt, output)
    if not runs:
        raise InputError("no run files: give at least one run file (or --gold-defects with --audit)")
    if fmt != "html":
        check_format(fmt)
    elif output is None:
        raise InputError("-f html writes a site into a folder: give -o DIR")
    if compare_panels and fmt != "html":
        raise InputError(
            "--compare-panels adds a section to the html site (-f html -o DIR); for a table: jury compare-panels A B"
        )
    options = job_options(ctx, "fmt", "output", "plots", "wide", "gold_defects")
    result = run_report(
        options.pop("runs"),
        **options,
        progress=progress_bar,
        outputs=[output if fmt != "html" else None],
        site_dir=output if fmt == "html" else None,
    )
    if plots is not None:
        for path in result.write_plots(plots):
            typer.echo(f"wrote {path}", err=True)
    for note in result.notes:
        typer.echo(note, err=True)
    if fmt == "html":
        assert output is not None
        return _write_site(result, output)
    emit(result.render(fmt, width=table_width(output), wide=wide), output)


def _write_site(result, output: Path) -> None:
    """`jury report -f html -o DIR`: the static site, and what was written."""
    summary = result.write_site(output)
    typer.echo(f"wrote {summary.path}/index.html ({summary.files:,} files, {summary.bytes / 1e6:.1f} MB)", err=True)
    if summary.kept:
        from jury.results.render import safe

        typer.echo(
            f"kept {len(summary.kept)} files an older jury's manifest listed without a hash (remove them by hand if "
            f"stale), e.g. {safe(summary.kept[0])}",
            err=True,
        )


def _gold_defects(runs, audit, gold, db_root, db_url, store, allow_superseded, fmt, output) -> None:
    """`jury report --gold-defects`: the audit's flagged gold queries (jury.gold_defects)."""
    from jury.api.gold_defects import gold_defects

    if runs:
        raise InputError("--gold-defects reads the audit file alone: give no run files")
    check_format(fmt)
    found = gold_defects(
        audit, gold=gold, db_root=db_root, db_url=db_url, store=store, allow_superseded=allow_superseded,
        progress=progress_bar, outputs=[output],
    )  # fmt: skip
    emit(found.render(fmt, width=table_width(output)), output)
