"""``jury.jobs.databases``' options (``jury db load``'s and ``jury db grants``', less the SQLite
file and the URL, their arguments)."""

from __future__ import annotations

from typing import Annotated

from jury.options import Flag, Options


class ReaderLogin(Options):
    """The login jury runs as on an engine: its name and, on MySQL/MariaDB, its host."""

    reader: str = "jury_reader"
    """The login jury runs as, granted SELECT on the database and nothing else (default jury_reader)."""
    reader_host: str = "%"
    """MySQL/MariaDB: the host the reader logs in from (default %: any)."""


class DbLoadOptions(ReaderLogin):
    """What ``jury.jobs.databases.load_database`` can be asked: the reader granted SELECT on the
    loaded database, its host and its password's variable, or no reader."""

    reader_password_env: str = "JURY_READER_PASSWORD"
    """The variable holding the password of a reader that does not exist yet (or a new one for it)."""
    no_reader: bool = False
    """Grant no reader (then give jury a reader yourself)."""


class DbGrantsOptions(ReaderLogin):
    """What ``jury.jobs.databases.reader_grants`` can be asked: the reader, its host and the schema."""

    pg_schema: Annotated[str, Flag(flags=("--schema",))] = "public"
    """PostgreSQL: the schema holding the tables (default public)."""
