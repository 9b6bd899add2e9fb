"""`jury review`: a local web page where a person settles what the jury could not."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(
    help="Review unsettled verdicts and flagged gold queries in a local web page; export or lock the decisions.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)

VERDICTS_HELP = "Locked adjudication file(s) whose items are reviewed (repeatable)."
AUDIT_HELP = "Locked audit file: its gold queries are reviewed. Default: jury.toml's audit."
STORE_HELP = "Store file holding the decisions (default .jury/store.db beside jury.toml or in the cwd)."


@app.callback(invoke_without_command=True)
@handle_errors
def review(
    ctx: typer.Context,
    verdicts: list[Path] = typer.Option([], "--verdicts", help=VERDICTS_HELP),
    audit: Path | None = typer.Option(None, help=AUDIT_HELP),
    queue: list[str] = typer.Option(
        [], "--queue", help="unsettled, split, flagged or sample:N (repeatable; default: unsettled, split and flagged)."
    ),
    reviewer: str | None = typer.Option(None, help="Your name, recorded with every decision (default: your login)."),
    host: str | None = typer.Option(
        None,
        help="Address to bind (default 127.0.0.1). Anything but loopback must be given here explicitly, as one address of "
        "this machine (0.0.0.0 and :: are refused); the token is still required.",
    ),
    port: int = typer.Option(0, min=0, max=65535, help="Port (default 0: any free port)."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: beside the bound databases."),
    store: Path | None = typer.Option(None, help=STORE_HELP),
    sample: Path | None = typer.Option(
        None,
        help="Locked sample file (jury review sample): review its records blind, without the panel's votes or verdict "
        "(no --verdicts, --audit or --queue with it).",
    ),
) -> None:
    """Start the review page and print its URL (with this launch's token).

    One item per screen: the question, evidence, columns, and for a verdict "Answer 1" /
    "Answer 2" (positions drawn per reviewer, blind as the jurors saw them) with SQL and a
    result preview; decide with keys 1-5 or the buttons. The jurors' votes show only after
    you answer. Gold items: valid or defective, with a defect type and an optional
    corrected SQL that jury runs read-only. Every decision is stored at once in the store.
    """
    if ctx.invoked_subcommand is not None:
        return
    from jury.api.review import SERVE_NOTE, review_app

    page = review_app(
        verdicts=verdicts,
        audit=audit,
        queue=queue,
        reviewer=reviewer,
        host=host,
        port=port,
        db_root=db_root,
        store=store,
        sample=sample,
    )
    for note in page.notes:
        typer.echo(note, err=True)

    def announce(url: str) -> None:
        typer.echo(page.render(), nl=False)
        typer.echo(url)
        typer.echo(SERVE_NOTE, err=True)

    page.serve(announce)


@app.command("export")
@handle_errors
def export(
    output: Path = typer.Option(..., "-o", "--output", writable=True, help="Label JSONL file to write (human-label format)."),
    verdicts: list[Path] = typer.Option([], "--verdicts", help=VERDICTS_HELP),
    audit: Path | None = typer.Option(None, help=AUDIT_HELP),
    reviewer: str | None = typer.Option(None, help="Only this reviewer's decisions (default: everyone's)."),
    store: Path | None = typer.Option(None, help=STORE_HELP),
) -> None:
    """Write the decisions as human labels (jury calibrate reads them): one line per item and reviewer."""
    from jury.api.review import export_review

    result = export_review(output, verdicts=verdicts, audit=audit, reviewer=reviewer, store=store)
    for note in result.notes:
        typer.echo(note, err=True)


@app.command("lock")
@handle_errors
def lock(
    output: Path = typer.Option(
        ..., "-o", "--output", writable=True, help="Review file to write, e.g. verdicts/review-2026.json (never overwritten)."
    ),
    verdicts: list[Path] = typer.Option([], "--verdicts", help=VERDICTS_HELP),
    audit: Path | None = typer.Option(None, help=AUDIT_HELP),
    store: Path | None = typer.Option(None, help=STORE_HELP),
    sign: Path | None = typer.Option(
        None,
        "--sign",
        metavar="KEYFILE",
        help="Ed25519 private key (OpenSSH or PEM): after the review file is locked, write a detached SSH "
        "signature beside it (<file>.sig; check with jury verify --trusted-key).",
    ),
    reviewer: str | None = typer.Option(
        None, help="Only this reviewer's decisions: one reviewer's own file (default: everyone's)."
    ),
    sample: Path | None = typer.Option(
        None, help="Locked sample file: lock the decisions on its records (its frame files; no --verdicts or --audit)."
    ),
) -> None:
    """Write the decisions as a hash-locked review file (same lock and bindings as verdict files)."""
    from jury.api.review import lock_review

    result = lock_review(output, verdicts=verdicts, audit=audit, store=store, sign=sign, reviewer=reviewer, sample=sample)
    typer.echo(result.render(), nl=False)


@app.command("agreement")
@handle_errors
def agreement(
    a: Path = typer.Argument(..., help="Reviewer A's locked review file (jury review lock --reviewer A)."),
    b: Path = typer.Argument(..., help="Reviewer B's locked review file."),
    fmt: str = typer.Option("table", "-f", "--format", help="table, json or md."),
    resamples: int = typer.Option(2000, min=0, help="Bootstrap resamples of the intervals."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    confidence: float = typer.Option(0.95, min=0.5, max=0.999, help="Nominal coverage of the intervals."),
) -> None:
    """Two reviewers' agreement: Cohen's kappa and Krippendorff's alpha with intervals, and their disagreements."""
    from jury.api.review_agreement import review_agreement

    result = review_agreement(a, b, resamples=resamples, seed=seed, confidence=confidence)
    typer.echo(result.render(fmt), nl=False)


@app.command("sample")
@handle_errors
def sample(
    output: Path = typer.Option(
        ..., "-o", "--output", writable=True, help="Sample file to write, e.g. verdicts/sample.json (never overwritten)."
    ),
    verdicts: list[Path] = typer.Option([], "--verdicts", help="Locked adjudication file(s) of the frame (repeatable)."),
    audit: Path | None = typer.Option(None, help="Locked audit file of the frame. Default: jury.toml's audit."),
    by: list[str] = typer.Option(
        ["verdict"], "--by", help="Stratum key: verdict, flag, difficulty, db, model or agreement (repeatable)."
    ),
    n: int | None = typer.Option(None, "--n", min=1, help="Total sample size, allocated over the strata by --method."),
    size: list[str] = typer.Option(
        [], "--size", metavar="STRATUM=N", help="A stratum's sample size, its values joined by / in --by order (repeatable)."
    ),
    method: str = typer.Option("proportional", help="Allocation of --n: proportional or neyman (S_h of the panel's flag)."),
    minimum: int = typer.Option(1, min=0, help="The least an allocation gives each stratum (capped by its size)."),
    seed: int = typer.Option(0, help="Seed of the draw."),
) -> None:
    """Draw a seeded stratified sample of verdict and audit records for people to review and
    write it as a hash-locked sample file (frame, strata, seed, inclusion probabilities)."""
    from jury.api.review_sample import review_sample
    from jury.errors import InputError

    sizes: dict[str, int] | None = None
    if size:
        sizes = {}
        for s in size:
            key, sep, value = s.rpartition("=")
            if not sep or not key or not value.isdigit():
                raise InputError(f"--size {s!r}: expected STRATUM=N with N a whole number")
            sizes[key] = int(value)
    result = review_sample(
        output, verdicts=verdicts, audit=audit, by=by, n=n, sizes=sizes, method=method, minimum=minimum, seed=seed
    )
    typer.echo(result.render(), nl=False)


@app.command("settle")
@handle_errors
def settle(
    a: Path = typer.Argument(..., help="Reviewer A's locked review file."),
    b: Path = typer.Argument(..., help="Reviewer B's locked review file."),
    output: Path = typer.Option(
        ..., "-o", "--output", writable=True, help="Adjudication round file to write (never overwritten)."
    ),
    decisions: Path = typer.Option(
        ...,
        "--decisions",
        help="CSV with a header: question_id, model (adjudication items), label, settled_by (a name, or names joined "
        "by + when the reviewers settled it together), note (optional); one row per disagreement.",
    ),
) -> None:
    """Record the adjudication round of two reviewers' disagreements, who settled each, as a locked file."""
    from jury.api.review_agreement import adjudication_round
    from jury.errors import InputError
    from jury.inputs.io import read_text
    from jury.inputs.reader import csv_records

    lines = list(csv_records(Path(decisions), read_text(decisions), strict=False))
    rows = [row for _, row in lines]
    for i, row in lines:
        missing = [c for c in ("question_id", "label", "settled_by") if not (row.get(c) or "").strip()]
        if missing:
            raise InputError(f"{decisions}:{i}: no {', '.join(missing)}")
    typer.echo(adjudication_round(output, a, b, settled=rows).render(), nl=False)


@app.command("corrected")
@handle_errors
def corrected(
    sample: Path = typer.Argument(..., help="The locked sample file the reviewers decided."),
    a: Path = typer.Argument(..., help="Reviewer A's locked review file."),
    b: Path = typer.Argument(..., help="Reviewer B's locked review file."),
    settled: Path | None = typer.Option(
        None, "--settled", help="The adjudication round of their disagreements (jury review settle)."
    ),
    kind: str = typer.Option("gold", help="gold (the gold defect rate) or adjudication (the credited rate)."),
    fmt: str = typer.Option("table", "-f", "--format", help="table or json."),
    resamples: int = typer.Option(2000, min=0, help="Bootstrap resamples."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    confidence: float = typer.Option(0.95, min=0.5, max=0.999, help="Nominal coverage of the intervals."),
) -> None:
    """The panel's rate over the sample's frame corrected by the two reviewers (Rogan-Gladen, delta interval)."""
    from jury.api.review_corrected import review_corrected

    result = review_corrected(sample, a, b, settled=settled, kind=kind, resamples=resamples, seed=seed, confidence=confidence)
    typer.echo(result.render(fmt), nl=False)
