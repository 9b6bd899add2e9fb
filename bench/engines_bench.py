"""Engines: BIRD mini-dev on SQLite, PostgreSQL, MariaDB and DuckDB.

1. Gold parity: the SQLite gold on SQLite, the PostgreSQL gold on PostgreSQL and the MySQL
   gold on MariaDB (and the SQLite gold on DuckDB), compared under jury's ``bird_normalized``
   comparator question by question; every difference is listed with both results.
2. Every row (500) of every published mini-dev prediction file (sql_output_kg, 9 models per
   engine) scored by BIRD mini-dev's own evaluation (``evaluation_ex.py`` and
   ``evaluation_f1.py``: ``run_sqls_parallel``, ``execute_model`` with its func_timeout of 30 s,
   ``execute_sql`` with the plain driver, ``calculate_ex`` / ``calculate_f1_score``; only its
   hard-coded ``connect_postgresql``/``connect_mysql`` are pointed at this bench's database)
   side by side with ``jury score --comparator bird --soft-f1`` under BIRD's rules
   (``gold_errors="fail"``, ``missing="fail"``) on the same engine, one database holding the
   tables of all 11 db_ids as mini-dev's setup has it (superhero with its data, the other 10
   schema-only from dev_tables.json): EX and Soft-F1 of each, every row that differs with both
   values, the rows that repeat a question id (jury keys a run by question id: the repeats are
   scored as a second run) and any row either side drops.
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
(bird-bench/mini_dev, evaluation/evaluation_ex.py, evaluation_f1.py and evaluation_utils.py;
they import psycopg2, pymysql and func_timeout: pip install psycopg2-binary func-timeout).
--models and --sections narrow a run for iteration:

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
from jury.inputs.importers import Selection, import_bird_predictions
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
    """mini-dev's evaluation_ex and evaluation_f1 modules, their connect_postgresql /
    connect_mysql pointed at ``url`` (nothing else of theirs changed). evaluation_f1.py
    (2932a2b) imports ``load_json_data``, which evaluation_utils.py (21eb984) names
    ``load_json``: only its ``compute_f1_by_diff`` uses it, which is not called here."""
    sys.path.insert(0, str(eval_dir))
    import evaluation_utils  # type: ignore[import-not-found]

    if not hasattr(evaluation_utils, "load_json_data"):
        evaluation_utils.load_json_data = evaluation_utils.load_json
    import evaluation_ex  # type: ignore[import-not-found]
    import evaluation_f1  # type: ignore[import-not-found]

    evaluation_utils.connect_postgresql = lambda: _raw_connect(url, driver2=True)
    evaluation_utils.connect_mysql = lambda: _raw_connect(url)
    return evaluation_ex, evaluation_f1, evaluation_utils


def bird_minidev(eval_dir: Path, engine: str, url: str, gold_sql_file: Path, pred_file: Path) -> tuple[dict, dict, int]:
    """mini-dev's per-row results on every row, as its ``__main__`` makes them: (row -> EX res,
    row -> Soft-F1 res, the number of prediction entries). Its ``zip`` of predictions and golds
    drops the rows past the shorter list."""
    ex, f1, utils = _bird_eval(eval_dir, url)
    preds, _ = utils.package_sqls(str(pred_file), "", mode="pred")
    golds, places = utils.package_sqls(str(gold_sql_file), "", mode="gt")
    pairs = list(zip(preds, golds))
    dialect = {"postgresql": "PostgreSQL", "mysql": "MySQL"}[engine]
    out = []
    for module in (ex, f1):
        module.exec_result = []
        module.run_sqls_parallel(pairs, places, 1, 30.0, dialect)
        out.append({r["sql_idx"]: r["res"] for r in utils.sort_results(module.exec_result)})
    return out[0], out[1], len(preds)


def _collisions(schemas: dict) -> list[str]:
    """Tables of two db_ids one database cannot both hold (PostgreSQL folds a plain name to lower case)."""
    seen: dict[str, list[str]] = {}
    for db_id, t in sorted(schemas.items()):
        for table in t["table_names_original"]:
            seen.setdefault(table.lower(), []).append(f"{db_id}.{table}")
    return [" / ".join(v) for v in seen.values() if len(v) > 1]


def all_rows(
    data: Path, preds: Path, base_urls: dict[str, tuple[str, str]], name: str, tmp: Path, eval_dir: Path, models: list[str]
) -> list[str]:
    """Every row of every prediction file: mini-dev's evaluation_ex.py and evaluation_f1.py
    against jury (``bird`` comparator, ``--soft-f1``, BIRD's rules), all 11 databases in one
    database per engine (engine -> the admin's URL, which loads, and the reader's, which
    executes), as mini-dev's connect_postgresql / connect_mysql have them."""
    import jury

    schemas = {t["db_id"]: t for t in json.loads((data / "dev_tables.json").read_text())}
    collisions = _collisions(schemas)
    lines = [
        "",
        "## Every row of every prediction file (sql_output_kg): mini-dev's evaluation_ex.py and evaluation_f1.py vs jury\n",
        f"One database per engine holding the tables of all {len(schemas)} db_ids (superhero with its rows, the other "
        f"{len(schemas) - 1} schema-only from dev_tables.json), which mini-dev's connect functions and jury's "
        "`--db-url` (no `{db_id}`: every db_id the same database) both name. Table names shared by two db_ids: "
        + (", ".join(collisions) if collisions else "none")
        + ". jury: `jury.score(comparator='bird', soft_f1=True, gold_errors='fail', missing='fail')`. "
        "EX and Soft-F1 are percentages of every row of the file (mini-dev's denominator). PostgreSQL: ANALYZE "
        "after the load, so that autovacuum's own ANALYZE cannot change a plan between jury's run and mini-dev's: "
        "a result whose ORDER BY leaves ties (q728's gold, RANK() ties) then comes back in another order, and "
        "Soft-F1 matches rows by position (q728 of meta-llama-3-70b scored 0.695 on one side, 0.8 on the other).\n",
        "| engine | prediction file | rows | EX mini-dev | EX jury | EX differ | Soft-F1 mini-dev | Soft-F1 jury "
        "| Soft-F1 differ (> 1e-9) | jury by question id |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    notes: list[str] = []
    made: list[tuple[str, str]] = []
    db = f"{name}_all"
    try:
        for engine, (admin, reader) in base_urls.items():
            url = _with_db(admin, db)
            made.append((url, db))
            for db_id in sorted(schemas):
                load(SQLITE_FILE if db_id == DB else _schema_only(schemas[db_id], tmp / f"{db_id}.sqlite"), url)
            if engine == engine_urls.POSTGRESQL:  # the planner's statistics fixed before either side runs
                conn = _raw_connect(url)
                conn.execute("ANALYZE")
                conn.close()
            there = _with_db(reader, db)
            gold_file = data / f"mini_dev_{engine}.json"
            gold_list = load_gold_list(gold_file)
            first: dict = {}
            repeats: dict[int, int] = {}  # row -> the row whose question id it repeats
            for i, g in enumerate(gold_list):
                if g.question_id in first:
                    repeats[i] = first[g.question_id]
                else:
                    first[g.question_id] = i
            # the repeated rows as a run of their own: the first rows' ids made unknown, so the import keeps the repeats
            alt_gold = [
                g.model_copy(update={"question_id": f"row{i}"}) if i in repeats.values() else g for i, g in enumerate(gold_list)
            ]
            gold_failed: dict = {}
            files = sorted(preds.glob(f"predict_mini_dev_*_{engine}*.json"))
            for path in files:
                model = path.name[len("predict_mini_dev_") :].rsplit("_", 1)[0]
                if models and not any(m in model for m in models):
                    continue
                report = import_bird_predictions(path, gold_list, model)
                again = import_bird_predictions(
                    path, alt_gold, model + "@repeats", Selection(keep={gold_list[r].question_id for r in repeats})
                )
                run = tmp / f"all-{engine}-{model}.jsonl"
                run.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in report.records + again.records))
                res = jury.score(
                    runs=[run], gold=gold_file, db_url=there, comparator="bird", soft_f1=True, gold_errors="fail",
                    missing="fail", store=tmp / f"all-{engine}.db", workers=1,
                )  # fmt: skip
                gold_failed.update(res.evaluation.gold_errors)
                pq = {(p["model"], p["question_id"]): p for p in map(json.loads, res.per_question_jsonl().splitlines())}
                bird_ex, bird_f1, entries = bird_minidev(eval_dir, engine, there, data / f"mini_dev_{engine}_gold.sql", path)
                n = len(gold_list)
                ex_diff, f1_diff = [], []
                jury_ex = jury_f1 = 0.0
                for i, g in enumerate(gold_list):
                    key = (model + "@repeats" if i in repeats else model, g.question_id)
                    p = pq.get(key)
                    if i not in bird_ex or i not in bird_f1:
                        notes.append(f"- {engine} {path.name} row {i} (q{g.question_id}): dropped by mini-dev "
                                     f"(its zip of {entries} prediction entries with {n} golds)")  # fmt: skip
                    if p is None:
                        notes.append(f"- {engine} {path.name} row {i} (q{g.question_id}): no jury result")
                        continue
                    j_ex = int(p["outcome"] == "match")
                    j_f1 = p.get("soft_f1")
                    jury_ex += j_ex
                    jury_f1 += j_f1 or 0.0
                    if j_ex != bird_ex.get(i):
                        ex_diff.append(f"row {i} q{g.question_id}: mini-dev {bird_ex.get(i)}, jury {j_ex} ({p['outcome']})")
                    if j_f1 is None or i not in bird_f1 or abs(j_f1 - bird_f1[i]) > 1e-9:
                        f1_diff.append(f"row {i} q{g.question_id}: mini-dev {bird_f1.get(i)!r}, jury {j_f1!r} ({p['outcome']})")
                by_qid = [p for (m, _), p in pq.items() if m == model]
                by_qid_ex = sum(p["outcome"] == "match" for p in by_qid)
                lines.append(
                    f"| {engine} | {path.name} | {n} | {100 * sum(bird_ex.values()) / n:.2f} | {100 * jury_ex / n:.2f} "
                    f"| {len(ex_diff)} | {100 * sum(bird_f1.values()) / n:.4f} | {100 * jury_f1 / n:.4f} | {len(f1_diff)} "
                    f"| {by_qid_ex}/{len(by_qid)} |"
                )
                answers = json.loads(path.read_text())
                for r, f in sorted(repeats.items()):
                    same = "the same answer" if answers.get(str(r)) == answers.get(str(f)) else "a different answer"
                    notes.append(
                        f"- {engine} {path.name} row {r} repeats q{gold_list[r].question_id} of row {f} ({same}): mini-dev "
                        f"scores both rows (row {f} EX {bird_ex.get(f)}, row {r} EX {bird_ex.get(r)}); jury's run keys by "
                        f"question id and keeps row {f}'s answer (`jury by question id`), so row {r} is scored here as a "
                        f"second run (EX {int(pq[(model + '@repeats', gold_list[r].question_id)]['outcome'] == 'match')})"
                    )
                notes += [f"- {engine} {path.name} EX differs, {d}" for d in ex_diff]
                notes += [f"- {engine} {path.name} Soft-F1 differs, {d}" for d in f1_diff]
                print(lines[-1], file=sys.stderr, flush=True)
            engines.close_connections()
            rows_failed = [i for i, g in enumerate(gold_list) if g.question_id in gold_failed]
            if rows_failed:
                notes.append(
                    f"- {engine}: the gold of {len(rows_failed)} rows fails on this database (every model wrong on them, "
                    "mini-dev's `except` and jury's gold_errors='fail'): "
                    + ", ".join(f"row {i} q{gold_list[i].question_id} ({gold_list[i].db_id})" for i in rows_failed)
                )
    finally:
        engines.close_connections()
        for url, name_ in made:
            _drop(url, name_)
    if not any("dropped by mini-dev" in n or "no jury result" in n for n in notes):
        notes.insert(0, "- No row dropped: every file's entries zip with all the golds, and jury scores every row.")
    return lines + (["", *notes] if notes else [])


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
        records = import_bird_predictions(path, gold_list, model, Selection(only_db={DB})).records
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
        "--bird-eval",
        type=Path,
        required=True,
        help="mini-dev's evaluation folder (evaluation_ex.py, evaluation_f1.py, evaluation_utils.py).",
    )
    ap.add_argument("--rounds", type=int, default=5, help="Interleaved rounds of the warm-run timing (default 5).")
    ap.add_argument("--models", default="", help="Only the prediction files whose model contains one of these (comma-separated).")
    ap.add_argument(
        "--sections", default="parity,rows,warm,coverage", help="Which sections to run (default all: parity,rows,warm,coverage)."
    )
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
        models = [m for m in args.models.split(",") if m]
        sections = {
            "parity": lambda: gold_parity(args.data / "data", readers),
            "rows": lambda: all_rows(args.data / "data", preds, servers, f"{name}_r", tmp, args.bird_eval, models),
            "warm": lambda: (
                warm_runs(args.data / "data", preds, readers["postgresql"], tmp, args.rounds) if "postgresql" in readers else []
            ),
            "coverage": lambda: gold_coverage(args.data / "data", servers, f"{name}_g", tmp),
        }
        for key in args.sections.split(","):  # each printed as it is done
            section = sections[key]
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
