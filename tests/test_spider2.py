"""The `spider2` comparator against Spider 2.0's official comparison, run with pandas
(tests/support/spider2_official.py), on generated table pairs."""

from __future__ import annotations

import random

import pytest

from jury.compare import comparators as compare
from jury.compare import spider2 as s2
from jury.errors import InputError
from jury.inputs.records import GoldItem, RecordedResult
from jury.vocab import Comparator

pd = pytest.importorskip("pandas")
from tests.support.spider2_official import official_score  # noqa: E402

_TEXTS = [
    "1",
    "007",
    "1e3",
    " 2 ",
    "1.50",
    "-0",
    "+3",
    ".5",
    "NULL",
    "NaN",
    "None",
    "",
    " ",
    "\t",
    "True",
    "false",
    "inf",
    "-Infinity",
    "a",
    "b",
    "A",
    "x y",
    "1,5",
    'q"uote',
    "line\nbreak",
    "0.0",
    "1.0",
    "10",
    "9",
    "NA",
]


def _value(rng: random.Random):
    kind = rng.random()
    if kind < 0.15:
        return None
    if kind < 0.40:
        return rng.choice([0, 1, 2, 9, 10, -1, 100, 2**53 + 1, -(2**62)])
    if kind < 0.60:
        return rng.choice([0.0, 0.5, 1.0, 1.005, 0.999, 2.5, -0.004, 0.01, 1e16, 1 / 3, 0.1 + 0.2, 123.456])
    if kind < 0.90:
        return rng.choice(_TEXTS)
    return rng.choice([b"ab", "é", "日本"])


def _table(rng: random.Random, width: int, nrows: int) -> list[tuple]:
    col_kind = [rng.random() for _ in range(width)]  # some columns homogeneous, some mixed
    rows = []
    for _ in range(nrows):
        row = []
        for k in col_kind:
            if k < 0.3:
                v = rng.choice([None, 0, 1, 2, 3]) if rng.random() < 0.3 else rng.randint(0, 5)
            elif k < 0.5:
                v = rng.choice([None, 0.0, 1.0, 1.004, 2.5, 0.996])
            else:
                v = _value(rng)
            row.append(v)
        rows.append(tuple(row))
    return rows


def _perturb(v, rng: random.Random):
    r = rng.random()
    if r < 0.2:
        return None
    if r < 0.35:
        return 0
    if r < 0.5 and isinstance(v, (int, float)) and not isinstance(v, bool):
        return v + rng.choice([0.004, -0.006, 0.0101, 0.01, 1])
    if r < 0.65 and v is not None:
        return str(v)
    if r < 0.8 and isinstance(v, str):
        return rng.choice(_TEXTS)
    return v


def _pred_from(gold: list[tuple], rng: random.Random) -> list[tuple]:
    width = len(gold[0]) if gold else rng.randint(1, 3)
    cols = list(range(width))
    rng.shuffle(cols)
    if rng.random() < 0.3 and width > 1:
        cols = cols[: rng.randint(1, width - 1)]  # a column subset
    rows = [tuple(r[c] for c in cols) for r in gold] if gold else []
    if rng.random() < 0.3:
        rows = [tuple(r) + (rng.choice([None, 0, "x", 1.0]),) for r in rows]  # an extra column
    if rng.random() < 0.5:
        rng.shuffle(rows)
    if rows and rng.random() < 0.2:
        rows.append(rng.choice(rows))  # a duplicate
    if rows and rng.random() < 0.15:
        rows.pop(rng.randrange(len(rows)))
    if rows and rng.random() < 0.6:
        i = rng.randrange(len(rows))
        j = rng.randrange(len(rows[i]))
        rows[i] = rows[i][:j] + (_perturb(rows[i][j], rng),) + rows[i][j + 1 :]
    if not rows and rng.random() < 0.5:
        rows = [tuple(rng.choice([None, 0]) for _ in range(width))]
    return rows


def _case(rng: random.Random, big: bool = False):
    width = rng.randint(1, 4)
    nrows = rng.randint(495, 1010) if big else rng.choice([0, 1, 1, 2, 3, 4, 6, 8])
    gold = _table(rng, width, nrows)
    pred = _pred_from(gold, rng) if rng.random() < 0.85 else _table(rng, rng.randint(1, 4), rng.randint(0, 6))
    variants = []
    if rng.random() < 0.2:
        for _ in range(rng.randint(1, 2)):
            w = rng.randint(1, 3)
            variants.append(_pred_from(gold, rng) if rng.random() < 0.5 else _table(rng, w, rng.randint(0, 4)))
    cc: list = []
    if rng.random() < 0.25:
        cc = sorted(rng.sample(range(width), rng.randint(1, width)))
        if rng.random() < 0.1:
            cc = [width + 1]  # out of range: the official script errs and scores 0
    if variants and rng.random() < 0.3:
        cc = [sorted(rng.sample(range(len(g[0]) if g else 1), 1)) for g in [gold, *variants]]
    ignore_order = rng.random() < 0.6
    return gold, pred, variants, cc, ignore_order


def _width(rows: list[tuple], default: int = 1) -> int:
    return len(rows[0]) if rows else default


def _jury(gold, pred, variants, cc, ignore_order, gold_width) -> bool:
    return compare.spider2(
        gold,
        pred,
        order_matters=not ignore_order,
        condition_cols=cc,
        variants=[RecordedResult(columns=[f"c{i}" for i in range(_width(v))], rows=[list(r) for r in v]) for v in variants],
        gold_width=gold_width,
    )


def _run(n: int, seed: int, big: bool = False) -> tuple[int, int, tuple[int, int], list]:
    """(pairs, pairs where `spider2` equals the official decision, (pairs without condition_cols
    or variants, of those where `subset` equals it), the differing pairs)."""
    rng = random.Random(seed)
    equal = subset_equal = plain = 0
    diffs = []
    for _ in range(n):
        gold, pred, variants, cc, ignore_order = _case(rng, big)
        gw = _width(gold, rng.randint(1, 3))
        official = bool(official_score(pred, [(gold, gw)] + [(v, _width(v)) for v in variants], cc, ignore_order))
        mine = _jury(gold, pred, variants, cc, ignore_order, gw)
        equal += mine == official
        if mine != official:
            diffs.append((gold, pred, variants, cc, ignore_order))
        if not variants and not cc:
            plain += 1
            subset_equal += compare.subset(gold, pred, order_matters=not ignore_order) == official
    return n, equal, (plain, subset_equal), diffs


def test_spider2_equals_the_official_decision_on_generated_pairs():
    n, equal, _, diffs = _run(150, seed=19)
    assert equal == n, f"{n - equal} of {n} differ; first: {diffs[0]}"


@pytest.mark.slow
def test_spider2_equals_the_official_decision_on_many_generated_pairs():
    n, equal, subset_equal, diffs = _run(9000, seed=2019)
    assert equal == n, f"{n - equal} of {n} differ; first: {diffs[0]}"


@pytest.mark.slow
def test_spider2_equals_the_official_decision_across_chunks_of_500_rows():
    n, equal, _, diffs = _run(30, seed=7, big=True)
    assert equal == n, f"{n - equal} of {n} differ; first: {diffs[0]}"


def test_official_rules_subset_does_not_follow():
    """What `spider2` decides as the official code does and `subset` (on raw values) does not."""
    # NULL is 0, and anything within 0.01 of 0 matches it.
    assert compare.spider2([(0,)], [(None,)]) and compare.spider2([(None,)], [(0.004,)])
    assert not compare.subset([(0,)], [(None,)])
    # CSV re-typing: '1' is read back as 1, 'NULL' as NULL, '007' as 7.
    assert compare.spider2([(1,)], [("1",)]) and compare.spider2([(None,)], [("NULL",)])
    assert compare.spider2([(7,)], [("007",)])
    assert not compare.subset([(1,)], [("1",)])
    # Tolerance 0.01 absolute, as math.isclose(abs_tol=1e-2): 1.01 - 1.0 is 0.010000000000000009 in floats.
    assert compare.spider2([(1.0,)], [(1.009,)]) and not compare.spider2([(1.0,)], [(1.01,)])
    # Order is ignored only when it does not matter.
    assert compare.spider2([(1,), (2,)], [(2,), (1,)]) and not compare.spider2([(1,), (2,)], [(2,), (1,)], order_matters=True)


def test_condition_cols_and_variants():
    gold = [(1, "a"), (2, "b")]
    assert not compare.spider2(gold, [("a",), ("b",)])
    assert compare.spider2(gold, [("a",), ("b",)], condition_cols=[1])
    assert not compare.spider2(gold, [("a",), ("b",)], condition_cols=[5])  # the official script errs: 0
    other = RecordedResult(columns=["n"], rows=[[3], [4]])
    assert compare.spider2(gold, [(4,), (3,)], variants=[other])  # any variant may match
    assert not compare.spider2(gold, [(4,), (3,)], variants=[other], condition_cols=[[0], [1]])  # variant 2: column 1 missing


def test_spider2_is_a_named_comparator():
    assert compare.get_comparator("spider2") is compare.spider2
    assert Comparator("spider2") is Comparator.SPIDER2


def test_gold_item_spider2_options_are_read_and_checked():
    item = GoldItem.model_validate(
        {
            "question_id": 1,
            "db_id": "d",
            "SQL": "SELECT 1",
            "spider2": {"condition_cols": [0], "variants": [{"columns": ["a"], "rows": [[1]]}]},
        }
    )
    extras = compare.spider2_extras(item)
    assert extras["condition_cols"] == [0] and extras["variants"][0].rows == [[1]]
    bad = GoldItem.model_validate({"question_id": 2, "db_id": "d", "SQL": "SELECT 1", "spider2": {"condition_cols": "x"}})
    with pytest.raises(InputError, match="gold question 2: spider2.condition_cols"):
        compare.spider2_extras(bad)
    assert s2.item_options(GoldItem(question_id=3, db_id="d", sql="SELECT 1")).condition_cols == []


SPIDER2_GOLD = [
    {  # Spider 2.0 ignores the order (order_matters false) and asks only for column 1
        "question_id": "local001",
        "db_id": "warehouse",
        "SQL": "SELECT id, total FROM sale",
        "order_matters": False,
        "result": {"columns": ["id", "total"], "rows": [[1, 0], [2, 10.5]]},
        "spider2": {"condition_cols": [1]},
    },
    {  # two recorded gold variants (local002_a.csv, local002_b.csv): either may match
        "question_id": "local002",
        "db_id": "warehouse",
        "SQL": "SELECT name FROM item",
        "order_matters": False,
        "result": {"columns": ["name"], "rows": [["apple"]]},
        "spider2": {"variants": [{"columns": ["name"], "rows": [["apple"], ["plum"]]}]},
    },
]
SPIDER2_RUNS = [
    # NULL for 0, '10.5' as text, no id column: official 1, subset 0
    {
        "model": "m",
        "question_id": "local001",
        "sql": "SELECT total FROM sale",
        "result": {"columns": ["t"], "rows": [["10.5"], [None]]},
    },
    # the second variant
    {
        "model": "m",
        "question_id": "local002",
        "sql": "SELECT name FROM item",
        "result": {"columns": ["n"], "rows": [["plum"], ["apple"]]},
    },
]


def _evaluate(tmp_path, comparator: str):
    from jury.compare.outcomes import Settings, evaluate
    from jury.execution.store import Store
    from jury.inputs.io import load_gold, load_runs
    from tests.support.helpers import write_gold, write_runs

    tmp_path.mkdir(parents=True, exist_ok=True)
    gold = load_gold(write_gold(tmp_path, SPIDER2_GOLD))
    records = load_runs([write_runs(tmp_path, SPIDER2_RUNS)], gold)
    with Store(tmp_path / "store.db") as st:
        return evaluate(gold, records, None, st, Settings(workers=1, comparator=comparator))


def test_score_with_the_spider2_comparator_reads_the_gold_items_spider2_options(tmp_path):
    ev = _evaluate(tmp_path, "spider2")
    assert [p.outcome for p in ev.pairs] == ["match", "match"]
    assert all(p.comparator_matches["spider2"] and not p.comparator_matches["subset"] for p in ev.pairs)
    # Other comparators leave spider2 out of the side columns.
    assert "spider2" not in _evaluate(tmp_path / "strict", "strict").pairs[0].comparator_matches


def test_a_malformed_spider2_field_is_one_line_naming_the_question(tmp_path):
    import subprocess
    import sys

    from tests.support.helpers import write_gold, write_runs

    write_gold(tmp_path, [{**SPIDER2_GOLD[0], "spider2": {"condition_cols": ["total"]}}])
    write_runs(tmp_path, SPIDER2_RUNS[:1])
    args = [sys.executable, "-m", "jury", "score", "run.jsonl", "--gold", "gold.json", "--comparator", "spider2"]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "gold question 'local001': spider2.condition_cols" in done.stderr
