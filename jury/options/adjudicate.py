"""``jury.adjudicate``'s options (``jury adjudicate``'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from jury.options import Flag, OneOrMany
from jury.options.groups import Databases, Execution, Jurors, Positions
from jury.options.values import NearMiss, Seed


# pydantic orders the fields of the bases last base first: the databases come first
class AdjudicateOptions(Jurors, Positions, Execution, Databases):
    """What ``jury.adjudicate`` can be asked: the databases, where executions run, the juror
    options (the panel, the plan, the cost cap, the store, ...), the models asked about, how the
    ballots are drawn and the verdict file. A path or a setting left None is jury.toml's
    (``project``), else the built-in default. ``panel`` and ``shard`` also take a loaded Panel
    and a Shard."""

    gold: Path | None = None
    """Gold file. Default: jury.toml's gold."""
    db: OneOrMany[str] = []
    """Adjudicate only the questions of this db_id (repeatable; recorded in the verdict file)."""
    model: OneOrMany[str] = []
    """Adjudicate only this model (repeatable)."""
    early_stop: bool = False
    """Stop asking once a majority is settled (e.g. two of three agree)."""
    seed: Seed = None
    """Seed of the answer-order shuffle (default 0); recorded in the verdict file."""
    swap: Annotated[bool | None, Flag(negatable=True)] = None
    """Each juror judges both answer orders; a juror whose two votes disagree abstains as inconsistent.
    Doubles the calls (see --plan). Default: the panel's swap."""
    review_passes: float = Field(0.0, ge=0.0, le=1.0)
    """Also send this fraction of each model's strict matches (a seeded sample) to the jury on the same
    blind ballot; a sampled pass judged a genuine error is a false pass (see jury report)."""
    taxonomy: str | None = None
    """Error taxonomy (a name in panels/taxonomies/, e.g. plsqlbench or spider2-aifunc, or a TOML path): a
    juror voting genuine error also picks a category. Default: the panel's taxonomy, else none."""
    families: Path | None = None
    """Family registry TOML (default panels/families.toml)."""
    comparator: str | None = None
    """Comparator deciding a match (default strict)."""
    near_miss: NearMiss = None
    """Overlap at or above which a mismatch is a near miss and skips the jury (default 0.5)."""
    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Verdict file to write (default verdicts/adjudication-<time>.json)."""
