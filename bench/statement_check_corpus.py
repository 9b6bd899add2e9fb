"""The statement check's allow-list against BIRD's own SQL: every gold query and every published
prediction of the BIRD data (dev.json, the full-dev prediction files, mini-dev's SQLite,
PostgreSQL and MySQL golds and the 9 models' predictions) through
``jury.execution.statement_check.statement_problem`` on each engine, with the tables of the
question's database (mini-dev's dev_tables.json).

Each engine is given the SQL written for it (PostgreSQL: mini-dev's PostgreSQL gold and
predictions; MySQL: mini-dev's MySQL files; DuckDB: the SQLite files, as `jury score --db-url
duckdb://` runs them) and, for comparison, the SQLite files too. Printed per (corpus, engine):
queries, distinct texts, allowed, refused, and the refusals by reason.

With --pg-url / --mysql-url (a server of ``bash .ci/engines``: JURY_TEST_PG_URL and
JURY_TEST_MYSQL_URL by default), every refused distinct query written for that engine is
also handed to the server itself (``EXPLAIN``, as the least-privilege reader, on empty
tables built from dev_tables.json, in a read-only transaction; nothing is executed) to say
whether the engine would have refused it too: a syntax error, another error (a function or
column that does not exist there), or accepted -- a legitimate query the check refuses.

    bash .ci/engines python bench/statement_check_corpus.py --data ../shared/data/bird
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

from jury.execution.statement_check import statement_problem

ENGINES = ("postgresql", "mysql", "duckdb")
WRITTEN_FOR = {"postgresql": "postgresql", "mysql": "mysql", "duckdb": "sqlite"}


def _predictions(path: Path):
    if path.suffix == ".json":
        for value in json.loads(path.read_text()).values():
            if isinstance(value, str):
                sql, _, db = value.partition("\t----- bird -----\t")
                yield sql, db.strip()
    else:  # one SQL per line, in dev.json order
        yield from ((line, None) for line in path.read_text().split("\n") if line.strip())


def corpus(data: Path) -> list[tuple[str, str, str, str | None]]:
    """(corpus name, dialect written for, SQL, db_id)."""
    out = []
    dev = json.loads((data / "dev.json").read_text())
    out += [("dev.json gold", "sqlite", it["SQL"], it["db_id"]) for it in dev]
    for p in sorted((data / "predictions").iterdir()):
        rows = list(_predictions(p))
        out += [("full-dev predictions", "sqlite", s, db or dev[i]["db_id"]) for i, (s, db) in enumerate(rows)]
    mini = data / "mini-dev"
    for dialect in ("sqlite", "postgresql", "mysql"):
        items = json.loads((mini / "data" / f"mini_dev_{dialect}.json").read_text())
        out += [(f"mini-dev {dialect} gold", dialect, it["SQL"], it["db_id"]) for it in items]
    for p in sorted((mini / "predictions").glob("*/*.json")):
        low = p.name.lower()
        dialect = "postgresql" if "postgresql" in low else "mysql" if "mysql" in low else "sqlite"
        out += [(f"mini-dev {dialect} predictions", dialect, s, db) for s, db in _predictions(p)]
    return out


def schemas(data: Path) -> dict[str, list[tuple[str, list[tuple[str, str]]]]]:
    """db_id -> [(table, [(column, type)])] from mini-dev's dev_tables.json."""
    out = {}
    for db in json.loads((data / "mini-dev/data/dev_tables.json").read_text()):
        tables: list[tuple[str, list[tuple[str, str]]]] = [(t, []) for t in db["table_names_original"]]
        for (ti, col), kind in zip(db["column_names_original"], db["column_types"], strict=True):
            if ti >= 0:
                tables[ti][1].append((col, kind))
        out[db["db_id"]] = tables
    return out


def reason(problem: str) -> str:
    """A refusal's class: the message with the query's own names taken out."""
    text = re.sub(r"\(.*\)$", "(...)", problem)
    text = re.sub(r"'[^']*' is not one of the database's tables", "a name that is not one of the database's tables", text)
    return text[:120]


# --- the servers' own verdict on what the check refuses ------------------------------------------------

PG_TYPES = {"integer": "bigint", "real": "double precision", "number": "double precision", "date": "date"}
MY_TYPES = {"integer": "BIGINT", "real": "DOUBLE", "number": "DOUBLE", "date": "DATE", "text": "LONGTEXT"}


class DuckDB:
    """Empty copies of the 11 databases in one in-memory DuckDB (one schema each), external access off."""

    def __init__(self, tables) -> None:
        import duckdb

        self.conn = duckdb.connect(config={"enable_external_access": False})
        self.dbs = {}
        for db, tabs in tables.items():
            self.conn.execute(f'CREATE SCHEMA "{db}"')
            for t, cols in tabs:
                body = ", ".join(f'"{col}" {PG_TYPES.get(k, "VARCHAR").replace("double precision", "DOUBLE")}' for col, k in cols)
                self.conn.execute(f'CREATE TABLE "{db}"."{t}" ({body})')
            self.dbs[db] = db

    def verdict(self, db: str, sql: str) -> str:
        import duckdb

        try:
            self.conn.execute(f"SET schema = '{db}'")
            self.conn.execute("EXPLAIN " + sql.strip().rstrip(";")).fetchall()
            return "accepted"
        except duckdb.ParserException:
            return "syntax error"
        except duckdb.Error as exc:
            return f"other error {type(exc).__name__}"

    def close(self) -> None:
        self.conn.close()


class Server:
    """Empty copies of the 11 databases on one server, read by a least-privilege reader."""

    def __init__(self, engine: str, url: str, tables) -> None:
        from jury.execution import engine_drivers

        self.engine, self.prefix = engine, f"jsc_{uuid.uuid4().hex[:6]}_"
        self.e = engine_drivers.engine_for(url)
        self.reader = f"jsc_reader_{uuid.uuid4().hex[:6]}"
        self.password = uuid.uuid4().hex
        self.admin = self._admin()
        self.dbs: dict[str, str] = {}
        for db, tabs in tables.items():
            name = self.prefix + db
            self.dbs[db] = name
            self._create(name, tabs)

    def _admin(self):
        p = self.e.parts
        if self.engine == "postgresql":
            import psycopg

            return psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname=self.e.database, autocommit=True)
        import pymysql

        password = os.environ.get(self.e.params.get("password_env", "MYSQL_PWD"))
        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=password, autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE USER '{self.reader}'@'%' IDENTIFIED BY '{self.password}'")
        return conn

    def _create(self, name: str, tabs) -> None:
        if self.engine == "postgresql":
            import psycopg

            self.admin.execute(f'CREATE DATABASE "{name}"')
            p = self.e.parts
            with psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname=name, autocommit=True) as c:
                if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (self.reader,)).fetchone():
                    c.execute(f"CREATE ROLE {self.reader} LOGIN PASSWORD '{self.password}'")
                for t, cols in tabs:  # BIRD's PostgreSQL release: unquoted names, folded to lower case
                    body = ", ".join(f'"{col.lower()}" {PG_TYPES.get(k, "text")}' for col, k in cols)
                    c.execute(f'CREATE TABLE "{t.lower()}" ({body})')
                c.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {self.reader}")
            return
        with self.admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}`")
            for t, cols in tabs:
                body = ", ".join(f"`{col}` {MY_TYPES.get(k, 'LONGTEXT')}" for col, k in cols)
                cur.execute(f"CREATE TABLE `{name}`.`{t}` ({body})")
            cur.execute(f"GRANT SELECT ON `{name}`.* TO '{self.reader}'@'%'")

    def verdict(self, db: str, sql: str) -> str:
        """What the server makes of ``EXPLAIN sql`` as the reader: syntax error, other error, accepted."""
        p = self.e.parts
        if self.engine == "postgresql":
            import psycopg

            try:
                with psycopg.connect(
                    host=p.hostname, port=p.port, user=self.reader, password=self.password, dbname=self.dbs[db]
                ) as c:
                    c.execute("SET TRANSACTION READ ONLY")
                    c.execute("SET LOCAL statement_timeout = 5000")
                    c.execute(b"EXPLAIN " + sql.strip().rstrip(";").encode())
                return "accepted"
            except psycopg.Error as exc:
                return (
                    "syntax error" if getattr(exc, "sqlstate", "") == "42601" else f"other error {getattr(exc, 'sqlstate', '')}"
                )
        import pymysql

        try:
            conn = pymysql.connect(host=p.hostname, port=p.port, user=self.reader, password=self.password, database=self.dbs[db])
            try:
                with conn.cursor() as cur:
                    cur.execute("START TRANSACTION READ ONLY")
                    cur.execute("EXPLAIN " + sql.strip().rstrip(";"))
                    cur.fetchall()
            finally:
                conn.close()
            return "accepted"
        except pymysql.Error as exc:
            code = exc.args[0] if exc.args else None
            return "syntax error" if code == 1064 else f"other error {code}"

    def close(self) -> None:
        if self.engine == "postgresql":
            for name in self.dbs.values():
                self.admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            self.admin.execute(f"DROP ROLE IF EXISTS {self.reader}")
        else:
            with self.admin.cursor() as cur:
                for name in self.dbs.values():
                    cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
                cur.execute(f"DROP USER IF EXISTS '{self.reader}'@'%'")
        self.admin.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared/data/bird")
    ap.add_argument("--pg-url", default=os.environ.get("JURY_TEST_PG_URL"))
    ap.add_argument("--mysql-url", default=os.environ.get("JURY_TEST_MYSQL_URL"))
    ap.add_argument("--show", type=int, default=5, help="refused queries written for the engine shown per reason")
    ap.add_argument("--engines", default=",".join(ENGINES), help="the engines to check (default: all three)")
    args = ap.parse_args()
    chosen = [e for e in ENGINES if e in args.engines.split(",")]
    queries = corpus(args.data)
    tables = schemas(args.data)
    started = time.monotonic()
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    reasons: dict[tuple[str, str], Counter] = defaultdict(Counter)
    refused_own: dict[str, dict[tuple[str, str | None], str]] = defaultdict(dict)
    seen: dict[tuple[str, str, str | None], str | None] = {}
    written = {name: dialect for name, dialect, _, _ in queries}
    for name, dialect, sql, db in queries:
        for engine in chosen:
            if dialect not in (WRITTEN_FOR[engine], "sqlite"):
                continue
            key = (engine, sql, db)
            if key not in seen:
                names = [t for t, _ in tables.get(db or "", [])] or None
                seen[key] = statement_problem(sql, engine, tables=names)
                counts[(name, engine)]["distinct"] += 1
            problem = seen[key]
            counts[(name, engine)]["queries"] += 1
            counts[(name, engine)]["allowed" if problem is None else "refused"] += 1
            if problem is not None:
                reasons[(name, engine)][reason(problem)] += 1
                if dialect == WRITTEN_FOR[engine]:
                    refused_own[engine][(sql, db)] = problem
    print(f"{len(queries):,} queries checked on {len(chosen)} engines in {time.monotonic() - started:.0f} s\n")
    print("| corpus | engine | queries | allowed | refused |\n|---|---|---:|---:|---:|")
    for (name, engine), c in sorted(counts.items()):
        own = "" if written[name] == WRITTEN_FOR[engine] else " (SQLite SQL)"
        print(f"| {name} | {engine}{own} | {c['queries']:,} | {c['allowed']:,} | {c['refused']:,} |")
    for (name, engine), r in sorted(reasons.items()):
        print(f"\n{name} on {engine}: refusals by reason")
        for text, n in r.most_common(12):
            print(f"  {n:6,}  {text}")
    urls = {"postgresql": args.pg_url, "mysql": args.mysql_url, "duckdb": "embedded"}
    for engine, url in urls.items():
        if engine not in chosen:
            continue
        if not url:
            print(f"\n{engine}: no server URL; the server's verdict on the refusals is not checked")
            continue
        server = DuckDB(tables) if engine == "duckdb" else Server(engine, url, tables)
        try:
            verdicts: Counter = Counter()
            accepted = []
            for (sql, db), problem in refused_own[engine].items():
                v = server.verdict(db, sql) if db in server.dbs else "no such database"
                verdicts[v] += 1
                if v == "accepted":
                    accepted.append((sql, problem))
        finally:
            server.close()
        print(f"\n{engine}: the server on the {len(refused_own[engine])} distinct refused queries written for it")
        for v, n in verdicts.most_common():
            print(f"  {n:6,}  {v}")
        for sql, problem in accepted[: args.show]:
            print(f"  ACCEPTED by the server, refused by the check: {' '.join(sql.split())[:160]}\n      {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
