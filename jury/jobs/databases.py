"""Databases on an engine: a SQLite database copied into PostgreSQL, MySQL/MariaDB or DuckDB with
a reader that can only read it (``jury db load``), and the statements that make such a reader
for an existing database (``jury db grants``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from jury.jobs.result import Result
from jury.options import job_options
from jury.options.db import DbGrantsOptions, DbLoadOptions
from jury.pipeline.project import PathLike


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


def load_database(sqlite_file: PathLike, url: str, options: DbLoadOptions | None = None, **overrides: Any) -> DatabaseLoad:
    """Copy every table of a SQLite file (opened read-only; columns, types, rows, primary and
    foreign keys) into the database at ``url`` (postgresql://, mysql://, mariadb:// or
    duckdb:///path, created when missing), logged in as an admin. A key the data breaks is left
    out and named; a target that already holds one of the tables is refused.

    On PostgreSQL and MySQL/MariaDB, ``reader`` (``no_reader``: none) is then granted SELECT on
    the database and nothing else: the login to run jury as (a privileged one is refused at every
    run). A missing reader is created with the password in ``reader_password_env``, on MySQL
    for the host ``reader_host``; an existing one that can do more than read is refused.

    ``options``: a ``DbLoadOptions`` (jury.options.db: every option of ``jury db load``, each
    documented there), or none; ``overrides``: its fields as keyword arguments (``reader=``,
    ``no_reader=True``, ...), over ``options``'. A bad one is an InputError (an unknown name a
    TypeError)."""
    from jury.execution.engine_urls import redact
    from jury.execution.loader import Reader, load

    o = job_options(DbLoadOptions, "load_database", options, overrides)
    reader = None if o.no_reader else o.reader
    report = load(Path(sqlite_file), url, reader=Reader(reader, o.reader_host, o.reader_password_env))
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


def reader_grants(url: str, options: DbGrantsOptions | None = None, **overrides: Any) -> ReaderGrants:
    """The CREATE ROLE/USER and GRANT statements (per engine) that make ``reader`` a login that
    can only read the database at ``url`` (PostgreSQL: of ``pg_schema``; MySQL: from
    ``reader_host``): what ``jury db load`` does for a database it loads. Connects to nothing.

    ``options``: a ``DbGrantsOptions`` (jury.options.db: every option of ``jury db grants``, each
    documented there), or none; ``overrides``: its fields as keyword arguments (``reader=``,
    ``reader_host=``, ``pg_schema=``), over ``options``'. A bad one is an InputError (an unknown
    name a TypeError)."""
    from jury.execution.engine_drivers import engine_for
    from jury.execution.engine_privileges import check_reader, reader_statements
    from jury.execution.engine_urls import check_url, redact

    o = job_options(DbGrantsOptions, "reader_grants", options, overrides)
    reader, reader_host = o.reader, o.reader_host
    check_url(url, "URL")
    engine = engine_for(url)
    check_reader(reader, reader_host)
    database = engine.database if engine.name != "duckdb" else ""
    return ReaderGrants(
        url=redact(url),
        engine=engine.name,
        statements=reader_statements(engine.name, database, reader, host=reader_host, schema=o.pg_schema),
    )
