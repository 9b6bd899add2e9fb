"""`jury review`: a local web page where a person settles what the jury could not."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import config, guard_outputs, handle_errors

app = typer.Typer(
    help="Review unsettled verdicts and flagged gold queries in a local web page; export or lock the decisions.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)

VERDICTS_HELP = "Locked adjudication file(s) whose items are reviewed (repeatable)."
AUDIT_HELP = "Locked audit file: its gold queries are reviewed. Default: jury.toml's audit."
STORE_HELP = "Store file holding the decisions (default .jury/store.db beside jury.toml or in the cwd)."


def _reviewer(name: str | None) -> str:
    import getpass

    from jury.errors import InputError

    who = (name or "").strip() or getpass.getuser()
    if not who or any(ord(c) < 32 for c in who):
        raise InputError(f"--reviewer {who!r}: give a name without control characters")
    return who


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
    from jury.cli.common import open_store, settings
    from jury.execution.reviews import ReviewStore
    from jury.pipeline.review_queue import build_queue, parse_queues
    from jury.vocab import DEFAULT_REVIEW_QUEUES
    from jury.web.app import ReviewState, bind_address, is_loopback, serve

    cfg = config()
    names, sample = parse_queues(queue or [str(q) for q in DEFAULT_REVIEW_QUEUES])
    who = _reviewer(reviewer)
    bind = host if host is not None else "127.0.0.1"
    bind_address(bind, port)  # an address the page cannot serve: one line, before any work
    if not is_loopback(bind):
        typer.echo(f"Warning: serving on {bind}, reachable from other machines; the token is still required", err=True)
    with open_store(cfg, store) as st:
        source = build_queue(
            list(verdicts), cfg.path_of("audit", audit), names, sample, st, settings(cfg), cfg.path_of("db_root", db_root)
        )
    state = ReviewState(source, ReviewStore(cfg.store_path(store)), who, host=bind)
    done = len(state.decisions())

    def announce(url: str) -> None:
        typer.echo(f"Reviewing {len(state.items)} items as {who} ({done} decided so far); open:")
        typer.echo(url)
        typer.echo("Every decision is stored as you make it; Ctrl-C stops the server.", err=True)

    serve(state, bind, port, announce)


def _decisions(verdicts: list[Path], audit: Path | None, store: Path | None, reviewer: str | None):
    from jury.execution.reviews import ReviewStore
    from jury.pipeline.review_queue import load_sources

    cfg = config()
    source = load_sources(list(verdicts), cfg.path_of("audit", audit))
    shas = [d.content_sha256 for _p, d in source.verdict_files]
    return cfg, source, ReviewStore(cfg.store_path(store)).decisions(shas, reviewer)


@app.command("export")
@handle_errors
def export(
    output: Path = typer.Option(..., "-o", "--output", help="Label JSONL file to write (human-label format)."),
    verdicts: list[Path] = typer.Option([], "--verdicts", help=VERDICTS_HELP),
    audit: Path | None = typer.Option(None, help=AUDIT_HELP),
    reviewer: str | None = typer.Option(None, help="Only this reviewer's decisions (default: everyone's)."),
    store: Path | None = typer.Option(None, help=STORE_HELP),
) -> None:
    """Write the decisions as human labels (jury calibrate reads them): one line per item and reviewer."""
    from jury.cli.common import emit
    from jury.inputs.labels import dump_labels
    from jury.verdicts.review import labels_of

    cfg = config()
    guard_outputs([output], [*verdicts, cfg.path_of("audit", audit)], store=cfg.store_path(store))
    _cfg, _source, decisions = _decisions(verdicts, audit, store, reviewer)
    labels = labels_of(decisions)
    emit(dump_labels(labels), output, what=f"{len(labels)} labels")


@app.command("lock")
@handle_errors
def lock(
    output: Path = typer.Option(
        ..., "-o", "--output", help="Review file to write, e.g. verdicts/review-2026.json (never overwritten)."
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
) -> None:
    """Write the decisions as a hash-locked review file (same lock and bindings as verdict files)."""
    from jury.cli.written import signer_for
    from jury.errors import InputError
    from jury.pipeline.review_queue import review_head
    from jury.verdicts.review import review_document, write_review

    cfg = config()
    guard_outputs([output], [*verdicts, cfg.path_of("audit", audit)], store=cfg.store_path(store), verdict_output=False)
    signer = signer_for(sign)  # a bad key fails before anything is written
    _cfg, source, decisions = _decisions(verdicts, audit, store, None)
    if not decisions:
        raise InputError("no review decisions stored for these verdict files: nothing to lock (run `jury review` first)")
    head = review_head(source, output.parent, None)
    new_schema = None if (output.parent / "schema").exists() else output.parent / "schema"
    path = write_review(review_document(head, decisions), output)
    typer.echo(f"locked {len(decisions)} decisions by {len({d['reviewer'] for d in decisions})} reviewer(s) in {path}")
    if signer is not None:
        from jury.verdicts.signing import sign_file

        sig_path, _written = sign_file(path, signer)
        typer.echo(f"signed {path}: {sig_path} (key {signer.fingerprint})")
    if new_schema is not None and new_schema.is_dir():
        typer.echo(f"wrote {new_schema}/ beside {path}: the JSON Schema its $schema names")
