"""`jury db load` and `jury db grants`: databases on PostgreSQL, MySQL/MariaDB or DuckDB for
--db-url, read by a login that can only read them."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(
    help="Build databases on PostgreSQL, MySQL/MariaDB or DuckDB for --db-url, and the login that reads them.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
READER_HELP = "The login jury runs as, granted SELECT on the database and nothing else (default jury_reader)."
HOST_HELP = "MySQL/MariaDB: the host the reader logs in from (default %: any)."


@app.command("load")
@handle_errors
def load(
    sqlite_file: Path = typer.Argument(..., help="The SQLite database to copy (opened read-only, never changed)."),
    url: str = typer.Argument(
        ...,
        help="The target, logged in as an admin: postgresql://user@host:port/NAME, mysql://… or mariadb://…, "
        "duckdb:///path/NAME.duckdb (created when missing; password from PGPASSWORD, MYSQL_PWD or ?password_env=NAME).",
    ),
    reader: str = typer.Option("jury_reader", "--reader", help=READER_HELP),
    reader_host: str = typer.Option("%", "--reader-host", help=HOST_HELP),
    reader_password_env: str = typer.Option(
        "JURY_READER_PASSWORD",
        "--reader-password-env",
        help="The variable holding the password of a reader that does not exist yet (or a new one for it).",
    ),
    no_reader: bool = typer.Option(False, "--no-reader", help="Grant no reader (then give jury a reader yourself)."),
) -> None:
    """Copy every table of a SQLite file (columns, types, rows, primary and foreign keys) into an engine.

    Types follow the SQLite declared type where every value fits it (INTEGER -> BIGINT, REAL
    -> DOUBLE, DATE/DATETIME -> DATE/TIMESTAMP), else the column is text, so no value
    changes. A key the data breaks is left out and named. A target that already holds one
    of the tables is refused. On PostgreSQL and MySQL/MariaDB the reader is then granted
    SELECT on the database (created when missing, with the password in
    --reader-password-env); jury refuses to run model SQL through any login that can do more.
    """
    from jury.api.databases import load_database

    done = load_database(
        sqlite_file,
        url,
        reader=None if no_reader else reader,
        reader_host=reader_host,
        reader_password_env=reader_password_env,
    )
    typer.echo(done.render(), err=True, nl=False)


@app.command("grants")
@handle_errors
def grants(
    url: str = typer.Argument(..., help="The database: postgresql://…/NAME, mysql://…/NAME or mariadb://…/NAME."),
    reader: str = typer.Option("jury_reader", "--reader", help=READER_HELP),
    reader_host: str = typer.Option("%", "--reader-host", help=HOST_HELP),
    schema: str = typer.Option("public", "--schema", help="PostgreSQL: the schema holding the tables (default public)."),
) -> None:
    """Print the statements that make a login able to read an existing database and nothing else.

    PostgreSQL: CREATE ROLE (LOGIN, no other attribute), its password through psql's
    \\password, default_transaction_read_only, CONNECT on the database, USAGE on the schema,
    SELECT on its tables. MySQL/MariaDB: CREATE USER and GRANT SELECT ON db.*. Connects to
    nothing: run them as an admin, then run jury as the reader.
    """
    from jury.api.databases import reader_grants

    typer.echo(reader_grants(url, reader=reader, reader_host=reader_host, schema=schema).render(), nl=False)
