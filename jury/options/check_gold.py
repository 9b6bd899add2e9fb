"""``jury.check_gold``'s options (``jury check-gold``'s, less the gold file, its first argument,
and how the command shows the findings)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from jury.options import AsGiven, Flag, OneOrMany, Strings
from jury.options.groups import Engines, StoreFile
from jury.options.values import Timeout, Workers


# pydantic orders the fields of the bases last base first: the databases come first
class CheckGoldOptions(StoreFile, Engines):
    """What ``jury.check_gold`` can be asked: the databases, the store, the passes, the questions
    checked, the comparator and timeout, the cross-engine check, the time windows and the workers.
    A path or a setting left None is jury.toml's (``project``), else the built-in default.
    ``passes`` also takes the counts as a list of ints."""

    db: OneOrMany[str] = []
    """Check only questions of this db_id (repeatable)."""
    store: Path | None = None
    """Store file (default .jury/store.db): remembers databases that passed the integrity check."""
    passes: Annotated[str, AsGiven] = "5,10,10,10"
    """Executions per pass, comma-separated (Spider 2.0-AIFunc: 5,10,10,10)."""
    question_id: Annotated[Strings, Flag(flags=("--question-id", "--question"))] = []
    """Check only this question (repeatable)."""
    comparator: str | None = None
    """Comparator deciding whether two executions differ (default strict)."""
    timeout: Timeout = None
    """Per-query timeout in seconds (default 30)."""
    against_gold: Path | None = None
    """Cross-engine check: the same questions' gold for another engine (BIRD's mini_dev_postgresql.json),
    run on --against-db-url (or --against-db-root) and compared with this gold's result under every
    comparator."""
    against_db_url: str | None = None
    """--against-gold runs here: an engine URL, with {db_id} or without (one database)."""
    against_db_root: Path | None = None
    """--against-gold runs on SQLite files here (default: --db-root's)."""
    windows: int = Field(default=1, ge=1)
    """Spider 2.0-AIFunc's final stability check: repeat the last pass in this many separate time windows
    (each window's executions and agreements recorded in the JSON's items[].windows)."""
    window_gap: float | None = None
    """--windows: seconds between the end of one window and the start of the next."""
    workers: Workers = None
    """Processes checking gold queries in parallel (default: CPU count)."""
