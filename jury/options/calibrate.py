"""``jury.calibrate``'s options (``jury calibrate``'s, less the files the command writes the figures
to). Calibrate has no request: the model is what the job reads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.options import AsGiven, OneOrMany, Options
from jury.options.groups import EngineUrl, Execution, StoreFile, Superseded
from jury.options.values import Seed


class Measured(Options):
    """What ``jury.calibrate`` measures against the human labels, and the gold and databases its
    runs are executed on."""

    labels: OneOrMany[Path] = []
    """Human label JSONL file(s) (repeatable): adjudication and/or gold labels."""
    verdicts: OneOrMany[Path] = []
    """Locked adjudication file(s) to measure (repeatable)."""
    audit: OneOrMany[Path] = []
    """Locked audit file(s) to measure against the gold labels (repeatable)."""
    judgments: OneOrMany[Path] = []
    """Recorded judges' verdicts as judgment JSONL (repeatable; `jury labels import flex-judge` writes
    FLEX's): each judge is measured against the reference in a section of its own."""
    runs: Annotated[list[Path], AsGiven] = []
    """Run JSONL file(s) or prediction files, NAME=PATH naming one's model (repeatable, as jury score's
    runs): scores every comparator against the labels (executes SQL, no LLM)."""
    gold: Path | None = None
    """Gold file, with --runs. Default: jury.toml's gold."""
    db_root: Path | None = None
    """Folder of <db_id>/<db_id>.sqlite, with --runs. Default: jury.toml's db_root."""


# pydantic orders the fields of the bases last base first: what is measured comes first
class CalibrateOptions(Superseded, Execution, StoreFile, EngineUrl, Measured):
    """What ``jury.calibrate`` can be asked: the label files, the locked files, recorded judgments and
    runs measured against them, the gold and databases the runs execute on, the store, the reference
    annotator and the bootstrap's seed. A path or a setting left None is jury.toml's (``project``),
    else the built-in default."""

    annotator: str | None = None
    """Use this annotator's labels as the reference (default: 'consensus' where given, else the majority)."""
    seed: Seed = 0
    """Seed of the bootstrap intervals."""
