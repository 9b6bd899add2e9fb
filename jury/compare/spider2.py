"""Spider 2.0's official result comparison, reproduced without pandas.

Spider 2.0 (xlang-ai/Spider2, ``spider2-lite``/``spider2-snow``
``evaluation_suite/evaluate.py``) writes each result to CSV with pandas, reads it back
with ``pd.read_csv`` and compares the two frames with ``compare_pandas_table``. This
module reproduces that decision on SQLite values (None, int, float, str, bytes):

1. **CSV round trip** (:func:`csv_round_trip`): a result is written as
   ``get_sqlite_result`` writes it (``pd.read_sql_query(chunksize=500)`` then
   ``to_csv`` chunk by chunk, so a chunk's column type decides how its numbers are
   spelled) and read back as ``read_csv`` types it: NA spellings (``''``, ``'NULL'``,
   ``'NaN'``, ``'None'``, ...) become NULL, integer-looking text becomes an int, other
   number-looking text a float (``'007'`` -> 7, ``'1e3'`` -> 1000.0), ``'True'``/``'false'``
   a bool; a column with a NULL cannot hold ints, so its ints become floats; in a
   one-column result a value made only of spaces and tabs is read as a blank line and
   its row disappears.
2. **Transposition** (:func:`_vectors`): a table whose columns mix int and float types
   turns every int into a float (pandas' common dtype), as ``.transpose().values`` does.
3. **Comparison** (:func:`compare_tables`): NULL becomes 0; each gold column vector must
   equal some predicted column vector, both sorted by ``(str(x), is_number)`` when the order
   is ignored; numbers within ``abs_tol=0.01`` (``math.isclose``), anything else by ``==``.
   ``condition_cols`` picks the gold columns that must be found; with several gold
   variants (``bq001_a.csv``, ``bq001_b.csv``, ...) any may match (:func:`compare_variants`).

Outside the exact claim: strings holding a carriage return (pandas writes them
unquoted and reads them as line breaks), CSV files too large for ``read_csv`` to type
in one piece (``low_memory`` chunks of about 256 KiB may type one column two ways), and
floats whose shortest repr pandas' own parser reads one ulp off.

>>> compare_variants([(None,)], [[(0,)]])  # NULL is 0
True
>>> compare_variants([("1",)], [[(1,)]])  # '1' is read back as 1
True
>>> compare_variants([(1, "x")], [[(9, 1)]]), compare_variants([(1, "x")], [[(9, 1)]], condition_cols=[1])
(False, True)
>>> compare_variants([(2,)], [[(1,)], [(2.004,)]])  # any gold variant may match
True
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TypeGuard

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jury.errors import InputError
from jury.inputs.records import GoldItem, RecordedResult

#: Numbers match within this absolute tolerance (``math.isclose(a, b, abs_tol=1e-2)``).
TOLERANCE = 1e-2
#: Rows per chunk of ``pd.read_sql_query(..., chunksize=500)`` in ``get_sqlite_result``.
CHUNK_ROWS = 500
#: The gold item field holding Spider 2.0's per-item options.
FIELD = "spider2"

# pandas' default NA spellings (pandas._libs.parsers.STR_NA_VALUES).
_NA_TEXT = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
_TRUE_TEXT = frozenset({"True", "TRUE", "true"})
_FALSE_TEXT = frozenset({"False", "FALSE", "false"})
_WS = "[ \t\n\x0b\x0c\r]*"  # what pandas' C number parser skips around a number
_INT_TEXT = re.compile(f"{_WS}[+-]?[0-9]+{_WS}")
_FLOAT_TEXT = re.compile(f"{_WS}[+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?{_WS}")
_INF_TEXT = re.compile("[+-]?inf(?:inity)?", re.IGNORECASE)
_BLANK_LINE = re.compile("[ \t]+")  # a one-column line of only these is skipped by read_csv
_INT64 = (-(2**63), 2**63 - 1)

INT64, UINT64, FLOAT64, BOOL, OBJECT = "int64", "uint64", "float64", "bool", "object"
#: A value of a read-back column: an int, a float (NaN for NA), a bool or text.
Cell = int | float | str
#: (pandas dtype read_csv gives it, its values as .tolist() gives them)
Column = tuple[str, Sequence[Cell]]


#: The gold columns that must be found, as the script's ``iloc`` takes them: column indices (one
#: list for every gold) or one list per gold variant; None or empty: every column. A value of
#: another shape (an index not an int, out of range) is the script's error, scored 0.
ConditionCols = Sequence[object] | None


class Spider2Options(BaseModel):
    """A gold item's ``spider2`` field: Spider 2.0's per-item evaluation options.

    ``condition_cols`` are the indices of the gold columns that must be found (empty: all),
    one list for every gold result or, with variants, one list per result; ``variants``
    are further gold results (Spider 2.0's ``<id>_a.csv``, ``<id>_b.csv``, ...) of which any
    may match, after the item's own result. Whether row order matters is the item's
    ``order_matters`` (Spider 2.0's ``ignore_order`` is its negation).
    """

    model_config = ConfigDict(extra="forbid")

    condition_cols: list[int] | list[list[int]] = Field(default_factory=list)
    variants: list[RecordedResult] = Field(default_factory=list)


def item_options(item: GoldItem) -> Spider2Options:
    """The ``spider2`` options of a gold item (defaults when it has none); bad ones raise InputError."""
    raw = (item.model_extra or {}).get(FIELD)
    if raw is None:
        return Spider2Options()
    try:
        opts = Spider2Options.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"gold question {item.question_id!r}: {FIELD}{'.' + where if where else ''}: {err['msg']}") from None
    bad = next((i for i, v in enumerate(opts.variants) if v.error is not None), None)
    if bad is not None:
        raise InputError(f"gold question {item.question_id!r}: {FIELD}.variants.{bad}: a gold variant cannot be an error")
    return opts


# -- CSV round trip -----------------------------------------------------------------------


def _is_null(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _text(v: object) -> str:
    """How ``to_csv`` spells a value of an object column (``str``; a float's repr)."""
    return v if isinstance(v, str) else str(v)


def _number(v: object) -> TypeGuard[int | float]:
    """An int or a float, not a subclass (bool): what read_sql_query types as a number."""
    return type(v) in (int, float)


def _chunk_texts(values: Sequence[object]) -> list[str | None]:
    """One chunk of one column as ``to_csv`` writes it; None is an empty (NA) field.

    ``read_sql_query`` types the chunk's column first: ints alone stay ints; ints with
    NULLs or floats become float64 (``1`` is written ``1.0``); anything else is an
    object column, each value written as ``str`` does.
    """
    present = [v for v in values if not _is_null(v)]
    numeric = bool(present) and all(_number(v) for v in present)
    if numeric and all(type(v) is float or _INT64[0] <= v <= _INT64[1] for v in present if _number(v)):
        if len(present) == len(values) and all(type(v) is int for v in present):
            return [str(v) for v in values]
        return [repr(float(v)) if _number(v) and not _is_null(v) else None for v in values]
    return [None if _is_null(v) else _text(v) for v in values]


def _read_column(texts: list[str | None]) -> Column:
    """What ``pd.read_csv`` makes of one column's written fields (None: an empty field)."""
    fields = [None if t is None or t in _NA_TEXT else t for t in texts]  # None: NA
    na = any(t is None for t in fields)
    present = [t for t in fields if t is not None]
    if not texts:
        return OBJECT, []
    if not present:
        return FLOAT64, [math.nan] * len(texts)
    if all(_INT_TEXT.fullmatch(t) for t in present):
        if na:
            return FLOAT64, [math.nan if t is None else float(t) for t in fields]
        ints = [int(t) for t in present]
        if all(_INT64[0] <= i <= _INT64[1] for i in ints):
            return INT64, ints
        if all(0 <= i < 2**64 for i in ints):
            return UINT64, ints
        return OBJECT, ints
    if all(_FLOAT_TEXT.fullmatch(t) or _INF_TEXT.fullmatch(t) for t in present):
        return FLOAT64, [math.nan if t is None else float(t) for t in fields]
    if all(t in _TRUE_TEXT or t in _FALSE_TEXT for t in present):
        bools = [math.nan if t is None else t in _TRUE_TEXT for t in fields]
        return (OBJECT if na else BOOL), bools
    return OBJECT, [math.nan if t is None else t for t in fields]


def csv_round_trip(rows: Sequence[Sequence[object]], width: int | None = None) -> list[Column]:
    """The columns of ``rows`` after Spider 2.0's ``to_csv`` (in chunks of 500) and ``read_csv``.

    Without rows only the header is written: ``width`` empty columns (default 1: a
    query result has at least one column).

    >>> csv_round_trip([(1, "007", None), (2, "x", 1.5)])
    [('int64', [1, 2]), ('object', ['007', 'x']), ('float64', [nan, 1.5])]
    >>> csv_round_trip([("1",), ("NULL",), ("2.50",)])
    [('float64', [1.0, nan, 2.5])]
    >>> csv_round_trip([(" ",), ("a",)])  # a blank line: the row is gone
    [('object', ['a'])]
    >>> csv_round_trip([], width=2)
    [('object', []), ('object', [])]
    """
    rows = [tuple(r) for r in rows]
    if not rows:
        return [(OBJECT, []) for _ in range(1 if width is None else width)]
    width = len(rows[0])
    texts: list[list[str | None]] = [[] for _ in range(width)]
    for start in range(0, len(rows), CHUNK_ROWS):
        chunk = rows[start : start + CHUNK_ROWS]
        for j in range(width):
            texts[j].extend(_chunk_texts([r[j] for r in chunk]))
    if width == 1:  # a lone empty field is written '""'; a line of spaces and tabs is blank
        texts[0] = [t for t in texts[0] if t is None or not _BLANK_LINE.fullmatch(t)]
    return [_read_column(t) for t in texts]


# -- comparison ---------------------------------------------------------------------------


def _vectors(columns: Sequence[Column]) -> list[list[Cell]]:
    """``frame.transpose().values.tolist()``: ints become floats when int and float dtypes mix."""
    dtypes = {d for d, _ in columns}
    if len(dtypes) > 1 and dtypes <= {INT64, UINT64, FLOAT64}:
        return [[float(v) for v in vals] for _, vals in columns]
    return [list(vals) for _, vals in columns]


def _sort_key(x: object) -> tuple[bool, str, bool]:
    return (x is None, str(x), isinstance(x, (int, float)))


def _normalize(x: object) -> object:
    return 0 if _is_null(x) else x


def _vectors_match(vector1: Sequence[Cell], vector2: Sequence[Cell], ignore_order: bool) -> bool:
    v1 = [_normalize(x) for x in vector1]
    v2 = [_normalize(x) for x in vector2]
    if ignore_order:
        v1, v2 = sorted(v1, key=_sort_key), sorted(v2, key=_sort_key)
    if len(v1) != len(v2):
        return False
    for a, b in zip(v1, v2):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if not math.isclose(float(a), float(b), abs_tol=TOLERANCE):  # float() may raise OverflowError
                return False
        elif a != b:
            return False
    return True


class _ScriptError(Exception):
    """Where the official script raises (and its caller scores 0)."""


def _select(columns: list[Column], condition_cols: object) -> list[Column]:
    """``gold.iloc[:, condition_cols]``: an index out of range (or not an int) raises."""
    if condition_cols == []:
        return columns
    picks = condition_cols if isinstance(condition_cols, (list, tuple)) else [condition_cols]
    n = len(columns)
    picked = []
    for i in picks:
        if isinstance(i, bool) or not isinstance(i, int) or not -n <= i < n:
            raise _ScriptError(f"condition column {i!r} out of range for {n} columns")
        picked.append(columns[i])
    return picked


def _compare(pred: list[Column], gold: list[Column], condition_cols: object, ignore_order: bool) -> bool:
    """``compare_pandas_table(pred, gold, condition_cols, ignore_order)``."""
    gold_vectors = _vectors(_select(gold, condition_cols))
    pred_vectors = _vectors(pred)
    try:
        return all(any(_vectors_match(g, p, ignore_order) for p in pred_vectors) for g in gold_vectors)
    except OverflowError as exc:  # an int too large for a float
        raise _ScriptError(str(exc)) from None


def compare_tables(
    pred: list[Column], golds: Sequence[list[Column]], condition_cols: ConditionCols = (), ignore_order: bool = False
) -> bool:
    """The official score of the read-back tables: ``compare_pandas_table`` against one gold,
    ``compare_multi_pandas_table`` against several; a script error scores 0 (False)."""
    cc = list(condition_cols) if isinstance(condition_cols, tuple) else condition_cols
    try:
        if len(golds) == 1:
            return _compare(pred, golds[0], [] if cc is None else cc, ignore_order)
        if cc is None or cc in ([], [[]], [None]):
            per_gold: Sequence[object] = [[] for _ in golds]
        elif len(golds) > 1 and not all(isinstance(s, list) for s in cc):
            per_gold = [cc for _ in golds]
        else:
            per_gold = cc
        for i, gold in enumerate(golds):
            if i >= len(per_gold):
                raise _ScriptError("fewer condition_cols lists than gold variants")
            if _compare(pred, gold, per_gold[i], ignore_order):
                return True
        return False
    except _ScriptError:
        return False


def compare_variants(
    pred_rows: Sequence[Sequence[object]],
    gold_variants: Sequence[Sequence[Sequence[object]]],
    *,
    condition_cols: ConditionCols = (),
    ignore_order: bool = False,
    gold_widths: Sequence[int | None] = (),
) -> bool:
    """Spider 2.0's decision for a predicted result against one or more gold results (rows).

    ``gold_widths`` give each gold result's column count, needed only when it has no rows.

    >>> compare_variants([(1, 2)], [[(2,)]])  # extra predicted columns are allowed
    True
    >>> compare_variants([(2,), (1,)], [[(1,), (2,)]]), compare_variants([(2,), (1,)], [[(1,), (2,)]], ignore_order=True)
    (False, True)
    """
    if not gold_variants:
        raise ValueError("at least one gold result is needed")
    widths = list(gold_widths) + [None] * (len(gold_variants) - len(gold_widths))
    pred = csv_round_trip(pred_rows)
    golds = [csv_round_trip(g, w) for g, w in zip(gold_variants, widths)]
    return compare_tables(pred, golds, condition_cols, ignore_order)
