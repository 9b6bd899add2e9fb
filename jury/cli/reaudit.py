"""`jury reaudit`: re-run locked verdict files whose panel, prompts or inputs changed."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import config, handle_errors, open_store, progress_bar
from jury.cli.written import after_write, sign_option, signer_for
from jury.errors import CannotCheck, InputError


@handle_errors
def reaudit(
    files: list[Path] = typer.Argument(None, help="Locked verdict files (default: the current ones in the verdicts folder)."),
    check: bool = typer.Option(
        False,
        "--check",
        help="Call nothing: exit 1 if any file is stale, 4 if one cannot be checked (a bound file is absent), 0 if all are current (for cron and CI).",
    ),
    max_cost: float | None = typer.Option(None, min=0, help="Stop cleanly before this run's spend would pass USD."),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send the ballots of OpenAI and Anthropic jurors through their batch APIs (about half the price; "
        "results within 24 h): exits 3 while ballots are pending, rerun to collect (see jury batch status).",
    ),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db)."),
    sign: Path | None = sign_option(),
) -> None:
    """Compare each locked file's bindings (panel, prompt templates, gold, runs, databases)
    with the files as they are now; re-run the stale ones.

    Votes of unchanged jurors come from the store; only changed jurors are called. Each
    re-run writes a new locked file naming its predecessor (the old file is never
    touched) and prints the difference: questions newly flagged or cleared, verdicts
    that flipped, and how far the old and new panels agree.
    """
    from jury.cli.common import make_console  # fits a terminal; unwrapped in logs; text made safe
    from jury.pipeline.reaudit import rerun
    from jury.verdicts.reaudit import check_file, describe_diff, heads

    cfg = config()
    signer = signer_for(sign)
    console = make_console()
    if not files:
        folder = cfg.path_of("verdicts_dir", None, "verdicts")
        if not folder.is_dir():
            raise InputError(f"no verdict files given and no verdicts folder at {folder}")
        files = heads(folder)
        if not files:
            raise InputError(f"no locked verdict files in {folder}")
    states = [check_file(Path(f)) for f in files]
    stale = [s for s in states if s.stale]
    blocked = [s for s in states if s.blockers and not s.stale]
    for s in states:
        if s.stale:
            console.print(f"STALE {s.path}: {'; '.join(s.reasons)}")
        elif s.blockers:
            console.print(f"CANNOT CHECK {s.path}: {'; '.join(s.blockers)}")
        else:
            console.print(f"current {s.path}")

    def cannot_check() -> CannotCheck:
        first = blocked[0]
        return CannotCheck(
            f"cannot check {len(blocked)} of {len(states)} verdict files (first: {first.path}: "
            f"{'; '.join(first.blockers)}); restore the bound files or re-run the job"
        )

    if check:
        if stale:
            raise typer.Exit(1)
        if blocked:
            raise cannot_check()
        return
    if not stale:
        console.print("nothing to re-run")
        if blocked:
            raise cannot_check()
        return
    with open_store(cfg, store) as st:
        for s in stale:
            new_path, diff = rerun(s, cfg, st, max_cost=cfg.get("max_cost", max_cost, None), progress=progress_bar, batch=batch)
            console.print(f"re-ran {s.path} -> {new_path} (supersedes it)")
            after_write(console, new_path, signer)
            for line in describe_diff(diff):
                console.print("  " + line)
    if blocked:
        raise cannot_check()
