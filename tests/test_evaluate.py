import pytest

from jury.compare.outcomes import Settings, evaluate
from jury.errors import DatabaseMissing, InputError
from jury.execution.store import Store
from jury.inputs.io import load_gold, load_runs
from jury.results.scoring import score_all
from tests.support.helpers import make_db, write_gold, write_runs

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def run(tmp_path, gold, records, **settings):
    runs = load_runs([write_runs(tmp_path, records)], gold)
    with Store(tmp_path / "store.db") as store:
        return evaluate(gold, runs, tmp_path / "dbs", store, Settings(workers=1, **settings))


def outcomes(ev):
    return {(p.model, p.question_id): p.outcome for p in ev.pairs}


def test_every_outcome_class(shop_gold):
    tmp, gold = shop_gold
    recs = [
        {"model": "a", "question_id": 1, "db_id": "shop", "sql": "SELECT name FROM item WHERE colour='red'"},
        {"model": "a", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price DESC"},  # order wrong
        {"model": "a", "question_id": 3, "db_id": "elsewhere", "sql": "SELECT 4"},
        {"model": "a", "question_id": 4, "sql": "SELECT 1"},
        {"model": "b", "question_id": 1, "sql": "SELECT name FROM item WHERE colour='red' OR name='fig'"},
        {"model": "b", "question_id": 2, "sql": None},
        {"model": "b", "question_id": 3, "sql": "SELECT count(*) FROM itemz"},
        {"model": "c", "question_id": 1, "sql": RUNAWAY},
        {"model": "c", "question_id": 3, "sql": "SELECT 5"},
    ]
    make_db(tmp / "dbs", "elsewhere")
    ev = run(tmp, gold, recs, timeout_s=0.5)
    assert outcomes(ev) == {
        ("a", 1): "match",
        ("a", 2): "mismatch",  # same rows, wrong order: overlap 1.0 but... see below
        ("a", 3): "misrouted",
        ("a", 4): "gold_error",
        ("b", 1): "near_miss",  # 2 of 3 rows shared: Jaccard 2/3
        ("b", 2): "missing",
        ("b", 3): "error",
        ("c", 1): "timeout",
        ("c", 3): "mismatch",
    } | {("a", 2): "near_miss"}
    pairs = {(p.model, p.question_id): p for p in ev.pairs}
    assert pairs[("a", 2)].overlap == 1.0 and pairs[("a", 2)].comparator_matches == {
        "bird": True,
        "strict": False,
        "relaxed": False,
        "subset": False,
    }
    assert pairs[("b", 1)].overlap == pytest.approx(2 / 3)
    assert pairs[("a", 1)].routed and not pairs[("a", 3)].routed
    assert ev.gold_errors == {4: "error: no such column: nope"}

    scores = {s.model: s for s in score_all(ev.pairs)}
    a = scores["a"]
    # gold_error left out of every denominator; misrouted left out of routed.
    assert (a.questions, a.gold_errors, a.routed) == (4, 1, 2)
    assert a.routing_accuracy == pytest.approx(2 / 3)
    assert (a.strict["k"], a.strict["n"]) == (1, 2)
    assert a.comparators["bird"]["k"] == 2
    assert scores["c"].jury_eligible == 1 and scores["b"].jury_eligible == 0
    assert scores["a"].strict_rank == 1


def test_near_miss_threshold_moves_pairs_to_the_jury(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "b", "question_id": 1, "sql": "SELECT name FROM item WHERE colour='red' OR name='fig'"}]
    assert outcomes(run(tmp, gold, recs, near_miss=0.7))[("b", 1)] == "mismatch"


def test_order_matters_override(shop_gold):
    tmp, gold = shop_gold
    gold[2] = gold[2].model_copy(update={"order_matters": False})
    recs = [{"model": "a", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price DESC"}]
    assert outcomes(run(tmp, gold, recs))[("a", 2)] == "match"


def test_rerun_executes_nothing_and_gold_runs_once(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": m, "question_id": 1, "sql": gold[1].sql} for m in "abc"]
    recs += [{"model": m, "question_id": 3, "sql": f"SELECT {i}"} for i, m in enumerate("abc")]
    first = run(tmp, gold, recs)
    # gold 1 and the identical candidate share one execution; gold 3 once; 3 distinct candidates
    assert first.executed == 1 + 1 + 3
    second = run(tmp, gold, recs)
    assert second.executed == 0
    assert outcomes(first) == outcomes(second)


def test_longer_timeout_reruns_a_cached_timeout(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "c", "question_id": 1, "sql": RUNAWAY}]
    run(tmp, gold, recs, timeout_s=0.3)
    assert run(tmp, gold, recs, timeout_s=0.3).executed == 0
    assert run(tmp, gold, recs, timeout_s=0.6).executed == 1


def test_missing_database_is_a_clear_error(shop_gold):
    tmp, gold = shop_gold
    gold[1] = gold[1].model_copy(update={"db_id": "nowhere"})
    with pytest.raises(DatabaseMissing, match=r"db_id 'nowhere': expected .*nowhere/nowhere.sqlite"):
        run(tmp, gold, [{"model": "a", "question_id": 1, "sql": "SELECT 1"}])


def test_unknown_chosen_database_is_an_error(shop_gold):
    tmp, gold = shop_gold
    with pytest.raises(InputError, match="db_id 'shopp' names no database"):
        run(tmp, gold, [{"model": "a", "question_id": 1, "db_id": "shopp", "sql": "SELECT 1"}])


def test_parallel_workers_give_the_same_outcomes(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "m", "question_id": q, "sql": f"SELECT name FROM item WHERE id > {q}"} for q in (1, 2, 3)]
    runs = load_runs([write_runs(tmp, recs)], gold)
    with Store(tmp / "p.db") as s1, Store(tmp / "s.db") as s2:
        par = evaluate(gold, runs, tmp / "dbs", s1, Settings(workers=2))
        seq = evaluate(gold, runs, tmp / "dbs", s2, Settings(workers=1))
    assert par.executed == seq.executed == 6
    assert outcomes(par) == outcomes(seq)


def test_cached_results_obey_the_current_row_cap_and_timeout(shop_gold):
    """A score never depends on what ran before under other settings."""
    tmp, gold = shop_gold
    recs = [
        {"model": "a", "question_id": 1, "sql": "SELECT name, price FROM item"},
        {"model": "a", "question_id": 3, "sql": "SELECT count(*) FROM item"},
    ]
    fresh = run(tmp, gold, recs, row_cap=2)
    # a store filled under a large cap, reused under a small one: same outcomes as fresh
    tmp2 = tmp / "other"
    tmp2.mkdir()
    (tmp2 / "dbs").symlink_to(tmp / "dbs")
    run(tmp2, gold, recs, row_cap=1000)
    reused = run(tmp2, gold, recs, row_cap=2)
    assert outcomes(reused) == outcomes(fresh)
    assert [p.comparator_matches for p in reused.pairs] == [p.comparator_matches for p in fresh.pairs]
    # a result truncated under a small cap is executed again under a larger one
    assert run(tmp, gold, recs, row_cap=1000).executed >= 1


def test_a_slow_success_is_not_reused_under_a_shorter_timeout(shop_gold):
    tmp, gold = shop_gold
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000) SELECT count(*) FROM c"
    recs = [{"model": "c", "question_id": 3, "sql": slow}]
    first = run(tmp, gold, recs, timeout_s=30)
    elapsed = first.results[first.pairs[0].pred_key].elapsed_s
    assert first.pairs[0].outcome == "mismatch" and elapsed > 0.05
    short = run(tmp, gold, recs, timeout_s=elapsed / 4)
    assert short.executed == 1 and short.pairs[0].outcome == "timeout"


def test_empty_or_comment_answers_never_match_an_empty_gold(tmp_path):
    make_db(tmp_path / "dbs")
    items = [{"question_id": 1, "db_id": "shop", "question": "none", "SQL": "SELECT name FROM item WHERE colour = 'blue'"}]
    gold = load_gold(write_gold(tmp_path, items))
    recs = [
        {"model": m, "question_id": 1, "sql": sql}
        for m, sql in [("empty", ""), ("blank", "   "), ("semi", ";"), ("comment", "-- I cannot answer")]
    ]
    ev = run(tmp_path, gold, recs)
    assert outcomes(ev) == {("empty", 1): "missing", ("blank", 1): "missing", ("semi", 1): "error", ("comment", 1): "error"}
