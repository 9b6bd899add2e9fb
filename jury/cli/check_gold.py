"""`jury check-gold`: deterministic checks of the gold queries (no model involved).

The command is generated from CheckGoldCommand (jury.options.command): jury.check_gold's options
(jury.options.check_gold.CheckGoldOptions), then how the findings are shown; the gold file is its
argument."""

from __future__ import annotations

from pathlib import Path

from jury.cli.common import check_format, emit, handle_errors, progress_bar, table_width
from jury.options.check_gold import CheckGoldOptions
from jury.options.command import argument, command
from jury.options.groups import Output


# pydantic orders the fields of the bases last base first: jury.check_gold's options come first
class CheckGoldCommand(Output, CheckGoldOptions):
    """Every option of `jury check-gold`."""


def run(gold: Path | None, o: CheckGoldCommand) -> None:
    """Check every gold query without a model: determinism, LIMIT ties, bare GROUP BY columns, empty or NULL results, failures.

    Each gold query runs in passes (default 5+10+10+10, as Spider 2.0-AIFunc) and once more
    with PRAGMA reverse_unordered_selects=ON; a result that changes under the comparator the
    item is scored with is `row_order`. `limit_tie`: ORDER BY ... LIMIT k cuts between rows
    that tie on the sort key. `bare_column`: a column neither grouped nor aggregated takes
    several values in a group. `empty_result`, `all_null`, `null_value` (one NULL value),
    `gold_fails`, `gold_timeout`. With --against-gold, `cross_engine`: the other engine's gold
    gives another result (each comparator that tells them apart named, both results shown, and
    the questions listed per comparator). Each finding names its evidence. Nothing is cached:
    every execution is fresh (the results are stored: `jury audit-gold` reuses them). With
    --workers N the queries are checked on N processes; the report is the same. On an engine
    the reversed run (a SQLite pragma) is left out.
    """
    from jury.jobs.check_gold import check_gold as job

    check_format(o.fmt)
    found = job(gold, o, progress=progress_bar, outputs=[o.output])
    emit(found.render(o.fmt, width=table_width(o.output)), o.output)


GOLD_HELP = "Gold file (BIRD dev.json). Default: jury.toml's gold."
GOLD = argument("gold", GOLD_HELP, Path | None, default=None)
check_gold = handle_errors(command(CheckGoldCommand, run, arguments=[GOLD]))
