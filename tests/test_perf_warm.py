"""Issue 12 (performance), the warm `jury score` path: everything already in the store.

A warm run reads every stored execution in bulk, reads whether each gold orders its rows from
the store (no sqlglot), opens the store without sqlite-utils (and so without numpy) and shares
one comparison between the models that wrote the same SQL. No timing assertions: what is
pinned is what it imports, that the bulk and cached reads give what the one-at-a-time paths
give, and that outputs are unchanged.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from jury.compare import comparators, gold_orders
from jury.compare.outcomes import Settings, evaluate
from jury.execution.store import Store, migrations
from jury.inputs.io import load_gold, load_runs
from jury.inputs.records import ExecResult
from jury.stats import core
from tests.support.helpers import write_gold
from tests.support.jurytest import make_project, write_runs

NOT_ON_A_WARM_SCORE = ("numpy", "sqlglot", "sqlite_utils", "scipy", "litellm", "matplotlib")


def _env() -> dict:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("PYTHONWARNINGS", None)
    return env


def _score(project: Path) -> subprocess.CompletedProcess:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['jury', 'score', 'run.jsonl', '-f', 'json']\n"
        "try:\n    runpy.run_module('jury', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        f"print('IMPORTED', sorted(m for m in sys.modules if m.split('.')[0] in {NOT_ON_A_WARM_SCORE!r}), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def _imported(proc: subprocess.CompletedProcess) -> list[str]:
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("IMPORTED "))
    return json.loads(line.removeprefix("IMPORTED ").replace("'", '"'))


def test_a_warm_score_imports_no_numpy_sqlglot_or_sqlite_utils_and_prints_the_same(tmp_path):
    project = make_project(tmp_path)  # question 2's gold has an ORDER BY: the cold run parses it
    cold = _score(project)
    assert "sqlglot" in _imported(cold)  # the cold run is the real thing: it parsed the gold
    warm = _score(project)
    assert _imported(warm) == []
    assert json.loads(warm.stdout) == json.loads(cold.stdout)


def test_get_executions_reads_many_keys_as_get_execution_reads_one(tmp_path):
    project = make_project(tmp_path)
    gold = load_gold(project / "gold.json")
    runs = load_runs([project / "run.jsonl"], gold)
    with Store(tmp_path / "store.db") as st:
        ev = evaluate(gold, runs, project / "dbs", st, Settings(workers=1))
        keys = list(ev.results)
        bulk = st.get_executions([*keys, "no-such-key", keys[0]])
        assert sorted(bulk) == sorted(keys)  # each key once, unknown keys left out
        for k in keys:
            one = st.get_execution(k)
            assert bulk[k] == one and bulk[k].model_dump() == one.model_dump()
            assert bulk[k] == ExecResult.model_validate(one.model_dump())  # as a validated result is


def test_get_executions_reads_blobs_and_floats_exactly(tmp_path):
    from jury.execution.batches import encode_result

    res = ExecResult(status="ok", columns=["b", "f"], rows=[(b"\x00\xff", 0.1), (None, -2.5)], row_count=2, result_sha256="x")
    res = res.model_copy(update={"ordered_sha256": "y", "elapsed_s": 0.25})
    with Store(tmp_path / "store.db") as st:
        st.put_executions([("k", "db", "SELECT 1", *encode_result(res), 5.0, 10)])
        assert st.get_executions(["k"])["k"] == res == st.get_execution("k")


def test_gold_orders_are_stored_and_a_second_run_parses_nothing(tmp_path, monkeypatch):
    sqls = ["SELECT a FROM t ORDER BY a", "select a from t\norder\n  by 1", "SELECT a FROM (SELECT a FROM t ORDER BY a)"]
    sqls += ["SELECT a FROM t", "SELECT 1 -- ordered", "SELEC x ORDER BY"]
    expected = {s: comparators.gold_orders_rows(s) for s in sqls}
    assert list(expected.values()) == [True, True, False, False, False, False]
    parsed: list[str] = []
    real = comparators.gold_orders_rows

    def counting(sql):
        parsed.append(sql)
        return real(sql)

    monkeypatch.setattr(gold_orders, "gold_orders_rows", counting)
    with Store(tmp_path / "store.db") as st:
        assert gold_orders.gold_orders(st, sqls) == expected
        assert sorted(parsed) == sorted(s for s in sqls if "ORDER" in s.upper())  # only those need sqlglot
        parsed.clear()
        assert gold_orders.gold_orders(st, sqls) == expected
        assert parsed == []
        # another sqlglot decides afresh
        monkeypatch.setattr(gold_orders, "_parser", lambda: "sqlglot 0.0-other")
        assert gold_orders.gold_orders(st, sqls) == expected
        assert len(parsed) == 5  # every text with the word ORDER, the comment too


def test_gold_orders_rows_skips_the_parse_only_when_sqlglot_could_not_find_an_order_by():
    import sqlglot

    texts = ["SELECT a FROM t", "select a from t order by a", "SELECT a FROM t Order\tBy a DESC", "SELECT 'order' FROM t"]
    texts += ["SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", "SELECT a FROM t ORDER BY a;;", "SELECT ʳ FROM t"]
    for sql in texts:
        statements = [e for e in sqlglot.parse(sql, dialect="sqlite") if e is not None]
        has_order = any(e.find(sqlglot.exp.Order) is not None for e in statements)
        if not has_order:
            assert comparators.gold_orders_rows(sql) is False
    assert comparators.gold_orders_rows("select a from t order by a") is True


def test_an_up_to_date_store_opens_without_sqlite_utils_and_an_old_one_is_migrated(tmp_path):
    path = tmp_path / "store.db"
    Store(path).close()
    code = (
        f"import sys\nfrom jury.execution.store import Store\nStore({str(path)!r}).close()\nprint('sqlite_utils' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr
    with sqlite3.connect(path) as conn:  # a store from before the gold-order cache
        conn.execute("DROP TABLE gold_orders")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm006_gold_orders'")
    with sqlite3.connect(path) as conn:
        assert migrations.pending(conn)
    with Store(path) as st:
        assert not migrations.pending(st.conn)
        assert st.conn.execute("SELECT count(*) FROM gold_orders").fetchone() == (0,)
        assert st.db.table("gold_orders").pks == ["key"]


def test_models_with_the_same_sql_share_the_comparison_but_not_its_dict(tmp_path):
    project = make_project(tmp_path, models=("a", "b"))
    gold = load_gold(project / "gold.json")
    runs = load_runs([project / "run.jsonl"], gold)
    with Store(tmp_path / "store.db") as st:
        pairs = evaluate(gold, runs, project / "dbs", st, Settings(workers=1)).pairs
    by_q: dict = {}
    for p in pairs:
        by_q.setdefault(p.question_id, []).append(p)
    for a, b in by_q.values():
        assert a.pred_key == b.pred_key and a.comparator_matches == b.comparator_matches and a.overlap == b.overlap
        assert a.comparator_matches is not b.comparator_matches
    first, second = next(iter(by_q.values()))
    first.comparator_matches["bird"] = not first.comparator_matches["bird"]
    assert second.comparator_matches["bird"] != first.comparator_matches["bird"]


def test_rows_with_distinct_sql_still_compare_on_their_own(tmp_path):
    project = make_project(tmp_path, models=("a",))
    write_runs(
        project,
        [
            {"model": "a", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'green'"},
            {"model": "b", "question_id": 1, "sql": "SELECT name FROM item"},
        ],
    )
    gold = load_gold(project / "gold.json")
    runs = load_runs([project / "run.jsonl"], gold)
    with Store(tmp_path / "store.db") as st:
        a, b = evaluate(gold, runs, project / "dbs", st, Settings(workers=1)).pairs
    assert a.pred_key != b.pred_key


def test_stats_missing_values_without_numpy_imported_and_with_numpy_floats():
    assert core.ranks([3.0, None, float("nan"), 1.0]) == [1, None, None, 2]
    np = pytest.importorskip("numpy")
    assert core.ranks([np.float32(3.0), np.float32("nan"), np.float64(1.0)]) == [1, None, 2]
    assert math.isnan(float(np.float32("nan")))


def test_constructed_is_model_construct():
    """jury.inputs.records.constructed (issue 46) builds the model model_construct builds:
    same fields in the same order, same fields set, fresh mutable defaults, equal and dumped alike."""
    from pydantic import BaseModel, Field

    from jury.inputs.records import constructed

    class Scored(BaseModel):  # a literal mutable default (copied), a factory default, plain fields
        model: str
        question_id: int | str
        chosen_db_id: str | None
        outcome: str
        comparator_matches: dict[str, bool | None] = {}
        families: list[str] = Field(default_factory=list)
        error: str | None = None

    given = {"model": "m", "question_id": 3, "chosen_db_id": None, "outcome": "match"}
    fast, slow = constructed(Scored, **given), Scored.model_construct(**given)
    assert fast == slow and list(fast.__dict__) == list(slow.__dict__) == list(Scored.model_fields)
    assert fast.model_fields_set == slow.model_fields_set == set(given)
    assert fast.model_dump() == slow.model_dump() and fast.model_dump_json() == slow.model_dump_json()
    fast.families.append("x")
    fast.comparator_matches["strict"] = True
    assert constructed(Scored, **given).families == [] and constructed(Scored, **given).comparator_matches == {}
    res = {"status": "ok", "rows": [(1, "a")], "row_count": 1}
    assert constructed(ExecResult, **res) == ExecResult.model_construct(**res) == ExecResult(**res)
    assert constructed(ExecResult, status="error").columns == []
    # every field given (a stored result), in another order than the model's: the same model as model_construct's
    every = {name: getattr(ExecResult(status="timeout", error="slow", elapsed_s=2.5), name) for name in ExecResult.model_fields}
    shuffled = dict(reversed(list(every.items())))
    fast, slow = constructed(ExecResult, **shuffled), ExecResult.model_construct(**every)
    assert fast == slow and list(fast.__dict__) == list(slow.__dict__) == list(ExecResult.model_fields)
    assert fast.model_fields_set == slow.model_fields_set == set(ExecResult.model_fields)
    assert fast.model_dump_json() == slow.model_dump_json() and fast.status == "timeout" and fast.elapsed_s == 2.5


SAME_ROWS_SQL = [  # texts that give the same rows, others that differ by order, duplicates, columns, types
    "SELECT name FROM item WHERE colour = 'red'",
    "select name from item where colour='red'",
    "SELECT name FROM item WHERE colour = 'red' -- again",
    "SELECT name FROM item WHERE colour = 'red' ORDER BY name DESC",
    "SELECT name FROM item WHERE colour = 'red' UNION ALL SELECT 'apple'",
    "SELECT name FROM item ORDER BY price",
    "SELECT name FROM item ORDER BY price -- same",
    "SELECT name FROM item ORDER BY price DESC",
    "SELECT name, id FROM item ORDER BY price",
    "SELECT id, name FROM item ORDER BY price",
    "SELECT count(*) FROM item",
    "SELECT 4",
    "SELECT 4.0",
    "SELECT 4 -- four",
]


def test_warm_results_with_the_same_rows_share_them_and_compare_as_each_comparator_alone(tmp_path):
    """Issue 46: stored results with the same rows text share one decoded list, and the pairs on
    shared lists are decided once; every pair must still get what each comparator, called alone
    on the rows sqlite3 gives, decides (and overlap's figure)."""
    project = make_project(tmp_path, models=("a",))
    items = json.loads((project / "gold.json").read_text())
    # question 9's gold gives question 1's rows, in order: the same rows list, compared with order
    items.append({**items[0], "question_id": 9, "SQL": "SELECT name FROM item WHERE colour = 'red' ORDER BY name"})
    write_gold(project, items)
    write_runs(
        project, [{"model": f"m{i}", "question_id": q, "sql": s} for q in (1, 2, 3, 9) for i, s in enumerate(SAME_ROWS_SQL)]
    )
    gold = load_gold(project / "gold.json")
    runs = load_runs([project / "run.jsonl"], gold)
    with Store(tmp_path / "store.db") as st:
        evaluate(gold, runs, project / "dbs", st, Settings(workers=1))
        ev = evaluate(gold, runs, project / "dbs", st, Settings(workers=1))  # warm: every result from the store
        assert ev.executed == 0
        stored = st.get_executions(list(ev.results))
    by_text: dict = {}
    for res in stored.values():
        by_text.setdefault(json.dumps(res.rows), []).append(res.rows)
    assert all(rows is same[0] for same in by_text.values() for rows in same)  # shared, not copies
    assert any(len(same) > 1 for same in by_text.values())
    sql_of = {(r.model, r.question_id): r.sql for r in runs}
    conn = sqlite3.connect(project / "dbs" / "shop" / "shop.sqlite")
    orders = set()
    for p in ev.pairs:
        gold_rows = conn.execute(gold[p.question_id].sql).fetchall()
        pred_rows = conn.execute(sql_of[p.model, p.question_id]).fetchall()
        om = p.order_matters
        orders.add(om)
        alone = {name: comparators.SHARED[name](gold_rows, pred_rows, order_matters=om) for name in p.comparator_matches}
        assert p.comparator_matches == alone, (p.question_id, p.model)
        assert p.overlap == comparators.overlap(gold_rows, pred_rows), (p.question_id, p.model)
    assert orders == {True, False}
    assert {p.outcome for p in ev.pairs} >= {"match", "mismatch"}
    conn.close()
