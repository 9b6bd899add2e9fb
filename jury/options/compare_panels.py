"""``jury.compare_panels``' options (``jury compare-panels``', less the two verdict files, its
arguments, and how the command shows the comparison)."""

from __future__ import annotations

from pydantic import Field

from jury.options import Options


class ComparePanelsOptions(Options):
    """What ``jury.compare_panels`` can be asked: the bootstrap of the kappa intervals and the
    intervals' coverage."""

    resamples: int = Field(default=2000, ge=0)
    """Bootstrap resamples of the records per kappa interval (0: none)."""
    seed: int = 0
    """The bootstrap's seed."""
    confidence: float = Field(default=0.95, ge=0.5, le=0.999)
    """Nominal coverage of every interval."""
