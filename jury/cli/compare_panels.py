"""`jury compare-panels`: two verdict files of the same inputs, by two panels, compared."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import check_format, emit, handle_errors, option, table_width


@handle_errors
def compare_panels(
    a: Path = typer.Argument(..., help="Panel A's verdict file: an audit, or an adjudication."),
    b: Path = typer.Argument(..., help="Panel B's verdict file of the same kind and the same gold (and runs)."),
    resamples: int = typer.Option(2000, min=0, help="Bootstrap resamples of the records per kappa interval (0: none)."),
    seed: int = typer.Option(0, help="The bootstrap's seed."),
    confidence: float = typer.Option(0.95, min=0.5, max=0.999, help="Nominal coverage of every interval."),
    fmt: str = option("fmt"),
    output: Path | None = typer.Option(
        None, "-o", "--output", writable=True, help="Write the comparison to this file instead of stdout."
    ),
) -> None:
    """Compare two panels: two audits of the same gold, or two adjudications of the same runs.

    For audits: the flags both panels raised, those only A or only B raised, and agreement on
    the flag and on the labels (valid, undecided, or the defect types of a flag); for
    adjudications the same with the verdicts as labels and a credited verdict
    (gold_defect, format_equivalence) as the flag. Each with Cohen's kappa, its paired
    bootstrap interval and the Fleiss–Cohen–Everitt standard error with its Wald interval;
    then the same per defect type (or verdict: one against the rest), per difficulty and,
    for adjudications, per model; then every record where the labels differ, with both
    panels' votes. Records only one file holds are left out and counted. Both locks are
    checked and the verdicts recomputed from the votes first; two files of different kinds,
    gold or runs are refused. -f csv: one row per breakdown; -f json: everything.
    """
    from jury.api.compare_panels import compare_panels as run

    check_format(fmt)
    result = run(a, b, resamples=resamples, seed=seed, confidence=confidence, outputs=[output])
    emit(result.render(fmt, width=table_width(output)), output)
