"""``jury.jobs.labels.import_labels``' options (``jury labels import``'s, less the label set and its
files, its arguments)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.options import Flag
from jury.options.groups import Gold, StoreFile
from jury.options.values import Timeout


# pydantic orders the fields of the bases last base first: the gold comes first
class LabelsImportOptions(StoreFile, Gold):
    """What ``import_labels`` can be asked: the gold the labels are matched to, the files written,
    the family recorded on FLEX's pairs and, for a set that changes SQL, the original gold, the
    databases, the store, the comparator and the timeout deciding whether a change matters."""

    gold: Path | None = None
    """The gold file the labels' questions are matched to (BIRD dev.json). Default: jury.toml's gold."""
    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Label JSONL to write (flex-judge: judgment JSONL; default: stdout)."""
    runs_out: Annotated[Path | None, Flag(writable=True)] = None
    """flex kinds: also write the pairs as run JSONL."""
    gold_out: Annotated[Path | None, Flag(writable=True)] = None
    """flex kinds: also write the pairs' gold items as JSONL."""
    family: str | None = None
    """flex kinds: the model family to record on the run records (FLEX does not name the systems behind
    its pairs; jury never guesses, and `jury adjudicate` needs one to keep same-family jurors off)."""
    original: Path | None = None
    """arcwise, platinum: the original gold the set corrects (arcwise: mini_dev_sqlite.json); default: the
    --gold file."""
    db_root: Path | None = None
    """arcwise, platinum: the databases a changed SQL runs on (<db_root>/<db_id>/<db_id>.sqlite).
    Default: jury.toml's db_root."""
    comparator: str | None = None
    """arcwise, platinum: the comparator that decides whether a changed SQL changes the result.
    Default: jury.toml's, else bird."""
    timeout: Timeout = None
    """arcwise, platinum: each execution's timeout in seconds. Default: jury.toml's, else 30."""
