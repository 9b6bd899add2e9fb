"""One class per engine (PostgreSQL, MySQL/MariaDB, DuckDB): its connection, read-only
session, streamed rows, catalogue and cancellation (jury.execution.engines runs SQL on them).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from jury.errors import InputError, one_line
from jury.execution.engine_urls import DUCKDB, MYSQL, POSTGRESQL, Connection, driver, engine_of, flag, redact

_FETCH = 1000  # rows fetched from the server at a time

#: A row as the engine's driver returns it.
Row = tuple[Any, ...]
#: What a cursor of the engine's driver is (the drivers' own classes; see Connection).
Cursor = Any


def url_password(params: dict[str, str], *defaults: str) -> str | None:
    """The password from the variable ``?password_env=NAME`` names (unset: an InputError saying
    so, not the server's "access denied"), else the first of ``defaults`` that is set."""
    named = params.get("password_env")
    if named:
        value = os.environ.get(named)
        if value is None:
            raise InputError(f"{named} is not set: the database URL's ?password_env={named} names it for the password")
        return value
    for name in defaults:
        value = os.environ.get(name)
        if value is not None:
            return value
    return None


CONNECT_TIMEOUT_S = 30.0
"""The limit of connecting and the login check, their own: a statement's timeout starts when it is
sent (jury.execution.engines), so a slow login never turns a quick query into a timeout."""


class Engine:
    """One engine's connection, read-only session, catalogue and cancellation."""

    name = ""

    def __init__(self, url: str) -> None:
        self.url = url
        self.parts = urlsplit(url)
        self.params = dict(parse_qsl(self.parts.query))

    # subclasses
    runs_every_statement = False  # the others refuse a text of several statements, as their drivers do

    def run_and_discard(self, conn: Connection, sql: str, deadline: float) -> None:
        raise NotImplementedError

    def connect(self, timeout_s: float) -> Connection:
        raise NotImplementedError

    def begin(self, conn: Connection, timeout_s: float) -> None:
        raise NotImplementedError

    def stream(self, conn: Connection, sql: str) -> tuple[list[str], Iterator[Row]]:
        raise NotImplementedError

    def end(self, conn: Connection) -> None:
        raise NotImplementedError

    def canceller(self, conn: Connection) -> Callable[[], object]:
        raise NotImplementedError

    def state(self, conn: Connection) -> list[list[Any]]:
        """The staleness fingerprint's catalogue state (the server engines; DuckDB's is its file's hash)."""
        raise NotImplementedError

    # The catalogue, read with the engine's own placeholder style: TABLES_SQL takes no
    # parameter, COLUMNS_SQL the table name, and each returns (name) / (name, type) rows.
    TABLES_SQL = ""
    COLUMNS_SQL = ""

    def fetch(self, conn: Connection, sql: str, params: tuple[object, ...] = ()) -> list[Row]:
        """All rows of a catalogue or plain query (drivers whose connection executes directly)."""
        rows: list[Row] = conn.execute(sql, params or None).fetchall()  # no parameters: no placeholder parsing
        return rows

    def tables(self, conn: Connection) -> list[str]:
        return [r[0] for r in self.fetch(conn, self.TABLES_SQL)]

    def columns(self, conn: Connection, table: str) -> list[tuple[str, str]]:
        return [(r[0], r[1].decode() if isinstance(r[1], bytes) else r[1]) for r in self.fetch(conn, self.COLUMNS_SQL, (table,))]

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    # least privilege (jury.execution.engine_privileges) and the statement check's options, from
    # the URL's query (DatabaseURLs puts --allow-privileged-login and [engines] there)
    @property
    def allows_privileged_login(self) -> bool:
        return flag(self.params, "allow_privileged_login")

    @property
    def allow_functions(self) -> tuple[str, ...]:
        return tuple(n for n in self.params.get("allow_functions", "").split(",") if n.strip())

    @property
    def ansi_quotes(self) -> bool:
        return bool(self.params.get("ansi"))

    def check_login(self, conn: Connection) -> None:
        """Before any model SQL: refuse a login that can do more than read the benchmark's
        tables (one line naming the privilege and the fix), unless the URL allows it."""
        from jury.execution.engine_privileges import login_problem

        if self.allows_privileged_login:
            return
        try:
            problem = login_problem(self.name, conn, self.database)
        except Exception as exc:  # the catalogue cannot be read: nothing proves the login is safe
            problem = f"its privileges cannot be read from the catalogue ({one_line(exc)})"
        if problem is not None:
            with contextlib.suppress(Exception):
                conn.close()
            raise InputError(f"{redact(self.url)}: {problem}; or accept the risk with --allow-privileged-login")

    def is_timeout(self, exc: BaseException) -> bool:
        return False

    def query_rows(self, conn: Connection, sql: str) -> list[Row]:
        return list(self.fetch(conn, sql))

    # server engines (PostgreSQL, MySQL): the URL's user and database, logged in through the driver
    @property
    def database(self) -> str:
        return unquote(self.parts.path.lstrip("/"))

    def _login(self, timeout_s: float, **kwargs: Any) -> Connection:
        """The engine's driver's ``connect`` as the URL's user, in autocommit, within
        CONNECT_TIMEOUT_S (its own limit, whatever the statements' ``timeout_s``), with ``kwargs``
        (None: left out); its error becomes a one-line ConnectionError."""
        module = driver(self.name)
        p = self.parts
        kwargs.update(user=unquote(p.username) if p.username else None, connect_timeout=max(2, int(CONNECT_TIMEOUT_S)))
        try:
            return module.connect(autocommit=True, **{k: v for k, v in kwargs.items() if v is not None})
        except module.Error as exc:
            raise ConnectionError(one_line(exc)) from None


class PostgresEngine(Engine):
    name = POSTGRESQL

    def connect(self, timeout_s: float) -> Connection:
        conn = self._login(
            timeout_s,
            password=url_password(self.params) if self.params.get("password_env") else None,
            host=self.parts.hostname or self.params.get("host"),
            port=self.parts.port,
            dbname=self.database,
            application_name="jury",
        )
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        conn.execute("SET default_transaction_read_only = on")
        conn.execute("SET standard_conforming_strings = on")  # a backslash in '...' is no escape, as the check reads it
        self.check_login(conn)
        return conn

    def begin(self, conn: Connection, timeout_s: float) -> None:
        ms = max(1, int(timeout_s * 1000))
        conn.execute("BEGIN READ ONLY")
        conn.execute(f"SET LOCAL statement_timeout = {ms}")
        conn.execute(f"SET LOCAL idle_in_transaction_session_timeout = {ms + 60_000}")

    # BIRD's PostgreSQL driver (psycopg2's execute: the simple query protocol) runs every statement
    # of a text and returns the last one's rows; jury does the same when each passes the check
    runs_every_statement = True

    def run_and_discard(self, conn: Connection, sql: str, deadline: float) -> None:
        """Run one statement of several to its end, its rows dropped as they stream (memory
        bounded), checking the deadline every 1000 rows (the server's statement_timeout holds)."""

        with conn.cursor() as cur, contextlib.closing(cur.stream(sql)) as rows:
            for i, _row in enumerate(rows, 1):
                if i % 1000 == 0 and time.monotonic() > deadline:
                    raise TimeoutError

    def stream(self, conn: Connection, sql: str) -> tuple[list[str], Iterator[Row]]:
        """The query's rows as a plain cursor gets them (BIRD's driver runs ``cursor.execute``),
        streamed one at a time (libpq's single-row mode: memory bounded by the row cap). Not a
        server-side cursor: ``DECLARE … CURSOR`` is planned for its first rows
        (``cursor_tuple_fraction``), so a query without a full ORDER BY returned its rows in
        another order than BIRD's, which changed Soft-F1 (rows matched by position) and any
        LIMIT without a full ORDER BY. The extended protocol takes one statement only.

        A query of no rows is a result of no rows: psycopg's stream keeps no description of
        it (the columns come from the statement's description, which does not run it again);
        a statement that returns no result set is NotAQuery (psycopg's stream raises)."""
        import psycopg

        text = sql.rstrip().rstrip(";")
        cur = self._cursor = conn.cursor()
        rows = self._rows = cur.stream(text)
        try:
            first = next(rows, None)  # the query is sent, and its columns known, at the first row
        except psycopg.ProgrammingError as exc:
            if "didn't produce a result" in str(exc):
                raise NotAQuery() from None
            raise
        if first is None:
            return self._described_columns(conn, text), iter(())
        return [d.name for d in cur.description], itertools.chain((first,), rows)

    @staticmethod
    def _described_columns(conn: Connection, sql: str) -> list[str]:
        """The column names of a query, from the server's description of the unnamed prepared
        statement (planned, not run): [] when it cannot be described."""
        from psycopg.pq import ExecStatus

        encoding = conn.info.encoding
        pgconn = conn.pgconn
        if pgconn.prepare(b"", sql.encode(encoding)).status != ExecStatus.COMMAND_OK:
            return []
        res = pgconn.describe_prepared(b"")
        if res.status != ExecStatus.COMMAND_OK:
            return []
        return [(res.fname(i) or b"").decode(encoding) for i in range(res.nfields)]

    def end(self, conn: Connection) -> None:
        rows, self._rows = getattr(self, "_rows", None), None
        if rows is not None:  # a stream left early (row cap, deadline): psycopg cancels it and drains
            with contextlib.suppress(Exception):
                rows.close()
        cur, self._cursor = getattr(self, "_cursor", None), None
        if cur is not None:
            with contextlib.suppress(Exception):  # the transaction failed
                cur.close()
        conn.execute("ROLLBACK")

    def canceller(self, conn: Connection) -> Callable[[], object]:
        cancel: Callable[[], object] = conn.cancel_safe if hasattr(conn, "cancel_safe") else conn.cancel
        return cancel

    def is_timeout(self, exc: BaseException) -> bool:
        return getattr(exc, "sqlstate", None) == "57014"  # query_canceled (statement_timeout or cancel)

    TABLES_SQL = (
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_type IN ('BASE TABLE', 'VIEW') ORDER BY table_name"
    )

    # The staleness fingerprint in one catalogue query: per table (and view) its columns and
    # types, its storage file (TRUNCATE, VACUUM FULL, CLUSTER and a rewriting ALTER change it) and
    # its counters of rows inserted, updated and deleted (every committed or aborted change adds
    # to them; autovacuum and ANALYZE do not); the server's start time and the database's
    # statistics reset time, so counters lost in a crash or a reset cannot meet an earlier
    # fingerprint again; and whether the server keeps the counters at all (track_counts).
    STATE_SQL = (
        "SELECT c.relname, c.relkind::text, c.relfilenode::bigint, coalesce(s.n_tup_ins, 0), "
        "coalesce(s.n_tup_upd, 0), coalesce(s.n_tup_del, 0), "
        "(SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum) "
        "FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), "
        "CASE WHEN c.relkind = 'v' THEN md5(pg_get_viewdef(c.oid)) END, "
        "pg_postmaster_start_time()::text, "
        "(SELECT stats_reset::text FROM pg_stat_database WHERE datname = current_database()), "
        "current_setting('track_counts') "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm') ORDER BY c.relname"
    )

    def state(self, conn: Connection) -> list[list[Any]]:
        """What the staleness fingerprint covers (STATE_SQL); without track_counts the
        counters stay 0, so each table's row count is added (an UPDATE then goes unseen)."""
        rows = [list(r) for r in self.fetch(conn, self.STATE_SQL)]
        if rows and rows[0][-1] != "on":
            for r in rows:
                r.append(self.fetch(conn, f"SELECT COUNT(*) FROM {self.quote(r[0])}")[0][0])
        return rows

    COLUMNS_SQL = (
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %s ORDER BY ordinal_position"
    )


class MySQLEngine(Engine):
    name = MYSQL

    def connect(self, timeout_s: float) -> Connection:
        conn = self._login(
            timeout_s,
            password=url_password(self.params, "MYSQL_PWD"),
            host=self.parts.hostname or "localhost",
            port=self.parts.port or 3306,
            database=self.database,
            charset=self.params.get("charset", "utf8mb4"),
            client_flag=0,  # no CLIENT.MULTI_STATEMENTS: the server refuses `a; b`
            # PyMySQL's connect_timeout bounds the TCP connect only: a server that accepts and never
            # greets would hold the login forever. No read waits longer than a login or a statement.
            read_timeout=CONNECT_TIMEOUT_S + timeout_s,
            write_timeout=CONNECT_TIMEOUT_S + timeout_s,
            local_infile=False,
            unix_socket=self.params.get("unix_socket") or None,
        )
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = str(cur.fetchone()[0])
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            cur.execute("SELECT @@SESSION.sql_mode")
            cur.execute("SET SESSION sql_mode = %s", (_sql_mode(str(cur.fetchone()[0]), self.ansi_quotes),))
        conn.jury_mariadb = "mariadb" in version.lower()
        self.check_login(conn)
        return conn

    def begin(self, conn: Connection, timeout_s: float) -> None:
        with conn.cursor() as cur:
            if conn.jury_mariadb:
                cur.execute(f"SET SESSION max_statement_time = {max(0.001, timeout_s):.3f}")
            else:
                cur.execute(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")
            cur.execute("START TRANSACTION READ ONLY")

    def stream(self, conn: Connection, sql: str) -> tuple[list[str], Iterator[Row]]:
        pymysql = driver(MYSQL)
        cur = conn.cursor(pymysql.cursors.SSCursor)  # unbuffered: rows stream from the server
        cur.execute(sql)
        columns = [d[0] for d in cur.description or []]
        if not columns:
            raise NotAQuery()
        return columns, _mysql_rows(cur)

    def end(self, conn: Connection) -> None:
        conn.rollback()

    def canceller(self, conn: Connection) -> Callable[[], object]:
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

    TABLES_SQL = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name"
    # The staleness fingerprint: every table's columns and types in one catalogue query, then
    # CHECKSUM TABLE over every base table in one statement (a checksum of the rows' content,
    # read in full for InnoDB: information_schema's UPDATE_TIME is not kept across a restart
    # and holds the modifying transaction's start, to the second, so it could meet an earlier
    # fingerprint again).
    STATE_SQL = (
        "SELECT c.table_name, t.table_type, GROUP_CONCAT(c.column_name, ' ', c.column_type "
        "ORDER BY c.ordinal_position SEPARATOR ',') FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.table_schema = DATABASE() GROUP BY c.table_name, t.table_type ORDER BY c.table_name"
    )

    def state(self, conn: Connection) -> list[list[Any]]:
        with conn.cursor() as cur:
            cur.execute("SET SESSION group_concat_max_len = 16777216")
            if not conn.jury_mariadb:
                cur.execute("SET SESSION information_schema_stats_expiry = 0")
        rows = [list(r) for r in self.fetch(conn, self.STATE_SQL)]
        base = [r[0] for r in rows if r[1] == "BASE TABLE"]
        if base:
            db = self.quote(self.database)
            sums: dict[str, object] = dict(self.fetch(conn, "CHECKSUM TABLE " + ", ".join(f"{db}.{self.quote(t)}" for t in base)))
            for r in rows:
                r.append(sums.get(f"{self.database}.{r[0]}"))
        return [[v.decode() if isinstance(v, bytes) else v for v in r] for r in rows]

    COLUMNS_SQL = (
        "SELECT column_name, column_type FROM information_schema.columns WHERE table_schema = DATABASE() "
        "AND table_name = %s ORDER BY ordinal_position"
    )

    def fetch(self, conn: Connection, sql: str, params: tuple[object, ...] = ()) -> list[Row]:
        with conn.cursor() as cur:  # PyMySQL executes through cursors
            cur.execute(sql, params or None)
            return list(cur.fetchall())


def _sql_mode(mode: str, ansi_quotes: bool) -> str:
    """The server's sql_mode lexing SQL as the statement check does: backslash escapes on
    (no NO_BACKSLASH_ESCAPES) and "..." a string, unless the URL asks for ANSI_QUOTES."""
    kept = [m for m in mode.split(",") if m and m.upper() not in ("NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ANSI")]
    return ",".join(kept + (["ANSI_QUOTES"] if ansi_quotes else []))


def _mysql_rows(cur: Cursor) -> Iterator[Row]:
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

    def connect(self, timeout_s: float) -> Connection:
        duckdb = driver(DUCKDB)
        if not os.path.isfile(self.path):
            raise ConnectionError(f"no DuckDB file at {self.path}")
        try:
            conn = duckdb.connect(self.path, read_only=True, config={"enable_external_access": False})
        except duckdb.Error as exc:
            raise ConnectionError(one_line(exc)) from None
        for setting in (
            "SET autoinstall_known_extensions = false",
            "SET autoload_known_extensions = false",
            "SET allow_community_extensions = false",
        ):
            with contextlib.suppress(duckdb.Error):  # an older DuckDB without the setting
                conn.execute(setting)
        conn.execute("SET lock_configuration = true")  # no SET can turn a lock off again
        _check_duckdb_settings(conn, self.path)
        return conn

    def begin(self, conn: Connection, timeout_s: float) -> None:
        conn.execute("BEGIN TRANSACTION")

    def stream(self, conn: Connection, sql: str) -> tuple[list[str], Iterator[Row]]:
        cur = conn.execute(sql)
        if cur.description is None:
            raise NotAQuery()
        columns = [d[0] for d in cur.description]
        return columns, _duck_rows(cur)

    def end(self, conn: Connection) -> None:
        conn.execute("ROLLBACK")

    def canceller(self, conn: Connection) -> Callable[[], object]:
        interrupt: Callable[[], object] = conn.interrupt
        return interrupt

    def is_timeout(self, exc: BaseException) -> bool:
        return "interrupt" in str(exc).lower()

    TABLES_SQL = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name"
    COLUMNS_SQL = (
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = ? ORDER BY ordinal_position"
    )

    def fetch(self, conn: Connection, sql: str, params: tuple[object, ...] = ()) -> list[Row]:
        rows: list[Row] = conn.execute(sql, list(params) or None).fetchall()
        return rows


_DUCKDB_SETTINGS = {"access_mode": "read_only", "enable_external_access": "false", "lock_configuration": "true"}


def _check_duckdb_settings(conn: Connection, path: str) -> None:
    """Read the settings back: a DuckDB that does not hold them is refused, not trusted."""
    rows = conn.execute(
        "SELECT name, lower(CAST(value AS VARCHAR)) FROM duckdb_settings() WHERE name IN (?, ?, ?)", list(_DUCKDB_SETTINGS)
    ).fetchall()
    found = dict(rows)
    for name, want in _DUCKDB_SETTINGS.items():
        if found.get(name) != want:
            conn.close()
            raise InputError(
                f"duckdb://{path}: the connection's {name} is {found.get(name)!r}, not {want!r}: refusing to run SQL"
            )


def _duck_rows(cur: Cursor) -> Iterator[Row]:
    while True:
        batch = cur.fetchmany(_FETCH)
        if not batch:
            return
        yield from batch


_ENGINE_CLASSES: dict[str, type[Engine]] = {POSTGRESQL: PostgresEngine, MYSQL: MySQLEngine, DUCKDB: DuckDBEngine}


def engine_for(url: str) -> Engine:
    return _ENGINE_CLASSES[engine_of(url)](url)


class NotAQuery(Exception):
    """The SQL returned no result set."""


def driver_errors(engine: str) -> tuple[type[BaseException], ...]:
    mod = driver(engine)
    base = {POSTGRESQL: "Error", MYSQL: "Error", DUCKDB: "Error"}[engine]
    return (getattr(mod, base),)
