"""What a juror sees of the schema: the columns of the tables a query touches."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jury.execution import engine_urls, engines, tables_cache
from jury.execution.sqlite import open_readonly


def tables_in(sql: str, dialect: str = "sqlite") -> list[str]:
    """Base tables a query reads (CTE names excluded), each once.

    >>> sorted(tables_in("WITH t AS (SELECT * FROM hero) SELECT * FROM t JOIN power p ON 1"))
    ['hero', 'power']
    >>> tables_in("not sql at all (")
    []
    """
    import sqlglot
    from sqlglot import exp

    try:
        trees = [t for t in sqlglot.parse(sql, dialect=dialect) if t is not None]
    except Exception:  # sqlglot raises several error types; a bad query just touches nothing
        return []
    names: list[str] = []
    for tree in trees:
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            name = table.name
            if name and name.lower() not in ctes and name not in names:
                names.append(name)
    return names


def table_columns(db_path: str | Path, tables: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(column, declared type) of each named table that exists, matched case-insensitively;
    on an engine URL, (column, type) from that engine's catalogue."""
    if engine_urls.is_url(db_path):
        assert isinstance(db_path, str)
        return engines.table_columns(db_path, tables)
    conn = open_readonly(db_path)
    try:
        return _sqlite_columns(conn, _sqlite_names(conn), tables)
    finally:
        conn.close()


def _sqlite_names(conn: sqlite3.Connection) -> dict[str, str]:
    """lower-cased name -> name of every table and view of a SQLite database."""
    return {r[0].lower(): r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def _sqlite_columns(
    conn: sqlite3.Connection, existing: dict[str, str], tables: list[str], known: dict[str, list[tuple[str, str]]] | None = None
) -> dict[str, list[tuple[str, str]]]:
    """table_columns on an open SQLite connection whose table names are ``existing``; ``known``:
    columns already read, by real name (read ones are added to it)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for t in tables:
        real = existing.get(t.lower())
        if real is None or real in out:
            continue
        if known is not None and real in known:
            out[real] = known[real]
            continue
        quoted = real.replace('"', '""')
        out[real] = [(r[1], r[2] or "") for r in conn.execute(f'PRAGMA table_info("{quoted}")')]
        if known is not None:
            known[real] = out[real]
    return out


def describe_columns(db_path: str | Path, *sqls: str) -> str:
    """A plain-text column list of every table the given queries touch.

    Tables are listed alphabetically, never in query order: on a blind ballot the order
    must not tell which query is the gold.
    """
    dialect = engines.dialect_of(db_path)
    tables = sorted({t for sql in sqls for t in tables_in(sql, dialect)}, key=str.lower)
    return _column_text(table_columns(db_path, tables))


def _column_text(cols: dict[str, list[tuple[str, str]]]) -> str:
    if not cols:
        return "(no tables could be identified)"
    return "\n".join(f"{table}({', '.join(f'{c} {t}'.strip() for c, t in columns)})" for table, columns in cols.items())


class SchemaReader:
    """describe_columns for the many ballots of one job: each distinct SQL text is parsed once
    and each database opened once, its table names and columns read once; what it holds is
    freed when the job's ``with`` block (or ``close``) ends. The texts are describe_columns'
    own. The databases are those of one job (their files do not change under it)."""

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], list[str]] = {}  # (dialect, sql) -> tables_in
        self._remembered: dict[str, list[str]] | None = None  # jury.execution.tables_cache, read on first use
        self._parsed: dict[str, list[str]] = {}  # what this job parsed, written there when it ends
        self._conns: dict[str, sqlite3.Connection] = {}  # SQLite path -> its connection
        self._names: dict[str, dict[str, str]] = {}  # database -> lower-cased name -> name
        self._columns: dict[str, dict[str, list[tuple[str, str]]]] = {}  # database -> name -> columns
        self._found: dict[str, dict[str, str | None]] = {}  # engine URL -> lower-cased asked name -> name or None

    def __enter__(self) -> SchemaReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remember the texts parsed (jury.execution.tables_cache), close every connection and
        drop what was read."""
        if self._parsed:
            tables_cache.save(self._remembered or {}, self._parsed)
            self._parsed.clear()
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        self._tables.clear()
        self._names.clear()
        self._columns.clear()
        self._found.clear()

    def tables_in(self, sql: str, dialect: str = "sqlite") -> list[str]:
        """tables_in(sql, dialect), parsed once per job, and not at all when an earlier job
        remembered it (jury.execution.tables_cache)."""
        key = (dialect, sql)
        found = self._tables.get(key)
        if found is None:
            if self._remembered is None:
                self._remembered = tables_cache.load()
            digest = tables_cache.key(sql, dialect)
            found = self._remembered.get(digest)
            if found is None:
                found = self._parsed[digest] = tables_in(sql, dialect)
            self._tables[key] = found
        return found

    def describe_columns(self, db_path: str | Path, *sqls: str) -> str:
        """describe_columns(db_path, *sqls), from what this job already read where it can."""
        dialect = engines.dialect_of(db_path)
        tables = sorted({t for sql in sqls for t in self.tables_in(sql, dialect)}, key=str.lower)
        return _column_text(self.table_columns(db_path, tables))

    def table_columns(self, db_path: str | Path, tables: list[str]) -> dict[str, list[tuple[str, str]]]:
        """table_columns(db_path, tables), each database opened once."""
        if engine_urls.is_url(db_path):
            assert isinstance(db_path, str)
            return self._engine_columns(db_path, tables)
        key = str(db_path)
        conn = self._conns.get(key)
        if conn is None:
            conn = self._conns[key] = open_readonly(db_path)
            self._names[key] = _sqlite_names(conn)
        return _sqlite_columns(conn, self._names[key], tables, self._columns.setdefault(key, {}))

    def _engine_columns(self, url: str, tables: list[str]) -> dict[str, list[tuple[str, str]]]:
        """engines.table_columns, asked only about the names not asked before in this job."""
        found = self._found.setdefault(url, {})
        columns = self._columns.setdefault(url, {})
        new = [t for t in dict.fromkeys(t.lower() for t in tables) if t not in found]
        if new:
            read = engines.table_columns(url, new)
            columns.update(read)
            by_lower = {name.lower(): name for name in read}
            for t in new:
                found[t] = by_lower.get(t)
        out: dict[str, list[tuple[str, str]]] = {}
        for t in tables:
            real = found[t.lower()]
            if real is not None and real not in out:
                out[real] = columns[real]
        return out
