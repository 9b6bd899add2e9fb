"""``jury.suites``' options (``jury suites``', less the run files, its argument, and how the command
shows the metrics)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.options import AsGiven, Flag, OneOrMany, Options
from jury.options.groups import PanelChoice, Spending, Votes
from jury.options.values import Seed


class Asked(Options):
    """What ``jury.suites`` adds to the strict metrics: locked verdicts, a juror run, a taxonomy."""

    verdicts: OneOrMany[Path] = []
    """Locked suite verdict file(s) (from --adjudicate): adds the adjudicated metrics (repeatable)."""
    adjudicate: bool = False
    """Send failing tests whose expected and actual outputs differ as text (no error) to the jury as
    format-equivalence ballots, lock the verdicts, and add the adjudicated metrics."""
    classify: bool = False
    """With --taxonomy: send failing tests whose error the taxonomy's rules leave unclassified to the jury
    for one category each, lock the verdicts, and count the errors by category from rules and jurors."""
    taxonomy: Annotated[str | None, AsGiven] = None
    """Error taxonomy (a name in panels/taxonomies/, e.g. plsqlbench, or a TOML path): count each model's
    failing tests that raised an error by the category the taxonomy's rules give the error string (and,
    with --classify or --classify verdicts, the jurors give the rest)."""


# pydantic orders the fields of the bases last base first: what is added comes first, then the panel
class SuitesOptions(Votes, Spending, PanelChoice, Asked):
    """What ``jury.suites`` can be asked: the locked verdicts, a juror run (format ballots or error
    classifications: the panel, the plan, the cost cap, the batch APIs, the store), the taxonomy and
    the verdict file written. A path or a setting left None is jury.toml's (``project``), else the
    built-in default."""

    families: Path | None = None
    """With --adjudicate or --classify: family registry TOML (default panels/families.toml)."""
    seed: Seed = None
    """With --adjudicate: seed of the output-order shuffle; with --classify: of the order categories are
    listed in (default 0)."""
    early_stop: bool = False
    """With --adjudicate or --classify: stop asking once a majority is settled."""
    verdicts_out: Annotated[Path | None, Flag(writable=True)] = None
    """With --adjudicate or --classify: verdict file to write (default verdicts/adjudication-<time>.json)."""
    allow_superseded: bool = False
    """Use --verdicts files a newer file supersedes."""
