"""Execution on PostgreSQL, MariaDB and DuckDB (jury.execution.engines), read-only, hashed as on SQLite.

The servers come from `bash .ci/engines`: JURY_TEST_PG_URL, JURY_TEST_MYSQL_URL (the admin
logins, which load databases) and JURY_TEST_PG_READER_URL, JURY_TEST_MYSQL_READER_URL (the
least-privilege reader jury executes through); without them, or without a driver, those tests
skip. DuckDB is embedded (jury-sql[duckdb]). The hostile-SQL suite is tests/test_engine_safety.py.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import sys
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.compare import comparators as compare
from jury.compare.gold_checks import check_gold_item
from jury.errors import InputError
from jury.execution import engine_drivers, engine_urls, engines
from jury.execution.engine_urls import DatabaseURLs
from jury.execution.engine_values import normalise
from jury.execution.loader import load
from jury.execution.schema import describe_columns
from jury.execution.sqlite import execute as sqlite_execute
from jury.execution.statement_check import statement_problem
from jury.inputs.records import GoldItem
from tests.support.enginetest import SUPERHERO, drop_database, reader_url, server_url
from tests.support.fakellm import json_reply
from tests.support.jurytest import write_panel

runner = CliRunner()
ENGINE_PARAMS = [
    pytest.param("postgresql", marks=pytest.mark.engine),
    pytest.param("mysql", marks=pytest.mark.engine),
    pytest.param("duckdb", marks=pytest.mark.engine),
]


def _url_template(engine: str, tmp: Path, db_id: str = "{db_id}") -> tuple[str, str]:
    """(URL template with {db_id}, the name prefix used) for a fresh database per test."""
    prefix = f"jt_{uuid.uuid4().hex[:8]}_"
    if engine == "duckdb":
        pytest.importorskip("duckdb")
        return f"duckdb:///{tmp}/{prefix}{db_id}.duckdb", prefix
    return server_url(engine, prefix + db_id), prefix


def _reader_template(url: str, prefix: str, db_id: str) -> str:
    """The reader's URL template (with {db_id}) of the databases the admin's ``url`` (database
    ``prefix + db_id``) is one of: what jury executes through."""
    return reader_url(url).replace(prefix + db_id, prefix + "{db_id}")


@pytest.fixture
def superhero_url(request, tmp_path):
    """The superhero database loaded on the engine by its admin; the reader's URL of it."""
    engine = request.param
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "superhero")
    load(SUPERHERO, url)
    yield reader_url(url)
    engines.close_connections()
    drop_database(url, prefix + "superhero")


# --- no server needed -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; DROP TABLE hero",
        "DELETE FROM hero",
        "COPY hero TO PROGRAM 'touch /tmp/x'",
        "WITH d AS (DELETE FROM hero RETURNING *) SELECT * FROM d",
        "SELECT * FROM hero INTO OUTFILE '/tmp/x'",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT LOAD_FILE('/etc/passwd')",
        "LOAD DATA INFILE '/etc/passwd' INTO TABLE hero",
        "ATTACH '/tmp/other.db'",
        "INSTALL httpfs",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT lo_import('/etc/passwd')",
        "SET statement_timeout = 0",
    ],
)
def test_the_static_check_refuses_what_is_not_one_read_only_query(sql):
    assert statement_problem(sql, engine_urls.POSTGRESQL) is not None
    assert statement_problem(sql, engine_urls.DUCKDB) is not None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1;",
        "WITH t AS (SELECT 1 AS a) SELECT a FROM t",
        "(SELECT 1) UNION (SELECT 2)",
        "SELECT 'delete; drop' AS note",
        'SELECT "update" FROM t',
        "SELECT pg_sleep(1)",
    ],
)
def test_the_static_check_lets_a_query_through(sql):
    assert statement_problem(sql, engine_urls.POSTGRESQL) is None


def test_values_are_normalised_as_sqlite_returns_them():
    import datetime as dt
    from decimal import Decimal

    assert [normalise(v) for v in (Decimal("2.50"), Decimal("3.000"), True, False, None, 1.5, "x")] == [
        2.5,
        3,
        1,
        0,
        None,
        1.5,
        "x",
    ]
    assert normalise(dt.date(2020, 1, 2)) == "2020-01-02"
    assert normalise(dt.datetime(2020, 1, 2, 3, 4, 5)) == "2020-01-02 03:04:05"
    assert normalise(dt.timedelta(hours=1, minutes=2, seconds=3)) == "01:02:03"
    assert normalise(memoryview(b"ab")) == b"ab"


def test_a_url_with_a_password_is_refused_in_one_line():
    with pytest.raises(InputError, match="holds a password; give it in the environment"):
        DatabaseURLs.from_config(None, "jury.toml", "postgresql://u:secret@h/{db_id}")
    with pytest.raises(InputError, match="databases.x must be a URL"):
        DatabaseURLs.from_config({"x": 3}, "jury.toml")
    urls = DatabaseURLs.from_config({"a": {"url": "mysql://u@h/a", "password_env": "PW"}, "*": "duckdb:///d/{db_id}.duckdb"}, "t")
    assert urls.url_for("a") == "mysql://u@h/a?password_env=PW"
    assert urls.url_for("b") == "duckdb:///d/b.duckdb"


def test_a_missing_driver_is_one_line_naming_the_extra(monkeypatch, project):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(InputError, match=r"pip install 'jury-sql\[postgres\]'"):
        engine_urls.driver(engine_urls.POSTGRESQL)
    res = runner.invoke(app, ["score", "run.jsonl", "--db-url", "postgresql://u@127.0.0.1:1/{db_id}"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "Error: postgresql databases need the psycopg driver, which is not installed: pip install 'jury-sql[postgres]'"
    ]


def test_a_timeout_stored_before_its_deadline_is_executed_again(project):
    """A phantom timeout a store holds from before cancels were bound to their statement (elapsed
    under its own timeout) is no outcome: the next run executes that query again."""
    args = ["score", "run.jsonl", "--per-question", "pq.jsonl", "-f", "json"]
    assert runner.invoke(app, args).exit_code == 0
    first = (project / "pq.jsonl").read_text()
    store = sqlite3.connect(project / ".jury/store.db")
    (n,) = store.execute("SELECT COUNT(*) FROM executions WHERE sql = 'SELECT count(*) FROM item'").fetchone()
    store.execute("UPDATE executions SET status = 'timeout', elapsed_s = 0.01 WHERE sql = 'SELECT count(*) FROM item'")
    store.commit()
    store.close()
    assert n == 1
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert (project / "pq.jsonl").read_text() == first  # question 3's gold is no gold_error


# --- on each engine ---------------------------------------------------------------------------------

SAME_AS_SQLITE = [
    "SELECT superhero_name, height_cm, weight_kg FROM superhero ORDER BY id",
    "SELECT COUNT(*), SUM(height_cm), MAX(full_name) FROM superhero",
    "SELECT colour FROM colour WHERE id > 5 ORDER BY colour",
    "SELECT full_name FROM superhero WHERE full_name IS NULL",
    "SELECT CAST(SUM(weight_kg) AS DOUBLE PRECISION) / COUNT(*) FROM superhero",
]


@pytest.mark.parametrize("superhero_url", ENGINE_PARAMS, indirect=True)
def test_results_hash_as_on_sqlite(superhero_url):
    engine = engine_urls.engine_of(superhero_url)
    for sql in SAME_AS_SQLITE:
        if engine == engine_urls.MYSQL:
            sql = sql.replace("DOUBLE PRECISION", "DOUBLE")
        if engine == engine_urls.DUCKDB:
            sql = sql.replace("DOUBLE PRECISION", "DOUBLE")
        here = engines.execute(superhero_url, sql)
        there = sqlite_execute(SUPERHERO, sql.replace("DOUBLE PRECISION", "REAL").replace("DOUBLE)", "REAL)"))
        assert here.ok, here.error
        assert here.rows == there.rows
        assert (here.result_sha256, here.ordered_sha256) == (there.result_sha256, there.ordered_sha256)


@pytest.mark.parametrize("superhero_url", ENGINE_PARAMS, indirect=True)
def test_a_query_of_no_rows_is_a_result_of_no_rows(superhero_url):
    # BIRD's drivers return [] (psycopg2's fetchall, PyMySQL's); psycopg's stream keeps no
    # description of a result without rows, which jury took for a statement returning no result
    # set: every empty answer and gold on PostgreSQL an error (mini-dev's schema-only databases)
    engine = engine_urls.engine_of(superhero_url)
    pieces = ["SELECT colour, id AS n FROM colour WHERE id < 0"]
    if engine == engine_urls.POSTGRESQL:  # the last statement of several, as psycopg2 runs them
        pieces.append("SELECT 1; SELECT colour, id AS n FROM colour WHERE id < 0")
    for sql in pieces:
        res = engines.execute(superhero_url, sql)
        assert res.ok, (sql, res.error)
        assert (res.rows, res.row_count, res.columns) == ([], 0, ["colour", "n"])


HOSTILE = {
    "postgresql": [
        "DELETE FROM colour",
        "SELECT 1; DROP TABLE colour",
        "COPY colour TO PROGRAM 'touch /tmp/jury-pwned'",
        "SELECT * FROM colour FOR UPDATE",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT * INTO newtable FROM colour",
    ],
    "mysql": [
        "DELETE FROM colour",
        "SELECT 1; DROP TABLE colour",
        "SELECT * FROM colour INTO OUTFILE '/tmp/jury-pwned'",
        "SELECT LOAD_FILE('/etc/passwd')",
        "LOAD DATA INFILE '/etc/passwd' INTO TABLE colour",
    ],
    "duckdb": [
        "DELETE FROM colour",
        "SELECT * FROM read_csv('/etc/passwd')",
        "ATTACH '/tmp/jury-pwned.db'",
        "INSTALL httpfs",
        "COPY colour TO '/tmp/jury-pwned.csv'",
        "SET enable_external_access = true",
    ],
}
# Without the static check the reader's own privileges refuse these (pg_read_file: permission
# denied; INTO OUTFILE: no FILE privilege), but MySQL's LOAD_FILE returns NULL to a login
# without FILE instead of failing: no file is read, yet it is not an error.
SERVER_ALLOWS = ("LOAD_FILE",)
RUNAWAY = {
    "postgresql": "SELECT pg_sleep(30)",
    "mysql": "SELECT SLEEP(30)",
    "duckdb": "SELECT count(*) FROM range(1000000000000) a",
}


@pytest.mark.parametrize("superhero_url", ENGINE_PARAMS, indirect=True)
@pytest.mark.parametrize("static_check", [True, False], ids=["checked", "server-only"])
def test_hostile_sql_is_refused_or_stopped_and_the_database_is_unchanged(superhero_url, static_check, monkeypatch):
    """With the static check, and without it (the reader's privileges and the server's read-only mode alone)."""
    engine = engine_urls.engine_of(superhero_url)
    before = engines.content_digest(superhero_url)
    if not static_check:
        monkeypatch.setattr(engines, "statement_problem", lambda sql, engine, **options: None)
    for sql in HOSTILE[engine]:
        if not static_check and any(f in sql for f in SERVER_ALLOWS):
            continue  # a superuser's server runs these: the static check alone refuses them
        result = engines.execute(superhero_url, sql, timeout_s=5)
        assert result.status == "error", (sql, result)
    stopped = engines.execute(superhero_url, RUNAWAY[engine], timeout_s=1)
    assert stopped.status == "timeout", stopped
    assert engines.content_digest(superhero_url) == before
    assert not Path("/tmp/jury-pwned").exists()
    assert engines.execute(superhero_url, "SELECT COUNT(*) FROM colour").rows == [(35,)]  # the connection still works


@pytest.mark.parametrize("superhero_url", ENGINE_PARAMS, indirect=True)
def test_ballot_schema_comes_from_the_engines_catalogue(superhero_url):
    text = describe_columns(superhero_url, "SELECT colour FROM colour JOIN race ON 1 = 1")
    assert text.splitlines()[0].startswith("colour(id ")
    assert "race(" in text and "bigint" in text.lower()


@pytest.mark.parametrize("superhero_url", ENGINE_PARAMS, indirect=True)
def test_check_gold_finds_a_limit_tie_on_the_engine(superhero_url):
    item = GoldItem(
        question_id=1,
        db_id="superhero",
        question="q",
        sql="SELECT superhero_name FROM superhero WHERE height_cm IS NOT NULL ORDER BY height_cm LIMIT 1",
    )
    result = check_gold_item(item, superhero_url, passes=(2,))
    assert "limit_tie" in {f.name for f in result.checks}
    assert result.executions == 2  # no reversed run: SQLite's pragma only


@pytest.mark.parametrize("superhero_url", ENGINE_PARAMS, indirect=True)
def test_a_corrected_gold_query_runs_on_the_engine_the_question_is_on(superhero_url):
    """A review on an engine: a person's corrected query runs there (not as a SQLite file path)."""
    from jury.pipeline.review_queue import ReviewItem, run_corrected

    item = ReviewItem(
        kind="gold", verdict_sha256="x", question_id=1, db_id="superhero", question="q", evidence="", schema_text="",
        gold_sql="SELECT 1", gold_preview="", jury_verdict="defective", votes=[], db_path=superhero_url,
    )  # fmt: skip
    shown, summary = run_corrected(item, "SELECT count(*) FROM colour", timeout_s=30, row_cap=100)
    assert summary["status"] == "ok" and summary["row_count"] == 1, summary
    assert "35" in shown  # superhero's colour table has 35 rows (sqlite3 on the bundled file says so)


def _write(url: str, sql: str) -> None:
    e = engine_drivers.engine_for(url)
    if e.name == engine_urls.DUCKDB:
        import duckdb

        engines.close_connections()
        conn = duckdb.connect(e.path)
        conn.execute(sql)
        conn.close()
        return
    from jury.execution.loader import _Target

    target = _Target.open(e.name, url)
    target.run(sql)
    target.commit()
    if e.name == engine_urls.POSTGRESQL:  # publish this session's counters now, not at its next flush (docs/execution.md)
        target.run("SELECT pg_stat_force_next_flush()")
    target.close()


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql", "duckdb"])
def test_score_on_an_engine_binds_no_password_and_a_changed_database_is_executed_again(engine, project, tmp_path):
    """`jury score --db-url` on the test project's shop database loaded into the engine; an
    added row, then an updated one (every count unchanged), each make every result stale."""
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    reader_template = _reader_template(url, prefix, "shop")
    try:
        args = ["score", "run.jsonl", "--db-url", reader_template, "--per-question", "pq.jsonl", "--format", "json"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        first = [json.loads(line) for line in (project / "pq.jsonl").read_text().splitlines()]
        sqlite_res = runner.invoke(app, ["score", "run.jsonl", "--per-question", "pq2.jsonl", "--store", "other.db"])
        assert sqlite_res.exit_code == 0, sqlite_res.output
        on_sqlite = [json.loads(line) for line in (project / "pq2.jsonl").read_text().splitlines()]
        assert [p["outcome"] for p in first] == [p["outcome"] for p in on_sqlite]
        store = sqlite3.connect(project / ".jury/store.db")
        (executions,) = store.execute("SELECT COUNT(*) FROM executions").fetchone()
        keys = {r[0] for r in store.execute("SELECT key FROM executions")}
        store.close()
        secrets = [v for k, v in os.environ.items() if k.startswith(("PGPASSWORD", "JURY_TEST_")) and "PASSWORD" in k and v]
        for blob in [(project / ".jury/store.db").read_bytes(), (project / "pq.jsonl").read_bytes()]:
            assert not any(s.encode() in blob for s in secrets)
        _write(url, "INSERT INTO item VALUES (99, 'kiwi', 9.0, 'brown')")
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        store = sqlite3.connect(project / ".jury/store.db")
        (after,) = store.execute("SELECT COUNT(*) FROM executions").fetchone()
        new_keys = {r[0] for r in store.execute("SELECT key FROM executions")} - keys
        store.close()
        assert after == executions * 2  # a changed database: every query executed again, under new keys
        assert len(new_keys) == executions
        _write(url, "UPDATE item SET price = 1.75 WHERE id = 1")  # every row count stays: still a changed database
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        store = sqlite3.connect(project / ".jury/store.db")
        (updated,) = store.execute("SELECT COUNT(*) FROM executions").fetchone()
        store.close()
        assert updated == executions * 3
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql", "duckdb"])
def test_the_fingerprint_holds_the_catalogue_state_and_the_allowed_functions(engine, project, tmp_path):
    """A warm rerun through the reader executes nothing (the one-query catalogue state is read
    as the reader, unchanged); the same database with another allow_functions is another
    fingerprint (what the statement check allows is part of what a query returns), so every
    query is executed again, once."""
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    reader = _reader_template(url, prefix, "shop")
    allowing = reader + ("&" if "?" in reader else "?") + "allow_functions=similarity"

    def executions() -> int:
        store = sqlite3.connect(project / ".jury/store.db")
        (n,) = store.execute("SELECT COUNT(*) FROM executions").fetchone()
        store.close()
        return n

    try:
        counts = []
        for db_url in (reader, reader, allowing, allowing):
            res = runner.invoke(app, ["score", "run.jsonl", "--db-url", db_url])
            assert res.exit_code == 0, res.output
            counts.append(executions())
        first = counts[0]
        assert first > 0 and counts == [first, first, 2 * first, 2 * first]
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


@pytest.mark.engine
def test_db_load_cli_copies_every_table_and_row(tmp_path):
    pytest.importorskip("duckdb")
    url = f"duckdb:///{tmp_path}/superhero.duckdb"
    res = runner.invoke(app, ["db", "load", str(SUPERHERO), url])
    assert res.exit_code == 0, res.output
    assert "10 tables, 10,614 rows" in res.output
    assert engines.execute(url, "SELECT COUNT(*) FROM hero_power").rows == [(5825,)]
    again = runner.invoke(app, ["db", "load", str(SUPERHERO), url])
    assert again.exit_code == 1 and "already has table" in again.output


# --- the least-privilege reader -------------------------------------------------------------------


def test_db_grants_prints_the_readers_recipe_for_each_engine():
    pg = runner.invoke(app, ["db", "grants", "postgresql://admin@db.example/superhero"])
    assert pg.exit_code == 0, pg.output
    lines = pg.output.splitlines()
    for statement in (
        'CREATE ROLE "jury_reader" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT;',
        "\\password jury_reader",
        'ALTER ROLE "jury_reader" SET default_transaction_read_only = on;',
        'GRANT CONNECT ON DATABASE "superhero" TO "jury_reader";',
        'GRANT USAGE ON SCHEMA "public" TO "jury_reader";',
        'GRANT SELECT ON ALL TABLES IN SCHEMA "public" TO "jury_reader";',
    ):
        assert statement in lines
    my = runner.invoke(
        app, ["db", "grants", "mariadb://root@db.example/superhero", "--reader", "bird_ro", "--reader-host", "10.0.0.%"]
    )
    assert my.exit_code == 0, my.output
    assert my.output.splitlines()[1:] == [
        "CREATE USER 'bird_ro'@'10.0.0.%' IDENTIFIED BY '<password>';",
        "GRANT SELECT ON `superhero`.* TO 'bird_ro'@'10.0.0.%';",
    ]
    bad = runner.invoke(app, ["db", "grants", "postgresql://admin@db.example/superhero", "--reader", "x; DROP ROLE y"])
    assert bad.exit_code == 1 and bad.output.startswith("Error: --reader 'x; DROP ROLE y': a role name is letters")


QUICK_WAIT = {  # a quick query that takes 0.1 s and whose count a cancel would change
    "postgresql": "(SELECT COUNT(*) FROM pg_sleep(0.1)) = 1",
    "mysql": "SLEEP(0.1) = 0",
}


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_db_load_makes_a_reader_that_can_only_read(engine, tmp_path, monkeypatch):
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "superhero")
    role = f"jt_reader_{uuid.uuid4().hex[:6]}"
    try:
        # a reader that does not exist needs its password first: one line, before any table is made
        monkeypatch.delenv("JURY_READER_PASSWORD", raising=False)
        missing = runner.invoke(app, ["db", "load", str(SUPERHERO), url, "--reader", role])
        assert missing.exit_code == 1
        assert f"the reader role {role!r} does not exist: set JURY_READER_PASSWORD" in missing.output
        # the admin as reader: refused, it can do more than read
        admin = engine_drivers.engine_for(url).parts.username
        privileged = runner.invoke(app, ["db", "load", str(SUPERHERO), url, "--reader", admin, "--reader-host", "127.0.0.1"])
        assert privileged.exit_code == 1
        assert f"the reader role cannot be {admin!r}" in privileged.output
        drop_database(url, prefix + "superhero")
        monkeypatch.setenv("JT_READER_PW", "s3cret-" + uuid.uuid4().hex[:6])
        done = runner.invoke(app, ["db", "load", str(SUPERHERO), url, "--reader", role, "--reader-password-env", "JT_READER_PW"])
        assert done.exit_code == 0, done.output
        assert f"may read it and nothing else: run jury as {role}" in done.output
        head, _, _query = url.partition("?")
        parts = engine_drivers.engine_for(url).parts
        reader = head.replace(f"{parts.username}@", f"{role}@", 1) + "?password_env=JT_READER_PW"
        assert engines.execute(reader, "SELECT COUNT(*) FROM colour").rows == [(35,)]  # passes the login check
        assert engines.execute(reader, "SELECT COUNT(*) FROM colour", timeout_s=5).ok
        engines.close_connections()
        # its privileges, straight from the driver (no jury in the way): reading works, writing does not
        if engine == "postgresql":
            import psycopg

            conn = psycopg.connect(
                host=parts.hostname, port=parts.port, user=role, password=os.environ["JT_READER_PW"], dbname=prefix + "superhero"
            )
            with pytest.raises(psycopg.Error, match="read-only transaction|permission denied"):
                conn.execute("INSERT INTO colour VALUES (999, 'x')")
            conn.close()
        else:
            import pymysql

            conn = pymysql.connect(
                host=parts.hostname,
                port=parts.port,
                user=role,
                password=os.environ["JT_READER_PW"],
                database=prefix + "superhero",
            )
            with conn.cursor() as cur, pytest.raises(pymysql.Error, match="command denied"):
                cur.execute("INSERT INTO colour VALUES (999, 'x')")
            conn.close()
    finally:
        engines.close_connections()
        drop_database(url, prefix + "superhero")
        _drop_role(url, role)


# a query that runs for the whole 30 s deadline, and that a cancel from another session ends with an error
# (MariaDB's SLEEP would return 1 when killed, not fail: a cross join of superhero's 35 colours instead)
_LONG = {
    "postgresql": "SELECT pg_sleep(30)",
    "mysql": "SELECT COUNT(*) FROM colour a, colour b, colour c, colour d, colour e, colour f",
}


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_the_connection_replacing_a_cancelled_one_passes_the_login_check_again(engine, tmp_path, monkeypatch):
    """A query cancelled by another session before its deadline runs again on a fresh connection
    (issue 30's phantom timeouts); that connection is opened as any other, so a reader that was
    granted a privilege in the meantime is refused there (issue 29) instead of running the query."""
    import threading
    import time

    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "superhero")
    role = f"jt_reader_{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("JT_READER_PW", "s3cret-" + uuid.uuid4().hex[:6])
    admin = engine_drivers.engine_for(url)  # its URL only: the admin never executes through jury here
    try:
        res = runner.invoke(app, ["db", "load", str(SUPERHERO), url, "--reader", role, "--reader-password-env", "JT_READER_PW"])
        assert res.exit_code == 0, res.output
        reader = url.partition("?")[0].replace(f"{admin.parts.username}@", f"{role}@", 1) + "?password_env=JT_READER_PW"
        assert engines.execute(reader, "SELECT COUNT(*) FROM colour", cached=True).rows == [(35,)]  # passes the check
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["result"] = engines.execute(reader, _LONG[engine], timeout_s=30, cached=True)
            except InputError as exc:
                outcome["refused"] = str(exc)
            finally:
                engines.close_connections()

        worker = threading.Thread(target=run)
        worker.start()
        conn = _admin_connection(url)  # the driver's own, autocommit: no jury in the way
        find = {
            "postgresql": "SELECT pid FROM pg_stat_activity WHERE usename = %s AND state = 'active' AND query LIKE '%%pg_sleep(30)%%'",
            "mysql": "SELECT id FROM information_schema.processlist WHERE user = %s AND info LIKE '%%colour f%%'",
        }[engine]
        rows: list = []
        for _ in range(400):  # until the reader's statement runs (it runs for 30 s)
            with conn.cursor() as cur:
                cur.execute(find, (role,))
                rows = list(cur.fetchall())
            if rows:
                break
            time.sleep(0.05)
        assert rows, "the reader's query never started"
        (session,) = rows[0]
        with conn.cursor() as cur:
            if engine == "postgresql":
                cur.execute(f'GRANT pg_signal_backend TO "{role}"')
                cur.execute("SELECT pg_cancel_backend(%s)", (session,))
            else:
                cur.execute(f"GRANT PROCESS ON *.* TO '{role}'@'%'")
                cur.execute(f"KILL QUERY {int(session)}")
        conn.close()
        worker.join(60)
        assert not worker.is_alive()
        assert "result" not in outcome, outcome  # neither a timeout nor a result: the query did not run again
        privilege = "pg_signal_backend" if engine == "postgresql" else "PROCESS"
        assert privilege in outcome["refused"] and "--allow-privileged-login" in outcome["refused"]
    finally:
        engines.close_connections()
        drop_database(url, prefix + "superhero")
        _drop_role(url, role)


def _admin_connection(url: str):
    """A plain driver connection of the admin URL, in autocommit."""
    e = engine_drivers.engine_for(url)
    p = e.parts
    if e.name == engine_urls.POSTGRESQL:
        import psycopg

        return psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname="postgres", autocommit=True)
    import pymysql

    password = os.environ.get(e.params["password_env"])
    return pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=password, autocommit=True)


def _drop_role(url: str, role: str) -> None:
    e = engine_drivers.engine_for(url)
    p = e.parts
    if e.name == engine_urls.POSTGRESQL:
        import psycopg

        with psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP ROLE IF EXISTS "{role}"')
    else:
        import pymysql

        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=os.environ.get(e.params["password_env"]))
        with conn.cursor() as cur:
            cur.execute(f"DROP USER IF EXISTS '{role}'@'%'")
        conn.close()


def test_a_verdict_file_records_the_databases_run_through_a_privileged_login(tmp_path):
    """The header every verdict file (adjudicate, audit-gold) is written with: privileged_logins
    names the server databases allowed a privileged login, and only those; absent otherwise."""
    from jury.execution.store import Store
    from jury.verdicts.assemble import store_provenance
    from jury.verdicts.documents import Provenance

    urls = DatabaseURLs.from_config(
        {"a": "postgresql://admin@h/a", "b": "duckdb:///d/b.duckdb"}, "jury.toml", allow_privileged_login=True
    )
    plain = DatabaseURLs.from_config({"c": "mysql://reader@h/c"}, "jury.toml")
    databases = {"a": (urls.url_for("a"), "f" * 64), "b": (urls.url_for("b"), "e" * 64), "c": (plain.url_for("c"), "d" * 64)}
    with Store(tmp_path / "store.db") as st:
        recorded = store_provenance(st, databases)
        assert recorded["privileged_logins"] == ["postgresql://admin@h/a"]  # DuckDB has no logins
        assert "privileged_logins" not in store_provenance(st, {"c": databases["c"]})
    assert Provenance.model_validate(recorded).model_dump(mode="json")["privileged_logins"] == ["postgresql://admin@h/a"]


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_a_late_cancel_never_reaches_the_next_query(engine, project, tmp_path):
    """A runaway query then quick ones, many times over, on one kept connection (workers 1),
    through a link that opens every connection 0.2 s late (so the client's cancel, sent from a
    second connection, lands after the server's own timeout ended the runaway query): every
    runaway one is a timeout, every quick one a match (no phantom timeout), and a rerun from the
    store gives the same outcomes. Outcomes are counted, never timed."""
    from tests.support.slowlink import SlowLink

    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    reader = _reader_template(url, prefix, "shop")  # every connection, the fresh ones after a cancel too, passes the login check
    parts = engine_drivers.engine_for(url).parts
    repetitions, quick = 6, 5
    gold, runs = [], []
    for r in range(repetitions):
        for k in range(quick + 1):
            q = r * (quick + 1) + k + 1
            sql = f"SELECT COUNT(*) FROM item WHERE id > {k % 4} AND {q} > 0"  # each query its own text: no reuse
            gold.append({"question_id": q, "db_id": "shop", "question": "q", "SQL": sql})
            pred = f"{RUNAWAY[engine]} -- {q}" if k == 0 else f"{sql} AND {QUICK_WAIT[engine]}"
            runs.append({"model": "m", "question_id": q, "sql": pred})
    (project / "gold.json").write_text(json.dumps(gold))
    (project / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    try:
        with SlowLink(parts.hostname, parts.port, 0.2) as link:
            slow = reader.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{link.port}")
            args = ["score", "run.jsonl", "--db-url", slow, "--timeout", "1", "--per-question", "pq.jsonl", "-f", "json"]
            for attempt in ("first run", "rerun from the store"):
                res = runner.invoke(app, args)
                assert res.exit_code == 0, res.output
                outcomes = [json.loads(line)["outcome"] for line in (project / "pq.jsonl").read_text().splitlines()]
                expected = (["timeout"] + ["match"] * quick) * repetitions
                assert outcomes == expected, (attempt, outcomes)
            assert link.accepted > repetitions  # the cancels went through the slow link
        store = sqlite3.connect(project / ".jury/store.db")
        statuses = dict(store.execute("SELECT status, COUNT(*) FROM executions GROUP BY status").fetchall())
        store.close()
        assert statuses == {"timeout": repetitions, "ok": len(gold) + repetitions * quick}
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


# (gold, prediction, the driver values each gives): BIRD's rule is Python's set equality on those.
DRIVER_VALUES = {
    "postgresql": [
        ("CAST(31.2 AS NUMERIC(10, 4))", "CAST(31.2 AS DOUBLE PRECISION)", Decimal("31.2000"), 31.2),
        ("CAST(31.2 AS NUMERIC(10, 4))", "CAST(31.2 AS NUMERIC(10, 1))", Decimal("31.2000"), Decimal("31.2")),
        ("CAST(0.5 AS NUMERIC(4, 2))", "CAST(0.5 AS DOUBLE PRECISION)", Decimal("0.50"), 0.5),
        ("CAST(7 AS NUMERIC(6, 2))", "7", Decimal("7.00"), 7),
        ("DATE '2020-01-02'", "'2020-01-02'", dt.date(2020, 1, 2), "2020-01-02"),
    ],
    "mysql": [
        ("CAST(31.2 AS DECIMAL(10, 4))", "CAST(31.2 AS DOUBLE)", Decimal("31.2000"), 31.2),
        ("CAST(31.2 AS DECIMAL(10, 4))", "CAST(31.2 AS DECIMAL(10, 1))", Decimal("31.2000"), Decimal("31.2")),
        ("CAST(0.5 AS DECIMAL(4, 2))", "CAST(0.5 AS DOUBLE)", Decimal("0.50"), 0.5),
        ("CAST(7 AS DECIMAL(6, 2))", "7", Decimal("7.00"), 7),
        ("DATE '2020-01-02'", "'2020-01-02'", dt.date(2020, 1, 2), "2020-01-02"),
    ],
    "duckdb": [
        ("CAST(31.2 AS DECIMAL(10, 4))", "CAST(31.2 AS DOUBLE)", Decimal("31.2000"), 31.2),
        ("CAST(31.2 AS DECIMAL(10, 4))", "CAST(31.2 AS DECIMAL(10, 1))", Decimal("31.2000"), Decimal("31.2")),
        ("CAST(0.5 AS DECIMAL(4, 2))", "CAST(0.5 AS DOUBLE)", Decimal("0.50"), 0.5),
        ("CAST(7 AS DECIMAL(6, 2))", "7", Decimal("7.00"), 7),
        ("DATE '2020-01-02'", "'2020-01-02'", dt.date(2020, 1, 2), "2020-01-02"),
    ],
}
# 3,000 distinct rows (past the row cap and, with SPILL_AT at 1,000, the set digest's spill to disk),
# the last holding DECIMAL 0.1 in the gold and the float 0.1 in the prediction: BIRD's rule tells them apart.
BIG = "SELECT i, CASE WHEN i = 2999 THEN CAST(0.1 AS {}) END AS v FROM range(3000) t(i)"


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql", "duckdb"])
def test_bird_compares_the_drivers_values_and_bird_normalized_the_sqlite_values(engine, project, tmp_path, monkeypatch):
    """`jury score --comparator bird` on an engine is BIRD's rule on the driver's values
    (Python's set equality: Decimal('31.2000') != 31.2, Decimal('0.50') == 0.5); the
    normalised comparison, values as SQLite returns them, is `bird_normalized`."""
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    cases = DRIVER_VALUES[engine]
    gold = [{"question_id": i, "db_id": "shop", "question": "q", "SQL": f"SELECT {g}"} for i, (g, *_) in enumerate(cases)]
    runs = [{"model": "m", "question_id": i, "sql": f"SELECT {p}"} for i, (_, p, *_) in enumerate(cases)]
    if engine == "duckdb":
        monkeypatch.setattr("jury.execution.rows.SPILL_AT", 1000)
        n = len(cases)
        gold += [{"question_id": q, "db_id": "shop", "question": "q", "SQL": BIG.format("DECIMAL(4, 1)")} for q in (n, n + 1)]
        runs += [{"model": "m", "question_id": n, "sql": BIG.format("DOUBLE")}]
        runs += [{"model": "m", "question_id": n + 1, "sql": BIG.format("DECIMAL(4, 1)") + " ORDER BY i DESC"}]
        cases = [*cases, (None, None, Decimal("0.1"), 0.1), (None, None, Decimal("0.1"), Decimal("0.1"))]
    (project / "gold.json").write_text(json.dumps(gold))
    (project / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    try:
        got = {}
        reader = _reader_template(url, prefix, "shop")
        for comparator in ("bird", "bird_normalized"):
            args = ["score", "run.jsonl", "--db-url", reader, "--comparator", comparator, "--per-question", "pq.jsonl"]
            args += ["--row-cap", "1000"]
            res = runner.invoke(app, args)
            assert res.exit_code == 0, res.output
            got[comparator] = [json.loads(line)["outcome"] == "match" for line in (project / "pq.jsonl").read_text().splitlines()]
        assert got["bird"] == [{(g,)} == {(p,)} for *_, g, p in cases]
        assert got["bird"][:5] == [False, True, True, True, False]
        assert got["bird_normalized"] == [True] * len(cases)  # each pair is one value once DECIMAL is a float
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


def _mixed_case_sqlite(path: Path) -> Path:
    """A SQLite file named as BIRD's are: mixed-case tables and columns, names with spaces."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE Customers (CustomerID INTEGER PRIMARY KEY, Segment TEXT, Currency TEXT, "Free Meal Count (K-12)" REAL);
        CREATE TABLE Transactions_1k (TransactionID INTEGER PRIMARY KEY, CustomerID INTEGER REFERENCES Customers (CustomerID),
                                      Amount INTEGER, "Date" DATE);
        INSERT INTO Customers VALUES (1, 'SME', 'EUR', 3.5), (2, 'LAM', 'CZK', NULL), (3, 'KAM', 'CZK', 7.0), (4, 'SME', 'EUR', 1.0);
        INSERT INTO Transactions_1k VALUES (10, 1, 5, '2012-08-24'), (11, 3, 7, '2012-08-25'), (12, 3, 1, '2012-08-25');
        """
    )
    conn.commit()
    conn.close()
    return path


# BIRD-style SQL as its PostgreSQL and MySQL releases spell names (unquoted plain names in any
# case on PostgreSQL, quoted names that need quotes as written; MySQL table names as in SQLite),
# and the same question in SQLite, whose answer is the expected one.
BIRD_STYLE = [
    (
        "SELECT CAST(SUM(CASE WHEN Currency = 'EUR' THEN 1 ELSE 0 END) AS REAL) / NULLIF(SUM(CASE WHEN Currency = 'CZK' THEN 1 ELSE 0 END), 0) FROM customers",
        "SELECT CAST(SUM(CASE WHEN `Currency` = 'EUR' THEN 1 ELSE 0 END) AS DOUBLE) / SUM(CASE WHEN `currency` = 'CZK' THEN 1 ELSE 0 END) FROM `Customers`",
        "SELECT CAST(SUM(IIF(Currency = 'EUR', 1, 0)) AS FLOAT) / SUM(IIF(Currency = 'CZK', 1, 0)) FROM customers",
    ),
    (
        "SELECT T1.Segment, SUM(T2.Amount) FROM Customers AS T1 INNER JOIN transactions_1k AS T2 ON T1.CustomerID = T2.customerid WHERE T2.\"date\" = '2012-08-25' GROUP BY T1.Segment",
        "SELECT T1.Segment, SUM(T2.Amount) FROM `Customers` AS T1 INNER JOIN `Transactions_1k` AS T2 ON T1.CustomerID = T2.customerid WHERE T2.`Date` = '2012-08-25' GROUP BY T1.Segment",
        "SELECT T1.Segment, SUM(T2.Amount) FROM Customers AS T1 INNER JOIN Transactions_1k AS T2 ON T1.CustomerID = T2.CustomerID WHERE T2.Date = '2012-08-25' GROUP BY T1.Segment",
    ),
    (
        'SELECT "Free Meal Count (K-12)" FROM customers WHERE CustomerId = 1',
        "SELECT `Free Meal Count (K-12)` FROM `Customers` WHERE customerid = 1",
        'SELECT "Free Meal Count (K-12)" FROM Customers WHERE CustomerID = 1',
    ),
]


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_db_load_names_tables_so_birds_unquoted_sql_runs(engine, tmp_path):
    """`jury db load` of a mixed-case SQLite file: BIRD's PostgreSQL SQL (unquoted names, which
    PostgreSQL folds to lower case) and MySQL SQL (table names as written) answer as SQLite does."""
    src = _mixed_case_sqlite(tmp_path / "mixed.sqlite")
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "mixed")
    try:
        res = runner.invoke(app, ["db", "load", str(src), url])
        assert res.exit_code == 0, res.output
        if engine == "postgresql":
            assert "names created lower case, as BIRD's PostgreSQL release has them" in res.output
        else:
            assert "lower_case_table_names=" in res.output
        for pg_sql, my_sql, sqlite_sql in BIRD_STYLE:
            got = engines.execute(reader_url(url), pg_sql if engine == "postgresql" else my_sql)
            assert got.ok, (engine, got.error)
            assert compare.bird_normalized(sqlite_execute(src, sqlite_sql).rows, got.rows)
    finally:
        engines.close_connections()
        drop_database(url, prefix + "mixed")


@pytest.mark.engine
def test_db_load_names_every_key_it_leaves_out_or_how_many_more(tmp_path):
    """11 foreign keys DuckDB cannot add: ten listed, then "and 1 more"."""
    pytest.importorskip("duckdb")
    src = tmp_path / "keys.sqlite"
    conn = sqlite3.connect(src)
    refs = ", ".join(f"r{i} INTEGER REFERENCES p (id)" for i in range(11))
    conn.executescript(f"CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (id INTEGER PRIMARY KEY, {refs});")
    conn.close()
    res = runner.invoke(app, ["db", "load", str(src), f"duckdb:///{tmp_path}/keys.duckdb"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "11 keys left out" in lines[0]
    assert sum(line.startswith("  key left out: c (r") for line in lines) == 10
    assert "  and 1 more key left out" in lines


@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_an_unset_password_variable_is_named(scheme, project, monkeypatch):
    pytest.importorskip({"postgresql": "psycopg", "mysql": "pymysql"}[scheme])
    monkeypatch.delenv("JURY_UNSET_PASSWORD", raising=False)
    url = f"{scheme}://jury@127.0.0.1:1/{{db_id}}?password_env=JURY_UNSET_PASSWORD"
    res = runner.invoke(app, ["score", "run.jsonl", "--db-url", url])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "Error: JURY_UNSET_PASSWORD is not set: the database URL's ?password_env=JURY_UNSET_PASSWORD names it for the password"
    ]


def test_the_score_table_is_headed_by_the_comparator_chosen(project):
    res = runner.invoke(app, ["score", "run.jsonl", "--comparator", "bird"])
    assert res.exit_code == 0, res.output
    assert "bird execution match" in res.output and "strict execution match" not in res.output
    assert "bird acc [95% CI]" in res.output


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "duckdb"])
def test_check_gold_and_errors_on_an_engine_say_what_ran(engine, project, tmp_path):
    """check-gold on an engine claims no SQLite-only reversed run; a PostgreSQL error shows the
    query as written, not jury's cursor around it; a URL without {db_id} (one database holding
    every db_id's tables, as BIRD's own PostgreSQL release) serves every db_id."""
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    reader = reader_url(url)
    try:
        res = runner.invoke(app, ["check-gold", "--db-url", reader, "--passes", "1"])  # a fixed URL: every db_id's
        assert res.exit_code == 0, res.output
        assert "gold queries flagged; passes [1], comparator strict" in res.output
        assert "reverse_unordered_selects" not in res.output
        on_sqlite = runner.invoke(app, ["check-gold", "--passes", "1"])
        assert "passes [1] + 1 with PRAGMA reverse_unordered_selects=ON" in on_sqlite.output
        error = engines.execute(reader, "SELECT nope FROM item").error
        assert "DECLARE" not in error and "jury_query" not in error
        if engine == "postgresql":
            assert error.startswith("column \"nope\" does not exist (at character 8 of the query: 'nope FROM item')")
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


CROSS_HERE = {
    1: "SELECT COUNT(*) FROM item",
    2: "SELECT price / 10 FROM item WHERE id = 3",
    3: "SELECT name FROM item WHERE colour = 'red'",
}
CROSS_THERE = {  # the same questions' gold for PostgreSQL: the same result, a DECIMAL of the same value, another result
    1: "SELECT COUNT(*) FROM item",
    2: "SELECT CAST(price AS NUMERIC) / 10 FROM item WHERE id = 3",
    3: "SELECT name FROM item WHERE colour = 'green'",
}


@pytest.mark.engine
def test_the_cross_engine_check_lists_each_question_that_differs_under_each_comparator(project, tmp_path, fake_llm):
    """check-gold --against-gold: the SQLite gold here against another gold on PostgreSQL. By hand:
    question 2 is 0.05 on both once DECIMAL is a float, but Decimal('0.05') != 0.05 (BIRD's rule);
    question 3 is another answer. audit-gold records the same check in the audit file."""
    template, prefix = _url_template("postgresql", tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    for name, sqls in (("gold.json", CROSS_HERE), ("pg_gold.json", CROSS_THERE)):
        items = [{"question_id": q, "db_id": "shop", "question": "q", "SQL": sql} for q, sql in sqls.items()]
        (project / name).write_text(json.dumps(items))
    against = ["--against-gold", "pg_gold.json", "--against-db-url", reader_url(url)]
    try:
        res = runner.invoke(app, ["check-gold", "--passes", "1", "-f", "json", *against])
        assert res.exit_code == 0, res.output
        report = json.loads(res.output)
        assert report["cross_engine"]["differ"] == {
            "bird": [2, 3], "bird_normalized": [3], "strict": [3], "relaxed": [3], "subset": [3],
        }  # fmt: skip
        assert report["counts"]["cross_engine"] == 2
        found = {i["question_id"]: [c for c in i["checks"] if c["name"] == "cross_engine"] for i in report["items"]}
        assert found[1] == [] and "drivers' types differ" in found[2][0]["evidence"]
        assert "here [('apple',), ('plum',)]" in found[3][0]["evidence"] and "[('pear',)]" in found[3][0]["evidence"]
        plain = runner.invoke(app, ["check-gold", "--passes", "1", "-f", "json"])
        assert "cross_engine" not in plain.output  # not asked for: neither run nor counted
        for j, _ in [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")]:
            fake_llm.script(j, lambda _r: json_reply({"reasoning": "scripted", "verdict": "valid", "defect_type": None}))
        panel = write_panel(project, fake_llm.base_url, [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")], style="audit")
        res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel), "-o", "verdicts/a.json", *against])
        assert res.exit_code == 0, res.output
        data = json.loads((project / "verdicts/a.json").read_text())
        assert data["settings"]["checks"]["cross_engine"]["against"] == "pg_gold.json"
        recorded = {r["question_id"]: [c["name"] for c in r["checks"]] for r in data["records"]}
        assert recorded == {1: [], 2: ["cross_engine"], 3: ["cross_engine"]}
        assert runner.invoke(app, ["verify", "verdicts/a.json"]).exit_code == 0
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


@pytest.mark.engine
def test_the_cross_engine_side_is_held_to_the_login_check_and_recorded(project, tmp_path, fake_llm):
    """--against-db-url through the admin (a superuser) is refused as --db-url is; with
    --allow-privileged-login it runs and check-gold's JSON and the audit file name it in
    provenance.privileged_logins, though the databases here are SQLite files."""
    template, prefix = _url_template("postgresql", tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    for name, sqls in (("gold.json", CROSS_HERE), ("pg_gold.json", CROSS_THERE)):
        items = [{"question_id": q, "db_id": "shop", "question": "q", "SQL": sql} for q, sql in sqls.items()]
        (project / name).write_text(json.dumps(items))
    against = ["--against-gold", "pg_gold.json", "--against-db-url", url]
    try:
        refused = runner.invoke(app, ["check-gold", "--passes", "1", *against])
        assert refused.exit_code == 1
        assert refused.output.startswith(f"Error: {url}: the login 'jury' is a superuser")
        allowed = runner.invoke(app, ["check-gold", "--passes", "1", "-f", "json", "--allow-privileged-login", *against])
        assert allowed.exit_code == 0, allowed.output
        report = json.loads(allowed.output)
        assert report["provenance"]["privileged_logins"] == [url]
        assert report["cross_engine"]["differ"]["strict"] == [3]  # it ran there
        for j in ("ja", "jb", "jc"):
            fake_llm.script(j, lambda _r: json_reply({"reasoning": "scripted", "verdict": "valid", "defect_type": None}))
        panel = write_panel(project, fake_llm.base_url, [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")], style="audit")
        args = ["audit-gold", "gold.json", "--panel", str(panel), "-o", "verdicts/a.json", "--allow-privileged-login"]
        res = runner.invoke(app, [*args, *against])
        assert res.exit_code == 0, res.output
        data = json.loads((project / "verdicts/a.json").read_text())
        assert data["provenance"]["privileged_logins"] == [url]
        assert runner.invoke(app, ["verify", "verdicts/a.json"]).exit_code == 0
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql", "duckdb"])
def test_efficiency_is_timed_on_the_engine(engine, project, tmp_path):
    """`jury score --efficiency` on an engine times every matched pair there (VES, R-VES and the
    time ratio computed from those timings); the run file's one match per model is timed."""
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    runs = [{"model": "m", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red' ORDER BY id"}]
    runs += [{"model": "m", "question_id": 3, "sql": "SELECT 99"}]
    (project / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    try:
        reader = _reader_template(url, prefix, "shop")
        args = ["score", "run.jsonl", "--db-url", reader, "--efficiency", "--repeats", "3", "-f", "json", "-o", "s.json"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        [model] = json.loads((project / "s.json").read_text())["models"]
        e = model["efficiency"]
        assert (e["timed_matches"], e["failed_timings"], e["untimed_matches"], e["ves_n"]) == (1, 0, 0, 2)
        assert e["ves"] > 0 and e["r_ves"] > 0 and e["time_ratio"] > 0
        store = sqlite3.connect(project / ".jury/store.db")
        [(gold_times, pred_times)] = store.execute("SELECT gold_times, pred_times FROM timings").fetchall()
        store.close()
        assert len(json.loads(gold_times)) == len(json.loads(pred_times)) == 3
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_a_slow_login_is_not_the_statements_time(engine, project, tmp_path, monkeypatch):
    """Issue 42.4: the deadline's clock started before connecting and before the login check,
    so under load a trivial gold query was stored as a timeout (or, with the connect limit
    taken from --timeout, as an error): a gold error, a question silently out of the
    denominator. Every connection here is held 3 s (a loopback relay, not load) at --timeout 2:
    each run on a fresh connection is a quick query's rows, by the statement's own clock. A
    server that never answers is EngineUnavailable: nothing is recorded, and `jury score` says
    so in one line."""
    from tests.support.slowlink import SlowLink

    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    reader = _reader_template(url, prefix, "shop")
    parts = engine_drivers.engine_for(url).parts
    with sqlite3.connect(project / "dbs/shop/shop.sqlite") as con:  # the independent count
        (n,) = con.execute("SELECT COUNT(*) FROM item").fetchone()
    try:
        with SlowLink(parts.hostname, parts.port, 3.0) as link:
            slow = reader.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{link.port}")
            runs = [engines.execute(slow.replace("{db_id}", "shop"), "SELECT COUNT(*) FROM item", timeout_s=2) for _ in range(3)]
            assert [(r.status, r.rows) for r in runs] == [("ok", [(n,)])] * 3, runs
            assert link.accepted >= 3  # three fresh connections, each held 3 s
            # the same through `jury score`: the gold executes, no question leaves the denominator
            (project / "run.jsonl").write_text('{"model": "m", "question_id": 3, "sql": "SELECT count(*) FROM item"}\n')
            res = runner.invoke(app, ["score", "run.jsonl", "--db-url", slow, "--timeout", "2", "-f", "json"])
            assert res.exit_code == 0, res.output
            doc = json.loads(res.stdout)
            assert doc["gold_errors"] == [] and doc["models"][0]["strict"]["k"] == 1
    finally:
        engines.close_connections()
        drop_database(url, prefix + "shop")
    # a server that accepts the connection and never answers: no outcome of any query
    import socket

    monkeypatch.setattr(engine_drivers, "CONNECT_TIMEOUT_S", 2.0)
    with socket.create_server(("127.0.0.1", 0)) as mute:
        dead = reader.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{mute.getsockname()[1]}")
        with pytest.raises(engines.EngineUnavailable, match=r"cannot connect to .* nothing was recorded"):
            engines.execute(dead.replace("{db_id}", "shop"), "SELECT COUNT(*) FROM item", timeout_s=2)
        store = tmp_path / "dead.db"
        res = runner.invoke(app, ["score", "run.jsonl", "--db-url", dead, "--store", str(store)])
        assert res.exit_code == 1 and "cannot connect to" in res.output and len(res.output.strip().splitlines()) == 1
        with sqlite3.connect(store) as con:
            names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            assert "executions" not in names or con.execute("SELECT COUNT(*) FROM executions").fetchone() == (0,)


# BIRD mini-dev's PostgreSQL question 730 (superhero), its gold and gpt-4's answer: no ORDER BY,
# so the order is the plan's; a server-side cursor (planned for its first rows) gave another.
Q730 = (
    "SELECT superhero_name FROM superhero AS T1 WHERE EXISTS(SELECT 1 FROM hero_power AS T2 INNER JOIN superpower AS T3 "
    "ON T2.power_id = T3.id WHERE T3.power_name = 'Super Strength' AND T1.id = T2.hero_id) AND EXISTS(SELECT 1 FROM "
    "publisher AS T4 WHERE T4.publisher_name = 'Marvel Comics' AND T1.publisher_id = T4.id)",
    "SELECT sh.superhero_name FROM superhero sh JOIN publisher p ON sh.publisher_id = p.id JOIN hero_power hp ON "
    "sh.id = hp.hero_id JOIN superpower sp ON hp.power_id = sp.id WHERE p.publisher_name = 'Marvel Comics' AND "
    "sp.power_name = 'Super Strength'",
    "SELECT T1.superhero_name, T2.colour FROM superhero T1 JOIN colour T2 ON T1.eye_colour_id = T2.id LIMIT 40",
)


@pytest.mark.engine
@pytest.mark.parametrize("superhero_url", ["postgresql"], indirect=True)
def test_rows_arrive_as_a_plain_cursor_gets_them(superhero_url):
    """Issue 42.3: jury's rows of a query without a full ORDER BY are in the order BIRD's driver
    (a plain cursor's execute and fetchall) gets them, so Soft-F1 (rows matched by position)
    and a LIMIT without ORDER BY score as BIRD's scripts do. The plain cursor is psycopg's own,
    on the same login, read here apart from jury."""
    psycopg = pytest.importorskip("psycopg")
    url = superhero_url
    password = os.environ.get("JURY_TEST_PG_READER_PASSWORD")
    with psycopg.connect(url.split("?")[0], **({"password": password} if password else {})) as plain:
        for sql in Q730:
            expected = [tuple(map(normalise, r)) for r in plain.execute(sql).fetchall()]
            got = engines.execute(url, sql, timeout_s=30)
            assert got.status == "ok", got.error
            assert len(expected) > 1 and got.rows == expected, sql


@pytest.mark.engine
@pytest.mark.parametrize("superhero_url", ["postgresql", "mysql"], indirect=True)
def test_two_statements_run_in_order_on_postgresql_as_birds_driver_does(superhero_url):
    """Issue 42.3: BIRD's PostgreSQL driver (psycopg2's execute) runs every statement of an
    answer and scores the last one's rows; its MySQL driver refuses the text. jury does the same
    when every statement passes the check, and refuses as before otherwise, naming which one.
    The expected rows are the last statement's, fetched with the driver alone."""
    engine = engine_urls.engine_of(superhero_url)
    two = "SELECT COUNT(*) FROM superhero; SELECT superhero_name FROM superhero WHERE id < 4 ORDER BY id"
    got = engines.execute(superhero_url, two, timeout_s=30)
    if engine == engine_urls.MYSQL:
        assert got.status == "error" and "more than one statement" in (got.error or "")
        return
    psycopg = pytest.importorskip("psycopg")
    password = os.environ.get("JURY_TEST_PG_READER_PASSWORD")
    with psycopg.connect(superhero_url.split("?")[0], **({"password": password} if password else {})) as plain:
        expected = [tuple(r) for r in plain.execute(two.split(";")[1]).fetchall()]
    assert got.status == "ok" and got.rows == expected and len(expected) == 3, got
    for bad, which in (
        ("SELECT 1; DELETE FROM superhero", "statement 2 of 2"),
        ("SELECT pg_read_file('/etc/passwd'); SELECT 2", "statement 1 of 2"),
        ("SELECT 1; SELECT * FROM pg_shadow", "statement 2 of 2"),
    ):
        res = engines.execute(superhero_url, bad, timeout_s=30)
        assert res.status == "error" and res.error.startswith("refused") and which in res.error, (bad, res)
    # a semicolon in a string or a comment separates nothing
    one = engines.execute(superhero_url, "SELECT ';' AS s -- a; b", timeout_s=30)
    assert one.status == "ok" and one.rows == [(";",)]
