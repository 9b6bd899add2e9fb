"""``jury.audit_gold``'s options (``jury audit-gold``'s, less the gold file: its first argument)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from jury.options import AsGiven, Flag, OneOrMany, Strings
from jury.options.groups import Engines, Jurors
from jury.options.values import Quorum


# pydantic orders the fields of the bases last base first: the databases come first
class AuditOptions(Jurors, Engines):
    """What ``jury.audit_gold`` can be asked: the databases, the juror options (the panel, the plan,
    the cost cap, the store, ...), the questions audited, the quorum, the deterministic checks
    and the audit file. A path or a setting left None is jury.toml's (``project``), else the
    built-in default. ``panel`` and ``shard`` also take a loaded Panel and a Shard."""

    db: OneOrMany[str] = []
    """Audit only questions of this db_id (repeatable)."""
    panel: Annotated[str | None, AsGiven] = None
    """Audit panel TOML, or a name in panels/ (default: audit)."""
    plan: bool = False
    """Make no calls: print ballots, estimated tokens and cost per juror."""
    repeats: int = Field(1, ge=1)
    """Ask the panel R times (test-retest): each repeat is stored as its own votes (resumable; a rerun asks
    none again; --plan prices all R). Each gold query's flag is repeat 0's, as with R = 1; jury report gives
    each juror's test-retest kappa on its flag votes, the flags that change between repeats and the
    gold-clean column's spread. Not `score --efficiency --repeats` (timing runs)."""
    shard: Annotated[str | None, AsGiven] = None
    """I/N: ask only the ballots whose request hash falls in shard I of N, into this store, and write no
    audit file (exit 0); merge the shards' stores with `jury store merge`, then run without --shard."""
    question_id: Annotated[Strings, Flag(flags=("--question-id", "--question"))] = []
    """Audit only this question (repeatable)."""
    split: str | None = None
    """Split label (e.g. train, dev) for items without a `split` field."""
    quorum: Quorum = None
    """Defective votes needed to flag (default: a strict majority of the panel, abstentions included)."""
    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Verdict file to write (default verdicts/audit-<time>.json)."""
    checks: Annotated[bool, Flag(negatable=True)] = True
    """First run the deterministic gold checks of `jury check-gold` (no model, no cost) and record them in
    the audit file; the panel's show_checks shows them to the jurors as facts."""
    against_gold: Path | None = None
    """With the checks: also the cross-engine check of `jury check-gold --against-gold` (the same questions'
    gold for another engine, on --against-db-url or --against-db-root), recorded in the audit file."""
    against_db_url: str | None = None
    """--against-gold runs on this engine URL."""
    against_db_root: Path | None = None
    """--against-gold runs on SQLite files here."""
