"""`jury review`: a local web page where a person settles what the jury could not.

Each command is generated from its job's options (jury.options.review, jury.options.command): no
option declared by hand but the files a command writes (-o, the library's first argument) and the
review files it reads (its arguments)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated

import typer

from jury.cli.common import handle_errors
from jury.errors import InputError
from jury.options import Flag
from jury.options.command import argument, command, output_option
from jury.options.review import (
    ReviewAgreementOptions,
    ReviewCorrectedOptions,
    ReviewExportOptions,
    ReviewLockOptions,
    ReviewOptions,
    ReviewSampleOptions,
    ReviewSettleOptions,
)

app = typer.Typer(
    help="Review unsettled verdicts and flagged gold queries in a local web page; export or lock the decisions.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)


CONTEXT = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
REVIEWER_A = argument("a", "Reviewer A's locked review file (jury review lock --reviewer A).")
REVIEWER_B = argument("b", "Reviewer B's locked review file.")


class ReviewAgreementCommand(ReviewAgreementOptions):
    """Every option of `jury review agreement`: jury.review_agreement's and how its figures are printed."""

    fmt: Annotated[str, Flag(flags=("-f", "--format"))] = "table"
    """table, json or md."""


class ReviewCorrectedCommand(ReviewCorrectedOptions):
    """Every option of `jury review corrected`: jury.review_corrected's and how its figures are printed."""

    fmt: Annotated[str, Flag(flags=("-f", "--format"))] = "table"
    """table or json."""


def serve(ctx: typer.Context, o: ReviewOptions) -> None:
    """Start the review page and print its URL (with this launch's token).

    One item per screen: the question, evidence, columns, and for a verdict "Answer 1" /
    "Answer 2" (positions drawn per reviewer, blind as the jurors saw them) with SQL and a
    result preview; decide with keys 1-5 or the buttons. The jurors' votes show only after
    you answer. Gold items: valid or defective, with a defect type and an optional
    corrected SQL that jury runs read-only. Every decision is stored at once in the store.
    """
    if ctx.invoked_subcommand is not None:
        return
    from jury.jobs.review import SERVE_NOTE, review_app

    page = review_app(o)
    for note in page.notes:
        typer.echo(note, err=True)

    def announce(url: str) -> None:
        typer.echo(page.render(), nl=False)
        typer.echo(url)
        typer.echo(SERVE_NOTE, err=True)

    page.serve(announce)


def export(output: Path, o: ReviewExportOptions) -> None:
    """Write the decisions as human labels (jury calibrate reads them): one line per item and reviewer."""
    from jury.jobs.review import export_review

    result = export_review(output, o)
    for note in result.notes:
        typer.echo(note, err=True)


def lock(output: Path, o: ReviewLockOptions) -> None:
    """Write the decisions as a hash-locked review file (same lock and bindings as verdict files)."""
    from jury.jobs.review import lock_review

    typer.echo(lock_review(output, o).render(), nl=False)


def agreement(a: Path, b: Path, o: ReviewAgreementCommand) -> None:
    """Two reviewers' agreement: Cohen's kappa and Krippendorff's alpha with intervals, and their disagreements."""
    from jury.jobs.review_agreement import review_agreement

    result = review_agreement(a, b, ReviewAgreementOptions.model_validate(o.model_dump(exclude={"fmt"})))
    typer.echo(result.render(o.fmt), nl=False)


def sample(output: Path, o: ReviewSampleOptions) -> None:
    """Draw a seeded stratified sample of verdict and audit records for people to review and
    write it as a hash-locked sample file (frame, strata, seed, inclusion probabilities)."""
    from jury.jobs.review_sample import review_sample

    typer.echo(review_sample(output, o).render(), nl=False)


def settle(a: Path, b: Path, output: Path, o: ReviewSettleOptions) -> None:
    """Record the adjudication round of two reviewers' disagreements, who settled each, as a locked file."""
    from jury.inputs.io import read_text
    from jury.inputs.reader import csv_records
    from jury.jobs.review_agreement import adjudication_round

    decisions = o.decisions
    lines = list(csv_records(Path(decisions), read_text(decisions), strict=False))
    rows = [row for _, row in lines]
    for i, row in lines:
        missing = [c for c in ("question_id", "label", "settled_by") if not (row.get(c) or "").strip()]
        if missing:
            raise InputError(f"{decisions}:{i}: no {', '.join(missing)}")
    typer.echo(adjudication_round(output, a, b, settled=rows).render(), nl=False)


def corrected(sample: Path, a: Path, b: Path, o: ReviewCorrectedCommand) -> None:
    """The panel's rate over the sample's frame corrected by the two reviewers (Rogan-Gladen, delta interval)."""
    from jury.jobs.review_corrected import review_corrected

    result = review_corrected(sample, a, b, ReviewCorrectedOptions.model_validate(o.model_dump(exclude={"fmt"})))
    typer.echo(result.render(o.fmt), nl=False)


app.callback(invoke_without_command=True)(handle_errors(command(ReviewOptions, serve, arguments=[CONTEXT])))
app.command("export")(
    handle_errors(
        command(ReviewExportOptions, export, arguments=[output_option("Label JSONL file to write (human-label format).")])
    )
)
app.command("lock")(
    handle_errors(
        command(
            ReviewLockOptions,
            lock,
            arguments=[output_option("Review file to write, e.g. verdicts/review-2026.json (never overwritten).")],
        )
    )
)
app.command("agreement")(handle_errors(command(ReviewAgreementCommand, agreement, arguments=[REVIEWER_A, REVIEWER_B])))
app.command("sample")(
    handle_errors(
        command(
            ReviewSampleOptions,
            sample,
            arguments=[output_option("Sample file to write, e.g. verdicts/sample.json (never overwritten).")],
        )
    )
)
app.command("settle")(
    handle_errors(
        command(
            ReviewSettleOptions,
            settle,
            arguments=[
                argument("a", "Reviewer A's locked review file."),
                REVIEWER_B,
                output_option("Adjudication round file to write (never overwritten)."),
            ],
        )
    )
)
app.command("corrected")(
    handle_errors(
        command(
            ReviewCorrectedCommand,
            corrected,
            arguments=[
                argument("sample", "The locked sample file the reviewers decided."),
                argument("a", "Reviewer A's locked review file."),
                REVIEWER_B,
            ],
        )
    )
)
