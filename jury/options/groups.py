"""The groups of options several jobs share: the databases, the evaluation settings, the store,
the output and the juror jobs' options. A job's model inherits the groups it takes
(jury.options.score); a job whose help says a field otherwise declares the field again, its own
docstring under it (jury.options.audit)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from jury.options import AsGiven, Flag, OneOrMany, Options
from jury.options.values import FloatDigits, MaxCost, NearMiss, RowCap, Timeout, Workers


class Gold(Options):
    """Which gold a job reads (a job whose command takes it as an argument: outside its model)."""

    gold: Path | None = None
    """Gold file (BIRD dev.json). Default: jury.toml's gold."""


class Files(Options):
    """Which SQLite databases a job executes on."""

    db_root: Path | None = None
    """Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."""
    db: OneOrMany[str] = []
    """Only the questions of this db_id (repeatable): score the databases you have of a gold naming
    others (BIRD's full dev.json with superhero alone: --db superhero)."""


class EngineUrl(Options):
    """Which engine a job executes on instead of SQLite files, and through which login."""

    db_url: str | None = None
    """Run on PostgreSQL, MySQL/MariaDB or DuckDB instead of SQLite files: a URL with {db_id} for one
    database per db_id ('postgresql://user@host/{db_id}'), or without it for one database holding every
    db_id's tables (BIRD's own PostgreSQL and MySQL releases: 'postgresql://user@host/bird'); password
    from PGPASSWORD, MYSQL_PWD or ?password_env=NAME. Default: jury.toml's [databases]."""
    allow_privileged_login: bool = False
    """Execute on an engine through a login that can do more than read the benchmark's tables (a
    superuser, FILE, SUPER, ...), which is refused by default; recorded in the outputs' provenance.
    Default: jury.toml's [engines] allow_privileged_login."""


# pydantic orders the fields of the bases last base first: the files come first
class Engines(EngineUrl, Files):
    """Which databases a job executes on."""


# pydantic orders the fields of the bases last base first: the gold comes first
class Databases(Engines, Gold):
    """Which gold and which databases a job executes on."""


class Execution(Options):
    """Where executions run (default: jury.toml's, else the built-in defaults)."""

    workers: Workers = None
    """Parallel execution processes (default: CPU count)."""
    executor: str | None = None
    """Where executions run: local (a process pool, default) or ray (Ray tasks; pip install
    'jury-sql[ray]')."""
    ray_address: str | None = None
    """--executor ray: the Ray cluster to use (default: RAY_ADDRESS, else a local Ray runtime of
    --workers CPUs)."""


class EvaluationSettings(Execution):
    """How answers are executed and compared (default: jury.toml's, else the built-in defaults)."""

    comparator: str | None = None
    """Comparator deciding a match: strict (default), bird (BIRD's rule: on an engine, the driver's
    values), bird_normalized (the set rule on values as SQLite returns them), relaxed, subset or spider2."""
    near_miss: NearMiss = None
    """Overlap at or above which a mismatch is a near miss (default 0.5)."""
    timeout: Timeout = None
    """Per-query timeout in seconds (default 30, as BIRD)."""
    row_cap: RowCap = None
    """Rows kept per result (default 100000); beyond it only count and hash."""
    casefold: Annotated[bool, Flag(negatable=True)] = False
    """Compare strings case-insensitively (off by default)."""
    float_digits: FloatDigits = None
    """Round every number (ints too) to N significant digits before comparing (off by default)."""


class Positions(Options):
    """Where published prediction files' positions point."""

    positions_from: Path | None = None
    """The gold file a prediction file given as a run indexes by position (BIRD's predict_dev.json, a
    one-SQL-per-line .txt or .sql; BIRD's full dev.json for the published ones), when it is not the
    gold file. Default: jury.toml's positions_from, else the gold file."""


class CoverageRules(Positions):
    """What questions without a usable answer count as, and where published prediction files' positions point."""

    missing: str | None = None
    """What a gold question without a usable answer (absent, not a string, empty; any file kind)
    counts as: exclude (left out of that model's denominators, the default) or fail (a wrong answer,
    BIRD's rule). Default: jury.toml's missing. Every output shows each model's coverage; a warning
    names the models below it and how many the rule left out or counted wrong, by cause."""
    gold_errors: str | None = None
    """What a question whose gold query fails (an error or a timeout) counts as: exclude (left out of
    every denominator, the default) or fail (a wrong answer for every model, BIRD's rule: its scripts
    score such a row 0). Default: jury.toml's gold_errors. Every output names the failing gold queries."""


class StoreFile(Options):
    """The store every execution and vote is cached in."""

    store: Path | None = None
    """Store file (default .jury/store.db beside jury.toml or in the cwd)."""


class Superseded(Options):
    """Whether locked verdict files a newer one supersedes may be used."""

    allow_superseded: bool = False
    """Use --audit/--verdicts files that a newer file in their folder supersedes (refused by default)."""


class Output(Options):
    """How a command shows its result (the command line's own: the library returns the result)."""

    fmt: Annotated[str, Flag(flags=("--format", "-f"))] = "table"
    """Output format: table, csv, json or md."""
    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Write the report to this file instead of stdout."""


class PanelChoice(Options):
    """Which panel a job asks, and whether it only plans the calls."""

    panel: Annotated[str | None, AsGiven] = None
    """Panel TOML file, or the name of one in panels/ (default: default)."""
    plan: bool = False
    """Make no calls: print ballots, estimated tokens and cost per model and juror."""


class Spending(Options):
    """What a job calling jurors may spend, and whether through the batch APIs."""

    max_cost: MaxCost = None
    """Stop cleanly before total spend of this run would pass USD; stored votes are kept."""
    batch: bool = False
    """Send the ballots of OpenAI, Anthropic and Gemini jurors through their batch APIs (about half the
    price; results within 24 h): exits 3 while ballots are pending, rerun to collect (see jury batch status)."""


class Votes(Options):
    """The store a job calling jurors keeps the votes in."""

    store: Path | None = None
    """Store file (default .jury/store.db)."""


# pydantic orders the fields of the bases last base first: the cost cap comes first
class JurorCalls(Votes, Spending):
    """What every job that calls jurors shares (jury reaudit's re-runs too): the cost cap, the batch
    APIs, the store the votes are kept in and the signature of the file it locks."""

    sign: Annotated[Path | None, Flag(flags=("--sign",), metavar="KEYFILE")] = None
    """Ed25519 private key (OpenSSH or PEM, e.g. ~/.ssh/id_ed25519): after the verdict file is locked,
    write a detached SSH signature beside it (<file>.sig; check with jury verify --trusted-key)."""


# pydantic orders the fields of the bases last base first: the panel comes first
class Jurors(JurorCalls, PanelChoice):
    """What the jobs that ask a panel of jurors share: the panel, the plan, the cost cap, the batch
    APIs, the store the votes are kept in, the signature, the repeats and the shard."""

    repeats: int = Field(1, ge=1)
    """Ask the panel R times (test-retest): each repeat draws its own answer orders from the seed and is
    stored as its own votes (resumable; a rerun asks none again; --plan prices all R). The verdicts are
    repeat 0's, as with R = 1; jury report gives each juror's test-retest kappa, the verdicts that change
    between repeats and the adjudicated column's spread. Not `score --efficiency --repeats` (timing runs)."""
    shard: Annotated[str | None, AsGiven] = None
    """I/N: ask only the ballots whose request hash falls in shard I of N, into this store, and write no
    verdict file (exit 0); merge the shards' stores with `jury store merge`, then run without --shard."""
