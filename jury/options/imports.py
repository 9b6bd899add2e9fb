"""``jury.jobs.imports.import_bird_predictions``' options (``jury import bird-predictions``'s and
``jury import with``'s, less the prediction file and the importer, their arguments)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.options import Flag, OneOrMany
from jury.options.groups import Gold, Positions


# pydantic orders the fields of the bases last base first: the gold comes first
class ImportOptions(Positions, Gold):
    """What ``import_bird_predictions`` can be asked: the gold whose questions are kept, the gold
    the predictions index by position, the model and family recorded, the run file written and the
    db_ids kept."""

    gold: Path | None = None
    """The gold file whose questions are kept (and, without --positions-from, indexed by position;
    an importer plugin is given its questions in its order). Default: jury.toml's gold."""
    model: str | None = None
    """Model name to record on every line (default: the file's name without its suffix)."""
    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Run JSONL to write (default: stdout)."""
    only_db: Annotated[OneOrMany[str], Flag(flags=("--db",))] = []
    """Keep only questions of this db_id (repeatable)."""
    family: str | None = None
    """Model family to record (overrides the family registry)."""
