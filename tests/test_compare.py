"""Tests for jury.compare.comparators: result-row comparators and gold ORDER BY detection."""

import itertools
import json
import random

import pytest

from jury.compare import comparators as compare
from jury.compare.comparators import (
    COMPARATORS,
    NormalizeOptions,
    bird,
    get_comparator,
    gold_orders_rows,
    normalize_rows,
    overlap,
    relaxed,
    strict,
    subset,
)
from jury.errors import InputError

# --- bird -------------------------------------------------------------------


def test_bird_ignores_duplicates_and_order():
    assert bird([(1, "a"), (2, "b")], [(2, "b"), (1, "a"), (2, "b")])


def test_bird_int_equals_float_but_not_string():
    assert bird([(1,)], [(1.0,)])
    assert not bird([("1",)], [(1,)])


def test_bird_detects_missing_row():
    assert not bird([(1,), (2,)], [(1,)])


def test_bird_ignores_order_matters():
    assert bird([(1,), (2,)], [(2,), (1,)], order_matters=True)


# --- strict -----------------------------------------------------------------


def test_strict_nulls_equal_each_other():
    assert strict([(None, 1), (2, None)], [(2, None), (None, 1)])
    assert not strict([(None, 1)], [(0, 1)])


def test_strict_order_sensitive_sequences():
    gold = [(None,), (1,), (2,)]
    pred = [(2,), (None,), (1,)]
    assert strict(gold, pred)
    assert not strict(gold, pred, order_matters=True)
    assert strict(gold, list(gold), order_matters=True)


def test_strict_order_matters_counts_duplicates_and_uses_value_equality():
    assert not strict([(1,), (1,)], [(1,)], order_matters=True)
    assert strict([(1, None)], [(1.0, None)], order_matters=True)


# --- relaxed ----------------------------------------------------------------


def test_relaxed_swapped_columns():
    gold = [(1, "a"), (2, "b")]
    pred = [("a", 1), ("b", 2)]
    assert not strict(gold, pred)
    assert relaxed(gold, pred)


def test_relaxed_six_column_permutation():
    gold = [(i, f"s{i}", i * 1.5, None if i % 2 else i, bytes([i]), -i) for i in range(5)]
    perm = (4, 2, 5, 0, 3, 1)
    pred = [tuple(r[p] for p in perm) for r in reversed(gold)]
    assert relaxed(gold, pred)
    assert not relaxed(gold, pred, order_matters=True)
    assert relaxed(gold, [tuple(r[p] for p in perm) for r in gold], order_matters=True)


def test_relaxed_column_count_mismatch():
    assert not relaxed([(1, 2)], [(1, 2, 2)])
    assert not relaxed([(1, 2, 3)], [(1, 2)])


def test_relaxed_column_value_sets_match_but_rows_do_not():
    gold = [(1, "a"), (2, "b")]
    pred = [("b", 1), ("a", 2)]
    # Each column's value set has a partner, yet no permutation reproduces the rows.
    assert not relaxed(gold, pred)


def test_relaxed_identical_value_columns_need_right_mapping():
    # All three columns share the value set {0, 1}; only one mapping works.
    gold = [(0, 0, 1), (0, 1, 0), (1, 1, 1)]
    pred = [(1, 0, 0), (0, 0, 1), (1, 1, 1)]  # gold columns reordered as (2, 0, 1)
    assert relaxed(gold, pred)
    # Same per-column value sets, but row weights (2, 1, 3) vs (1, 1, 3): no permutation fits.
    bad = [(1, 1, 0), (0, 0, 1), (1, 1, 1)]
    assert not any({tuple(r[p] for p in perm) for r in bad} == set(gold) for perm in itertools.permutations(range(3)))
    assert not relaxed(gold, bad)


def test_relaxed_wide_result_is_fast_and_correct():
    width = 12
    gold = [tuple((r * 7 + c) % 3 for c in range(width)) for r in range(30)]
    perm = list(reversed(range(width)))
    pred = [tuple(row[p] for p in perm) for row in gold]
    assert relaxed(gold, pred)


def test_relaxed_wide_binary_columns_within_search_cap(monkeypatch):
    # 40 columns sharing the value set {0, 1}: per-column sets alone cannot tell
    # them apart; the pairwise refinement must pin each column to one candidate,
    # so one search step per column suffices.
    monkeypatch.setattr(compare, "RELAXED_SEARCH_LIMIT", 40)
    rng = random.Random(7)
    gold = [tuple(rng.randint(0, 1) for _ in range(40)) for _ in range(200)]
    perm = list(range(40))
    rng.shuffle(perm)
    pred = [tuple(row[p] for p in perm) for row in gold]
    rng.shuffle(pred)
    assert relaxed(gold, pred)
    pred[0] = tuple(1 - v for v in pred[0])
    assert not relaxed(gold, pred)


def test_relaxed_set_semantics_ignore_duplicates():
    assert relaxed([(1, "a"), (1, "a")], [("a", 1)])
    assert not relaxed([(1, "a"), (1, "a")], [("a", 1)], order_matters=True)


def test_relaxed_search_cap_returns_false(monkeypatch):
    gold = [(0, 0, 1), (0, 1, 0), (1, 1, 1)]
    pred = [(1, 0, 0), (0, 0, 1), (1, 1, 1)]
    monkeypatch.setattr(compare, "RELAXED_SEARCH_LIMIT", 0)
    assert not relaxed(gold, pred)


def test_relaxed_empty_results():
    assert relaxed([], [])
    assert not relaxed([], [(1,)])


# --- subset -----------------------------------------------------------------


def test_subset_extra_predicted_columns_allowed():
    gold = [(1, "x"), (2, "y")]
    pred = [("y", 2, "extra"), ("x", 1, "extra")]
    assert subset(gold, pred)
    assert not subset(pred, gold)


def test_subset_float_tolerance():
    assert subset([(1.0,)], [(1.009,)])
    assert not subset([(1.0,)], [(1.02,)])
    assert subset([(1.0,)], [(1.02,)], tolerance=0.05)


def test_subset_row_count_mismatch():
    assert not subset([(1,), (2,)], [(1,), (2,), (2,)])


def test_subset_order_matters():
    gold = [(1, "a"), (2, "b")]
    pred = [(2, "b"), (1, "a")]
    assert subset(gold, pred)
    assert not subset(gold, pred, order_matters=True)


def test_subset_nulls_and_strings():
    assert subset([(None, "a")], [("a", None)])
    assert not subset([("a",)], [("A",)])


def test_subset_empty_cases():
    assert subset([], [])
    assert not subset([], [(1,)])
    assert not subset([(1,)], [])


# --- overlap ----------------------------------------------------------------


def test_overlap_jaccard():
    assert overlap([("a",), ("b",)], [("b",), ("c",)]) == pytest.approx(1 / 3)
    assert overlap([(1,)], [(1,), (1,)]) == 1.0
    assert overlap([(1,)], [(2,)]) == 0.0


def test_overlap_empty():
    assert overlap([], []) == 1.0
    assert overlap([], [(1,)]) == 0.0


# --- options ----------------------------------------------------------------


def test_options_casefold():
    opts = NormalizeOptions(casefold=True)
    assert not strict([("Straße",)], [("STRASSE",)])
    assert strict([("Straße",)], [("STRASSE",)], options=opts)
    assert bird([("ABC",)], [("abc",)], options=opts)
    assert subset([("ABC",)], [("abc",)], options=opts)
    assert overlap([("A",)], [("a",)], options=opts) == 1.0


def test_options_float_sig_digits():
    opts = NormalizeOptions(float_sig_digits=3)
    assert not bird([(0.12345,)], [(0.1234,)])
    assert bird([(0.12345,)], [(0.1234,)], options=opts)
    # Significant digits, not decimal places: 1234.5 -> 1230.0.
    assert normalize_rows([(1234.5,)], opts) == [(1230.0,)]
    assert bird([(1234.5,)], [(1231.0,)], options=opts)
    # Ints are rounded too: 1235 -> 1240.0 (round half to even), still not 1230.0.
    assert not bird([(1234.5,)], [(1235,)], options=opts)


def test_normalize_identity_when_off():
    rows = [("AbC", 0.123456789, 5, None, b"x")]
    assert normalize_rows(rows, NormalizeOptions()) == rows


def test_options_describe_is_json_able():
    opts = NormalizeOptions(casefold=True, float_sig_digits=4)
    assert json.loads(json.dumps(opts.describe())) == {"casefold": True, "float_sig_digits": 4}
    assert NormalizeOptions().describe() == {"casefold": False, "float_sig_digits": None}


def test_options_reject_bad_sig_digits():
    with pytest.raises(InputError):
        NormalizeOptions(float_sig_digits=0)


# --- registry ---------------------------------------------------------------


def test_comparators_registry():
    assert set(COMPARATORS) == {"bird", "bird_normalized", "strict", "relaxed", "subset", "spider2"}
    for name, fn in COMPARATORS.items():
        assert get_comparator(name) is fn


def test_get_comparator_unknown_name():
    with pytest.raises(InputError) as err:
        get_comparator("x")
    assert str(err.value) == "unknown comparator 'x'; choose one of: bird, bird_normalized, relaxed, spider2, strict, subset"


# --- gold_orders_rows -------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("SELECT a FROM t ORDER BY a DESC;", True),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a) AS s", False),
        ("SELECT a FROM t WHERE a IN (SELECT b FROM u ORDER BY b LIMIT 3)", False),
        ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", False),
        ("WITH c AS (SELECT a FROM t) SELECT a FROM c ORDER BY a", True),
        ("SELECT name FROM t ORDER BY x LIMIT 1", True),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", True),
        ("SELECT a FROM t UNION ALL SELECT b FROM u", False),
        ("SELECT a FROM t", False),
        ("SELEC a FRM WHERE", False),
        ("", False),
    ],
)
def test_gold_orders_rows(sql, expected):
    assert gold_orders_rows(sql) is expected


@pytest.mark.parametrize(
    "sql", ["SELECT a FROM t ORDER BY a;", "SELECT a FROM t ORDER BY a;;", "SELECT a FROM t ORDER BY a;\n-- done"]
)
def test_order_by_detected_despite_trailing_semicolons_and_comments(sql):
    assert gold_orders_rows(sql) is True


# --- side_by_side: every comparator at once --------------------------------


def _random_rows(rng: random.Random, width: int) -> list[tuple]:
    values = [None, 0, 1, 1.0, 1.005, 2, "a", "A", "1", b"a", "b'a'"]
    return [tuple(rng.choice(values) for _ in range(width)) for _ in range(rng.randint(0, 4))]


@pytest.mark.parametrize("order_matters", [False, True])
def test_side_by_side_equals_each_comparator_alone(order_matters):
    """Shared sets and shortcuts decide exactly what each comparator decides on its own: random
    small results (duplicates, permuted columns and rows, ragged rows, 1 == 1.0, empty ones),
    each against a permutation of itself, a variant and an unrelated result."""
    rng = random.Random(7)
    names = [str(name) for name in compare.SHARED]
    checked = 0
    for _ in range(1500):
        gold = _random_rows(rng, rng.randint(1, 3))
        others = [
            rng.sample(gold, len(gold)),
            [tuple(reversed(r)) for r in gold],
            gold + gold[:1],
            [r[:-1] if i == 0 else r for i, r in enumerate(gold)],  # a ragged row
            _random_rows(rng, len(gold[0]) if gold else 2),
            [list(r) for r in gold],  # rows as lists, as a decoder may give them
        ]
        for pred in others:
            decided, share = compare.side_by_side(gold, pred, names, order_matters=order_matters)
            alone = {name: bool(COMPARATORS.get_named(name)(gold, pred, order_matters=order_matters)) for name in names}
            assert decided == alone, (gold, pred)
            assert share == overlap(gold, pred)
            checked += 1
    assert checked == 9000
