"""``jury.toml``'s keys: one model, validated once when the file is read (jury.inputs.config).

Each setting is the type the options models give it (jury.options.values), so the file and a
flag obey one rule. Paths are strings (relative to the file's folder; jury.inputs.config.Config.path_of
resolves them). An unknown key is refused.
"""

from __future__ import annotations

from typing import Any

from jury.options import Options
from jury.options.values import Executor, GoldErrors, MaxCost, Missing, NearMiss, Quorum, RowCap, Seed, Timeout, Workers


class ProjectFile(Options):
    """What a ``jury.toml`` may set: the project's paths and the defaults of the jobs' settings."""

    gold: str | None = None
    """The gold file (BIRD dev.json)."""
    db_root: str | None = None
    """The folder of <db_id>/<db_id>.sqlite."""
    panel: str | None = None
    """The adjudication panel (a TOML file)."""
    audit_panel: str | None = None
    """The gold audit's panel (a TOML file)."""
    store: str | None = None
    """The store (default .jury/store.db)."""
    verdicts_dir: str | None = None
    """Where locked verdict files are written (default verdicts)."""
    audit: str | None = None
    """The audit file `jury score` reads by default."""
    positions_from: str | None = None
    """The gold file a published prediction file's positions index."""
    comparator: str | None = None
    """The comparator deciding a match."""
    workers: Workers = None
    """Parallel execution processes."""
    timeout: Timeout = None
    """Per-query timeout in seconds."""
    near_miss: NearMiss = None
    """Overlap at or above which a mismatch is a near miss."""
    row_cap: RowCap = None
    """Rows kept per result."""
    seed: Seed = None
    """The seed of the jury's answer orders and samples."""
    max_cost: MaxCost = None
    """The cost cap of a juror job, in USD."""
    split: str | None = None
    """The split label of items without a split field."""
    quorum: Quorum = None
    """Defective votes needed to flag a gold query."""
    executor: Executor = None
    """Where executions run: local or ray."""
    missing: Missing = None
    """What an unanswered question counts as: exclude or fail."""
    gold_errors: GoldErrors = None
    """What a question whose gold fails counts as: exclude or fail."""
    databases: dict[str, Any] | None = None
    """[databases]: db_id (or "*") to engine URL (jury.execution.engine_urls)."""
    engines: dict[str, Any] | None = None
    """[engines]: allow_privileged_login, allow_functions (jury.execution.engine_urls)."""
