"""``jury.report``'s options (``jury report``'s, less how the command shows the result)."""

from __future__ import annotations

from pathlib import Path

from jury.options import OneOrMany
from jury.options.groups import CoverageRules, Databases, EvaluationSettings, StoreFile, Superseded


# pydantic orders the fields of the bases last base first: the databases come first
class ReportOptions(Superseded, StoreFile, CoverageRules, EvaluationSettings, Databases):
    """What ``jury.report`` can be asked: the databases, the evaluation settings and the store
    (when it is given run files, not a Score), the locked files adding columns, the rank
    bootstrap, the models kept and the sections added. A path or a setting left None is
    jury.toml's (``project``), else the built-in default; with a Score, the locked files left
    out are the Score's."""

    audit: Path | None = None
    """Locked audit file: the gold-clean column. Default: jury.toml's audit."""
    verdicts: OneOrMany[Path] = []
    """Locked adjudication file(s): the adjudicated column (repeatable)."""
    review: Path | None = None
    """Locked review file (`jury review lock`): people's decisions take precedence over the jury's; shows reviewer κ."""
    strength: str | None = None
    """Column the gold-defect share is correlated with: adjudicated, strict or gold_clean (default:
    adjudicated with --verdicts, else gold_clean with an audit, else strict)."""
    control: str | None = None
    """Negative-control model: its strict → adjudicated lift and its gap to the next row."""
    families: Path | None = None
    """Family registry TOML for models the verdict files do not name (default: the run records' family fields)."""
    rank_resamples: int | None = 1000
    """Bootstrap resamples of the questions for each model's rank interval (at least 1,000)."""
    seed: int = 0
    """Seed of the rank-stability bootstrap (the same seed, the same intervals)."""
    model: OneOrMany[str] = []
    """Report only this model of the runs (repeatable): one a demo panel judged, say."""
    compare_panels: OneOrMany[Path] = []
    """-f html: two verdict files of two panels (give it twice: two audits of this gold, or two adjudications
    of these runs): the site gets a 'Two panels compared' section, as jury compare-panels prints it."""
    review_sample: Path | None = None
    """Locked sample file (jury review sample) two reviewers decided: the report gets a 'corrected' section,
    the panel's gold defect rate (and credited rate) corrected by them with intervals, and the panel's
    sensitivity and specificity on the sample, as jury review corrected computes them."""
    sample_review: OneOrMany[Path] = []
    """With --review-sample: a reviewer's locked review file of that sample (give it twice: A and B)."""
    settled: Path | None = None
    """With --review-sample: the adjudication round file (jury review settle) settling the two reviewers' disagreements."""
