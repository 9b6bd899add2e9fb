"""`jury audit-gold`: a panel of one juror per family judges every gold query.

The command is generated from jury.audit_gold's options (jury.options.audit.AuditOptions,
jury.options.command): no option declared by hand but the gold file."""

from __future__ import annotations

from pathlib import Path

from jury.cli.common import handle_errors, progress_bar, show
from jury.options.audit import AuditOptions
from jury.options.command import argument, command


def run(gold: Path | None, o: AuditOptions) -> None:
    """Audit the gold SQL itself: each juror judges each gold query alone, never seeing model output.

    A juror sees the question, the evidence (panel option), the gold SQL and the column
    lists of the tables it touches (optionally a preview of the gold result). A query is
    flagged when a strict majority of the panel says defective (abstentions that could
    have flagged it make it undecided, not flagged). Prints flag rates
    overall, by difficulty, by split and per juror, Fleiss' kappa, defect types and
    agreement (Krippendorff's alpha, the range of pairwise Cohen's kappa), and
    writes a hash-locked audit file (use it with `jury score --audit`).
    """
    from jury.jobs.audit import audit_gold as job

    show(job(gold, o, progress=progress_bar))


GOLD_HELP = "Gold file (BIRD dev.json / train.json). Default: jury.toml's gold."
GOLD = argument("gold", GOLD_HELP, Path | None, default=None)
audit_gold = handle_errors(command(AuditOptions, run, arguments=[GOLD]))
