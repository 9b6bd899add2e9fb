"""`jury adjudicate`: send jury-eligible failures to a blind, family-disjoint jury.

The command is generated from jury.adjudicate's options (jury.options.adjudicate.AdjudicateOptions,
jury.options.command): no option declared by hand but the run files."""

from __future__ import annotations

from pathlib import Path

from jury.cli.common import handle_errors, progress_bar, show
from jury.options.adjudicate import AdjudicateOptions
from jury.options.command import argument, command


def run(runs: list[Path], o: AdjudicateOptions) -> None:
    """Execute (or reuse) every query, then ask each model's jury-eligible failures of its jurors.

    Only mismatches reach the jury: strict failures on correctly routed questions whose
    SQL executed and whose rows overlap the gold's below the near-miss threshold. Each
    goes to the first k jurors of the panel whose families differ from the model's, blind
    and with answer positions shuffled. Votes are stored as they arrive: a killed run
    resumes without repeating a call. Writes a hash-locked verdict file and prints
    strict vs adjudicated accuracy per model, then one line of juror agreement
    (Krippendorff's alpha, pairwise Cohen's kappa, position bias on blind ballots).
    """
    from jury.jobs.adjudicate import adjudicate as job

    show(job(runs, o, progress=progress_bar))


RUNS_HELP = "Run JSONL files, or BIRD prediction files as published, NAME=PATH naming one's model (see jury score)."
RUNS = argument("runs", RUNS_HELP, list[Path])
adjudicate = handle_errors(command(AdjudicateOptions, run, arguments=[RUNS]))
