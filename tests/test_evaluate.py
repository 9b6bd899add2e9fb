import pytest

import jury.execution.sqlite
from jury.compare.comparators import NormalizeOptions
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
    # --missing fail: a `missing` answer is an outcome (under exclude, the default, it has no pair)
    ev = run(tmp, gold, recs, timeout_s=0.5, missing="fail")
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
        ("b", 4): "gold_error",  # absent from b's run, counted under --missing fail: the gold fails first
        ("c", 2): "missing",  # absent from c's run
        ("c", 4): "gold_error",
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
    """A success that took E seconds would time out under a limit below E: run it again then.
    The store is told the success took 10 s (no stopwatch: the reuse rule reads elapsed_s)."""
    import sqlite3

    tmp, gold = shop_gold
    recs = [{"model": "c", "question_id": 3, "sql": "SELECT count(*) FROM item"}]
    assert run(tmp, gold, recs, timeout_s=30).executed == 1
    with sqlite3.connect(tmp / "store.db") as conn:
        assert conn.execute("UPDATE executions SET elapsed_s = 10.0").rowcount == 1
    assert run(tmp, gold, recs, timeout_s=30).executed == 0  # 10 s < 30 s: reused
    again = run(tmp, gold, recs, timeout_s=5)
    assert again.executed == 1 and again.pairs[0].outcome == "match"  # 10 s > 5 s: executed again
    assert run(tmp, gold, recs, timeout_s=5).executed == 0  # the fresh, fast result is reused


def test_empty_or_comment_answers_never_match_an_empty_gold(tmp_path):
    make_db(tmp_path / "dbs")
    items = [{"question_id": 1, "db_id": "shop", "question": "none", "SQL": "SELECT name FROM item WHERE colour = 'blue'"}]
    gold = load_gold(write_gold(tmp_path, items))
    recs = [
        {"model": m, "question_id": 1, "sql": sql}
        for m, sql in [("empty", ""), ("blank", "   "), ("semi", ";"), ("comment", "-- I cannot answer")]
    ]
    ev = run(tmp_path, gold, recs, missing="fail")  # blank SQL is a `missing` answer under fail, no pair under exclude
    assert outcomes(ev) == {("empty", 1): "missing", ("blank", 1): "missing", ("semi", 1): "error", ("comment", 1): "error"}
    assert outcomes(run(tmp_path, gold, recs)) == {("semi", 1): "error", ("comment", 1): "error"}


# ---------------------------------------------------------------- results over the row cap
#
# Past the row cap a result is kept as digests (the set and the ordered digest): comparators
# decide from them when they can, and say they cannot when they cannot.


def pair(ev, model="m", qid=2):
    return next(p for p in ev.pairs if p.model == model and p.question_id == qid)


def test_wrong_order_over_the_row_cap_is_not_a_match(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "m", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price DESC"}]
    under = pair(run(tmp, gold, recs))
    over = pair(run(tmp, gold, recs, row_cap=2))  # 4 rows: both results over the cap
    assert under.outcome == over.outcome == "near_miss"
    assert over.overlap == 1.0  # the same row set, proven by the set digest
    assert over.comparator_matches["bird"] is True and over.comparator_matches["strict"] is False
    # relaxed/subset have no exact digest for "different": undecided, not a guess.
    assert over.comparator_matches["relaxed"] is None and over.comparator_matches["subset"] is None


def test_same_order_over_the_row_cap_is_a_match_for_every_comparator(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "m", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price, id"}]
    for comparator in ("bird", "strict", "relaxed", "subset"):
        p = pair(run(tmp, gold, recs, row_cap=2, comparator=comparator))
        assert p.outcome == "match"
        assert p.comparator_matches == {"bird": True, "strict": True, "relaxed": True, "subset": True}


def test_duplicates_count_over_the_row_cap_when_order_matters(shop_gold):
    tmp, gold = shop_gold
    items = [{"question_id": 1, "db_id": "shop", "SQL": "SELECT colour FROM item ORDER BY id"}]
    gold = load_gold(write_gold(tmp, items))
    # Same set of colours, same first-seen order, but a duplicate dropped: a list differs.
    recs = [{"model": "m", "question_id": 1, "sql": "SELECT colour FROM item WHERE id != 3 ORDER BY id"}]
    p = pair(run(tmp, gold, recs, row_cap=2), qid=1)
    assert p.comparator_matches["bird"] is True and p.comparator_matches["strict"] is False
    assert p.outcome == "near_miss"


@pytest.mark.parametrize(
    "comparator, options",
    [
        ("strict", {"casefold": True}),
        ("bird", {"float_sig_digits": 3}),
        ("relaxed", {}),
        ("subset", {}),
    ],
)
def test_comparator_that_cannot_decide_over_the_cap_is_an_error(shop_gold, comparator, options):
    tmp, gold = shop_gold
    recs = [
        {"model": "m", "question_id": 2, "sql": "SELECT upper(name) FROM item ORDER BY price"},
        {"model": "m", "question_id": 3, "sql": "SELECT 4"},
    ]
    with pytest.raises(InputError) as err:
        run(tmp, gold, recs, row_cap=2, comparator=comparator, options=NormalizeOptions(**options))
    msg = str(err.value)
    assert "1 (model, question) pair" in msg and "--row-cap" in msg and "bird" in msg
    assert "\n" not in msg
    # Under the cap the same run is decided normally.
    ev = run(tmp, gold, recs, row_cap=10, comparator=comparator, options=NormalizeOptions(**options))
    assert pair(ev).outcome in {"match", "mismatch", "near_miss"}


def test_identical_results_over_the_cap_match_even_with_normalisation(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "m", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price"}]
    ev = run(tmp, gold, recs, row_cap=2, options=NormalizeOptions(casefold=True, float_sig_digits=2))
    assert pair(ev).outcome == "match"


def test_undecided_side_comparator_is_not_scored_as_a_failure(shop_gold):
    tmp, gold = shop_gold
    recs = [
        {"model": "m", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price DESC"},
        {"model": "m", "question_id": 3, "sql": "SELECT count(*) FROM item"},
    ]
    (score,) = score_all(run(tmp, gold, recs, row_cap=2).pairs)
    assert score.comparators["bird"]["k"] == 2 and score.comparators["strict"]["k"] == 1
    assert "relaxed" not in score.comparators and "subset" not in score.comparators
    assert score.comparator_ranks.get("relaxed") is None


def test_cached_results_without_the_ordered_digest_are_executed_again(shop_gold):
    tmp, gold = shop_gold
    recs = [{"model": "m", "question_id": 2, "sql": "SELECT name FROM item ORDER BY price DESC"}]
    first = run(tmp, gold, recs, row_cap=2)
    assert first.executed == 2
    with Store(tmp / "store.db") as store:  # a store written before the ordered digest existed
        store.db.execute("UPDATE executions SET ordered_sha256 = NULL")
    again = run(tmp, gold, recs, row_cap=2)
    assert again.executed == 2
    assert pair(again).outcome == "near_miss" and pair(again).comparator_matches["strict"] is False
    assert run(tmp, gold, recs, row_cap=2).executed == 0


# ---------------------------------------------------------------- unusable databases and huge cells


def test_database_check_runs_once_per_database_content(shop_gold, monkeypatch):
    tmp, gold = shop_gold
    calls = []
    real = jury.execution.sqlite.check_database
    monkeypatch.setattr(jury.execution.sqlite, "check_database", lambda p: calls.append(p) or real(p))
    recs = [{"model": "m", "question_id": 1, "sql": "SELECT 1"}]
    run(tmp, gold, recs)
    run(tmp, gold, recs)
    assert len(calls) == 1


def test_huge_cells_are_errors_and_the_rest_is_scored(shop_gold):
    tmp, gold = shop_gold
    recs = [
        {"model": "m", "question_id": 1, "sql": "SELECT zeroblob(1e9)"},
        {"model": "m", "question_id": 2, "sql": "SELECT randomblob(1e9) FROM item"},
        {"model": "m", "question_id": 3, "sql": "SELECT count(*) FROM item"},
    ]
    ev = run(tmp, gold, recs)
    assert pair(ev, qid=1).outcome == "error" and "too big" in pair(ev, qid=1).error
    assert pair(ev, qid=2).outcome == "error"
    assert pair(ev, qid=3).outcome == "match"
