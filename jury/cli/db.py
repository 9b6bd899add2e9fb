"""`jury db load`: a BIRD SQLite database copied into PostgreSQL, MySQL/MariaDB or DuckDB."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(
    help="Build databases on PostgreSQL, MySQL/MariaDB or DuckDB for --db-url.", no_args_is_help=True, rich_markup_mode=None
)


@app.command("load")
@handle_errors
def load(
    sqlite_file: Path = typer.Argument(..., help="The SQLite database to copy (opened read-only, never changed)."),
    url: str = typer.Argument(
        ...,
        help="The target: postgresql://user@host:port/NAME, mysql://… or mariadb://…, duckdb:///path/NAME.duckdb "
        "(created when missing; password from PGPASSWORD, MYSQL_PWD or ?password_env=NAME).",
    ),
) -> None:
    """Copy every table of a SQLite file (columns, types, rows, primary and foreign keys) into an engine.

    Types follow the SQLite declared type where every value fits it (INTEGER -> BIGINT, REAL
    -> DOUBLE, DATE/DATETIME -> DATE/TIMESTAMP), else the column is text, so no value
    changes. A key the data breaks is left out and named. A target that already holds one
    of the tables is refused.
    """
    from jury.api.maintenance import load_database

    typer.echo(load_database(sqlite_file, url).render(), err=True, nl=False)
