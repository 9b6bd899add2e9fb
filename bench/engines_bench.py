"""Engines: BIRD mini-dev's superhero questions on SQLite, PostgreSQL, MariaDB and DuckDB.

1. Gold parity: the SQLite gold on SQLite, the PostgreSQL gold on PostgreSQL and the MySQL
   gold on MariaDB (and the SQLite gold on DuckDB), compared under jury's ``bird``
   comparator question by question; every difference is listed with both results.
2. The published mini-dev predictions (sql_output_kg) for PostgreSQL and MySQL, imported
   with ``jury import bird-predictions`` against the engine's own gold file and scored with
   jury (``--db-url``) on that engine, side by side with BIRD's rule computed independently
   on the same engine (the raw driver, ``fetchall``, ``set(pred) == set(gold)``, as BIRD's
   evaluation_ex.py does, with its 30 s timeout).

Needs the servers of ``bash .ci/engines`` (JURY_TEST_PG_URL, JURY_TEST_MYSQL_URL) or
--pg-url / --mysql-url (a database URL on the server, the admin's; the superhero database is
loaded next to it under a fresh name and dropped afterwards), the least-privilege reader jury
executes through (JURY_TEST_PG_READER_URL, JURY_TEST_MYSQL_READER_URL or --pg-reader-url /
--mysql-reader-url), and the mini-dev files:

    bash .ci/engines python bench/engines_bench.py --data ../shared/data/bird/mini-dev
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from jury.compare import comparators as compare
from jury.compare.outcomes import Settings, evaluate
from jury.execution import engines
from jury.execution.engines import DatabaseURLs
from jury.execution.loader import load
from jury.execution.sqlite import execute as sqlite_execute
from jury.execution.store import Store
from jury.inputs.importers import import_bird_predictions
from jury.inputs.io import load_gold, load_gold_list

DB = "superhero"
ROOT = Path(__file__).resolve().parent.parent
SQLITE_FILE = ROOT / "examples/bird-superhero/databases/superhero/superhero.sqlite"


def _with_db(url: str, name: str) -> str:
    head, _, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{query}" if query else "")


def _drop(url: str, name: str) -> None:
    engine = engines.engine_of(url)
    if engine == engines.POSTGRESQL:
        import psycopg

        p = engines.engine_for(url).parts
        with psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    elif engine == engines.MYSQL:
        conn = _raw_connect(url)
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()


def _raw_connect(url: str):
    """A plain driver connection, as BIRD's script opens one (no jury code on the path)."""
    e = engines.engine_for(url)
    p = e.parts
    if e.name == engines.POSTGRESQL:
        import psycopg

        password = os.environ.get(e.params["password_env"]) if e.params.get("password_env") else None
        extra = {"password": password} if password else {}
        return psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname=p.path.lstrip("/"), autocommit=True, **extra)
    import pymysql

    password = os.environ.get(e.params.get("password_env", "MYSQL_PWD"), "")
    return pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=password, database=p.path.lstrip("/") or None)


def _as_sqlite(row: tuple) -> tuple:
    """Decimal as the float SQLite would return (written here, not jury's normalise)."""
    return tuple(float(v) if isinstance(v, Decimal) else v for v in row)


def bird_rule(url: str, gold_sql: str, pred_sql: str, timeout_s: float = 30.0) -> tuple[bool, bool]:
    """BIRD's evaluation_ex.py on a server: both queries fetched whole, then set equality
    (an error or a timeout counts as wrong): (on the driver's values, on those values with
    Decimal as float, as SQLite returns them)."""
    conn = _raw_connect(url)
    try:
        engine = engines.engine_of(url)
        with conn.cursor() as cur:
            if engine == engines.POSTGRESQL:
                cur.execute(f"SET statement_timeout = {int(timeout_s * 1000)}")
            else:
                cur.execute(f"SET SESSION max_statement_time = {timeout_s}")
            try:
                cur.execute(pred_sql)
                pred = cur.fetchall()
                cur.execute(gold_sql)
                gold = cur.fetchall()
            except Exception:
                return False, False
        return set(pred) == set(gold), {_as_sqlite(r) for r in pred} == {_as_sqlite(r) for r in gold}
    finally:
        if engines.engine_of(url) == engines.POSTGRESQL:
            conn.rollback()
        conn.close()


def gold_parity(data: Path, urls: dict[str, str]) -> list[str]:
    lines = []
    sqlite_gold = {g.question_id: g for g in load_gold(data / "mini_dev_sqlite.json").values() if g.db_id == DB}
    golds = {
        "postgresql": load_gold(data / "mini_dev_postgresql.json"),
        "mysql": load_gold(data / "mini_dev_mysql.json"),
        "duckdb": load_gold(data / "mini_dev_sqlite.json"),
    }
    bird = compare.get_comparator("bird")
    base = {q: sqlite_execute(SQLITE_FILE, g.sql) for q, g in sqlite_gold.items()}
    lines.append(f"## Gold parity: {len(sqlite_gold)} superhero questions, the bird comparator against SQLite\n")
    lines.append("| engine (gold file) | same result | differ | fail |")
    lines.append("| --- | ---: | ---: | ---: |")
    detail = []
    for engine, url in urls.items():
        same = differ = fail = 0
        for q in sqlite_gold:
            other = engines.execute(url, golds[engine][q].sql)
            if not other.ok:
                fail += 1
                detail.append(f"- {engine} q{q}: {other.status}: {other.error}")
                continue
            if bird(base[q].rows, other.rows):
                same += 1
            else:
                differ += 1
                detail.append(f"- {engine} q{q}: SQLite {base[q].rows[:3]} vs {engine} {other.rows[:3]}")
        label = {"duckdb": "DuckDB (SQLite gold)", "postgresql": "PostgreSQL", "mysql": "MariaDB (MySQL gold)"}[engine]
        lines.append(f"| {label} | {same} | {differ} | {fail} |")
    return lines + ([""] + detail if detail else [])


def predictions(data: Path, preds: Path, urls: dict[str, str], store_dir: Path) -> list[str]:
    lines = ["", "## Published predictions (sql_output_kg), superhero questions: jury bird vs BIRD's rule\n"]
    lines.append("| engine | model | questions | jury bird | BIRD rule, Decimal as float | equal | BIRD rule, driver values |")
    lines.append("| --- | --- | ---: | ---: | ---: | :---: | ---: |")
    notes: list[str] = []
    for engine, url in urls.items():
        if engine == "duckdb":
            continue
        gold_file = data / f"mini_dev_{engine}.json"
        gold = load_gold(gold_file)
        gold_list = load_gold_list(gold_file)
        store = Store(store_dir / f"{engine}.db")
        for path in sorted(preds.glob(f"predict_mini_dev_*_{engine}*.json")):
            model = path.name[len("predict_mini_dev_") :].rsplit("_", 1)[0]
            report = import_bird_predictions(path, gold_list, model, only_db={DB})
            ev = evaluate(gold, report.records, None, store, Settings(comparator="bird", workers=1, db_urls=DatabaseURLs(url)))
            jury_hits = sum(bool(p.comparator_matches.get("bird")) for p in ev.pairs)
            rules = {r.question_id: bird_rule(url, gold[r.question_id].sql, r.sql) for r in report.records if r.sql}
            raw_hits, rule_hits = (sum(v[i] for v in rules.values()) for i in (0, 1))
            n = len(ev.pairs)
            same = "yes" if jury_hits == rule_hits else "NO"
            lines.append(f"| {engine} | {model} | {n} | {jury_hits} | {rule_hits} | {same} | {raw_hits} |")
            notes += [f"{engine} {model} q{q}" for q, (raw, norm) in rules.items() if raw != norm]
    if notes:
        lines.append(
            "\nThe driver-values rule differs where a query returns a DECIMAL and the other a float of the same "
            "value (Decimal('31.2000') != 31.2 in Python): " + ", ".join(notes)
        )
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/bird/mini-dev")
    ap.add_argument("--pg-url", default=os.environ.get("JURY_TEST_PG_URL"))
    ap.add_argument("--mysql-url", default=os.environ.get("JURY_TEST_MYSQL_URL"))
    ap.add_argument("--pg-reader-url", default=os.environ.get("JURY_TEST_PG_READER_URL"))
    ap.add_argument("--mysql-reader-url", default=os.environ.get("JURY_TEST_MYSQL_READER_URL"))
    ap.add_argument("-o", "--output", type=Path, help="Write the Markdown report here (default: stdout).")
    args = ap.parse_args()
    name = f"jury_bench_{os.getpid()}"
    tmp = Path(tempfile.mkdtemp(prefix="jury-engines-bench-"))
    urls: dict[str, str] = {}  # the admin's: loads and drops
    readers: dict[str, str] = {}  # the reader's: every query runs through it
    started = time.monotonic()
    try:
        for engine, admin, reader in (
            ("postgresql", args.pg_url, args.pg_reader_url),
            ("mysql", args.mysql_url, args.mysql_reader_url),
        ):
            if admin and reader:
                urls[engine], readers[engine] = _with_db(admin, name), _with_db(reader, name)
        urls["duckdb"] = readers["duckdb"] = f"duckdb:///{tmp}/{DB}.duckdb"
        for url in urls.values():
            load(SQLITE_FILE, url)
        lines = gold_parity(args.data / "data", readers)
        lines += predictions(args.data / "data", args.data / "predictions/sql_output_kg", readers, tmp)
        lines.append(f"\n({time.monotonic() - started:.0f} s)")
        text = "\n".join(lines) + "\n"
        if args.output:
            args.output.write_text(text, encoding="utf-8")
        sys.stdout.write(text)
    finally:
        engines.close_connections()
        for engine, url in urls.items():
            if engine != "duckdb":
                _drop(url, name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
