"""``jury db load``: build a database in PostgreSQL, MySQL/MariaDB or DuckDB from a BIRD SQLite file.

The one place jury writes to a database, and only to the one named as the target: the
SQLite file is read through :func:`jury.execution.sqlite.open_readonly`. Each table gets its
columns with types mapped from the SQLite declared type and checked against the values
(a column declared INTEGER whose values are all integers is BIGINT; one holding text too
stays TEXT, so no value is changed), its rows, then its primary key and foreign keys
(a key the data breaks, such as a foreign key to a column that is not unique, is left out
and counted). A target that already holds one of the tables is refused.

Names are made so that BIRD's published SQL for that engine runs unchanged. PostgreSQL: a
name that is a plain identifier (letters, digits, ``_``) is created lower case, as BIRD's
PostgreSQL release has it, so its unquoted SQL (``SELECT Currency FROM customers``, which
PostgreSQL folds to ``currency``) finds it; any other name (``"Examination Date"``,
``"T-CHO"``) keeps its case, and BIRD's SQL quotes it as written (two names of one table
that would fold alike both keep theirs). MySQL/MariaDB and DuckDB: names as written (MySQL
matches column names in any case, and table names as the server's ``lower_case_table_names``
says: on Linux by default exactly, as BIRD's MySQL gold spells them; DuckDB in any case).

Then, on PostgreSQL and MySQL/MariaDB, the reader: a login that can only read the new
database, which jury executes model and gold SQL through (jury.execution.engine_privileges).
An existing reader is granted SELECT on the database (and refused if it is privileged: it
would be refused at every run); a missing one is created with the password in the
``reader_password_env`` variable. The admin login of ``url`` does the loading, never a run.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jury.errors import InputError, one_line
from jury.execution import engine_drivers, engine_urls
from jury.execution.engine_privileges import DEFAULT_READER, check_reader, login_problem, mysql_grants_problem
from jury.execution.sqlite import open_readonly

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?$")
BATCH = 1000


@dataclass
class SourceColumn:
    name: str
    declared: str
    pk: int
    kinds: set[str] = field(default_factory=set)  # int, float, text, bytes, date, datetime

    def kind(self) -> str:
        """The one type the values allow, given the declared type."""
        d = self.declared.upper()
        k = self.kinds or {"int"} if "INT" in d else self.kinds
        if not k:  # only NULLs: follow the declared type
            if "DATETIME" in d or "TIMESTAMP" in d:
                k = {"datetime"}
            elif "DATE" in d:
                k = {"date"}
            else:
                k = {"float"} if any(w in d for w in ("REAL", "FLOA", "DOUB")) else {"text"}
        if k <= {"int"} and ("INT" in d or "NUM" in d or "DEC" in d or "BOOL" in d or not d):
            return "int"
        if k <= {"int", "float"} and not any(w in d for w in ("CHAR", "TEXT", "CLOB", "DATE", "TIME")):
            return "float"
        if k <= {"date"} and "DATE" in d and "TIME" not in d:
            return "date"
        if k <= {"datetime", "date"} and ("DATETIME" in d or "TIMESTAMP" in d) and "datetime" in k:
            return "datetime"
        if k <= {"bytes"}:
            return "bytes"
        return "text"


_TYPES = {
    engine_urls.POSTGRESQL: {
        "int": "BIGINT",
        "float": "DOUBLE PRECISION",
        "text": "TEXT",
        "bytes": "BYTEA",
        "date": "DATE",
        "datetime": "TIMESTAMP",
    },
    engine_urls.MYSQL: {
        "int": "BIGINT",
        "float": "DOUBLE",
        "text": "LONGTEXT",
        "bytes": "LONGBLOB",
        "date": "DATE",
        "datetime": "DATETIME(6)",
    },
    engine_urls.DUCKDB: {
        "int": "BIGINT",
        "float": "DOUBLE",
        "text": "VARCHAR",
        "bytes": "BLOB",
        "date": "DATE",
        "datetime": "TIMESTAMP",
    },
}


def _value_kind(v: Any) -> str:
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, bytes):
        return "bytes"
    text = str(v)
    if _DATE.match(text):
        return "date"
    if _DATETIME.match(text):
        return "datetime"
    return "text"


@dataclass
class LoadReport:
    tables: int = 0
    rows: int = 0
    keys: int = 0
    skipped_keys: list[str] = field(default_factory=list)
    reader: str | None = None  # the login granted SELECT on the database (PostgreSQL, MySQL)
    folded: int = 0  # names created lower case (PostgreSQL)
    kept_case: list[str] = field(default_factory=list)  # plain names kept as written: folding would make two alike
    table_name_case: str | None = None  # MySQL/MariaDB: how the server matches table names (lower_case_table_names)


def folded_names(tables: dict[str, list[str]]) -> tuple[dict[str, str], list[str]]:
    """PostgreSQL's names for a SQLite schema (table -> its columns): each plain identifier
    lower case, as BIRD's PostgreSQL release (and PostgreSQL's folding of unquoted names) has
    it, unless two tables, or two columns of one table, would then be alike: those keep their
    case. (name -> the name created, the names kept as written).

    >>> folded_names({"Customers": ["CustomerID", "Free Meal Count (K-12)"]})
    ({'Customers': 'customers', 'CustomerID': 'customerid', 'Free Meal Count (K-12)': 'Free Meal Count (K-12)'}, [])
    >>> folded_names({"t": ["ID", "id"]})[1]
    ['ID']
    """
    fold = {n: n.lower() if _PLAIN_NAME.match(n) else n for cols in [list(tables), *tables.values()] for n in cols}
    kept: set[str] = set()
    for names in [list(tables), *tables.values()]:
        seen: dict[str, list[str]] = {}
        for n in names:
            seen.setdefault(fold[n], []).append(n)
        kept.update(n for alike in seen.values() if len(alike) > 1 for n in alike if n != fold[n])
    return {n: (n if n in kept else f) for n, f in fold.items()}, sorted(kept)


def load(
    sqlite_file: str | Path,
    url: str,
    progress: Callable[[str, int], None] | None = None,
    *,
    reader: Reader | None = None,
) -> LoadReport:
    """Copy every table of ``sqlite_file`` into the (new or empty) database at ``url``, then
    make ``reader`` (default: ``Reader()``, the role jury_reader) able to read it and nothing
    else; ``Reader(role=None)``: no reader."""
    engine_urls.check_url(url, "URL")
    engine = engine_urls.engine_of(url)
    reader = reader if reader is not None else Reader()
    try:
        src = open_readonly(sqlite_file)
    except FileNotFoundError as exc:
        raise InputError(str(exc)) from None
    try:
        target = _Target.open(engine, url)
        try:
            if engine != engine_urls.DUCKDB and reader.role is not None:
                reader.check_before(target)  # a missing password or a privileged reader: before any table is made
            report = _copy(src, target, progress)
            if engine != engine_urls.DUCKDB and reader.role is not None:
                report.reader = reader.grant(target)
            return report
        finally:
            target.close()
    finally:
        src.close()


@dataclass(frozen=True)
class Reader:
    """The login ``jury db load`` makes able to read the database it loads (and nothing else):
    ``role`` (None: none), on MySQL/MariaDB for ``host`` ('%': any), created when missing with
    the password in the variable ``password_env`` (an existing role keeps its password unless
    the variable is set)."""

    role: str | None = DEFAULT_READER
    host: str = "%"
    password_env: str = "JURY_READER_PASSWORD"

    def password(self) -> str | None:
        return os.environ.get(self.password_env) or None

    def check_before(self, target: _Target) -> None:
        assert self.role is not None
        check_reader(self.role, self.host)
        if not self.exists(target):
            if self.password() is None:
                raise InputError(
                    f"the reader role {self.role!r} does not exist: set {self.password_env} to the password it should "
                    "have (or --reader-password-env NAME), name an existing one with --reader, or --no-reader"
                )
            return
        if target.engine == engine_urls.POSTGRESQL:
            problem = login_problem(engine_urls.POSTGRESQL, target.conn, target.database, role=self.role)
        else:
            problem = _mysql_reader_problem(target, self.role, self.host)
        if problem is not None:
            raise InputError(f"the reader role cannot be {self.role!r}: {problem}")

    def exists(self, target: _Target) -> bool:
        if target.engine == engine_urls.POSTGRESQL:
            return bool(target.run("SELECT 1 FROM pg_roles WHERE rolname = %s", (self.role,)))
        return bool(target.run("SELECT 1 FROM mysql.user WHERE User = %s AND Host = %s", (self.role, self.host)))

    def grant(self, target: _Target) -> str:
        """Create (or update) the reader and grant it SELECT on the loaded tables; its name."""
        assert self.role is not None
        password = self.password()
        if target.engine == engine_urls.POSTGRESQL:
            role = _q(self.role)
            if password is not None:  # a SCRAM verifier, never the password, goes to the server
                verifier = target.conn.pgconn.encrypt_password(password.encode(), self.role.encode(), b"scram-sha-256")
                verb = "ALTER" if self.exists(target) else "CREATE"
                target.run(f"{verb} ROLE {role} {'LOGIN ' if verb == 'CREATE' else ''}PASSWORD '{verifier.decode()}'")
            target.run(f"ALTER ROLE {role} SET default_transaction_read_only = on")
            target.run(f"GRANT CONNECT ON DATABASE {_q(target.database)} TO {role}")
            schema = target.run("SELECT current_schema()")[0][0]
            target.run(f"GRANT USAGE ON SCHEMA {_q(schema)} TO {role}")
            target.run(f"GRANT SELECT ON ALL TABLES IN SCHEMA {_q(schema)} TO {role}")
            target.commit()
            problem = login_problem(engine_urls.POSTGRESQL, target.conn, target.database, role=self.role)
        else:
            who = "%s@%s"
            if password is not None:
                verb = "ALTER USER" if self.exists(target) else "CREATE USER"
                target.run(f"{verb} {who} IDENTIFIED BY %s", (self.role, self.host, password))
            name = target.database.replace("`", "``")
            target.run(f"GRANT SELECT ON `{name}`.* TO {who}", (self.role, self.host))
            target.commit()
            problem = _mysql_reader_problem(target, self.role, self.host)
        if problem is not None:
            raise InputError(f"the reader {self.role!r} can do more than read {target.database!r}: {problem}")
        return self.role if target.engine == engine_urls.POSTGRESQL else f"{self.role}@{self.host}"


def _mysql_reader_problem(target: _Target, role: str, host: str) -> str | None:
    """The reader's grants as the server shows them, checked as at connect."""

    lines = [str(r[0]) for r in target.run("SHOW GRANTS FOR %s@%s", (role, host))]
    return mysql_grants_problem(lines, role, host, target.database)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _copy(src: sqlite3.Connection, target: _Target, progress: Callable[[str, int], None] | None) -> LoadReport:
    report = LoadReport()
    tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    clash = sorted(set(t.lower() for t in tables) & {t.lower() for t in target.existing()})
    if clash:
        raise InputError(f"{engine_urls.redact(target.url)} already has table {clash[0]!r}: load into an empty database")
    columns: dict[str, list[SourceColumn]] = {}
    for t in tables:
        cols = [SourceColumn(r[1], r[2] or "", r[5]) for r in src.execute(f"PRAGMA table_info({_q(t)})")]
        columns[t] = cols
        for row in src.execute(f"SELECT * FROM {_q(t)}"):
            for col, v in zip(cols, row, strict=True):
                if v is not None:
                    col.kinds.add(_value_kind(v))
    if target.engine == engine_urls.POSTGRESQL:
        target.names, report.kept_case = folded_names({t: [c.name for c in columns[t]] for t in tables})
        report.folded = sum(a != b for a, b in target.names.items())
    report.table_name_case = target.table_name_case()
    for t in tables:
        cols = columns[t]
        keyed = {c.name for c in cols if c.pk} | {r[3] for r in src.execute(f"PRAGMA foreign_key_list({_q(t)})")}
        target.create(t, [(c.name, c.kind(), c.name in keyed) for c in cols])
        n = target.insert(t, [c.name for c in cols], [c.kind() for c in cols], src.execute(f"SELECT * FROM {_q(t)}"))
        report.tables += 1
        report.rows += n
        if progress:
            progress(t, n)
    for t in tables:
        pk = [c.name for c in sorted(columns[t], key=lambda c: c.pk) if c.pk]
        if pk:
            _key(target, report, f"{t} primary key ({', '.join(pk)})", target.primary_key_sql(t, pk))
    for t in tables:
        fks: dict[int, list[Any]] = {}  # PRAGMA foreign_key_list's rows
        for r in src.execute(f"PRAGMA foreign_key_list({_q(t)})"):
            fks.setdefault(r[0], []).append(r)
        for rows in fks.values():
            ref = rows[0][2]
            here, there = [r[3] for r in rows], [r[4] for r in rows]
            label = f"{t} ({', '.join(here)}) -> {ref}"
            if any(x is None for x in there) or ref not in columns:
                report.skipped_keys.append(f"{label}: names no column of a table here")
                continue
            _key(target, report, label, target.foreign_key_sql(t, here, ref, there))
    target.commit()
    return report


def _key(target: _Target, report: LoadReport, label: str, sql: str) -> None:
    problem = target.try_ddl(sql)
    if problem is None:
        report.keys += 1
    else:
        report.skipped_keys.append(f"{label}: {problem}")


class _Target:
    """A writable connection to the target database (the only one jury opens)."""

    def __init__(self, engine: str, url: str, conn: engine_urls.Connection) -> None:
        self.engine, self.url, self.conn = engine, url, conn
        self.types = _TYPES[engine]
        self.database = engine_drivers.engine_for(url).database
        self.names: dict[str, str] = {}  # PostgreSQL: each SQLite name -> the name created (folded_names)

    @classmethod
    def open(cls, engine: str, url: str) -> _Target:
        e = engine_drivers.engine_for(url)
        mod = engine_urls.driver(engine)
        try:
            if engine == engine_urls.DUCKDB:
                assert isinstance(e, engine_drivers.DuckDBEngine)
                Path(e.path).parent.mkdir(parents=True, exist_ok=True)
                return cls(engine, url, mod.connect(e.path))
            if engine == engine_urls.POSTGRESQL:
                return cls(engine, url, _pg_connect(e))
            return cls(engine, url, _mysql_connect(e))
        except mod.Error as exc:
            raise InputError(f"cannot open {engine_urls.redact(url)} for writing: {one_line(exc)}") from None

    def quote(self, name: str) -> str:
        name = self.names.get(name, name)
        return "`" + name.replace("`", "``") + "`" if self.engine == engine_urls.MYSQL else _q(name)

    def table_name_case(self) -> str | None:
        """MySQL/MariaDB: how the server matches table names (lower_case_table_names)."""
        if self.engine != engine_urls.MYSQL:
            return None
        (value,) = self.run("SELECT @@lower_case_table_names")[0]
        return {
            0: "lower_case_table_names=0: table names match exactly as written (BIRD's MySQL SQL spells them so)",
            1: "lower_case_table_names=1: table names are stored lower case and match in any case",
            2: "lower_case_table_names=2: table names are kept as written and match in any case",
        }.get(int(value), f"lower_case_table_names={value}")

    def run(self, sql: str, params: Sequence[object] | None = None) -> list[engine_drivers.Row]:
        cur = self.conn.cursor()
        try:
            cur.execute(sql, params) if params is not None else cur.execute(sql)
            return list(cur.fetchall()) if cur.description else []
        finally:
            cur.close()

    def existing(self) -> list[str]:
        schema = "DATABASE()" if self.engine == engine_urls.MYSQL else "current_schema()"
        return [r[0] for r in self.run(f"SELECT table_name FROM information_schema.tables WHERE table_schema = {schema}")]

    def create(self, table: str, cols: list[tuple[str, str, bool]]) -> None:
        parts = []
        for name, kind, keyed in cols:
            sql_type = self.types[kind]
            if self.engine == engine_urls.MYSQL and keyed and kind == "text":
                sql_type = "VARCHAR(255)"  # MySQL keys need a bounded length
            if self.engine == engine_urls.MYSQL and keyed and kind == "bytes":
                sql_type = "VARBINARY(255)"
            parts.append(f"{self.quote(name)} {sql_type}")
        self.run(f"CREATE TABLE {self.quote(table)} ({', '.join(parts)})")

    def insert(self, table: str, names: list[str], kinds: list[str], rows: Iterable[Sequence[object]]) -> int:
        cols = ", ".join(self.quote(n) for n in names)
        if self.engine == engine_urls.POSTGRESQL:
            n = 0
            with self.conn.cursor() as cur, cur.copy(f"COPY {self.quote(table)} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(_clean_pg(row))
                    n += 1
            return n
        mark = "%s" if self.engine == engine_urls.MYSQL else "?"
        one = "(" + ", ".join([mark] * len(names)) + ")"
        head = f"INSERT INTO {self.quote(table)} ({cols}) VALUES "
        per = max(1, min(BATCH, 30_000 // max(1, len(names))))  # rows per multi-row INSERT
        n = 0
        batch: list[Sequence[object]] = []
        cur = self.conn.cursor()
        try:
            for row in rows:
                batch.append(row)
                if len(batch) >= per:
                    cur.execute(head + ", ".join([one] * len(batch)), [v for r in batch for v in r])
                    n += len(batch)
                    batch = []
            if batch:
                cur.execute(head + ", ".join([one] * len(batch)), [v for r in batch for v in r])
                n += len(batch)
        finally:
            cur.close()
        return n

    def primary_key_sql(self, table: str, cols: list[str]) -> str:
        return f"ALTER TABLE {self.quote(table)} ADD PRIMARY KEY ({', '.join(self.quote(c) for c in cols)})"

    def foreign_key_sql(self, table: str, here: list[str], ref: str, there: list[str]) -> str:
        a, b = ", ".join(self.quote(c) for c in here), ", ".join(self.quote(c) for c in there)
        return f"ALTER TABLE {self.quote(table)} ADD FOREIGN KEY ({a}) REFERENCES {self.quote(ref)} ({b})"

    def try_ddl(self, sql: str) -> str | None:
        mod = engine_urls.driver(self.engine)
        if self.engine == engine_urls.DUCKDB and "FOREIGN KEY" in sql:
            return "DuckDB cannot add a foreign key to an existing table"
        if self.engine == engine_urls.POSTGRESQL:
            self.run("SAVEPOINT jury_key")
        try:
            self.run(sql)
        except mod.Error as exc:
            if self.engine == engine_urls.POSTGRESQL:
                self.run("ROLLBACK TO SAVEPOINT jury_key")
            return one_line(exc)[:200]
        if self.engine == engine_urls.POSTGRESQL:
            self.run("RELEASE SAVEPOINT jury_key")
        return None

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


def _clean_pg(row: Iterable[object]) -> tuple[object, ...]:
    """PostgreSQL text cannot hold NUL characters (SQLite text can)."""
    return tuple(v.replace("\x00", "") if isinstance(v, str) and "\x00" in v else v for v in row)


def _pg_connect(e: engine_drivers.Engine) -> engine_urls.Connection:
    """Connect, creating the database (from the maintenance database) when it does not exist."""
    psycopg = engine_urls.driver(engine_urls.POSTGRESQL)
    p = e.parts
    base: dict[str, Any] = {"host": p.hostname, "port": p.port, "user": unquote(p.username) if p.username else None}
    password = engine_drivers.url_password(e.params) if e.params.get("password_env") else None
    if password is not None:
        base["password"] = password
    base = {k: v for k, v in base.items() if v is not None}
    name = unquote(p.path.lstrip("/"))
    try:
        return psycopg.connect(dbname=name, **base)
    except psycopg.OperationalError as exc:
        if "does not exist" not in str(exc):
            raise
    with psycopg.connect(dbname="postgres", autocommit=True, **base) as admin:
        admin.execute(f"CREATE DATABASE {_q(name)}")
    return psycopg.connect(dbname=name, **base)


def _mysql_connect(e: engine_drivers.Engine) -> engine_urls.Connection:
    pymysql = engine_urls.driver(engine_urls.MYSQL)
    p = e.parts
    kwargs: dict[str, Any] = {
        "host": p.hostname or "localhost",
        "port": p.port or 3306,
        "user": unquote(p.username) if p.username else None,
        "charset": "utf8mb4",
        "local_infile": False,
    }
    if e.params.get("unix_socket"):
        kwargs["unix_socket"] = e.params["unix_socket"]
    password = engine_drivers.url_password(e.params, "MYSQL_PWD")
    if password is not None:
        kwargs["password"] = password
    name = unquote(p.path.lstrip("/"))
    conn = pymysql.connect(**{k: v for k, v in kwargs.items() if v is not None})
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{name.replace('`', '``')}` CHARACTER SET utf8mb4")
        cur.execute(f"USE `{name.replace('`', '``')}`")
        cur.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')")
        cur.execute("SET SESSION foreign_key_checks = 1")
    return conn
