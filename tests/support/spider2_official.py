"""Spider 2.0's official comparison, run with pandas: the reference jury's `spider2` comparator
is tested against.

Source: xlang-ai/Spider2 (MIT licence, (c) 2024 bird_sql), ``spider2-snow/evaluation_suite/evaluate.py``
and ``spider2-lite/evaluation_suite/evaluate.py``: ``get_sqlite_result`` (the CSV the
pipeline writes), ``compare_pandas_table`` and ``compare_multi_pandas_table`` as of the
version that maps NULL/NaN to 0 before comparing (``normalize``). The functions below follow
those functions call for call (the same pandas calls: ``read_sql_query(chunksize=500)``,
``to_csv``, ``read_csv``, ``iloc``, ``transpose().values.tolist()``, ``pd.isna``,
``math.isclose(abs_tol=1e-2)``, the same sort key), restated here rather than pasted;
the evaluation script's I/O (directories, credentials, logging) is left out.
"""

from __future__ import annotations

import io
import math
import sqlite3
from collections.abc import Sequence

import pandas as pd

TOLERANCE = 1e-2


def sqlite_result_frame(rows: Sequence[Sequence], width: int) -> pd.DataFrame:
    """``get_sqlite_result`` then ``pd.read_csv``: the rows are put in an SQLite table (untyped
    columns keep every value as given), queried with ``read_sql_query(chunksize=500)``, each
    chunk appended to one CSV with ``to_csv(header=first, index=False)``, and read back."""
    conn = sqlite3.connect(":memory:")
    try:
        names = ", ".join(f"c{i}" for i in range(width))
        conn.execute(f"CREATE TABLE t ({names})")
        conn.executemany(f"INSERT INTO t VALUES ({', '.join('?' * width)})", [tuple(r) for r in rows])
        buf = io.StringIO()
        for i, chunk in enumerate(pd.read_sql_query("SELECT * FROM t", conn, chunksize=500)):
            chunk.to_csv(buf, mode="a" if i > 0 else "w", header=i == 0, index=False)
    finally:
        conn.close()
    return pd.read_csv(io.StringIO(buf.getvalue()))


def compare_pandas_table(pred: pd.DataFrame, gold: pd.DataFrame, condition_cols=[], ignore_order=False) -> int:  # noqa: B006
    def normalize(value):
        return 0 if pd.isna(value) else value

    def sort_key(x):
        return (x is None, str(x), isinstance(x, (int, float)))

    def vectors_match(v1, v2, tol=TOLERANCE, ignore_order_=False):
        v1 = [normalize(x) for x in v1]
        v2 = [normalize(x) for x in v2]
        if ignore_order_:
            v1, v2 = sorted(v1, key=sort_key), sorted(v2, key=sort_key)
        if len(v1) != len(v2):
            return False
        for a, b in zip(v1, v2):
            if pd.isna(a) and pd.isna(b):
                continue
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if not math.isclose(float(a), float(b), abs_tol=tol):
                    return False
            elif a != b:
                return False
        return True

    if condition_cols != []:
        if not isinstance(condition_cols, (list, tuple)):
            condition_cols = [condition_cols]
        gold_cols = gold.iloc[:, condition_cols]
    else:
        gold_cols = gold
    t_gold_list = gold_cols.transpose().values.tolist()
    t_pred_list = pred.transpose().values.tolist()
    score = 1
    for gold_vector in t_gold_list:
        if not any(vectors_match(gold_vector, p, ignore_order_=ignore_order) for p in t_pred_list):
            score = 0
    return score


def compare_multi_pandas_table(pred, multi_gold, multi_condition_cols=[], multi_ignore_order=False) -> int:  # noqa: B006
    if multi_condition_cols in ([], [[]], [None], None):
        multi_condition_cols = [[] for _ in range(len(multi_gold))]
    elif len(multi_gold) > 1 and not all(isinstance(sub, list) for sub in multi_condition_cols):
        multi_condition_cols = [multi_condition_cols for _ in range(len(multi_gold))]
    for i, gold in enumerate(multi_gold):
        if compare_pandas_table(pred, gold, multi_condition_cols[i], multi_ignore_order):
            return 1
    return 0


def official_score(pred_rows, gold_results, condition_cols=[], ignore_order=False) -> int:  # noqa: B006
    """The evaluation script's score: one gold result -> ``compare_pandas_table``, several
    (``<id>_a.csv``, ``<id>_b.csv``, ...) -> ``compare_multi_pandas_table``; an exception in
    the comparison is a ``Python Script Error`` and scores 0. ``gold_results`` are
    ``(rows, width)`` pairs; the predicted width is that of its first row (1 when empty)."""
    pred = sqlite_result_frame(pred_rows, len(pred_rows[0]) if pred_rows else 1)
    golds = [sqlite_result_frame(rows, width) for rows, width in gold_results]
    try:
        if len(golds) == 1:
            return compare_pandas_table(pred, golds[0], condition_cols, ignore_order)
        return compare_multi_pandas_table(pred, golds, condition_cols, ignore_order)
    except Exception:
        return 0
