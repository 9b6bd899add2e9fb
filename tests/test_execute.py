import hashlib
import shutil

import pytest

from jury.execution.sqlite import execute, result_hash
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
