"""Execution on PostgreSQL, MariaDB and DuckDB (jury.execution.engines), read-only, hashed as on SQLite.

The servers come from `bash .ci/engines`: JURY_TEST_PG_URL, JURY_TEST_MYSQL_URL (the admin
logins, which load databases) and JURY_TEST_PG_READER_URL, JURY_TEST_MYSQL_READER_URL (the
least-privilege reader jury executes through); without them, or without a driver, those tests
skip. DuckDB is embedded (jury[duckdb]). The hostile-SQL suite is tests/test_engine_safety.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.compare.gold_checks import check_gold_item
from jury.errors import InputError
from jury.execution import engines
from jury.execution.engines import DatabaseURLs, normalise, statement_problem
from jury.execution.loader import load
from jury.execution.schema import describe_columns
from jury.execution.sqlite import execute as sqlite_execute
from jury.inputs.records import GoldItem
from tests.support.enginetest import SUPERHERO, drop_database, reader_url, server_url

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
    assert statement_problem(sql, engines.POSTGRESQL) is not None
    assert statement_problem(sql, engines.DUCKDB) is not None


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
    assert statement_problem(sql, engines.POSTGRESQL) is None


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
    with pytest.raises(InputError, match=r"pip install 'jury\[postgres\]'"):
        engines.driver(engines.POSTGRESQL)
    res = runner.invoke(app, ["score", "run.jsonl", "--db-url", "postgresql://u@127.0.0.1:1/{db_id}"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "Error: postgresql databases need the psycopg driver, which is not installed: pip install 'jury[postgres]'"
    ]


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
    engine = engines.engine_of(superhero_url)
    for sql in SAME_AS_SQLITE:
        if engine == engines.MYSQL:
            sql = sql.replace("DOUBLE PRECISION", "DOUBLE")
        if engine == engines.DUCKDB:
            sql = sql.replace("DOUBLE PRECISION", "DOUBLE")
        here = engines.execute(superhero_url, sql)
        there = sqlite_execute(SUPERHERO, sql.replace("DOUBLE PRECISION", "REAL").replace("DOUBLE)", "REAL)"))
        assert here.ok, here.error
        assert here.rows == there.rows
        assert (here.result_sha256, here.ordered_sha256) == (there.result_sha256, there.ordered_sha256)


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
    engine = engines.engine_of(superhero_url)
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


def _write(url: str, sql: str) -> None:
    e = engines.engine_for(url)
    if e.name == engines.DUCKDB:
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
    target.close()


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql", "duckdb"])
def test_score_on_an_engine_binds_no_password_and_a_changed_database_is_executed_again(engine, project, tmp_path):
    """`jury score --db-url` on the test project's shop database loaded into the engine."""
    template, prefix = _url_template(engine, tmp_path)
    url = template.replace("{db_id}", "shop")
    load(project / "dbs/shop/shop.sqlite", url)
    reader_template = reader_url(url).replace(prefix + "shop", prefix + "{db_id}")
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
        admin = engines.engine_for(url).parts.username
        privileged = runner.invoke(app, ["db", "load", str(SUPERHERO), url, "--reader", admin, "--reader-host", "127.0.0.1"])
        assert privileged.exit_code == 1
        assert f"the reader role cannot be {admin!r}" in privileged.output
        drop_database(url, prefix + "superhero")
        monkeypatch.setenv("JT_READER_PW", "s3cret-" + uuid.uuid4().hex[:6])
        done = runner.invoke(app, ["db", "load", str(SUPERHERO), url, "--reader", role, "--reader-password-env", "JT_READER_PW"])
        assert done.exit_code == 0, done.output
        assert f"may read it and nothing else: run jury as {role}" in done.output
        head, _, _query = url.partition("?")
        parts = engines.engine_for(url).parts
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


def _drop_role(url: str, role: str) -> None:
    e = engines.engine_for(url)
    p = e.parts
    if e.name == engines.POSTGRESQL:
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
