"""``jury.score``'s options (``jury score``'s, less how the command shows the result)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from jury.options import OneOrMany
from jury.options.groups import CoverageRules, Databases, EvaluationSettings, StoreFile, Superseded
from jury.vocab import DEFAULT_EFFICIENCY_REPEATS


# pydantic orders the fields of the bases last base first: the databases come first
class ScoreOptions(Superseded, StoreFile, CoverageRules, EvaluationSettings, Databases):
    """What ``jury.score`` can be asked: the databases, the evaluation settings, the store, the
    locked files adding columns and the protocols' extra columns. A path or a setting left None
    is jury.toml's (``project``), else the built-in default."""

    audit: Path | None = None
    """Locked audit file: adds the gold-clean column (flagged questions removed)."""
    verdicts: OneOrMany[Path] = []
    """Locked adjudication file(s): adds the adjudicated column (repeatable)."""
    review: Path | None = None
    """Locked review file (`jury review lock`): people's decisions take precedence over the jury's."""
    efficiency: bool = False
    """Time every matched pair: BIRD's VES and R-VES, Spider 2.0-AIFunc's t_pred/t_gold and faster share."""
    repeats: int = Field(DEFAULT_EFFICIENCY_REPEATS, ge=1)
    """--efficiency: timed runs of each side of a matched pair (default 100, as BIRD's script); BIRD's
    3-sigma outlier rule can drop nothing at 10 or fewer. Timings only: not `adjudicate --repeats` (a
    panel asked again)."""
    function_set: str | None = None
    """Function-set accuracy over names matching this glob (AI_*) or re:REGEX, case-insensitive."""
    dialect: str = "sqlite"
    """--function-set: the SQL dialect sqlglot parses (default sqlite)."""
    soft_f1: bool = False
    """BIRD mini-dev's Soft-F1 per model (its evaluation_f1.py: rows matched by position after dropping
    duplicates, a partial credit per value; errors score 0), beside strict."""
    timeout_retries: int = 0
    """Run a prediction that times out again, up to N times, before it counts as a timeout (Spider
    2.0-AIFunc retries transient failures; recorded in the JSON and CSV)."""
    same_window: bool = False
    """Reuse nothing from the store: every gold and prediction is executed in this run, so the two sides
    of a pair come from one time window (results that drift: AI functions calling models)."""
