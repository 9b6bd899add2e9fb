"""`jury db load` and `jury db grants`: databases on PostgreSQL, MySQL/MariaDB or DuckDB for
--db-url, read by a login that can only read them.

Both commands are generated from their options (jury.options.db, jury.options.command): no option
declared by hand but the SQLite file and the URL (the library's arguments)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors
from jury.options.command import argument, command
from jury.options.db import DbGrantsOptions, DbLoadOptions

app = typer.Typer(
    help="Build databases on PostgreSQL, MySQL/MariaDB or DuckDB for --db-url, and the login that reads them.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def load(sqlite_file: Path, url: str, o: DbLoadOptions) -> None:
    """Copy every table of a SQLite file (columns, types, rows, primary and foreign keys) into an engine.

    Types follow the SQLite declared type where every value fits it (INTEGER -> BIGINT, REAL
    -> DOUBLE, DATE/DATETIME -> DATE/TIMESTAMP), else the column is text, so no value
    changes. A key the data breaks is left out and named. A target that already holds one
    of the tables is refused. On PostgreSQL and MySQL/MariaDB the reader is then granted
    SELECT on the database (created when missing, with the password in
    --reader-password-env); jury refuses to run model SQL through any login that can do more.
    """
    from jury.jobs.databases import load_database

    typer.echo(load_database(sqlite_file, url, o).render(), err=True, nl=False)


def grants(url: str, o: DbGrantsOptions) -> None:
    """Print the statements that make a login able to read an existing database and nothing else.

    PostgreSQL: CREATE ROLE (LOGIN, no other attribute), its password through psql's
    \\password, default_transaction_read_only, CONNECT on the database, USAGE on the schema,
    SELECT on its tables. MySQL/MariaDB: CREATE USER and GRANT SELECT ON db.*. Connects to
    nothing: run them as an admin, then run jury as the reader.
    """
    from jury.jobs.databases import reader_grants

    typer.echo(reader_grants(url, o).render(), nl=False)


SQLITE_FILE = argument("sqlite_file", "The SQLite database to copy (opened read-only, never changed).")
TARGET = argument(
    "url",
    "The target, logged in as an admin: postgresql://user@host:port/NAME, mysql://… or mariadb://…, "
    "duckdb:///path/NAME.duckdb (created when missing; password from PGPASSWORD, MYSQL_PWD or ?password_env=NAME).",
    str,
)
DATABASE = argument("url", "The database: postgresql://…/NAME, mysql://…/NAME or mariadb://…/NAME.", str)
app.command("load")(handle_errors(command(DbLoadOptions, load, arguments=[SQLITE_FILE, TARGET])))
app.command("grants")(handle_errors(command(DbGrantsOptions, grants, arguments=[DATABASE])))
