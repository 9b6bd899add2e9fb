"""Hostile SQL on PostgreSQL, MariaDB and DuckDB, through `jury score`, as the least-privilege
reader and as the admin (issue #29 items 4-6): the guarantee is the login's own privileges,
the statement check is the second line.

Each hostile query is one model's answer to a question of the superhero database. It runs

- as the reader with the statement check (what jury does), and as the reader with the check
  switched off (the privileges alone: no server file is read or written, no session signalled,
  no catalogue secret returned);
- as the admin (a superuser; ALL ... WITH GRANT OPTION), which jury refuses at connect in one
  line naming the privilege, and as the admin with --allow-privileged-login, where the check
  alone stands (and the outputs record the risk taken).

After each run: a full dump of the database (pg_dump / mysqldump) and of the server's roles,
the file tree under the server's data and secure-file folders, the other sessions a second
session sees in pg_stat_activity (or MariaDB's processlist), advisory/user locks, sequences
and the configuration's load time are as before, and no canary file's content (nor a password
hash) appears anywhere in the store's bytes or the outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.execution import engine_drivers, engines
from jury.execution.engine_urls import with_params
from jury.execution.loader import load
from tests.support.enginetest import ROOT, SUPERHERO, drop_database, reader_url, server_url

runner = CliRunner()
pytestmark = pytest.mark.engine
GOLD_SQL = "SELECT COUNT(*) FROM colour"
PG_BIN = Path(max((str(p) for p in Path("/usr/lib/postgresql").glob("*/bin")), default="/nonexistent"))
# files a server changes by itself (write-ahead log, statistics, transaction status, temp files)
PG_VOLATILE = ("pg_wal", "pg_stat", "pg_stat_tmp", "pg_xact", "pg_subtrans", "pg_multixact", "pg_logical", "pg_notify")
PG_VOLATILE += ("pg_snapshots", "pg_replslot", "pgsql_tmp", "postmaster.pid", "postmaster.opts", "pg_internal.init")
PG_VOLATILE_FORKS = ("_fsm", "_vm")  # free-space and visibility maps autovacuum adds to a table
MY_VOLATILE = ("ib_logfile", "ibtmp", "ib_buffer_pool", "aria_log", "ddl_recovery", "#sql", "undo", "#innodb_temp", ".err")


def _hostile(engine: str, c: dict) -> list[str]:
    """The hostile list: the issue's spellings, then others it did not list."""
    if engine == "postgresql":
        return [
            f"SELECT \"pg_read_file\"('{c['file']}')",
            f"SELECT U&\"pg_read_fil\\0065\"('{c['file']}')",
            f"SELECT pg_catalog.\"pg_read_file\"('{c['file']}')",
            f'SELECT "pg_terminate_backend"({c["victim"]})',
            'SELECT "pg_reload_conf"()',
            f"SELECT \"lo_import\"('{c['file']}')",
            "SELECT \"pg_ls_dir\"('.')",
            "SELECT \"pg_stat_file\"('jury_canary.txt')",
            "SELECT \"set_config\"('statement_timeout', '0', false)",
            "SELECT pg_try_advisory_lock(4242)",
            "SELECT rolname, rolpassword FROM pg_authid",
            "SELECT * FROM pg_hba_file_rules",
            # not in the issue
            f"SELECT \"PG_READ_FILE\"('{c['file']}')",
            f"SELECT PG_READ_FILE('{c['tmp_file']}')",
            "SELECT pg_read_file('jury_canary.txt')",
            f"SELECT * FROM pg_read_file('{c['tmp_file']}')",
            f"SELECT pg_catalog . /* a comment */ pg_read_file('{c['tmp_file']}')",
            "SELECT * FROM colour, LATERAL pg_ls_dir('.') AS f",
            f"SELECT convert_from(pg_read_binary_file('{c['file']}'), 'UTF8')",
            "TABLE pg_authid",
            'SELECT rolpassword FROM "pg_authid"',
            "SELECT rolpassword FROM pg_catalog.pg_authid",
            "WITH pg_authid AS (SELECT * FROM pg_authid) SELECT * FROM pg_authid",
            "SELECT current_setting('data_directory')",
            "SELECT 'pg_read_file'::regproc",
            f"SELECT CAST(pg_read_file('{c['file']}') AS integer)",  # the content in an error message
            f"SELECT pg_cancel_backend({c['victim']})",
            "SELECT pg_advisory_lock(4243)",
            'SELECT "pg_try_advisory_lock_shared"(4244)',
            "SELECT pg_catalog.pg_advisory_lock(4245)",
            "SELECT * FROM pg_try_advisory_lock(4246)",
            "SELECT nextval('jury_seq')",
            f"SELECT lo_export(lo_import('{c['file']}'), '{c['out']}1')",
            f"COPY colour TO '{c['out']}2'",
            f"COPY (SELECT 1) TO PROGRAM 'touch {c['out']}3'",
            "EXPLAIN ANALYZE DELETE FROM colour",
            "DO $$ BEGIN PERFORM pg_sleep(0); END $$",
            "SELECT * INTO jury_new FROM colour",
            "SELECT * FROM colour FOR UPDATE",
            "SELECT 1; SELECT pg_read_file('jury_canary.txt')",
        ]
    if engine == "mysql":
        return [
            f"SELECT 1 /*! INTO OUTFILE '{c['out']}1' */",
            f"SELECT 1 /*M! INTO OUTFILE '{c['out']}2' */",
            f"SELECT 1 /*!, LOAD_FILE('{c['file']}') */",
            f"SELECT 1 /*!50000 , LOAD_FILE('{c['file']}') */",
            f"SELECT `load_file`('{c['file']}')",
            "SELECT `GET_LOCK`('jury', 0)",
            "SELECT 1 /*!, GET_LOCK('jury', 0) */",
            "SELECT User, authentication_string FROM mysql.user",
            "SELECT @@datadir",
            # not in the issue
            "SELECT 1 /*!*/",
            f"SELECT 1 --/*! , LOAD_FILE('{c['file']}') */",
            f"SELECT 1 /* /* */, LOAD_FILE('{c['file']}') -- */",
            f"SELECT {{fn LOAD_FILE('{c['file']}')}}",
            f"SELECT LOAD_FILE(0x{c['file'].encode().hex()})",
            f"SELECT `LOAD_FILE` ('{c['file']}')",
            f"SELECT * FROM colour INTO OUTFILE '{c['out']}3'",
            f"SELECT 1 INTO DUMPFILE '{c['out']}4'",
            "SELECT 1 INTO @jury",
            "SELECT @@global.secure_file_priv",
            "SELECT * FROM information_schema.processlist",
            "SELECT * FROM `mysql`.`global_priv`",
            "SELECT IS_FREE_LOCK('jury'), RELEASE_ALL_LOCKS()",
            "SELECT get_lock('jury', 0) FROM DUAL",
            "SELECT NEXTVAL(jury_seq)",
            "SELECT NEXT VALUE FOR jury_seq",
            "SELECT /*+ MAX_EXECUTION_TIME(0) */ 1",
            "HANDLER colour OPEN",
            f"KILL {c['victim']}",
            "SELECT * FROM colour FOR UPDATE",
            "SELECT 1; SELECT @@datadir",
        ]
    return [
        f"SELECT * FROM read_csv('{c['file']}')",
        f"SELECT * FROM read_text('{c['file']}')",
        f"SELECT * FROM '{c['file']}'",
        "SELECT getenv('HOME')",
        f"SELECT * FROM glob('{c['dir']}/*')",
        f"ATTACH '{c['out']}1.db'",
        f"COPY colour TO '{c['out']}2.csv'",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "SELECT * FROM duckdb_settings()",
        "PRAGMA database_list",
        f"SELECT * FROM READ_CSV_AUTO('{c['file']}')",
        f"SELECT * FROM sqlite_scan('{c['out']}3.db', 'x')",
        f"SELECT * FROM query('SELECT * FROM read_text(''{c['file']}'')')",
    ]


# --- the servers, the database, the canaries and the state ----------------------------------------------


class Server:
    """One engine's database loaded by the admin, the canary files and a second session."""

    def __init__(self, engine: str, tmp: Path) -> None:
        self.engine, self.tmp, self.token = engine, tmp, f"JURYCANARY{uuid.uuid4().hex}"
        self.name = f"js_{uuid.uuid4().hex[:8]}_superhero"
        if engine == "duckdb":
            pytest.importorskip("duckdb")
            self.admin = f"duckdb:///{tmp}/db/{self.name}.duckdb"
        else:
            self.admin = server_url(engine, self.name)
        load(SUPERHERO, self.admin)
        self.reader = reader_url(self.admin)
        self.paths: list[Path] = []
        if engine == "postgresql":
            self._pg_setup()
        elif engine == "mysql":
            self._my_setup()
        else:
            self.dir = Path(engine_drivers.engine_for(self.admin).path).parent
            self.canary = self._canary(self.dir / "jury_canary.csv")
            self.out = str(tmp / "out" / "jury-pwned-")
            (tmp / "out").mkdir()

    def _canary(self, path: Path) -> Path:
        path.write_text(f"{self.token}\n")
        path.chmod(0o644)
        self.paths.append(path)
        return path

    # PostgreSQL
    def _pg(self, dbname: str | None = None):
        import psycopg

        p = engine_drivers.engine_for(self.admin).parts
        return psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname=dbname or self.name, autocommit=True)

    def _pg_setup(self) -> None:
        with self._pg() as c:
            self.data_dir = Path(c.execute("SHOW data_directory").fetchone()[0])
            c.execute("CREATE SEQUENCE jury_seq")
        self.canary = self._canary(self.data_dir / "jury_canary.txt")
        self.tmp_canary = self._canary(Path(f"/tmp/jury-canary-{uuid.uuid4().hex}.txt"))
        self.out = f"/tmp/jury-pwned-{uuid.uuid4().hex}-"
        self.victim = self._pg()  # a second session: it watches the others (and must itself live on)
        self.bystander = self._pg()  # a third, which hostile SQL tries to end
        self.victim_pid = self.bystander.execute("SELECT pg_backend_pid()").fetchone()[0]

    # MariaDB
    def _my(self, database: str | None = None):
        import pymysql

        e = engine_drivers.engine_for(self.admin)
        p = e.parts
        password = os.environ.get(e.params.get("password_env", "MYSQL_PWD"))
        return pymysql.connect(
            host=p.hostname, port=p.port, user=p.username, password=password, database=database or self.name, autocommit=True
        )

    def _my_query(self, conn, sql: str) -> list[tuple]:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def _my_setup(self) -> None:
        self.victim = self._my()  # a second session: it watches the others (and must itself live on)
        self.bystander = self._my()  # a third, which hostile SQL tries to end
        self.data_dir = Path(self._my_query(self.victim, "SELECT @@datadir")[0][0])
        self.files_dir = Path(self._my_query(self.victim, "SELECT @@secure_file_priv")[0][0])
        self._my_query(self.victim, "CREATE SEQUENCE jury_seq")
        self.canary = self._canary(self.files_dir / f"jury_canary_{uuid.uuid4().hex[:6]}.txt")
        self.out = str(self.files_dir / f"jury-pwned-{uuid.uuid4().hex[:6]}-")
        self.victim_pid = self.bystander.thread_id()

    def context(self) -> dict:
        if self.engine == "postgresql":
            return {"file": str(self.canary), "tmp_file": str(self.tmp_canary), "victim": self.victim_pid, "out": self.out}
        if self.engine == "mysql":
            return {"file": str(self.canary), "victim": self.victim_pid, "out": self.out}
        return {"file": str(self.canary), "dir": str(self.dir), "out": self.out}

    def secrets(self) -> list[bytes]:
        """What must never reach the store: the canary, the password hashes, /etc/passwd's first line."""
        out = [self.token.encode(), b"root:x:0:0"]
        if self.engine == "postgresql":
            with self._pg() as c:
                out += [r[0].encode() for r in c.execute("SELECT rolpassword FROM pg_authid WHERE rolpassword IS NOT NULL")]
            out.append(b"SCRAM-SHA-256$")
        elif self.engine == "mysql":
            rows = self._my_query(self.victim, "SELECT authentication_string FROM mysql.user WHERE authentication_string <> ''")
            out += [str(r[0]).encode() for r in rows]
        return out

    def state(self) -> dict:
        """Everything hostile SQL must leave as it was."""
        if self.engine == "postgresql":
            env = {**os.environ, "PGPASSWORD": os.environ.get("PGPASSWORD", "")}
            p = engine_drivers.engine_for(self.admin).parts
            common = ["-h", str(p.hostname), "-p", str(p.port), "-U", str(p.username)]
            dump = subprocess.run([PG_BIN / "pg_dump", *common, "-d", self.name], env=env, capture_output=True, check=True).stdout
            roles = subprocess.run(
                [PG_BIN / "pg_dumpall", *common, "--globals-only"], env=env, capture_output=True, check=True
            ).stdout
            # the second session: alive, and sees the other sessions as before (jury's own and the
            # dumps' come and go, and a closed one may linger for a moment)
            watch = self.victim.execute(
                "SELECT pid, usename, application_name FROM pg_stat_activity WHERE backend_type = 'client backend' "
                "AND pid <> pg_backend_pid() AND application_name NOT IN ('jury', 'pg_dump', 'pg_dumpall') ORDER BY pid"
            ).fetchall()
            return {
                "dump": _digest(dump),
                "roles": _digest(roles),
                "files": _tree(self.data_dir, PG_VOLATILE),
                "sessions": watch,
                "locks": self.victim.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone(),
                "sequence": self.victim.execute("SELECT last_value, is_called FROM jury_seq").fetchone(),
                "config_loaded": self.victim.execute("SELECT pg_conf_load_time()").fetchone(),
                "large_objects": self.victim.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone(),
                "pwned": sorted(str(p) for p in Path("/tmp").glob(Path(self.out).name + "*")),
            }
        if self.engine == "mysql":
            e = engine_drivers.engine_for(self.admin)
            p = e.parts
            password = os.environ.get(e.params.get("password_env", "MYSQL_PWD"), "")
            dump = subprocess.run(
                ["mysqldump", "--no-defaults", "-h", str(p.hostname), "-P", str(p.port), "-u", str(p.username),
                 f"-p{password}", "--skip-dump-date", "--databases", self.name],
                capture_output=True, check=True,
            ).stdout  # fmt: skip
            privileges = subprocess.run(
                ["mysqldump", "--no-defaults", "-h", str(p.hostname), "-P", str(p.port), "-u", str(p.username),
                 f"-p{password}", "--skip-dump-date", "mysql", "global_priv", "db", "tables_priv", "columns_priv",
                 "procs_priv", "proxies_priv", "roles_mapping"],
                capture_output=True, check=True,
            ).stdout  # fmt: skip
            return {
                "dump": hashlib.sha256(dump).hexdigest(),
                "privileges": hashlib.sha256(privileges).hexdigest(),
                "files": _tree(self.data_dir, MY_VOLATILE),
                "secure_files": _tree(self.files_dir, (), contents=True),
                "sessions": self._my_query(  # the second session: alive, and sees the third as before
                    self.victim, f"SELECT id, user FROM information_schema.processlist WHERE id = {self.victim_pid}"
                ),
                "locks": self._my_query(self.victim, "SELECT IS_USED_LOCK('jury')"),
                "sequence": self._my_query(self.victim, "SELECT next_not_cached_value FROM jury_seq"),
            }
        path = Path(engine_drivers.engine_for(self.admin).path)
        return {"file": hashlib.sha256(path.read_bytes()).hexdigest(), "files": _tree(self.dir, (), contents=True),
                "out": _tree(self.tmp / "out", (), contents=True)}  # fmt: skip

    def close(self) -> None:
        engines.close_connections()
        if self.engine != "duckdb":
            self.victim.close()
            self.bystander.close()
        for path in self.paths:
            path.unlink(missing_ok=True)
        for stray in Path("/tmp").glob("jury-pwned-*"):
            stray.unlink(missing_ok=True)
        if self.engine != "duckdb":
            drop_database(self.admin, self.name)


def _digest(dump: bytes) -> str:
    """sha256 of a pg_dump text without its per-run \\restrict key (pg_dump 15.14+ writes a random one)."""
    lines = [line for line in dump.splitlines() if not line.startswith((b"\\restrict ", b"\\unrestrict "))]
    return hashlib.sha256(b"\n".join(lines)).hexdigest()


def _tree(root: Path, volatile: tuple[str, ...], *, contents: bool = False) -> list:
    """Every path under ``root`` (and, with ``contents``, each file's sha256), the server's own
    ever-changing files left out."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if volatile and (any(part.startswith(volatile) for part in rel.split("/")) or rel.endswith(PG_VOLATILE_FORKS)):
            continue
        out.append((rel, hashlib.sha256(path.read_bytes()).hexdigest() if contents and path.is_file() else None))
    return out


@pytest.fixture(params=["postgresql", "mysql", "duckdb"])
def server(request, tmp_path, monkeypatch):
    if request.param == "postgresql" and not (PG_BIN / "pg_dump").exists():
        pytest.skip("pg_dump is not installed")
    if request.param == "mysql" and shutil.which("mysqldump") is None:
        pytest.skip("mysqldump is not installed")
    s = Server(request.param, tmp_path)
    monkeypatch.chdir(tmp_path)
    hostile = _hostile(request.param, s.context())
    gold = [
        {"question_id": i, "db_id": "superhero", "question": "q", "evidence": "", "SQL": GOLD_SQL} for i in range(len(hostile))
    ]
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    runs = [{"model": "hostile", "question_id": i, "sql": sql} for i, sql in enumerate(hostile)]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\nworkers = 1\n')
    s.hostile = hostile
    yield s
    s.close()


def _score(server: Server, url: str, store: str, *extra: str):
    template = url.replace(server.name, server.name.removesuffix("superhero") + "{db_id}")
    args = ["score", "run.jsonl", "--db-url", template, "--store", store, "--per-question", f"{store}.pq.jsonl"]
    return runner.invoke(app, [*args, "--format", "json", "-o", f"{store}.json", *extra])


def _assert_nothing_leaked(server: Server, store: str, secrets: list[bytes], ran: frozenset[str] = frozenset()) -> None:
    """No secret in any byte of the store or the outputs, and of every hostile query (but those
    in ``ran``) only its status and a capped error stored: no row."""
    blobs = [p.read_bytes() for p in Path(".").glob(f"{store}*") if p.is_file()]
    assert blobs, "the run wrote no store"
    for secret in secrets:  # as they are, and base64-encoded as the store keeps bytes ({"$bytes": ...})
        for form in [secret, *_base64_forms(secret)]:
            assert not any(form in blob for blob in blobs), f"{secret[:24]!r} reached the store or an output"
    db = sqlite3.connect(store)
    rows = db.execute("SELECT sql, status, rows, error FROM executions").fetchall()
    db.close()
    for sql, status, stored_rows, error in rows:
        if sql == GOLD_SQL:
            assert status == "ok"
            continue
        assert status != "ok" or sql in ran, (sql, status, stored_rows)
        if status != "ok":
            assert json.loads(stored_rows or "[]") == [] and len(error or "") <= 500


def _same(after: dict, before: dict) -> None:
    for key in before:
        assert after[key] == before[key], f"{key} changed"


def _base64_forms(secret: bytes) -> list[bytes]:
    """The part of ``secret``'s base64 that is the same wherever it starts in a value (the three
    alignments; the first and last groups, which depend on the bytes around it, left out)."""
    import base64

    forms = []
    for k in range(3):
        text = base64.b64encode(b"\0" * k + secret)
        forms.append(text[4 if k else 0 : -4])
    return [f for f in forms if len(f) >= 16]


def _outcomes(store: str) -> list[str]:
    return [json.loads(line)["outcome"] for line in Path(f"{store}.pq.jsonl").read_text().splitlines()]


def test_hostile_sql_as_the_reader_is_refused_and_changes_nothing(server):
    before, secrets = server.state(), server.secrets()
    res = _score(server, server.reader, "reader.db")
    assert res.exit_code == 0, res.output
    assert _outcomes("reader.db") == ["error"] * len(server.hostile)
    _same(server.state(), before)
    _assert_nothing_leaked(server, "reader.db", secrets)
    assert "privileged_logins" not in json.loads(Path("reader.db.json").read_text())["provenance"]


def test_the_readers_privileges_alone_hold_without_the_statement_check(server, monkeypatch):
    monkeypatch.setattr(engines, "statement_problem", lambda sql, engine, **options: None)
    before, secrets = server.state(), server.secrets()
    res = _score(server, server.reader, "bare.db")
    assert res.exit_code == 0, res.output
    allowed = {sql for sql, o in zip(server.hostile, _outcomes("bare.db"), strict=True) if o != "error"}
    # what the reader may still run with the check off returns nothing of the server's files or
    # secrets: LOAD_FILE is NULL without FILE, set_config is undone by the rollback, a lock ends
    # with the session; a server variable (@@datadir) is readable by any login, which is why the
    # check refuses every @@ name
    harmless = {
        "postgresql": {"SELECT \"set_config\"('statement_timeout', '0', false)", "SELECT 'pg_read_file'::regproc"}
                      | {sql for sql in server.hostile if "advisory_lock" in sql},
        "mysql": {"SELECT 1 /*!*/", "SELECT /*+ MAX_EXECUTION_TIME(0) */ 1", "SELECT @@datadir",
                  "SELECT @@global.secure_file_priv", "SELECT * FROM information_schema.processlist"}
                 | {sql for sql in server.hostile if "LOAD_FILE" in sql.upper() or "LOCK" in sql.upper()},
        "duckdb": {"SELECT * FROM duckdb_settings()", "PRAGMA database_list"},
    }[server.engine]  # fmt: skip
    assert allowed <= harmless, allowed - harmless
    _same(server.state(), before)  # a session's advisory or user lock ended with the session (see below)
    _assert_nothing_leaked(server, "bare.db", secrets, frozenset(allowed))


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_the_admin_login_is_refused_at_connect_in_one_line(engine, tmp_path, monkeypatch):
    s = Server(engine, tmp_path)
    try:
        monkeypatch.chdir(tmp_path)
        (tmp_path / "gold.json").write_text(
            json.dumps([{"question_id": 1, "db_id": "superhero", "question": "q", "evidence": "", "SQL": GOLD_SQL}])
        )
        (tmp_path / "run.jsonl").write_text(json.dumps({"model": "m", "question_id": 1, "sql": GOLD_SQL}) + "\n")
        (tmp_path / "jury.toml").write_text('gold = "gold.json"\nworkers = 1\n')
        res = _score(s, s.admin, "admin.db")
        assert res.exit_code == 1
        [line] = res.output.strip().splitlines()
        want = "is a superuser" if engine == "postgresql" else "has the global privilege ALL PRIVILEGES (on *.*)"
        assert want in line and "GRANT SELECT" in line and "--allow-privileged-login" in line, line
        assert (
            not Path("admin.db").exists()
            or not sqlite3.connect("admin.db").execute("SELECT COUNT(*) FROM executions").fetchone()[0]
        )
    finally:
        s.close()


def test_hostile_sql_as_an_allowed_admin_meets_the_statement_check_and_is_recorded(server):
    if server.engine == "duckdb":
        pytest.skip("DuckDB has no logins")
    before, secrets = server.state(), server.secrets()
    res = _score(server, server.admin, "admin.db", "--allow-privileged-login")
    assert res.exit_code == 0, res.output
    assert _outcomes("admin.db") == ["error"] * len(server.hostile)
    _same(server.state(), before)
    _assert_nothing_leaked(server, "admin.db", secrets)
    recorded = json.loads(Path("admin.db.json").read_text())["provenance"]["privileged_logins"]
    assert recorded == [server.admin.split("?")[0]]
    # the other outputs that execute record it too: check-gold's JSON and report's JSON
    template = server.admin.replace(server.name, server.name.removesuffix("superhero") + "{db_id}")
    for args in (
        ["check-gold", "--db-url", template, "--passes", "1", "-f", "json", "-o", "cg.json"],
        ["report", "run.jsonl", "--db-url", template, "--store", "admin.db", "-f", "json", "-o", "report.json"],
    ):
        res = runner.invoke(app, [*args, "--allow-privileged-login"])
        assert res.exit_code == 0, res.output
        out = Path(args[args.index("-o") + 1])
        assert json.loads(out.read_text())["provenance"]["privileged_logins"] == [server.admin.split("?")[0]]


@pytest.mark.parametrize("login", ["reader", "admin"])
def test_no_lock_is_taken_while_the_session_lives(server, login):
    """Advisory and user locks last as long as the session: checked with jury's kept connection open."""
    if server.engine == "duckdb":
        pytest.skip("DuckDB has no sessions to lock across")
    url = server.reader if login == "reader" else with_params(server.admin, {"allow_privileged_login": "true"})
    spellings = [s for s in server.hostile if "lock" in s.lower()]
    assert len(spellings) >= 3
    for sql in spellings:
        assert engines.execute(url, sql, cached=True).status == "error", sql
    if server.engine == "postgresql":
        assert server.victim.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone() == (0,)
    else:
        assert server._my_query(server.victim, "SELECT IS_USED_LOCK('jury')") == [(None,)]
    engines.close_connections()


# --- the allow-list against the engines themselves ------------------------------------------------------

# names the engines parse as syntax rather than as a function in their catalogue
_PG_SYNTAX = {"coalesce", "nullif", "greatest", "least", "array", "trim"}
# volatile, yet a function of nothing outside the query: the clock, a random number, a sleep
_PG_VOLATILE_OK = {"random", "clock_timestamp", "pg_sleep", "now", "statement_timestamp", "transaction_timestamp"}


def test_every_postgresql_function_allowed_exists_is_not_volatile_and_needs_no_privilege(tmp_path):
    """pg_proc is the independent source: each allowed name is a function the reader may execute
    (every overload), and none is volatile but the clock, random() and pg_sleep()."""
    from jury.execution.sql_allowlist import FUNCTIONS

    s = Server("postgresql", tmp_path)
    try:
        with s._pg() as c:
            rows = c.execute(
                "SELECT proname, provolatile, has_function_privilege('jury_reader', oid, 'EXECUTE') FROM pg_proc"
                " WHERE proname = ANY(%s)",
                (sorted(FUNCTIONS["postgresql"]),),
            ).fetchall()
    finally:
        s.close()
    found = {r[0] for r in rows}
    assert sorted(FUNCTIONS["postgresql"] - found - _PG_SYNTAX) == []
    assert sorted({r[0] for r in rows if not r[2]}) == []  # every overload executable by the reader
    assert sorted({r[0] for r in rows if r[1] == "v"} - _PG_VOLATILE_OK) == []


def test_every_mysql_and_duckdb_function_allowed_exists(tmp_path):
    """The servers are the independent source: calling each allowed name with no argument is a
    wrong-argument or syntax error, never "does not exist"."""
    import duckdb
    import pymysql

    from jury.execution.sql_allowlist import FUNCTIONS

    s = Server("mysql", tmp_path)
    missing = []
    try:
        e = engine_drivers.engine_for(s.reader)
        p = e.parts
        conn = pymysql.connect(
            host=p.hostname, port=p.port, user=p.username, password=os.environ[e.params["password_env"]], database=s.name
        )
        with conn.cursor() as cur:
            for name in sorted(FUNCTIONS["mysql"]):
                try:
                    cur.execute(f"SELECT {name}()")
                    cur.fetchall()
                except pymysql.Error as exc:
                    if exc.args[0] in (1305, 1630):  # FUNCTION ... does not exist
                        missing.append(("mysql", name))
        conn.close()
    finally:
        s.close()
    duck = duckdb.connect()
    for name in sorted(FUNCTIONS["duckdb"]):
        try:
            duck.execute(f"SELECT {name}()").fetchall()
        except duckdb.Error as exc:
            if "does not exist" in str(exc) and "with name" in str(exc):
                missing.append(("duckdb", name))
    assert missing == []


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_no_bird_query_the_engine_accepts_is_refused(engine):
    """Every mini-dev gold query and published prediction written for the engine that the check
    refuses is handed to the engine itself (EXPLAIN, as a reader, on empty copies of the 11
    databases): the engine refuses it too -- a syntax error, or a function, table or column it
    does not have -- or it is more than one statement, which jury never runs (one query per
    answer). bench/statement_check_corpus.py prints the counts for every BIRD file."""
    from bench.statement_check_corpus import Server as EmptyCopies
    from bench.statement_check_corpus import corpus, schemas
    from jury.execution.statement_check import statement_problem

    data = ROOT.parent / "shared/data/bird"
    if not (data / "mini-dev").is_dir():
        pytest.skip(f"{data} is not here (the shared BIRD data)")
    url = server_url(engine, "postgres" if engine == "postgresql" else "mysql")
    tables = schemas(data)
    refused = {}
    for name, dialect, sql, db in corpus(data):
        if dialect == engine and name.startswith("mini-dev") and (sql, db) not in refused:
            problem = statement_problem(sql, engine, tables=[t for t, _ in tables[db]])
            if problem is not None:
                refused[(sql, db)] = problem
    copies = EmptyCopies(engine, url, tables)
    try:
        accepted = [(sql, p) for (sql, db), p in refused.items() if copies.verdict(db, sql) == "accepted"]
    finally:
        copies.close()
    assert len(refused) > 100  # the published predictions hold many broken queries
    assert [(sql, p) for sql, p in accepted if not p.startswith("refused: more than one statement")] == []
