"""Execution and comparison hardening (issues #8 and #9: items 8.9-8.11, 9.4, 9.8, 9.11)."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest

import jury.compare.comparators
import jury.execution.rows
import jury.execution.sqlite
import jury.results.scoring
from jury.compare.comparators import NormalizeOptions, bird, normalize_rows, strict
from jury.compare.outcomes import Settings, evaluate
from jury.errors import InputError
from jury.execution.sqlite import execute, result_hash
from jury.execution.store import Store
from jury.inputs.io import load_gold, load_runs
from jury.results.scoring import score_all
from tests.support.badinput import Case, check_case
from tests.support.helpers import make_db, write_gold, write_runs

ORDERED_GOLD = "SELECT name FROM item ORDER BY price"  # question 2 of helpers.GOLD


def run(tmp_path, gold, records, **settings):
    runs = load_runs([write_runs(tmp_path, records)], gold)
    with Store(tmp_path / "store.db") as store:
        return evaluate(gold, runs, tmp_path / "dbs", store, Settings(workers=1, **settings))


def pair(ev, model="m", qid=2):
    return next(p for p in ev.pairs if p.model == model and p.question_id == qid)


# ---------------------------------------------------------------- 8.9 over the row cap


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


def test_execute_records_an_ordered_digest_of_every_row(tmp_path):
    db = make_db(tmp_path)
    up = execute(db, "SELECT name FROM item ORDER BY price", row_cap=1)
    down = execute(db, "SELECT name FROM item ORDER BY price DESC", row_cap=1)
    full = execute(db, "SELECT name FROM item ORDER BY price")
    assert up.truncated and up.result_sha256 == down.result_sha256
    assert up.ordered_sha256 != down.ordered_sha256
    ordered_hash = jury.execution.sqlite.ordered_hash
    assert up.ordered_sha256 == full.ordered_sha256 == ordered_hash(full.rows)
    assert ordered_hash([(1,), (1,)]) != ordered_hash([(1,)])
    assert ordered_hash([(1,)]) == ordered_hash([(1.0,)]) and result_hash([(1,)]) == result_hash([(1.0,)])


def test_set_digest_ignores_duplicates_exactly_across_the_spill_to_disk(tmp_path, monkeypatch):
    """Past SPILL_AT distinct rows the set digest moves to a temporary table on disk; it must
    equal the in-memory digest, with duplicates on both sides of a spill ignored."""
    monkeypatch.setattr(jury.execution.rows, "SPILL_AT", 7)
    sizes: list[int] = []
    real_add = jury.execution.sqlite.RowSetDigest.add

    def watched_add(self, digest):
        real_add(self, digest)
        sizes.append(len(self._mem))

    monkeypatch.setattr(jury.execution.sqlite.RowSetDigest, "add", watched_add)
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


# ---------------------------------------------------------------- 8.10 float digits round ints too


def test_float_digits_rounds_ints_too():
    opts = NormalizeOptions(float_sig_digits=3)
    assert bird([(1234,)], [(1234.0,)])
    assert bird([(1234,)], [(1234.0,)], options=opts)
    assert strict([(1234,), (5,)], [(1234.0,), (5.0,)], order_matters=True, options=opts)
    assert normalize_rows([(1234, 7, True, "7")], opts) == [(1230.0, 7.0, True, "7")]
    assert bird([(1234,)], [(1231.0,)], options=opts)


# ---------------------------------------------------------------- 8.11 strict vs bird


def test_strict_differs_from_bird_only_by_list_semantics_when_order_matters():
    dup_gold, single_pred = [(1,), (1,), (2,)], [(1,), (2,)]
    assert bird(dup_gold, single_pred, order_matters=True)
    assert not strict(dup_gold, single_pred, order_matters=True)
    assert strict(dup_gold, single_pred)  # without order: the same set rule as bird
    # NULLs are equal under both: no difference there.
    assert bird([(None,)], [(None,)]) and strict([(None,)], [(None,)])


def test_compare_docstring_examples_hold():
    result = doctest.testmod(jury.compare.comparators)
    assert result.attempted > 20 and result.failed == 0
    result = doctest.testmod(jury.execution.rows)  # ordered_hash and RowSetDigest, re-exported by sqlite
    assert result.attempted >= 2 and result.failed == 0


def test_readme_describes_strict_truthfully():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("- `strict`"))
    assert "NULLs equal" not in line
    assert "duplicates" in readme.split("- `strict`", 1)[1].split("- `relaxed`", 1)[0]


# ---------------------------------------------------------------- 9.4 unusable databases


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


def test_database_check_runs_once_per_database_content(shop_gold, monkeypatch):
    tmp, gold = shop_gold
    calls = []
    real = jury.execution.sqlite.check_database
    monkeypatch.setattr(jury.execution.sqlite, "check_database", lambda p: calls.append(p) or real(p))
    recs = [{"model": "m", "question_id": 1, "sql": "SELECT 1"}]
    run(tmp, gold, recs)
    run(tmp, gold, recs)
    assert len(calls) == 1


def test_healthy_database_is_not_modified_by_the_check(tmp_path):
    db = make_db(tmp_path)
    before = db.read_bytes(), db.stat().st_mtime_ns
    assert jury.execution.sqlite.check_database(db) is None
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert not Path(str(db) + "-wal").exists() and not Path(str(db) + "-journal").exists()


# ---------------------------------------------------------------- 9.8 huge cells


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


# ---------------------------------------------------------------- 9.11 many models, one question


class _CountingPair:
    """A scored pair whose `model` reads are counted (a rescan per model shows up as N^2 reads)."""

    reads = 0

    def __init__(self, model: str, outcome: str):
        self._model, self.outcome, self.routed = model, outcome, True
        self.comparator_matches = {"bird": outcome == "match", "strict": outcome == "match"}

    @property
    def model(self) -> str:
        _CountingPair.reads += 1
        return self._model


@pytest.mark.parametrize("n", [500, 4000])
def test_score_all_reads_each_pair_a_bounded_number_of_times(n, monkeypatch):
    calls = []
    real = jury.results.scoring.wilson
    monkeypatch.setattr(jury.results.scoring, "wilson", lambda k, m: calls.append((k, m)) or real(k, m))
    pairs = [_CountingPair(f"m{i}", "match" if i % 3 else "mismatch") for i in range(n)]
    _CountingPair.reads = 0
    scores = score_all(pairs)
    assert len(scores) == n and {s.strict["k"] for s in scores} == {0, 1}
    assert _CountingPair.reads <= 4 * n  # linear: a quadratic scan would read n * n times
    assert len(calls) <= 10  # one interval per distinct (k, n), not five per model
    matches = sum(1 for i in range(n) if i % 3)
    assert scores[1].strict_rank == 1 and scores[0].strict_rank == matches + 1


def test_proportion_results_are_independent_dicts():
    a = jury.results.scoring.proportion(1, 2)
    a["k"] = 99
    assert jury.results.scoring.proportion(1, 2)["k"] == 1
