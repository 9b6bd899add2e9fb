"""Soft-F1 on PostgreSQL and MariaDB is mini-dev's script on the rows the driver returns (issue 42).

mini-dev's ``evaluation_f1.py`` compares the driver's own values with Python's ``==`` and ``in``
(``Decimal('31.2000') != 31.2``, ``date(2020, 1, 2) != '2020-01-02'``); jury's stored rows are
normalised, so `jury score --soft-f1` scores an engine's results on the driver's values
(jury.compare.soft_f1.RawRows). The servers come from `bash .ci/engines`.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.execution import engine_drivers, engine_urls, engines
from jury.execution.loader import load
from tests.support.enginetest import SUPERHERO, drop_database, reader_url, server_url
from tests.support.minidev_f1 import calculate_f1_score
from tests.test_engines import DRIVER_VALUES

runner = CliRunner()

# (gold, prediction) on the superhero database, the same text on both engines.
SUPERHERO_PAIRS = [
    ("SELECT AVG(weight_kg) FROM superhero", "SELECT SUM(weight_kg) * 1.0 / COUNT(weight_kg) FROM superhero"),
    (
        "SELECT AVG(height_cm) FROM superhero WHERE publisher_id = 4",
        "SELECT AVG(height_cm) FROM superhero WHERE publisher_id = 4",
    ),
    (
        "SELECT superhero_name, height_cm FROM superhero WHERE height_cm > 250 ORDER BY id",
        "SELECT superhero_name, height_cm FROM superhero WHERE height_cm > 240 ORDER BY superhero_name",
    ),
    (
        "SELECT publisher_id, AVG(weight_kg) FROM superhero GROUP BY publisher_id ORDER BY publisher_id",
        "SELECT publisher_id, CAST(AVG(weight_kg) AS DECIMAL(10, 2)) FROM superhero GROUP BY publisher_id ORDER BY publisher_id",
    ),
    (
        "SELECT COUNT(*), SUM(height_cm) FROM superhero WHERE gender_id = 2",
        "SELECT COUNT(*), SUM(height_cm) * 1.0 FROM superhero WHERE gender_id = 2",
    ),
]


def _driver_rows(url: str, sql: str) -> list[tuple] | None:
    """The rows of ``sql`` as mini-dev's script gets them: the admin URL's database, a plain
    driver connection, ``cursor.execute(sql); cursor.fetchall()``; None when it raises."""
    e = engine_drivers.engine_for(url)
    p = e.parts
    if e.name == engine_urls.POSTGRESQL:
        import psycopg

        conn = psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname=e.database)
    else:
        import pymysql

        password = os.environ.get(e.params["password_env"])
        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=password, database=e.database)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]
    except Exception:
        return None
    finally:
        conn.close()


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_soft_f1_is_minidevs_on_the_drivers_values(engine, project):
    prefix = f"jt_{uuid.uuid4().hex[:8]}_"
    url = server_url(engine, prefix + "superhero")
    load(SUPERHERO, url)
    pairs = [(f"SELECT {g}", f"SELECT {p}") for g, p, *_ in DRIVER_VALUES[engine]] + SUPERHERO_PAIRS
    gold = [{"question_id": i, "db_id": "superhero", "question": "q", "SQL": g} for i, (g, _) in enumerate(pairs)]
    runs = [{"model": "m", "question_id": i, "sql": p} for i, (_, p) in enumerate(pairs)]
    (project / "gold.json").write_text(json.dumps(gold))
    (project / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    try:
        reader = reader_url(url).replace(prefix + "superhero", prefix + "{db_id}")
        res = runner.invoke(app, ["score", "run.jsonl", "--db-url", reader, "--soft-f1", "--per-question", "pq.jsonl"])
        assert res.exit_code == 0, res.output
        got = {
            json.loads(line)["question_id"]: json.loads(line)["soft_f1"]
            for line in (project / "pq.jsonl").read_text().splitlines()
        }
        want = {}
        for i, (g, p) in enumerate(pairs):
            gold_rows, pred_rows = _driver_rows(url, g), _driver_rows(url, p)
            assert gold_rows is not None, g
            want[i] = 0.0 if pred_rows is None else calculate_f1_score(pred_rows, gold_rows)
        assert set(got) == set(want)
        for i in want:
            assert got[i] == pytest.approx(want[i], abs=1e-9), (i, pairs[i], got[i], want[i])
        # the normalised rows would score these 1: DECIMAL 31.2000 is not the float 31.2, nor a date its text
        assert want[0] == 0.0 and want[4] == 0.0
        assert want[2] == want[3] == 1.0
    finally:
        engines.close_connections()
        drop_database(url, prefix + "superhero")
