"""What the comparators mean where their documentation makes a promise: --float-digits rounds
integers too, strict differs from bird only by list semantics when order matters, and the
docstring examples and the docs' description of strict hold."""

import doctest
from pathlib import Path

import jury.compare.comparators
import jury.execution.rows
from jury.compare.comparators import NormalizeOptions, bird, normalize_rows, strict


def test_float_digits_rounds_ints_too():
    opts = NormalizeOptions(float_sig_digits=3)
    assert bird([(1234,)], [(1234.0,)])
    assert bird([(1234,)], [(1234.0,)], options=opts)
    assert strict([(1234,), (5,)], [(1234.0,), (5.0,)], order_matters=True, options=opts)
    assert normalize_rows([(1234, 7, True, "7")], opts) == [(1230.0, 7.0, True, "7")]
    assert bird([(1234,)], [(1231.0,)], options=opts)


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
    readme = (Path(__file__).resolve().parent.parent / "docs" / "score.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("- `strict`"))
    assert "NULLs equal" not in line
    assert "duplicates" in readme.split("- `strict`", 1)[1].split("- `relaxed`", 1)[0]
