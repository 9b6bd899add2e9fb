"""Engines: BIRD mini-dev's superhero questions on SQLite, PostgreSQL, MariaDB and DuckDB.

1. Gold parity: the SQLite gold on SQLite, the PostgreSQL gold on PostgreSQL and the MySQL
   gold on MariaDB (and the SQLite gold on DuckDB), compared under jury's ``bird_normalized``
   comparator question by question; every difference is listed with both results.
2. The published mini-dev predictions (sql_output_kg, 9 models per engine) scored by BIRD
   mini-dev's own evaluation (its ``evaluation_ex.py``: ``run_sqls_parallel``, ``execute_model``
   with its func_timeout of 30 s, ``execute_sql`` with the plain driver and ``calculate_ex``;
   only its hard-coded ``connect_postgresql``/``connect_mysql`` are pointed at this bench's
   database) side by side with ``jury score --comparator bird`` (jury.score) on the same engine:
   per-model counts, whether every per-question outcome is equal, and ``bird_normalized``'s count.
3. Warm ``jury score`` of the 9 models on PostgreSQL (every execution in the store), with the
   staleness fingerprint jury had before (every table's columns and row count, a query each)
   and the one it has now (one catalogue query), interleaved in one run.
4. How many of mini-dev's PostgreSQL and MySQL golds execute on databases ``jury db load``
   builds: superhero with its data; the other 10 databases schema-only (dev_tables.json's
   tables and columns, no rows: only the SQLite file of superhero ships here), so that names
   and types are what is tested.

Needs the servers of ``bash .ci/engines`` (JURY_TEST_PG_URL, JURY_TEST_MYSQL_URL) or
--pg-url / --mysql-url (a database URL on the server, the admin's; databases are loaded next
to it under fresh names and dropped afterwards), the least-privilege reader jury and mini-dev's
evaluation execute through (JURY_TEST_PG_READER_URL, JURY_TEST_MYSQL_READER_URL or
--pg-reader-url / --mysql-reader-url), the mini-dev files, and mini-dev's evaluation folder
(bird-bench/mini_dev, evaluation/evaluation_ex.py and evaluation_utils.py; they import
psycopg2, pymysql and func_timeout: pip install psycopg2-binary func-timeout):

    bash .ci/engines python bench/engines_bench.py --data ../shared/data/bird/mini-dev --bird-eval DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jury.compare import comparators as compare
from jury.execution import engine_drivers, engine_urls, engines
from jury.execution.loader import load
from jury.execution.sqlite import execute as sqlite_execute
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
    engine = engine_urls.engine_of(url)
    if engine == engine_urls.POSTGRESQL:
        import psycopg

        p = engine_drivers.engine_for(url).parts
        with psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    elif engine == engine_urls.MYSQL:
        conn = _raw_connect(url)
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()


def _raw_connect(url: str, driver2: bool = False):
    """A plain driver connection, as BIRD's script opens one (no jury code on the path):
    psycopg2 (mini-dev's driver for PostgreSQL) with ``driver2``, else psycopg, or PyMySQL."""
    e = engine_drivers.engine_for(url)
    p = e.parts
    if e.name == engine_urls.POSTGRESQL:
        password = os.environ.get(e.params["password_env"]) if e.params.get("password_env") else None
        extra = {"password": password} if password else {}
        if driver2:
            import psycopg2  # type: ignore[import-untyped]

            return psycopg2.connect(host=p.hostname, port=p.port, user=p.username, dbname=p.path.lstrip("/"), **extra)
        import psycopg

        return psycopg.connect(host=p.hostname, port=p.port, user=p.username, dbname=p.path.lstrip("/"), autocommit=True, **extra)
    import pymysql

    password = os.environ.get(e.params.get("password_env", "MYSQL_PWD"), "")
    return pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=password, database=p.path.lstrip("/") or None)


def gold_parity(data: Path, urls: dict[str, str]) -> list[str]:
    lines = []
    sqlite_gold = {g.question_id: g for g in load_gold(data / "mini_dev_sqlite.json").values() if g.db_id == DB}
    golds = {
        "postgresql": load_gold(data / "mini_dev_postgresql.json"),
        "mysql": load_gold(data / "mini_dev_mysql.json"),
        "duckdb": load_gold(data / "mini_dev_sqlite.json"),
    }
    bird = compare.get_comparator("bird_normalized")
    base = {q: sqlite_execute(SQLITE_FILE, g.sql) for q, g in sqlite_gold.items()}
    lines.append(f"## Gold parity: {len(sqlite_gold)} superhero questions, the bird_normalized comparator against SQLite\n")
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


def _bird_eval(eval_dir: Path, url: str):
    """mini-dev's evaluation_ex module, its connect_postgresql / connect_mysql pointed at ``url``."""
    sys.path.insert(0, str(eval_dir))
    import evaluation_ex  # type: ignore[import-not-found]
    import evaluation_utils  # type: ignore[import-not-found]

    evaluation_utils.connect_postgresql = lambda: _raw_connect(url, driver2=True)
    evaluation_utils.connect_mysql = lambda: _raw_connect(url)
    return evaluation_ex, evaluation_utils


def bird_minidev(eval_dir: Path, engine: str, url: str, gold_sql_file: Path, pred_file: Path) -> dict[int, int]:
    """question index (in the gold file) -> mini-dev's res (1 or 0), superhero questions only."""
    ex, utils = _bird_eval(eval_dir, url)
    preds, _ = utils.package_sqls(str(pred_file), "", mode="pred")
    golds, places = utils.package_sqls(str(gold_sql_file), "", mode="gt")
    idx = [i for i, place in enumerate(places) if place == f"{DB}/{DB}.sqlite"]
    ex.exec_result = []
    dialect = {"postgresql": "PostgreSQL", "mysql": "MySQL"}[engine]
    ex.run_sqls_parallel([(preds[i], golds[i]) for i in idx], [places[i] for i in idx], 1, 30.0, dialect)
    return {idx[r["sql_idx"]]: r["res"] for r in utils.sort_results(ex.exec_result)}


def predictions(data: Path, preds: Path, urls: dict[str, str], store_dir: Path, eval_dir: Path) -> list[str]:
    import jury

    lines = ["", "## Published predictions (sql_output_kg), superhero questions: mini-dev's evaluation_ex.py vs jury\n"]
    lines.append("| engine | model | questions | mini-dev EX | jury `bird` | every outcome equal | jury `bird_normalized` |")
    lines.append("| --- | --- | ---: | ---: | ---: | :---: | ---: |")
    for engine, url in urls.items():
        if engine == "duckdb":
            continue
        gold_file = data / f"mini_dev_{engine}.json"
        gold_list = load_gold_list(gold_file)
        for path in sorted(preds.glob(f"predict_mini_dev_*_{engine}*.json")):
            model = path.name[len("predict_mini_dev_") :].rsplit("_", 1)[0]
            report = import_bird_predictions(path, gold_list, model, only_db={DB})
            run = store_dir / f"{engine}-{model}.jsonl"
            run.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in report.records))
            jury_match = {}
            for comparator in ("bird", "bird_normalized"):
                res = jury.score(
                    runs=[run], gold=gold_file, db_url=url, comparator=comparator, store=store_dir / f"{engine}.db", workers=1
                )
                pq = [json.loads(x) for x in res.per_question_jsonl().splitlines() if x]
                jury_match[comparator] = {p["question_id"]: p["outcome"] == "match" for p in pq}
            bird = bird_minidev(eval_dir, engine, url, data / f"mini_dev_{engine}_gold.sql", path)
            by_qid = {gold_list[i].question_id: bool(v) for i, v in bird.items()}
            same = (
                "yes"
                if by_qid == jury_match["bird"]
                else "NO: " + ", ".join(f"q{q}" for q in by_qid if by_qid[q] != jury_match["bird"].get(q))
            )
            n = len(by_qid)
            lines.append(
                f"| {engine} | {model} | {n} | {sum(by_qid.values())} | {sum(jury_match['bird'].values())} | {same} "
                f"| {sum(jury_match['bird_normalized'].values())} |"
            )
    return lines


def _old_fingerprint(url: str) -> str:
    """The staleness fingerprint before: every table's columns and row count, one query each."""
    engine, conn = engines._open(url)
    try:
        shape = []
        for table in engine.tables(conn):
            (count,) = engine.query_rows(conn, f"SELECT COUNT(*) FROM {engine.quote(table)}")[0]
            shape.append([table, engine.columns(conn, table), int(count)])
    finally:
        conn.close()
    body = json.dumps({"engine": engine.name, "tables": shape}, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def warm_runs(data: Path, preds: Path, url: str, store_dir: Path, rounds: int = 5) -> list[str]:
    """Warm `jury score` of the 9 PostgreSQL models: the fingerprint before and now, interleaved."""
    import jury

    gold_file = data / "mini_dev_postgresql.json"
    gold_list = load_gold_list(gold_file)
    runs = []
    for path in sorted(preds.glob("predict_mini_dev_*_postgresql*.json")):
        model = path.name[len("predict_mini_dev_") :].rsplit("_", 1)[0]
        run = store_dir / f"warm-{model}.jsonl"
        records = import_bird_predictions(path, gold_list, model, only_db={DB}).records
        run.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in records))
        runs.append(run)
    new = engines.fingerprint
    sides = {"before (columns and COUNT(*) per table)": _old_fingerprint, "now (one catalogue query)": new}
    store = store_dir / "warm.db"
    times: dict[str, dict[str, list[float]]] = {k: {"9 runs, one per model": [], "1 run, 9 models": []} for k in sides}
    try:
        for fp in sides.values():  # cold: fill the store under each fingerprint's keys
            engines.fingerprint = fp
            jury.score(runs=runs, gold=gold_file, db_url=url, comparator="bird", store=store, workers=1)
        for _ in range(rounds):
            for name, fp in sides.items():
                engines.fingerprint = fp
                t = time.perf_counter()
                for run in runs:
                    res = jury.score(runs=[run], gold=gold_file, db_url=url, comparator="bird", store=store, workers=1)
                    assert res.evaluation.executed == 0
                times[name]["9 runs, one per model"].append(time.perf_counter() - t)
                t = time.perf_counter()
                jury.score(runs=runs, gold=gold_file, db_url=url, comparator="bird", store=store, workers=1)
                times[name]["1 run, 9 models"].append(time.perf_counter() - t)
    finally:
        engines.fingerprint = new
    lines = ["", f"## Warm `jury score` of the 9 PostgreSQL models (median of {rounds} interleaved rounds, in-process)\n"]
    lines.append("| staleness fingerprint | 9 runs, one per model | 1 run, 9 models |")
    lines.append("| --- | ---: | ---: |")
    med = {n: {k: statistics.median(v) for k, v in t.items()} for n, t in times.items()}
    for name, m in med.items():
        lines.append(f"| {name} | {m['9 runs, one per model']:.3f} s | {m['1 run, 9 models']:.3f} s |")
    b, a = med.values()
    lines.append(
        f"\nratio before/now: {b['9 runs, one per model'] / a['9 runs, one per model']:.1f}x (9 runs), "
        f"{b['1 run, 9 models'] / a['1 run, 9 models']:.1f}x (1 run)"
    )
    return lines


_SQLITE_TYPES = {"integer": "INTEGER", "real": "REAL", "text": "TEXT", "date": "DATE", "datetime": "DATETIME"}


def _schema_only(tables: dict, path: Path) -> Path:
    """A SQLite file with dev_tables.json's tables and columns of one database, and no rows."""
    import sqlite3

    if path.exists():
        return path
    conn = sqlite3.connect(path)
    names = tables["table_names_original"]
    cols: dict[int, list[str]] = {}
    for (t, name), kind in zip(tables["column_names_original"], tables["column_types"]):
        if t >= 0:
            cols.setdefault(t, []).append(f'"{name}" {_SQLITE_TYPES.get(kind, "TEXT")}')
    for i, table in enumerate(names):
        conn.execute(f'CREATE TABLE "{table}" ({", ".join(cols[i])})')
    conn.commit()
    conn.close()
    return path


def gold_coverage(data: Path, base_urls: dict[str, tuple[str, str]], name: str, tmp: Path) -> list[str]:
    """mini-dev's PostgreSQL and MySQL golds on databases `jury db load` built (engine -> the
    admin's URL, which loads, and the reader's, which executes)."""
    schemas = {t["db_id"]: t for t in json.loads((data / "dev_tables.json").read_text())}
    lines = ["", "## mini-dev's PostgreSQL and MySQL golds on databases `jury db load` built\n"]
    lines.append("| engine | database | golds | execute | fail |")
    lines.append("| --- | --- | ---: | ---: | ---: |")
    notes: list[str] = []
    made: list[tuple[str, str]] = []
    try:
        for engine, (base, reader) in base_urls.items():
            gold = load_gold_list(data / f"mini_dev_{engine}.json")
            total_ok = total = 0
            for db_id in sorted(schemas):
                src = SQLITE_FILE if db_id == DB else _schema_only(schemas[db_id], tmp / f"{db_id}.sqlite")
                url = _with_db(base, f"{name}_{db_id}")
                made.append((url, f"{name}_{db_id}"))
                load(src, url)
                items = [g for g in gold if g.db_id == db_id]
                there = _with_db(reader, f"{name}_{db_id}")
                failed = [(g.question_id, engines.execute(there, g.sql)) for g in items]
                failed = [(q, r) for q, r in failed if not r.ok]
                ok = len(items) - len(failed)
                total_ok, total = total_ok + ok, total + len(items)
                label = db_id + ("" if db_id == DB else " (schema only)")
                lines.append(f"| {engine} | {label} | {len(items)} | {ok} | {len(failed)} |")
                notes += [f"- {engine} {db_id} q{q}: {r.error[:160]}" for q, r in failed]
                engines.close_connections()
            lines.append(f"| {engine} | **all 11** | {total} | {total_ok} | {total - total_ok} |")
    finally:
        engines.close_connections()
        for url, db in made:
            _drop(url, db)
    return lines + (["", "Failures:", *notes] if notes else [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/bird/mini-dev")
    ap.add_argument("--pg-url", default=os.environ.get("JURY_TEST_PG_URL"))
    ap.add_argument("--mysql-url", default=os.environ.get("JURY_TEST_MYSQL_URL"))
    ap.add_argument("--pg-reader-url", default=os.environ.get("JURY_TEST_PG_READER_URL"))
    ap.add_argument("--mysql-reader-url", default=os.environ.get("JURY_TEST_MYSQL_READER_URL"))
    ap.add_argument(
        "--bird-eval", type=Path, required=True, help="mini-dev's evaluation folder (evaluation_ex.py, evaluation_utils.py)."
    )
    ap.add_argument("--rounds", type=int, default=5, help="Interleaved rounds of the warm-run timing (default 5).")
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
        preds = args.data / "predictions/sql_output_kg"
        servers = {e: (urls[e], readers[e]) for e in urls if e != "duckdb"}
        lines: list[str] = []
        sections = [
            lambda: gold_parity(args.data / "data", readers),
            lambda: predictions(args.data / "data", preds, readers, tmp, args.bird_eval),
            lambda: (
                warm_runs(args.data / "data", preds, readers["postgresql"], tmp, args.rounds) if "postgresql" in readers else []
            ),
            lambda: gold_coverage(args.data / "data", servers, f"{name}_g", tmp),
        ]
        for section in sections:  # each printed as it is done
            part = section()
            lines += part
            print("\n".join(part), file=sys.stderr, flush=True)
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
