import hashlib
import os
import shutil
from pathlib import Path

import pytest

import jury.execution.rows
import jury.execution.sqlite
from jury.execution.rows import result_hash
from jury.execution.sqlite import execute
from tests.support.badinput import Case, check_case
from tests.support.helpers import EXAMPLE, make_db

SUPERHERO = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def superhero_copy(tmp_path):
    dst = tmp_path / "superhero.sqlite"
    shutil.copy(SUPERHERO, dst)
    return dst


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE superhero",
        "DELETE FROM superhero",
        "UPDATE superhero SET height_cm = 0",
        "INSERT INTO colour VALUES (9999, 'ultraviolet')",
        "ATTACH DATABASE 'other.db' AS other",
        "PRAGMA writable_schema=1",
        "PRAGMA journal_mode=WAL",
        "SELECT load_extension('mod_spatialite')",
        "CREATE TABLE t(x)",
        "CREATE TEMP VIEW v AS SELECT 1",
        "VACUUM",
    ],
)
def test_writes_are_refused_and_database_unchanged(superhero_copy, sql):
    before = digest(superhero_copy)
    result = execute(superhero_copy, sql)
    assert result.status == "error"
    assert result.error
    assert digest(superhero_copy) == before


def test_reading_pragmas_and_selects_still_work(superhero_copy):
    assert execute(superhero_copy, "PRAGMA table_info(superhero)").row_count > 5
    r = execute(superhero_copy, "SELECT count(*) FROM superhero")
    assert r.status == "ok" and r.rows == [(750,)]


def test_runaway_recursive_cte_times_out(superhero_copy):
    """A query that never ends is interrupted: the call returns (a non-interrupted query would
    never return) with status timeout, no rows, and the database usable afterwards."""
    before = digest(superhero_copy)
    r = execute(
        superhero_copy,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        timeout_s=1.0,
    )
    assert r.status == "timeout"
    assert r.rows == [] and r.row_count == 0
    assert execute(superhero_copy, "SELECT count(*) FROM superhero").rows == [(750,)]
    assert digest(superhero_copy) == before


def test_row_cap_keeps_count_and_full_hash(tmp_path):
    db = make_db(tmp_path)
    sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT x FROM c"
    capped = execute(db, sql, row_cap=100)
    full = execute(db, sql, row_cap=10_000)
    assert capped.truncated and not full.truncated
    assert capped.row_count == full.row_count == 5000
    assert len(capped.rows) == 100
    assert capped.result_sha256 == full.result_sha256 == result_hash(full.rows)


def test_result_hash_is_a_set_hash():
    assert result_hash([(1, "a"), (2, None)]) == result_hash([(2, None), (1, "a"), (1, "a")])
    assert result_hash([(1,)]) == result_hash([(1.0,)])
    assert result_hash([(1,)]) != result_hash([("1",)])


def test_multiple_statements_and_syntax_errors_are_errors(tmp_path):
    db = make_db(tmp_path)
    assert execute(db, "SELECT 1; SELECT 2").status == "error"
    assert "syntax error" in execute(db, "SELEC name FROM item").error
    assert execute(tmp_path / "absent.sqlite", "SELECT 1").status == "error"


@pytest.mark.parametrize("sql", ["", "   ", ";", "-- I cannot answer this", "/* nothing */"])
def test_sql_without_a_result_set_is_an_error_not_an_empty_result(tmp_path, sql):
    db = make_db(tmp_path)
    r = execute(db, sql)
    assert r.status == "error" and "not a query" in r.error


# ---------------------------------------------------------------- digests of every row, past the row cap


def test_execute_records_an_ordered_digest_of_every_row(tmp_path):
    db = make_db(tmp_path)
    up = execute(db, "SELECT name FROM item ORDER BY price", row_cap=1)
    down = execute(db, "SELECT name FROM item ORDER BY price DESC", row_cap=1)
    full = execute(db, "SELECT name FROM item ORDER BY price")
    assert up.truncated and up.result_sha256 == down.result_sha256
    assert up.ordered_sha256 != down.ordered_sha256
    ordered_hash = jury.execution.rows.ordered_hash
    assert up.ordered_sha256 == full.ordered_sha256 == ordered_hash(full.rows)
    assert ordered_hash([(1,), (1,)]) != ordered_hash([(1,)])
    assert ordered_hash([(1,)]) == ordered_hash([(1.0,)]) and result_hash([(1,)]) == result_hash([(1.0,)])


def test_set_digest_ignores_duplicates_exactly_across_the_spill_to_disk(tmp_path, monkeypatch):
    """Past SPILL_AT distinct rows the set digest moves to a temporary table on disk; it must
    equal the in-memory digest, with duplicates on both sides of a spill ignored."""
    monkeypatch.setattr(jury.execution.rows, "SPILL_AT", 7)
    sizes: list[int] = []
    real_add = jury.execution.rows.RowSetDigest.add

    def watched_add(self, digest):
        real_add(self, digest)
        sizes.append(len(self._mem))

    monkeypatch.setattr(jury.execution.rows.RowSetDigest, "add", watched_add)
    db = make_db(tmp_path)
    sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200) SELECT x % 60 FROM c ORDER BY random()"
    r = execute(db, sql, row_cap=5)
    assert r.status == "ok" and r.row_count == 200 and r.truncated
    assert r.result_sha256 == result_hash([(i,) for i in range(60)])
    assert max(sizes) < 7  # never more than SPILL_AT digests held in memory


def test_too_many_distinct_rows_is_an_error_of_that_query(tmp_path, monkeypatch):
    monkeypatch.setattr(jury.execution.rows, "SPILL_AT", 10)
    monkeypatch.setattr(jury.execution.rows, "MAX_DISTINCT_ROWS", 50)
    db = make_db(tmp_path)
    many = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100) SELECT x FROM c"
    r = execute(db, many, row_cap=5)
    assert r.status == "error" and "more than 50 distinct rows" in r.error
    repeated = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000) SELECT x % 40 FROM c"
    assert execute(db, repeated, row_cap=5).status == "ok"  # 1,000 rows, 40 distinct


@pytest.mark.slow
def test_a_runaway_query_of_distinct_rows_keeps_memory_bounded(tmp_path):
    """`WITH RECURSIVE` counting up forever streams distinct rows until the timeout; the set
    digest must not hold them all (main before the spill peaked at 3.4 GB; ~400 MB in 10 s here)."""
    import subprocess
    import sys

    db = make_db(tmp_path)
    script = (
        "import sys\n"
        "from jury.execution.sqlite import execute\n"
        "r = execute(sys.argv[1], 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c', timeout_s=8)\n"
        # VmHWM: this process's own peak RSS (ru_maxrss can carry a big parent's over fork and exec)
        "hwm = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
        "print(r.status, hwm)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(db)], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "timeout"
    assert int(out[1]) < 150 * 1024  # KiB: imports (~40 MB) plus the bounded digest set


# ---------------------------------------------------------------- unusable databases


def _overwrite(data: bytes):
    def setup(tmp: Path) -> None:
        (tmp / "dbs" / "shop" / "shop.sqlite").write_bytes(data)

    return setup


def _symlink_to_text(tmp: Path) -> None:
    (tmp / "notes.txt").write_text("this is a text file, not a database\n" * 50)
    db = tmp / "dbs" / "shop" / "shop.sqlite"
    db.unlink()
    os.symlink(tmp / "notes.txt", db)


def _garble_pages(tmp: Path) -> None:
    db = tmp / "dbs" / "shop" / "shop.sqlite"
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(page, len(data), page):  # every page but the first: random bytes
        data[start : start + page] = os.urandom(min(page, len(data) - start))
    db.write_bytes(bytes(data))


def _truncate(tmp: Path) -> None:
    db = tmp / "dbs" / "shop" / "shop.sqlite"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _bare_header(tmp: Path) -> None:
    db = tmp / "dbs" / "shop" / "shop.sqlite"
    db.write_bytes(db.read_bytes()[:100])


DB = "dbs/shop/shop.sqlite"


BAD_DATABASES = [
    Case("one-byte", ["score", "run.jsonl"], "shop.sqlite", _overwrite(b"x"), unchanged=[DB]),
    Case("empty", ["score", "run.jsonl"], "shop.sqlite", _overwrite(b""), unchanged=[DB]),
    Case("symlink-to-text", ["score", "run.jsonl"], "shop.sqlite", _symlink_to_text, unchanged=[DB]),
    Case("random-pages", ["score", "run.jsonl"], "shop.sqlite", _garble_pages, unchanged=[DB]),
    Case("truncated", ["score", "run.jsonl"], "shop.sqlite", _truncate, unchanged=[DB]),
    Case("bare-header", ["score", "run.jsonl"], "shop.sqlite", _bare_header, unchanged=[DB]),
    Case("adjudicate-plan", ["adjudicate", "run.jsonl", "--plan"], "shop.sqlite", _overwrite(b"x"), unchanged=[DB]),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_DATABASES, ids=[c.id for c in BAD_DATABASES])
def test_unusable_database_is_a_one_line_error(case, tmp_path):
    proc = check_case(case, tmp_path)
    assert "not a usable SQLite database" in proc.stderr


def test_healthy_database_is_not_modified_by_the_check(tmp_path):
    db = make_db(tmp_path)
    before = db.read_bytes(), db.stat().st_mtime_ns
    assert jury.execution.sqlite.check_database(db) is None
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert not Path(str(db) + "-wal").exists() and not Path(str(db) + "-journal").exists()


# ---------------------------------------------------------------- huge cells


def test_a_value_over_the_length_limit_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(jury.execution.sqlite, "MAX_VALUE_BYTES", 1000, raising=False)
    db = make_db(tmp_path)
    r = execute(db, "SELECT zeroblob(2000)")
    assert r.status == "error" and "too big" in r.error and "1,000 bytes" in r.error
    assert execute(db, "SELECT zeroblob(900)").status == "ok"


def test_a_result_over_the_byte_cap_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(jury.execution.rows, "MAX_RESULT_BYTES", 1500, raising=False)
    db = make_db(tmp_path)
    r = execute(db, "SELECT zeroblob(600) FROM item")  # 4 x 600 bytes
    assert r.status == "error" and "result too large" in r.error and r.rows == []
    assert execute(db, "SELECT zeroblob(300) FROM item").status == "ok"
    # Rows past the row cap are hashed, not kept: they do not count against the byte cap.
    assert execute(db, "SELECT zeroblob(600) FROM item", row_cap=2).status == "ok"


def test_a_failed_query_leaves_only_its_status_and_a_capped_error_in_the_store(project):
    """`jury score`: a failed query's error is stored on one line of at most 500 characters (the
    documented cap), and no column, row or digest of it is (issue #29: nothing a failed query
    returns reaches the store beyond its error class and a capped message)."""
    import json
    import sqlite3

    from typer.testing import CliRunner

    from jury.cli import app
    from jury.execution.batches import encode_result
    from jury.inputs.records import ExecResult

    long_name = "x" * 2000 + "TAIL"
    (project / "run.jsonl").write_text(
        json.dumps({"model": "m", "question_id": 1, "sql": f"SELECT {long_name} FROM item"}) + "\n"
    )
    res = CliRunner().invoke(app, ["score", "run.jsonl"])
    assert res.exit_code == 0, res.output
    db = sqlite3.connect(project / ".jury/store.db")
    [(status, columns, rows, error)] = db.execute(
        "SELECT status, columns, rows, error FROM executions WHERE sql LIKE ?", (f"%{long_name[:50]}%",)
    ).fetchall()
    db.close()
    assert status == "error" and json.loads(columns) == [] and "TAIL" not in error and len(error) <= 500
    assert error.startswith("no such column: xxx")
    # whatever an executor hands over for a failed query, only its status, error and time are stored
    leaky = ExecResult(
        status="timeout", columns=["secret"], rows=[("secret",)], row_count=1, error="e\n" * 400, result_sha256="a" * 64
    )
    stored = encode_result(leaky)
    assert stored[0] == "timeout" and stored[1] == "[]" and stored[3:7] == (0, 0, None, None)
    assert "secret" not in repr(stored) and len(stored[7]) <= 500 and "\n" not in stored[7]
