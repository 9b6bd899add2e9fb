"""Engine URLs (jury.execution.engines): which engine a URL names, whether it is usable and
credential-free, where each db_id's database is, and each engine's driver, imported on use.

A URL never holds a password: it comes from the environment (``PGPASSWORD``, ``MYSQL_PWD``,
or the variable a ``?password_env=NAME`` query parameter names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from jury.errors import InputError

POSTGRESQL, MYSQL, DUCKDB = "postgresql", "mysql", "duckdb"
ENGINES = (POSTGRESQL, MYSQL, DUCKDB)
_SCHEMES = {"postgresql": POSTGRESQL, "postgres": POSTGRESQL, "mysql": MYSQL, "mariadb": MYSQL, "duckdb": DUCKDB}
INSTALL_HINTS = {
    POSTGRESQL: "pip install 'jury-sql[postgres]'",
    MYSQL: "pip install 'jury-sql[mysql]'",
    DUCKDB: "pip install 'jury-sql[duckdb]'",
}
_DRIVERS = {POSTGRESQL: "psycopg", MYSQL: "pymysql", DUCKDB: "duckdb"}

#: A connection of an engine's driver (psycopg's, PyMySQL's or DuckDB's): the drivers are optional
#: extras imported by name at run time (driver), and each engine (jury.execution.engine_drivers) uses its own.
Connection = Any
#: The sqlglot dialect each engine's SQL is read in (the static check, the tables a ballot shows).
DIALECTS = {POSTGRESQL: "postgres", MYSQL: "mysql", DUCKDB: "duckdb", "sqlite": "sqlite"}
_URL_RE = re.compile(r"^(postgresql|postgres|mysql|mariadb|duckdb)(\+[a-z0-9]+)?:", re.IGNORECASE)


#: db_id -> (where the database is: a SQLite file's path or an engine's URL, its fingerprint: the
#: file's sha256 or the engine's, jury.execution.engines.fingerprint); :func:`is_url` tells the two apart.
Databases = dict[str, tuple[Path | str, str]]


def is_url(text: str | os.PathLike[str]) -> bool:
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
    jury.toml (a db_id, or ``"*"`` for every other, to a URL or ``{url, password_env}``).

    ``from_config`` also puts the ``[engines]`` settings on every URL's query (where each
    engine connection reads them, in whichever process runs it): ``allow_privileged_login``
    (``--allow-privileged-login``: run through a login that can do more than read) and
    ``allow_functions`` (names the statement check allows beyond its list)."""

    template: str | None = None
    by_db: dict[str, str] = field(default_factory=dict)

    def url_for(self, db_id: str) -> str | None:
        url = self.template or self.by_db.get(db_id) or self.by_db.get("*")
        return None if url is None else url.replace("{db_id}", db_id)

    def __bool__(self) -> bool:
        return bool(self.template or self.by_db)

    @classmethod
    def from_config(
        cls, table: Any, source: str, template: str | None = None, *, engines: Any = None, allow_privileged_login: bool = False
    ) -> DatabaseURLs:
        """From a ``[databases]`` table (values a URL or ``{url, password_env}``), a --db-url and
        the ``[engines]`` table (``allow_privileged_login``, ``allow_functions``), with
        ``allow_privileged_login`` (the flag) on top."""
        extra = _engine_settings(engines, source, allow_privileged_login)
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
            by_db[str(db_id)] = with_params(check_url(url, where), extra)
        if template is not None:
            template = with_params(check_url(template, "--db-url"), extra)
        return cls(template, by_db)


def _engine_settings(table: Any, source: str, allow_privileged_login: bool) -> dict[str, str]:
    """The URL query parameters the ``[engines]`` table and the flag ask for."""
    if table is not None and not isinstance(table, dict):
        raise InputError(f"{source}: [engines] must be a table (allow_privileged_login, allow_functions)")
    table = table or {}
    unknown = sorted(set(table) - {"allow_privileged_login", "allow_functions"})
    if unknown:
        raise InputError(f"{source}: engines.{unknown[0]} is not a setting (allow_privileged_login, allow_functions)")
    allowed = table.get("allow_privileged_login", False)
    if not isinstance(allowed, bool):
        raise InputError(f"{source}: engines.allow_privileged_login must be true or false")
    names = table.get("allow_functions", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and _NAME.match(n) for n in names):
        raise InputError(f"{source}: engines.allow_functions must be a list of function names (letters, digits, _)")
    out = {}
    if allowed or allow_privileged_login:
        out["allow_privileged_login"] = "true"
    if names:
        out["allow_functions"] = ",".join(names)
    return out


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def with_params(url: str, params: dict[str, str]) -> str:
    """``url`` with ``params`` added to its query string (a parameter it already has is kept)."""
    if not params:
        return url

    head, _, query = url.partition("?")
    have = dict(parse_qsl(query))
    added = {k: v for k, v in params.items() if k not in have}
    if not added:
        return url
    return head + "?" + (query + "&" if query else "") + urlencode(added, safe=",{}")


def flag(params: dict[str, str], name: str) -> bool:
    """Whether a URL query parameter is set to a true value (1, true, yes, on)."""
    return params.get(name, "").lower() in ("1", "true", "yes", "on")


def privileged_logins(urls: Iterable[object]) -> list[str]:
    """The server databases (URLs as bound: no query) that were allowed a privileged login
    (DuckDB has no logins)."""

    out = [
        redact(url)
        for url in urls
        if isinstance(url, str)
        and is_url(url)
        and engine_of(url) != DUCKDB
        and flag(dict(parse_qsl(url.partition("?")[2])), "allow_privileged_login")
    ]
    return sorted(set(out))


def redact(url: str) -> str:
    """The URL as shown and bound: no password (a URL never has one) and no query string."""
    return url.split("?", 1)[0]


def driver(engine: str) -> ModuleType:
    """The engine's driver module, imported now; a missing one is one line naming the extra."""
    name = _DRIVERS[engine]
    try:
        return __import__(name)
    except ImportError:
        raise InputError(f"{engine} databases need the {name} driver, which is not installed: {INSTALL_HINTS[engine]}") from None
