"""Execution on server and embedded engines: PostgreSQL, MySQL/MariaDB and DuckDB.

A database is named by a URL (``postgresql://user@host:port/name``, ``mysql://…`` or
``mariadb://…``, ``duckdb:///path/file.duckdb``), never with a password in it: a password
comes from the environment (``PGPASSWORD``, ``MYSQL_PWD``, or the variable a
``?password_env=NAME`` query parameter names), so no store, verdict file or log holds it.
Each engine's driver is imported only when a URL of that engine is used; a missing one is
one line naming the extra to install.

Every engine runs the SQL as :func:`jury.execution.sqlite.execute` does, with the same row
cap, byte caps, timeout and digests (the row digests and :class:`RowSetDigest` of the SQLite
executor, over values normalised to what SQLite would return), so one result hashes alike
on every engine. Read-only for real, three ways on each engine:

1. a static check refuses anything but one query (one statement; SELECT, WITH, VALUES or a
   parenthesised query; no data-changing or file-writing word anywhere; no function that
   reads or writes server files, sends signals or runs SQL text);
2. the engine's own read-only mode: PostgreSQL ``SET SESSION CHARACTERISTICS AS
   TRANSACTION READ ONLY`` and ``BEGIN READ ONLY`` (the query runs through a server-side
   cursor, which takes one SELECT only); MySQL/MariaDB ``SET SESSION TRANSACTION READ
   ONLY`` and ``START TRANSACTION READ ONLY`` on a connection without multi-statements;
   DuckDB a ``read_only`` connection with ``enable_external_access`` off and the
   configuration locked; every transaction is rolled back;
3. a timeout enforced by the server (PostgreSQL ``statement_timeout``, MariaDB
   ``max_statement_time``, MySQL ``max_execution_time``) and by the client (a timer that
   cancels the query: ``cancel()``, ``KILL QUERY``, ``interrupt()``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from jury.errors import InputError
from jury.execution.sqlite import MAX_RESULT_BYTES, RowSetDigest, _ResultTooLarge, _row_digest_bytes, _value_bytes
from jury.execution.sqlite import execute as sqlite_execute
from jury.inputs.records import ExecResult
from jury.vocab import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

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
_FETCH = 1000  # rows fetched from the server at a time


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


# --- the static check --------------------------------------------------------------------------

_FIRST_WORDS = {"select", "with", "values", "(", "table"}
_DENIED_WORDS = {
    "insert", "update", "delete", "merge", "upsert", "replace_into", "create", "drop", "alter", "truncate",
    "grant", "revoke", "into", "outfile", "dumpfile", "copy", "attach", "detach", "install", "pragma",
    "vacuum", "call", "execute", "lock", "notify",
}  # fmt: skip
_DENIED_FUNCTIONS = {
    # PostgreSQL: server files, large objects, other servers, signals, settings, SQL text run as data
    "pg_read_file", "pg_read_binary_file", "pg_stat_file", "pg_file_write", "pg_file_rename", "pg_file_unlink",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote",
    "pg_switch_wal", "pg_create_restore_point", "pg_logical_emit_message", "pg_notify", "set_config",
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema",
    "pg_import_system_collations", "pg_backup_start", "pg_backup_stop",
    # MySQL / MariaDB
    "load_file", "sys_exec", "sys_eval", "get_lock", "release_lock",
    # DuckDB (also refused by enable_external_access = false)
    "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
    "read_json_objects", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_text", "read_blob",
    "glob", "sqlite_scan", "sqlite_attach", "postgres_scan", "postgres_attach", "mysql_scan", "iceberg_scan",
    "delta_scan", "read_xlsx", "getenv", "query", "query_table",
}  # fmt: skip
_DENIED_PREFIXES = ("pg_ls_", "lo_", "dblink", "pg_advisory")


def statement_problem(sql: str, engine: str) -> str | None:
    """Why ``sql`` may not run on ``engine`` (not one read-only query), or None.

    >>> statement_problem("SELECT 1; DROP TABLE t", "postgresql")
    'refused: more than one statement (only one query may run)'
    >>> statement_problem("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "postgresql")
    "refused: 'DELETE' may not appear in a query jury runs"
    >>> statement_problem("SELECT pg_read_file('/etc/passwd')", "postgresql")
    "refused: the function 'pg_read_file' reads or changes something outside the query's tables"
    >>> statement_problem("SELECT \\"update\\" FROM t;", "postgresql") is None
    True
    """
    import sqlglot
    from sqlglot.tokens import TokenType

    try:
        tokens = list(sqlglot.tokenize(sql, read=DIALECTS[engine]))
    except Exception as exc:  # sqlglot's TokenError and others: the SQL cannot even be read
        return f"refused: the SQL cannot be read ({' '.join(str(exc).split())[:200]})"
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        return "not a query: the SQL is empty"
    if any(t.token_type == TokenType.SEMICOLON for t in tokens):
        return "refused: more than one statement (only one query may run)"
    literal = {TokenType.STRING, TokenType.IDENTIFIER, TokenType.NATIONAL_STRING, TokenType.NUMBER}
    literal |= {t for t in (getattr(TokenType, n, None) for n in ("RAW_STRING", "BIT_STRING", "HEX_STRING")) if t}
    first = tokens[0].text.lower()
    if first not in _FIRST_WORDS:
        return f"refused: not a query (only SELECT, WITH or VALUES may run, not {tokens[0].text.upper()[:40]!r})"
    for i, tok in enumerate(tokens):
        if tok.token_type in literal:
            continue
        word = tok.text.lower()
        if word in _DENIED_WORDS:
            return f"refused: {tok.text.upper()!r} may not appear in a query jury runs"
        calls = i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN
        if (calls or engine == DUCKDB) and (word in _DENIED_FUNCTIONS or word.startswith(_DENIED_PREFIXES)):
            return f"refused: the function {tok.text!r} reads or changes something outside the query's tables"
    return None


# --- values as SQLite would return them -----------------------------------------------------------


def normalise(value: Any) -> Any:
    """A driver's value as SQLite would return it: Decimal -> int when integral else float,
    date -> 'YYYY-MM-DD', datetime -> 'YYYY-MM-DD HH:MM:SS[.ffffff]', time and MySQL TIME
    (timedelta) -> 'HH:MM:SS[.ffffff]', bool -> 0/1, binary -> bytes, UUID, JSON and the
    rest -> text. int, float, str and NULL pass as they are.

    >>> [normalise(v) for v in (Decimal("2.50"), Decimal("3"), True, dt.date(2020, 1, 2))]
    [2.5, 3, 1, '2020-01-02']
    >>> normalise(dt.datetime(2020, 1, 2, 3, 4, 5)), normalise(dt.timedelta(hours=26, seconds=7))
    ('2020-01-02 03:04:05', '26:00:07')
    """
    t = type(value)
    if value is None or t is int or t is float or t is str:
        return value
    if t is bool:
        return int(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return float(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ") if value.tzinfo is None else value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        total = value.total_seconds()
        sign = "-" if total < 0 else ""
        micro = abs(value) // dt.timedelta(microseconds=1)
        secs, micro = divmod(micro, 1_000_000)
        text = f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
        return text + (f".{micro:06d}" if micro else "")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, int):  # numpy-like or subclass
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


# --- the engines ------------------------------------------------------------------------------------


def _password(params: dict[str, str], *defaults: str) -> str | None:
    for name in ([params["password_env"]] if params.get("password_env") else []) + list(defaults):
        value = os.environ.get(name)
        if value is not None:
            return value
    return None


class Engine:
    """One engine's connection, read-only session, catalogue and cancellation."""

    name = ""

    def __init__(self, url: str) -> None:
        self.url = url
        self.parts = urlsplit(url)
        self.params = dict(parse_qsl(self.parts.query))

    # subclasses
    def connect(self, timeout_s: float):
        raise NotImplementedError

    def begin(self, conn, timeout_s: float) -> None:
        raise NotImplementedError

    def stream(self, conn, sql: str) -> tuple[list[str], Iterator[tuple]]:
        raise NotImplementedError

    def end(self, conn) -> None:
        raise NotImplementedError

    def canceller(self, conn):
        raise NotImplementedError

    def tables(self, conn) -> list[str]:
        raise NotImplementedError

    def columns(self, conn, table: str) -> list[tuple[str, str]]:
        raise NotImplementedError

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def is_timeout(self, exc: BaseException) -> bool:
        return False

    def query_rows(self, conn, sql: str) -> list[tuple]:
        cols, rows = self.stream(conn, sql)
        return list(rows)


class PostgresEngine(Engine):
    name = POSTGRESQL

    def connect(self, timeout_s: float):
        psycopg = driver(POSTGRESQL)
        p = self.parts
        kwargs: dict[str, Any] = {
            "host": p.hostname or self.params.get("host"),
            "port": p.port,
            "user": unquote(p.username) if p.username else None,
            "dbname": unquote(p.path.lstrip("/")),
            "connect_timeout": max(2, int(min(timeout_s, 30))),
            "application_name": "jury",
            "autocommit": True,
        }
        password = _password(self.params) if self.params.get("password_env") else None
        if password is not None:
            kwargs["password"] = password
        try:
            conn = psycopg.connect(**{k: v for k, v in kwargs.items() if v is not None})
        except psycopg.Error as exc:
            raise ConnectionError(_one_line(exc)) from None
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        conn.execute("SET default_transaction_read_only = on")
        return conn

    def begin(self, conn, timeout_s: float) -> None:
        ms = max(1, int(timeout_s * 1000))
        conn.execute("BEGIN READ ONLY")
        conn.execute(f"SET LOCAL statement_timeout = {ms}")
        conn.execute(f"SET LOCAL idle_in_transaction_session_timeout = {ms + 60_000}")

    def stream(self, conn, sql: str):
        cur = self._cursor = conn.cursor(name="jury_query", withhold=False)  # DECLARE … CURSOR: one SELECT only
        cur.itersize = _FETCH
        cur.execute(sql.rstrip().rstrip(";"))
        columns = [d.name for d in cur.description or []]
        return columns, iter(cur)

    def end(self, conn) -> None:
        cur, self._cursor = getattr(self, "_cursor", None), None
        if cur is not None:
            with contextlib.suppress(Exception):  # the transaction failed: the portal is gone with it
                cur.close()
        conn.execute("ROLLBACK")

    def canceller(self, conn):
        return conn.cancel_safe if hasattr(conn, "cancel_safe") else conn.cancel

    def is_timeout(self, exc: BaseException) -> bool:
        return getattr(exc, "sqlstate", None) == "57014"  # query_canceled (statement_timeout or cancel)

    def tables(self, conn) -> list[str]:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_type IN ('BASE TABLE', 'VIEW') ORDER BY table_name"
        ).fetchall()
        return [r[0] for r in rows]

    def columns(self, conn, table: str) -> list[tuple[str, str]]:
        rows = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = %s ORDER BY ordinal_position",
            (table,),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def query_rows(self, conn, sql: str) -> list[tuple]:
        return conn.execute(sql).fetchall()


class MySQLEngine(Engine):
    name = MYSQL

    def connect(self, timeout_s: float):
        pymysql = driver(MYSQL)
        p = self.parts
        kwargs: dict[str, Any] = {
            "host": p.hostname or "localhost",
            "port": p.port or 3306,
            "user": unquote(p.username) if p.username else None,
            "database": unquote(p.path.lstrip("/")),
            "connect_timeout": max(2, int(min(timeout_s, 30))),
            "charset": self.params.get("charset", "utf8mb4"),
            "autocommit": True,
            "client_flag": 0,  # no CLIENT.MULTI_STATEMENTS: the server refuses `a; b`
            "local_infile": False,
        }
        if self.params.get("unix_socket"):
            kwargs["unix_socket"] = self.params["unix_socket"]
        password = _password(self.params, "MYSQL_PWD")
        if password is not None:
            kwargs["password"] = password
        try:
            conn = pymysql.connect(**{k: v for k, v in kwargs.items() if v is not None})
        except pymysql.Error as exc:
            raise ConnectionError(_one_line(exc)) from None
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = str(cur.fetchone()[0])
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            cur.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')") if self.params.get("ansi") else None
        conn.jury_mariadb = "mariadb" in version.lower()
        return conn

    def begin(self, conn, timeout_s: float) -> None:
        with conn.cursor() as cur:
            if conn.jury_mariadb:
                cur.execute(f"SET SESSION max_statement_time = {max(0.001, timeout_s):.3f}")
            else:
                cur.execute(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")
            cur.execute("START TRANSACTION READ ONLY")

    def stream(self, conn, sql: str):
        pymysql = driver(MYSQL)
        cur = conn.cursor(pymysql.cursors.SSCursor)  # unbuffered: rows stream from the server
        cur.execute(sql)
        columns = [d[0] for d in cur.description or []]
        if not columns:
            raise _NotAQuery()
        return columns, _mysql_rows(cur)

    def end(self, conn) -> None:
        conn.rollback()

    def canceller(self, conn):
        ident = conn.thread_id()
        url, timeout = self.url, 5.0

        def kill() -> None:  # KILL QUERY from a second connection: the server stops the statement
            try:
                other = MySQLEngine(url).connect(timeout)
                try:
                    with other.cursor() as cur:
                        cur.execute(f"KILL QUERY {int(ident)}")
                finally:
                    other.close()
            except Exception:  # the query may have just ended; the server timeout still holds
                pass

        return kill

    def is_timeout(self, exc: BaseException) -> bool:
        code = exc.args[0] if getattr(exc, "args", None) else None
        # 1969 MariaDB max_statement_time, 3024 MySQL max_execution_time, 1317 interrupted (KILL QUERY)
        return code in (1969, 3024, 1317, 1028)

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def tables(self, conn) -> list[str]:
        with conn.cursor() as cur:
            cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name")
            return [r[0] for r in cur.fetchall()]

    def columns(self, conn, table: str) -> list[tuple[str, str]]:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT column_name, column_type FROM information_schema.columns WHERE table_schema = DATABASE() "
                "AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
            return [(r[0], r[1].decode() if isinstance(r[1], bytes) else r[1]) for r in cur.fetchall()]

    def query_rows(self, conn, sql: str) -> list[tuple]:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())


def _mysql_rows(cur) -> Iterator[tuple]:
    try:
        while True:
            batch = cur.fetchmany(_FETCH)
            if not batch:
                return
            yield from batch
    finally:
        cur.close()


class DuckDBEngine(Engine):
    name = DUCKDB

    @property
    def path(self) -> str:
        p = self.parts
        return unquote((p.netloc + p.path) if p.netloc else p.path)

    def connect(self, timeout_s: float):
        duckdb = driver(DUCKDB)
        if not os.path.isfile(self.path):
            raise ConnectionError(f"no DuckDB file at {self.path}")
        try:
            conn = duckdb.connect(self.path, read_only=True, config={"enable_external_access": False})
        except duckdb.Error as exc:
            raise ConnectionError(_one_line(exc)) from None
        for setting in ("SET autoinstall_known_extensions = false", "SET autoload_known_extensions = false"):
            with contextlib.suppress(duckdb.Error):  # an older DuckDB without the setting
                conn.execute(setting)
        conn.execute("SET lock_configuration = true")  # no SET can turn a lock off again
        return conn

    def begin(self, conn, timeout_s: float) -> None:
        conn.execute("BEGIN TRANSACTION")

    def stream(self, conn, sql: str):
        cur = conn.execute(sql)
        if cur.description is None:
            raise _NotAQuery()
        columns = [d[0] for d in cur.description]
        return columns, _duck_rows(cur)

    def end(self, conn) -> None:
        conn.execute("ROLLBACK")

    def canceller(self, conn):
        return conn.interrupt

    def is_timeout(self, exc: BaseException) -> bool:
        return "interrupt" in str(exc).lower()

    def tables(self, conn) -> list[str]:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name"
        ).fetchall()
        return [r[0] for r in rows]

    def columns(self, conn, table: str) -> list[tuple[str, str]]:
        rows = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def query_rows(self, conn, sql: str) -> list[tuple]:
        return conn.execute(sql).fetchall()


def _duck_rows(cur) -> Iterator[tuple]:
    while True:
        batch = cur.fetchmany(_FETCH)
        if not batch:
            return
        yield from batch


_ENGINE_CLASSES: dict[str, type[Engine]] = {POSTGRESQL: PostgresEngine, MYSQL: MySQLEngine, DUCKDB: DuckDBEngine}


def engine_for(url: str) -> Engine:
    return _ENGINE_CLASSES[engine_of(url)](url)


class _NotAQuery(Exception):
    """The SQL returned no result set."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


def _driver_errors(engine: str) -> tuple[type[BaseException], ...]:
    mod = driver(engine)
    base = {POSTGRESQL: "Error", MYSQL: "Error", DUCKDB: "Error"}[engine]
    return (getattr(mod, base),)


# --- connections kept per thread -------------------------------------------------------------------


class _Connections(threading.local):
    def __init__(self) -> None:
        self.conns: dict[str, Any] = {}


_kept = _Connections()


def _connection(engine: Engine, timeout_s: float, cached: bool):
    if cached and engine.url in _kept.conns:
        return _kept.conns[engine.url]
    conn = engine.connect(timeout_s)
    if cached:
        _kept.conns[engine.url] = conn
    return conn


def close_connections() -> None:
    """Close every engine connection this thread keeps."""
    while _kept.conns:
        _, conn = _kept.conns.popitem()
        with contextlib.suppress(Exception):  # already broken: nothing to release
            conn.close()


def _drop(url: str) -> None:
    conn = _kept.conns.pop(url, None)
    if conn is not None:
        with contextlib.suppress(Exception):  # already broken
            conn.close()


# --- execution ------------------------------------------------------------------------------------


def execute(
    url: str, sql: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, row_cap: int = DEFAULT_ROW_CAP, cached: bool = False
) -> ExecResult:
    """Run one SQL text read-only on the database at ``url``; never raises for a bad query
    (as :func:`jury.execution.sqlite.execute`: an ``error`` or a ``timeout`` result)."""
    start = time.monotonic()
    engine = engine_for(url)
    problem = statement_problem(sql, engine.name)
    if problem is not None:
        return ExecResult(status="error", error=problem, elapsed_s=time.monotonic() - start)
    try:
        conn = _connection(engine, timeout_s, cached)
    except (ConnectionError, OSError) as exc:
        return ExecResult(status="error", error=f"cannot open database {redact(url)}: {_one_line(exc)}")
    errors = _driver_errors(engine.name)
    deadline = start + timeout_s
    fired = threading.Event()
    cancel = engine.canceller(conn)

    def on_deadline() -> None:
        fired.set()
        with contextlib.suppress(Exception):  # the query just finished: nothing to cancel
            cancel()

    timer = threading.Timer(timeout_s, on_deadline)
    timer.daemon = True
    kept: list[tuple] = []
    kept_bytes = 0
    digests = RowSetDigest()
    ordered = hashlib.sha256()
    count = 0
    broken = False
    try:
        engine.begin(conn, timeout_s)
        timer.start()
        columns, rows = engine.stream(conn, sql)
        for raw in rows:
            row = tuple(map(normalise, raw))
            count += 1
            digest = _row_digest_bytes(row)
            digests.add(digest)
            ordered.update(digest)
            if count <= row_cap:
                kept_bytes += sum(_value_bytes(v) for v in row)
                if kept_bytes > MAX_RESULT_BYTES:
                    kept.clear()
                    raise _ResultTooLarge(
                        f"result too large: its first {count} rows hold more than "
                        f"{MAX_RESULT_BYTES:,} bytes of values (the cap on a kept result)"
                    )
                kept.append(row)
            if count % 1000 == 0 and time.monotonic() > deadline:
                fired.set()
                raise TimeoutError
    except (_ResultTooLarge, _NotAQuery, TimeoutError, ValueError, OverflowError, MemoryError, *errors) as exc:  # type: ignore[misc]
        kept.clear()
        digests.close()
        elapsed = time.monotonic() - start
        timer.cancel()
        broken = _finish(engine, conn, cached)
        if fired.is_set() or engine.is_timeout(exc) or isinstance(exc, TimeoutError):
            return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=elapsed)
        if isinstance(exc, _NotAQuery):
            return ExecResult(status="error", error="not a query: the SQL returns no result set", elapsed_s=elapsed)
        return ExecResult(status="error", error=_error_line(exc), elapsed_s=elapsed)
    finally:
        timer.cancel()
        if not broken:
            broken = _finish(engine, conn, cached)
        if not cached:
            with contextlib.suppress(Exception):  # already closed by the failure
                conn.close()
    if fired.is_set():  # cancelled at the deadline, yet the driver returned rows (MySQL BENCHMARK, SLEEP)
        digests.close()
        return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=time.monotonic() - start)
    try:
        set_digest = digests.hexdigest()
    finally:
        digests.close()
    return ExecResult(
        status="ok",
        columns=columns,
        rows=kept,
        row_count=count,
        truncated=count > row_cap,
        result_sha256=set_digest,
        ordered_sha256=ordered.hexdigest(),
        elapsed_s=time.monotonic() - start,
    )


def _finish(engine: Engine, conn, cached: bool) -> bool:
    """Roll the transaction back; a connection that cannot is dropped (True)."""
    try:
        engine.end(conn)
        return False
    except Exception:
        if cached:
            _drop(engine.url)
        return True


def _error_line(exc: BaseException) -> str:
    if isinstance(exc, _ResultTooLarge):
        return str(exc)
    text = _one_line(exc)
    if text.startswith("(") and "," in text:  # PyMySQL: (1064, "You have an error …")
        code, _, rest = text[1:].partition(",")
        text = f"{rest.strip().rstrip(')').strip(chr(34)).strip(chr(39))} ({code})"
    return text


# --- catalogue, fingerprint, content ---------------------------------------------------------------


def _open(url: str, timeout_s: float = 30.0):
    engine = engine_for(url)
    try:
        return engine, engine.connect(timeout_s)
    except ConnectionError as exc:
        raise InputError(f"cannot open database {redact(url)}: {exc}") from None


def table_columns(url: str, tables: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(column, type) of each named table that exists, from the engine's catalogue, matched
    case-insensitively (as :func:`jury.execution.schema.table_columns` on SQLite)."""
    engine, conn = _open(url)
    try:
        existing = {t.lower(): t for t in engine.tables(conn)}
        out: dict[str, list[tuple[str, str]]] = {}
        for t in tables:
            real = existing.get(t.lower())
            if real is not None and real not in out:
                out[real] = engine.columns(conn, real)
        return out
    finally:
        conn.close()


def fingerprint(url: str) -> str:
    """sha256 of the engine name, every table's columns and types, and every table's row
    count: the execution key's stand-in for a SQLite file's sha256 (a changed schema or row
    count is a changed database, so verdicts bound to the old one are stale)."""
    engine, conn = _open(url)
    try:
        shape = []
        for table in engine.tables(conn):
            (count,) = engine.query_rows(conn, f"SELECT COUNT(*) FROM {engine.quote(table)}")[0]
            shape.append([table, engine.columns(conn, table), int(count)])
    except _driver_errors(engine.name) as exc:
        raise InputError(f"cannot read the catalogue of {redact(url)}: {_one_line(exc)}") from None
    finally:
        conn.close()
    body = json.dumps({"engine": engine.name, "tables": shape}, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def content_digest(url: str) -> str:
    """sha256 of every table's name, columns and full row set (normalised values, order-
    independent): what the tests compare before and after hostile SQL."""
    engine, conn = _open(url)
    try:
        h = hashlib.sha256(engine.name.encode())
        for table in engine.tables(conn):
            cols = engine.columns(conn, table)
            h.update(json.dumps([table, cols]).encode())
            rows = engine.query_rows(conn, f"SELECT * FROM {engine.quote(table)}")
            digest = RowSetDigest()
            try:
                for raw in rows:
                    digest.add(_row_digest_bytes(tuple(map(normalise, raw))))
                h.update(digest.hexdigest().encode() + str(len(rows)).encode())
            finally:
                digest.close()
        return h.hexdigest()
    finally:
        conn.close()


def describe(url: str, tables: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    return table_columns(url, list(tables))


def execute_any(
    db: str | os.PathLike,
    sql: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    reverse_unordered: bool = False,
    cached: bool = False,
) -> ExecResult:
    """Execute on a SQLite file (:func:`jury.execution.sqlite.execute`) or an engine URL
    (:func:`execute`; ``reverse_unordered`` is SQLite's alone and ignored there)."""
    if is_url(db):
        return execute(str(db), sql, timeout_s=timeout_s, row_cap=row_cap, cached=cached)
    return sqlite_execute(
        os.fspath(db), sql, timeout_s=timeout_s, row_cap=row_cap, reverse_unordered=reverse_unordered, cached=cached
    )


def dialect_of(db: str | os.PathLike) -> str:
    """The sqlglot dialect of the database's SQL: sqlite for a file, else the engine's."""
    return DIALECTS[engine_of(str(db))] if is_url(db) else "sqlite"
