"""Engine URLs (jury.execution.engines): which engine a URL names, whether it is usable and
credential-free, where each db_id's database is, and each engine's driver, imported on use.

A URL never holds a password: it comes from the environment (``PGPASSWORD``, ``MYSQL_PWD``,
or the variable a ``?password_env=NAME`` query parameter names).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from jury.errors import InputError

POSTGRESQL, MYSQL, DUCKDB = "postgresql", "mysql", "duckdb"
ENGINES = (POSTGRESQL, MYSQL, DUCKDB)
_SCHEMES = {"postgresql": POSTGRESQL, "postgres": POSTGRESQL, "mysql": MYSQL, "mariadb": MYSQL, "duckdb": DUCKDB}
INSTALL_HINTS = {
    POSTGRESQL: "pip install 'jury[postgres]'",
    MYSQL: "pip install 'jury[mysql]'",
    DUCKDB: "pip install 'jury[duckdb]'",
}
_DRIVERS = {POSTGRESQL: "psycopg", MYSQL: "pymysql", DUCKDB: "duckdb"}
#: The sqlglot dialect each engine's SQL is read in (the static check, the tables a ballot shows).
DIALECTS = {POSTGRESQL: "postgres", MYSQL: "mysql", DUCKDB: "duckdb", "sqlite": "sqlite"}
_URL_RE = re.compile(r"^(postgresql|postgres|mysql|mariadb|duckdb)(\+[a-z0-9]+)?:", re.IGNORECASE)


def is_url(text: str | os.PathLike) -> bool:
    """Whether a database locator is an engine URL (else it is a SQLite file path)."""
    return isinstance(text, str) and not isinstance(text, os.PathLike) and bool(_URL_RE.match(text))


def engine_of(url: str) -> str:
    m = _URL_RE.match(url)
    if m is None:
        raise InputError(f"{url!r}: not a database URL (postgresql://, mysql://, mariadb:// or duckdb:///)")
    return _SCHEMES[m.group(1).lower()]


def check_url(url: str, where: str = "--db-url") -> str:
    """``url`` if it is a usable, credential-free engine URL; else a one-line error naming ``where``."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise InputError(f"{where}: {url!r} is not a URL ({exc})") from None
    engine = engine_of(url) if is_url(url) else None
    if engine is None:
        raise InputError(f"{where}: {url!r} is not a database URL (postgresql://, mysql://, mariadb:// or duckdb:///)")
    if parts.password is not None:
        raise InputError(
            f"{where}: the URL holds a password; give it in the environment instead "
            "(PGPASSWORD, MYSQL_PWD, or ?password_env=NAME naming a variable)"
        )
    if engine == DUCKDB:
        if not (parts.path or parts.netloc):
            raise InputError(f"{where}: {url!r} names no DuckDB file (duckdb:///path/to/file.duckdb)")
    elif not parts.path.strip("/"):
        raise InputError(f"{where}: {url!r} names no database (…/{{db_id}} at the end)")
    return url


@dataclass(frozen=True)
class DatabaseURLs:
    """Where each db_id's database is when it is not a SQLite file under db_root: a template
    for every db_id (``--db-url``, ``{db_id}`` replaced), else the ``[databases]`` table of
    jury.toml (a db_id, or ``"*"`` for every other, to a URL or ``{url, password_env}``)."""

    template: str | None = None
    by_db: dict[str, str] = field(default_factory=dict)

    def url_for(self, db_id: str) -> str | None:
        url = self.template or self.by_db.get(db_id) or self.by_db.get("*")
        return None if url is None else url.replace("{db_id}", db_id)

    def __bool__(self) -> bool:
        return bool(self.template or self.by_db)

    @classmethod
    def from_config(cls, table: Any, source: str, template: str | None = None) -> DatabaseURLs:
        """From a ``[databases]`` table (values a URL or ``{url, password_env}``) and a --db-url."""
        by_db: dict[str, str] = {}
        if table is not None and not isinstance(table, dict):
            raise InputError(f"{source}: [databases] must be a table of db_id = URL")
        for db_id, value in (table or {}).items():
            where = f"{source}: databases.{db_id}"
            if isinstance(value, dict):
                unknown = set(value) - {"url", "password_env"}
                if unknown or not isinstance(value.get("url"), str):
                    raise InputError(f"{where} must be a URL or {{url = ..., password_env = ...}}")
                url = value["url"]
                if value.get("password_env"):
                    url += ("&" if "?" in url else "?") + f"password_env={value['password_env']}"
            elif isinstance(value, str):
                url = value
            else:
                raise InputError(f"{where} must be a URL or {{url = ..., password_env = ...}}")
            by_db[str(db_id)] = check_url(url, where)
        if template is not None:
            check_url(template, "--db-url")
        return cls(template, by_db)


def redact(url: str) -> str:
    """The URL as shown and bound: no password (a URL never has one) and no query string."""
    return url.split("?", 1)[0]


def driver(engine: str):
    """The engine's driver module, imported now; a missing one is one line naming the extra."""
    name = _DRIVERS[engine]
    try:
        return __import__(name)
    except ImportError:
        raise InputError(f"{engine} databases need the {name} driver, which is not installed: {INSTALL_HINTS[engine]}") from None
