"""The jobs around the main ones: batches sent through providers' batch APIs, databases copied
into an engine, the local juror's servers, and prediction files imported as run JSONL.

- ``batch_status`` / ``collect_batches``: the store's batches (``jury batch status|collect``);
- ``load_database``: a SQLite database copied into PostgreSQL, MySQL/MariaDB or DuckDB, and a
  reader that can only read it (``jury db load``); ``reader_grants``: the statements that make
  such a reader for an existing database (``jury db grants``);
- ``start_local_juror`` / ``local_juror_status`` / ``stop_local_juror``: llama.cpp serving
  small real models on loopback ports (``jury local-juror``);
- ``import_bird_predictions``: BIRD prediction files as run records (``jury import``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from jury.api.result import Result
from jury.pipeline.project import PathLike, Project

BATCH_COLUMNS = ["provider", "batch", "juror", "requests", "pending", "answered", "used", "failed", "age", "state"]
BATCH_HEADS = ["provider", "batch", "juror", "ballots", "pending", "collected", "voted", "failed", "age", "state"]


class BatchStatus(Result):
    """The store's batches: provider, batch id, juror, ballots by state, age and state."""

    rows: list[dict[str, Any]]

    @property
    def pending(self) -> int:
        return sum(r["pending"] for r in self.rows)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.api.store import render_console
        from jury.results.render import to_csv, to_json, to_markdown

        if fmt == "csv":
            return to_csv(self.rows, BATCH_COLUMNS)
        if fmt == "json":
            return to_json(self.rows)
        if fmt == "md":
            return to_markdown(self.rows, BATCH_COLUMNS, BATCH_HEADS) + "\n"
        if not self.rows:
            return render_console(width, [("line", "no batches in this store")])
        waiting = self.pending
        line = f"{len(self.rows)} batches; {waiting} ballots pending at the providers" + (
            "; rerun the command that sent them (or `jury batch collect`) to collect" if waiting else ""
        )
        notes = [("line", f"batch {r['batch']}: {r['note']}") for r in self.rows if r.get("note")]
        return render_console(width, [("table", (self.rows, BATCH_COLUMNS, BATCH_HEADS, "batches")), *notes, ("line", line)])


def batch_status(*, store: PathLike | None = None, project: Project | None = None) -> BatchStatus:
    """List the store's batches (ballots pending at the provider, collected and not yet a vote,
    voted, failed). Calls nothing."""
    from jury.judging.batch import status_rows

    project = project or Project.load()
    with project.open_store(store) as st:
        rows = status_rows(st)
    return BatchStatus(rows=rows, store_path=project.store_path(store))


class BatchCollection(BatchStatus):
    """What ``collect_batches`` left: the batches after polling, and the ones it could not poll."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    notes: list[str] = Field(default_factory=list)  # "Warning: ..." per batch that could not be polled

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.api.store import render_console

        if fmt == "json":
            return super()._render(fmt, width=width, wide=wide)
        line = (
            f"{sum(r['answered'] for r in self.rows)} replies collected and waiting to become votes; "
            f"{self.pending} ballots still pending; {sum(r['failed'] for r in self.rows)} failed"
        )
        return line + "\n" if fmt == "md" else render_console(width, [("line", line)])


def collect_batches(*, store: PathLike | None = None, project: Project | None = None) -> BatchCollection:
    """Poll every open batch and store the replies of those that ended (they become votes when
    the job that sent them runs again). Needs each juror's key variable; sends no ballot."""
    import asyncio

    from jury.judging.batch import collect, status_rows

    project = project or Project.load()
    with project.open_store(store) as st:
        problems = asyncio.run(collect(st))
        rows = status_rows(st)
    return BatchCollection(rows=rows, notes=[f"Warning: {p}" for p in problems], store_path=project.store_path(store))


class DatabaseLoad(Result):
    """A database copied into an engine: tables, rows, keys, and the keys its data breaks."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    url: str  # redacted: no password
    tables: int
    rows: int
    keys: int
    skipped_keys: list[str] = Field(default_factory=list)
    folded: int = 0  # PostgreSQL: names created lower case, as BIRD's PostgreSQL release has them
    kept_case: list[str] = Field(default_factory=list)  # plain names kept as written (two would fold alike)
    table_name_case: str | None = None  # MySQL/MariaDB: lower_case_table_names, said
    reader: str | None = None  # the login granted SELECT on it (and nothing else); None on DuckDB or --no-reader

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.render import safe, to_json

        if fmt == "json":
            return to_json(self.model_dump(mode="json"))
        shown = 10
        more = len(self.skipped_keys) - shown
        lines = [
            f"{self.url}: {self.tables} tables, {self.rows:,} rows, {self.keys} keys"
            + (f"; {len(self.skipped_keys)} keys left out" if self.skipped_keys else ""),
            *(f"  key left out: {line}" for line in self.skipped_keys[:shown]),
            *([f"  and {more} more key{'s' if more != 1 else ''} left out"] if more > 0 else []),
        ]
        if self.folded:
            lines.append(
                f"  {self.folded} names created lower case, as BIRD's PostgreSQL release has them (its unquoted SQL "
                "finds them); names that need quotes keep their case"
                + (f"; kept as written, two would fold alike: {', '.join(self.kept_case)}" if self.kept_case else "")
            )
        if self.table_name_case:
            lines.append(f"  {self.table_name_case}")
        if self.reader is not None:
            lines.append(f"  {self.reader} may read it and nothing else: run jury as {self.reader.split('@')[0]} (--db-url)")
        return "".join(safe(line) + ("  \n" if fmt == "md" else "\n") for line in lines)


def load_database(
    sqlite_file: PathLike,
    url: str,
    *,
    reader: str | None = "jury_reader",
    reader_host: str = "%",
    reader_password_env: str = "JURY_READER_PASSWORD",
) -> DatabaseLoad:
    """Copy every table of a SQLite file (opened read-only; columns, types, rows, primary and
    foreign keys) into the database at ``url`` (postgresql://, mysql://, mariadb:// or
    duckdb:///path, created when missing), logged in as an admin. A key the data breaks is left
    out and named; a target that already holds one of the tables is refused.

    On PostgreSQL and MySQL/MariaDB, ``reader`` (None: none) is then granted SELECT on the
    database and nothing else: the login to run jury as (a privileged one is refused at every
    run). A missing reader is created with the password in ``reader_password_env``, on MySQL
    for the host ``reader_host``; an existing one that can do more than read is refused."""
    from jury.execution.engine_urls import redact
    from jury.execution.loader import Reader, load

    report = load(Path(sqlite_file), url, reader=Reader(reader, reader_host, reader_password_env))
    return DatabaseLoad(
        url=redact(url),
        tables=report.tables,
        rows=report.rows,
        keys=report.keys,
        skipped_keys=list(report.skipped_keys),
        folded=report.folded,
        kept_case=list(report.kept_case),
        table_name_case=report.table_name_case,
        reader=report.reader,
        inputs=[Path(sqlite_file)],
    )


class ReaderGrants(Result):
    """The statements that make a login able to read one database and nothing else."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "md")

    url: str  # redacted: no password
    engine: str
    statements: list[str]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        head = f"-- {self.url}: run as an admin; then run jury as the reader (a privileged login is refused)"
        text = "\n".join([head, *self.statements]) + "\n"
        return f"```sql\n{text}```\n" if fmt == "md" else text


def reader_grants(url: str, *, reader: str = "jury_reader", reader_host: str = "%", schema: str = "public") -> ReaderGrants:
    """The CREATE ROLE/USER and GRANT statements (per engine) that make ``reader`` a login that
    can only read the database at ``url`` (PostgreSQL: of ``schema``; MySQL: from
    ``reader_host``): what ``jury db load`` does for a database it loads. Connects to nothing."""
    from jury.execution.engine_drivers import engine_for
    from jury.execution.engine_privileges import check_reader, reader_statements
    from jury.execution.engine_urls import check_url, redact

    check_url(url, "URL")
    engine = engine_for(url)
    check_reader(reader, reader_host)
    database = engine.database if engine.name != "duckdb" else ""
    return ReaderGrants(
        url=redact(url),
        engine=engine.name,
        statements=reader_statements(engine.name, database, reader, host=reader_host, schema=schema),
    )


class LocalJurorState(Result):
    """The local juror after ``start``, ``status`` or ``stop`` (``state``: None when none was
    started from the state folder). ``ok`` is False when ``status`` finds it not answering."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "md")

    action: str  # start, status or stop
    state: Any = None  # jury.pipeline.local_juror.LocalJuror
    state_dir: Path

    @property
    def ok(self) -> bool:
        return self.action != "status" or (self.state is not None and self.state.answering)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        if self.action == "stop":
            servers = [] if self.state is None else self.state.servers
            text = (
                "local juror: not started"
                if self.state is None
                else f"local juror stopped ({', '.join(f'{s.alias} pid {s.pid}' for s in servers)})"
            )
        elif self.state is None:
            text = "local juror: not started (jury local-juror start)"
        else:
            text = self.state.describe()
        return text + "\n"


def _state_dir(project: Project | None, state_dir: PathLike | None) -> Path:
    if state_dir is not None:
        return Path(state_dir)
    return (project or Project.load()).store_path(None).parent / "local-juror"


def start_local_juror(
    *,
    port: int = 8765,
    models: Sequence[str] | None = None,
    threads: int | None = None,
    state_dir: PathLike | None = None,
    project: Project | None = None,
) -> LocalJurorState:
    """Start one llama.cpp server per model (default: gemma-3-270m and smollm2-135m) on
    consecutive loopback ports from ``port`` in the background and wait until they answer (or
    return the ones already running). ``state_dir``: the server's state file, models and log
    (default: local-juror/ beside the store). Needs the [local] extra."""
    from jury.pipeline.local_juror import start

    folder = _state_dir(project, state_dir)
    state = start(folder, port=port, models=list(models or []) or None, threads=threads)
    return LocalJurorState(action="start", state=state, state_dir=folder)


def local_juror_status(*, state_dir: PathLike | None = None, project: Project | None = None) -> LocalJurorState:
    """Whether the local juror started from ``state_dir`` runs and answers (``ok``)."""
    from jury.pipeline.local_juror import status

    folder = _state_dir(project, state_dir)
    return LocalJurorState(action="status", state=status(folder), state_dir=folder)


def stop_local_juror(*, state_dir: PathLike | None = None, project: Project | None = None) -> LocalJurorState:
    """Stop the servers started from ``state_dir`` (``state`` None: none was)."""
    from jury.pipeline.local_juror import stop

    folder = _state_dir(project, state_dir)
    return LocalJurorState(action="stop", state=stop(folder), state_dir=folder)


class RunImport(Result):
    """Imported run records; renders as run JSONL."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    records: list[Any]  # jury.inputs.records.RunRecord
    model: str
    entries: int
    missing: list[Any] = Field(default_factory=list)  # question ids without an answer
    odd: list[str] = Field(default_factory=list)  # entries that were not plain SQL strings
    output: Path | None = None  # where the records were written
    notes: list[str] = Field(default_factory=list)  # what the command line says on stderr

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.inputs.io import dump_runs

        if fmt == "json":
            from jury.results.render import to_json

            return to_json([r.model_dump(mode="json", exclude_none=True) for r in self.records])
        text = dump_runs(self.records)
        return f"```json\n{text}```\n" if fmt == "md" else text


def import_bird_predictions(
    file: PathLike,
    *,
    model: str | None = None,
    gold: PathLike | None = None,
    positions_from: PathLike | None = None,
    output: PathLike | None = None,
    only_db: Sequence[str] | None = None,
    family: str | None = None,
    project: Project | None = None,
) -> RunImport:
    """Import a BIRD prediction file (predict_dev.json, or one SQL per line) as ``model``'s run
    records (default: the file's name without its suffix), indexing questions by their position
    in ``positions_from`` (default: jury.toml's positions_from, else ``gold``) and keeping the
    questions of ``gold`` (default: jury.toml's gold), and of the db_ids ``only_db`` when
    given; written as run JSONL to ``output`` when given (never over an input, the store or a
    database). Non-string entries and empty lines become missing answers (sql: null);
    ``family`` overrides the family registry."""
    from jury.errors import InputError
    from jury.inputs.importers import POSITIONS_HINT, model_name
    from jury.inputs.importers import import_bird_predictions as read_predictions
    from jury.inputs.io import dump_runs, load_gold, load_gold_list
    from jury.inputs.writer import write_output
    from jury.pipeline.outputs import guard_outputs
    from jury.results.render import safe

    project = project or Project.load()
    source, gold_path = Path(file), project.gold(gold)
    positions = project.path("positions_from", positions_from)
    model = model if model is not None else model_name(source)
    out = Path(output) if output is not None else None
    guard_outputs(
        [out],
        [p for p in (source, gold_path, positions) if p is not None],
        store=project.store_path(None),
        db_root=project.db_root(None),
    )
    dbs = list(only_db or [])
    keep = set(load_gold(gold_path)) if positions is not None else None
    order = load_gold_list(positions if positions is not None else gold_path)
    report = read_predictions(source, order, model, only_db=set(dbs) or None, family=family, keep=keep)
    if not report.records:
        if dbs:
            raise InputError(f"{source}: no questions left after keeping only db_id {', '.join(dbs)}")
        raise InputError(f"{source}: none of its {report.entries} predictions is a question of {gold_path}; {POSITIONS_HINT}")
    notes = []
    if out is not None:
        write_output(out, dump_runs(report.records))
        notes.append(f"wrote {safe(out)}")
    notes.append(
        safe(
            f"{model}: {len(report.records)} answers from {report.entries} entries; "
            f"{len(report.missing)} missing, {len(report.odd)} odd"
        )
    )
    notes += [safe(f"  odd entry {line}") for line in report.odd[:5]]
    return RunImport(
        records=report.records,
        model=model,
        entries=report.entries,
        missing=list(report.missing),
        odd=list(report.odd),
        output=out,
        notes=notes,
        inputs=[source, gold_path],
        store_path=project.store_path(None),
        db_root=project.db_root(None),
    )
