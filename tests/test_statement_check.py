"""The statement check (jury.execution.statement_check), parse-level: no server needed.

The guarantee on the engines is the login's own privileges (tests/test_engine_safety.py runs
this list against real servers as the reader and as the admin); this is the second line: the
SQL is parsed in the engine's dialect and only what the allow-list names may appear.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.execution.engine_drivers import engine_for
from jury.execution.engine_urls import DatabaseURLs
from jury.execution.statement_check import mysql_executable_comment, statement_problem

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
BIRD = ROOT.parent / "shared/data/bird"
TABLES = ["superhero", "colour", "hero_power", "t"]


def refused(sql: str, engine: str, **options) -> str:
    problem = statement_problem(sql, engine, tables=TABLES, **options)
    assert problem is not None, f"{engine} let through: {sql}"
    assert problem.startswith(("refused:", "not a query:")), problem
    return problem


# --- the issue's cases (#29 items 4, 5, 6) --------------------------------------------------------

ISSUE_POSTGRESQL = {
    "SELECT \"pg_read_file\"('/etc/passwd')": "'pg_read_file'",
    "SELECT U&\"pg_read_fil\\0065\"('/etc/passwd')": "'pg_read_file'",  # \0065 is 'e'
    "SELECT pg_catalog.\"pg_read_file\"('/etc/passwd')": "schema-qualified",
    'SELECT "pg_terminate_backend"(pid) FROM t': "'pg_terminate_backend'",
    'SELECT "pg_reload_conf"()': "'pg_reload_conf'",
    "SELECT \"lo_import\"('/etc/passwd')": "'lo_import'",
    "SELECT \"pg_ls_dir\"('.')": "'pg_ls_dir'",
    "SELECT \"pg_stat_file\"('postgresql.conf')": "'pg_stat_file'",
    "SELECT \"set_config\"('statement_timeout', '0', false)": "'set_config'",
    "SELECT pg_try_advisory_lock(1)": "'pg_try_advisory_lock'",
    "SELECT rolpassword FROM pg_authid": "'pg_authid' is not one of the database's tables",
    "SELECT * FROM pg_hba_file_rules": "'pg_hba_file_rules' is not one of the database's tables",
}
ISSUE_MYSQL = {
    "SELECT 1 /*! INTO OUTFILE '/tmp/jury-x' */": "executable comment",
    "SELECT 1 /*M! INTO OUTFILE '/tmp/jury-x' */": "executable comment",
    "SELECT 1 /*!, LOAD_FILE('/etc/passwd') */": "executable comment",
    "SELECT 1 /*!50000 , LOAD_FILE('/etc/passwd') */": "executable comment",
    "SELECT `load_file`('/etc/passwd')": "'load_file'",
    "SELECT `GET_LOCK`('jury', 0)": "'GET_LOCK'",
    "SELECT 1 /*!, GET_LOCK('jury', 0) */": "executable comment",
    "SELECT authentication_string FROM mysql.user": "qualified table name",
    "SELECT @@datadir": "server variable",
}


@pytest.mark.parametrize("sql", list(ISSUE_POSTGRESQL))
def test_the_issues_postgresql_spellings_are_refused_naming_the_decoded_function(sql):
    assert ISSUE_POSTGRESQL[sql] in refused(sql, "postgresql")


@pytest.mark.parametrize("sql", list(ISSUE_MYSQL))
def test_the_issues_mysql_spellings_are_refused(sql):
    assert ISSUE_MYSQL[sql] in refused(sql, "mysql")


# --- spellings the issue did not list ---------------------------------------------------------------

EXTRA = {
    "postgresql": [
        "SELECT \"PG_READ_FILE\"('/etc/passwd')",  # quoted: another (absent) function, refused all the same
        "SELECT \"Pg_Read_File\"('x')",
        "SELECT PG_READ_FILE('/etc/passwd')",  # unquoted: folded to pg_read_file
        "SELECT U&\"pg_read_fil!0065\" UESCAPE '!'('/etc/passwd')",
        "SELECT U&\"\\+000070g_read_file\"('x')",  # \+000070 is 'p'
        "SELECT pg_catalog . /* between */ pg_read_file('/etc/passwd')",
        'SELECT "pg_catalog"."pg_read_file"(\'x\')',
        "SELECT * FROM pg_read_file('/etc/passwd')",  # a table function
        "SELECT * FROM t, LATERAL pg_ls_dir('.') AS f",
        "SELECT * FROM ROWS FROM (pg_ls_dir('.'))",
        "SELECT ARRAY(SELECT pg_ls_dir('.'))",
        "SELECT (SELECT pg_read_file('/etc/passwd'))",
        "SELECT 'pg_read_file'::regproc",  # a cast to regprocedure names a function
        "SELECT 'pg_authid'::regclass",
        "SELECT CAST('x' AS regprocedure)",
        "SELECT a OPERATOR(pg_catalog.+) 1 FROM t",
        "SELECT 'a\\', pg_read_file('/etc/passwd') -- '",  # standard strings: a backslash is no escape
        "SELECT 1 /* outer /* nested */ still a comment */, pg_read_file('/etc/passwd')",
        "TABLE pg_authid",
        'SELECT * FROM "pg_authid"',
        "SELECT * FROM pg_catalog.pg_authid",
        "SELECT * FROM information_schema.tables",
        "WITH pg_authid AS (SELECT * FROM pg_authid) SELECT * FROM pg_authid",  # the CTE's own body sees the real one
        "SELECT * FROM (WITH pg_authid AS (SELECT 1) SELECT * FROM pg_authid) a, pg_authid b",
        "WITH later AS (SELECT * FROM first_one), first_one AS (SELECT 1) SELECT * FROM later",
        "SELECT current_setting('data_directory')",
        "SELECT version()",
        "SELECT current_user",
        "SELECT inet_server_addr()",
        "SELECT nextval('s')",
        "SELECT query_to_xml('select 1', true, true, '')",
        "SELECT dblink('host=x', 'select 1')",
        "SELECT pg_cancel_backend(1)",
        "SELECT pg_advisory_lock(1)",
        "SELECT pg_notify('c', 'x')",
        "SELECT lo_export(1, '/tmp/jury-x')",
        "SELECT $1",
        "COPY t TO PROGRAM 'id'",
        "COPY (SELECT 1) TO '/tmp/jury-x'",
        "CALL p()",
        "DO $$ BEGIN PERFORM pg_sleep(0); END $$",
        "EXPLAIN ANALYZE DELETE FROM t",
        "SELECT * INTO TEMP x FROM t",
        "SELECT * FROM t FOR UPDATE",
        "SELECT * FROM t FOR SHARE",
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "SET statement_timeout = 0",
        "SELECT 1; SELECT 2",
        "PREPARE p AS SELECT 1",
        "LISTEN c",
    ],
    "mysql": [
        "SELECT 1 /*!*/",
        "SELECT 1 /*!99999 , LOAD_FILE('/etc/passwd') */",  # a version this server may not have: refused all the same
        "select 1 /*m! , 2 */",
        "SELECT /*+ SET_VAR(max_statement_time = 0) */ 1",  # an optimizer hint
        "SELECT 1 --/*! , LOAD_FILE('/etc/passwd') */",  # -- with no space is not a comment
        "SELECT 'a\\' /*! , LOAD_FILE('/etc/passwd') */ '",  # code under NO_BACKSLASH_ESCAPES
        "SELECT `x` /*! , 2 */",
        "SELECT 1 /* /* */, LOAD_FILE('/etc/passwd') -- */",  # MySQL does not nest comments
        "SELECT {fn LOAD_FILE('/etc/passwd')}",  # an ODBC escape
        "SELECT LOAD_FILE(0x2f6574632f706173737764)",
        "SELECT `LOAD_FILE` ('/etc/passwd')",
        "SELECT * FROM `mysql`.`user`",
        "SELECT * FROM information_schema.processlist",
        "SELECT * FROM user",  # not one of the database's tables
        "SELECT @@global.secure_file_priv",
        "SELECT @v",
        "SELECT 1 INTO @v",
        "SELECT 1 INTO OUTFILE '/tmp/jury-x'",
        "SELECT * FROM t INTO DUMPFILE '/tmp/jury-x'",
        "HANDLER t OPEN",
        "SELECT BENCHMARK(100000000, MD5('x'))",
        "SELECT IS_FREE_LOCK('jury')",
        "SELECT RELEASE_ALL_LOCKS()",
        "SELECT user()",
        "SELECT database()",
        "SELECT connection_id()",
        "SELECT * FROM t FOR UPDATE",
        "SELECT * FROM t LOCK IN SHARE MODE",
        "KILL 1",
        "SHOW GRANTS",
        "DO SLEEP(1)",
    ],
    "duckdb": [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM READ_CSV_AUTO('/etc/passwd')",
        "SELECT * FROM \"read_text\"('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        "FROM '/etc/passwd'",
        "SELECT getenv('HOME')",
        "SELECT * FROM glob('/*')",
        "SELECT * FROM duckdb_settings()",
        "SELECT current_setting('threads')",
        "SELECT * FROM sqlite_scan('/tmp/x.db', 't')",
        "SELECT * FROM query('SELECT 1')",
        "SELECT * FROM main.t",
        "ATTACH '/tmp/jury-x.db'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "COPY t TO '/tmp/jury-x.csv'",
        "SET enable_external_access = true",
        "PRAGMA database_list",
        "SUMMARIZE t",
        "CALL pragma_version()",
    ],
}


@pytest.mark.parametrize(("engine", "sql"), [(e, s) for e, sqls in EXTRA.items() for s in sqls])
def test_other_spellings_are_refused(engine, sql):
    refused(sql, engine)


def test_a_quoted_name_is_compared_as_the_engine_resolves_it():
    # PostgreSQL folds an unquoted name to lower case and keeps a quoted one: "count" is count,
    # "COUNT" is another function; MySQL and DuckDB resolve function names case-insensitively
    assert statement_problem('SELECT "count"(*) FROM t', "postgresql", tables=TABLES) is None
    assert statement_problem("SELECT COUNT(*) FROM t", "postgresql", tables=TABLES) is None
    assert "'COUNT'" in refused('SELECT "COUNT"(*) FROM t', "postgresql")
    assert statement_problem("SELECT `COUNT`(*) FROM t", "mysql", tables=TABLES) is None
    # a decoded U& name that is allowed is allowed: U&"c\006Funt" is count
    assert statement_problem('SELECT U&"c\\006Funt"(*) FROM t', "postgresql", tables=TABLES) is None
    assert "invalid Unicode escape" in refused('SELECT U&"x\\00zz"(1)', "postgresql")


@pytest.mark.parametrize(
    ("engine", "sql"),
    [
        ("postgresql", "SELECT 'pg_read_file(''/etc/passwd'')' AS s"),  # a string is data
        ("postgresql", 'SELECT "pg_read_file" FROM (SELECT 1 AS "pg_read_file") AS x'),  # a column name
        ("postgresql", "SELECT E'\\\\' || 'x', $$a ' b$$"),
        ("postgresql", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"),
        ("postgresql", "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b"),
        ("postgresql", "SELECT COUNT(*) FILTER (WHERE height_cm > 180) FROM superhero"),
        ("postgresql", "SELECT * FROM generate_series(1, 3)"),
        ("postgresql", "VALUES (1), (2)"),
        ("postgresql", "SELECT pg_sleep(1)"),  # bounded by the timeout
        ("postgresql", "SELECT (SELECT COUNT(*) FROM pg_sleep(0.1)) = 1"),  # in FROM too: one row
        ("mysql", "SELECT '/*! not a comment */' AS s, \"/*! nor this */\" AS t"),
        ("mysql", "SELECT 1 -- /*! a real comment */"),
        ("mysql", "SELECT 1 # /*! a real comment */"),
        ("mysql", "SELECT 1 /* a comment that mentions /*! */"),
        ("mysql", "SELECT YEAR(d), IF(a, 1, 2), DATE_FORMAT(d, '%Y'), SUBSTRING_INDEX(a, ',', 1) FROM t"),
        ("mysql", "SELECT (SELECT COUNT(*) FROM colour) - (SELECT COUNT(*) FROM superhero) FROM DUAL"),
        ("mysql", "SELECT SLEEP(1)"),
        ("duckdb", "SELECT strftime(d, '%Y'), instr(a, 'x') FROM t"),
        ("duckdb", "SELECT count(*) FROM range(10) r"),
    ],
)
def test_queries_a_benchmark_writes_are_allowed(engine, sql):
    assert statement_problem(sql, engine, tables=TABLES) is None


def test_the_executable_comment_scanner_follows_mysql_lexing():
    # found: the opener as MySQL would read it, in every quoting mode a server may be in
    assert mysql_executable_comment("SELECT 1 /*!50000 , 2 */") == "/*!50000 , 2 */"
    assert mysql_executable_comment("SELECT 'x''/*!' /*M!, 2 */") == "/*M!, 2 */"
    assert mysql_executable_comment("SELECT 1 --\t/*! x */") is None  # -- and a tab: a comment to the line's end
    assert mysql_executable_comment("SELECT 1 --\n/*! x */") == "/*! x */"  # the next line is code again
    assert mysql_executable_comment("SELECT 1 #/*! x */\n, 2") is None
    # "…" is a string, or (ANSI_QUOTES) a name: /*! inside is data either way
    assert mysql_executable_comment('SELECT "a /*! x */" AS s') is None
    # a backslash escapes the quote unless NO_BACKSLASH_ESCAPES: in that mode this comment is code
    assert mysql_executable_comment("SELECT 'a\\' /*! x */ '") == "/*! x */"
    # in a name (backticks, or "…" under ANSI_QUOTES) a backslash escapes nothing
    assert mysql_executable_comment('SELECT "a\\" /*! x */ "') == "/*! x */"


def test_an_unknown_function_is_refused_until_allowed(tmp_path, monkeypatch):
    sql = "SELECT similarity(superhero_name, 'x') FROM superhero"
    assert "'similarity'" in refused(sql, "postgresql")
    assert statement_problem(sql, "postgresql", tables=TABLES, allow_functions=["similarity"]) is None
    # jury.toml's [engines] allow_functions reaches every engine connection through its URL
    urls = DatabaseURLs.from_config(
        {"superhero": "postgresql://jury_reader@db/superhero"}, "jury.toml", engines={"allow_functions": ["similarity"]}
    )
    url = urls.url_for("superhero")
    assert url is not None and engine_for(url).allow_functions == ("similarity",)
    with pytest.raises(InputError, match="allow_functions must be a list of function names"):
        DatabaseURLs.from_config(None, "jury.toml", engines={"allow_functions": ["x; DROP"]})


def test_engines_settings_in_jury_toml_are_checked_in_one_line(project):
    (project / "jury.toml").write_text(
        (project / "jury.toml").read_text()
        + '[databases]\nshop = "postgresql://u@127.0.0.1:1/shop"\n[engines]\nallow_everything = true\n'
    )
    res = runner.invoke(app, ["score", "run.jsonl"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        f"Error: {project / 'jury.toml'}: engines.allow_everything is not a setting (allow_privileged_login, allow_functions)"
    ]


def test_allow_privileged_login_is_carried_to_every_database_url():
    urls = DatabaseURLs.from_config(
        {"a": {"url": "mysql://u@h/a", "password_env": "PW"}},
        "jury.toml",
        "postgresql://u@h/{db_id}",
        allow_privileged_login=True,
    )
    for url in (urls.url_for("a"), urls.url_for("b")):
        assert url is not None and engine_for(url).allows_privileged_login
    assert urls.url_for("b") == "postgresql://u@h/b?allow_privileged_login=true"
    plain = DatabaseURLs.from_config(None, "jury.toml", "postgresql://u@h/{db_id}").url_for("b")
    assert plain is not None and not engine_for(plain).allows_privileged_login


# --- BIRD's own SQL: what the allow-list lets through ----------------------------------------------------


def _mini_dev(dialect: str):
    path = BIRD / f"mini-dev/data/mini_dev_{dialect}.json"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared BIRD data)")
    tables = {}
    for db in json.loads((BIRD / "mini-dev/data/dev_tables.json").read_text()):
        tables[db["db_id"]] = db["table_names_original"]
    return [(it["SQL"], tables[it["db_id"]]) for it in json.loads(path.read_text())]


@pytest.mark.parametrize(("engine", "dialect"), [("postgresql", "postgresql"), ("mysql", "mysql")])
def test_every_bird_mini_dev_gold_query_passes_on_its_engine(engine, dialect):
    """BIRD mini-dev's 500 PostgreSQL and 500 MySQL gold queries, each with its database's tables
    (bench/statement_check_corpus.py runs every gold and published prediction)."""
    refusals = [(sql, p) for sql, tables in _mini_dev(dialect) if (p := statement_problem(sql, engine, tables=tables))]
    assert refusals == []


def test_a_refusal_of_sql_sqlglot_cannot_parse_is_stored_and_printed_without_control_characters(tmp_path):
    """Issue 43: sqlglot underlines the token it cannot parse with ANSI escapes (ESC[4m ... ESC[0m);
    the refusal text, its stored form and its printed one line hold none of them."""
    from jury.errors import InputError, one_line
    from jury.execution.batches import encode_result
    from jury.inputs.records import ExecResult

    sql = "SELECT * FROM (SELECT 1"
    refusal = statement_problem(sql, "duckdb")
    assert refusal is not None and "jury can read" in refusal and refusal.endswith("(SELECT 1)")
    assert not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in refusal), refusal
    # whatever error an engine or an executor hands over, the stored error is printable
    raw = "Expecting ). Line 1, Col: 23.\n  SELECT * FROM (SELECT \x1b[4m1\x1b[0m\x00\x07"
    stored = encode_result(ExecResult(status="error", error=raw))[7]
    assert stored == "Expecting ). Line 1, Col: 23. SELECT * FROM (SELECT 1"
    assert one_line(InputError(raw)) == stored
    duckdb = pytest.importorskip("duckdb")
    from jury.execution.engines import execute

    duckdb.connect(str(tmp_path / "t.duckdb")).close()
    result = execute(f"duckdb:///{tmp_path}/t.duckdb", sql)
    assert result.status == "error" and "\x1b" not in (result.error or "")
    assert "\x1b" not in encode_result(result)[7]
