"""BIRD mini-dev's Soft-F1 script, the reference jury's `--soft-f1` column is tested against.

Source: bird-bench/mini_dev (licence CC BY-SA 4.0, per its README), ``evaluation/evaluation_f1.py``
at commit 2932a2b8b85723dff2b88584442f021380d1d925 (the version that drops duplicate rows
with ``list(dict.fromkeys(...))``, keeping their order; the earlier 47f116d used
``list(set(...))``) and ``evaluation/evaluation_utils.py`` (``execute_sql``, ``package_sqls``).
``calculate_row_match`` and ``calculate_f1_score`` below follow the script statement for
statement (the same loops, lists and sums, in the same order), restated here rather than
pasted; ``run_pair`` is its ``execute_sql`` on SQLite with ``execute_model``'s rule that an
exception scores 0 (its 30 s timeout is not needed on these queries); ``predictions`` is
``package_sqls(mode="pred")``. Argument parsing, multiprocessing and the log file are left out.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def calculate_row_match(predicted_row, ground_truth_row):
    total_columns = len(ground_truth_row)
    matches = 0
    element_in_pred_only = 0
    element_in_truth_only = 0
    for pred_val in predicted_row:
        if pred_val in ground_truth_row:
            matches += 1
        else:
            element_in_pred_only += 1
    for truth_val in ground_truth_row:
        if truth_val not in predicted_row:
            element_in_truth_only += 1
    return matches / total_columns, element_in_pred_only / total_columns, element_in_truth_only / total_columns


def calculate_f1_score(predicted, ground_truth):
    if not predicted and not ground_truth:
        return 1.0
    predicted = list(dict.fromkeys(predicted))
    ground_truth = list(dict.fromkeys(ground_truth))
    match_scores, pred_only_scores, truth_only_scores = [], [], []
    for i, gt_row in enumerate(ground_truth):
        if i >= len(predicted):
            match_scores.append(0)
            truth_only_scores.append(1)
            continue
        match_score, pred_only_score, truth_only_score = calculate_row_match(predicted[i], gt_row)
        match_scores.append(match_score)
        pred_only_scores.append(pred_only_score)
        truth_only_scores.append(truth_only_score)
    for _ in range(len(predicted) - len(ground_truth)):
        match_scores.append(0)
        pred_only_scores.append(1)
        truth_only_scores.append(0)
    tp = sum(match_scores)
    fp = sum(pred_only_scores)
    fn = sum(truth_only_scores)
    precision = tp / (tp + fp) if tp + fp > 0 else 0
    recall = tp / (tp + fn) if tp + fn > 0 else 0
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0


def run_pair(predicted_sql: str, ground_truth: str, db_path: Path) -> float:
    """execute_sql with calculate_f1_score, and execute_model's `except Exception: res = 0`."""
    try:
        conn = sqlite3.connect(db_path)
        cursor = conn.cursor()
        cursor.execute(predicted_sql)
        predicted_res = cursor.fetchall()
        cursor.execute(ground_truth)
        ground_truth_res = cursor.fetchall()
        conn.close()
        return calculate_f1_score(predicted_res, ground_truth_res)
    except Exception:
        return 0


def predictions(path: Path) -> list[str]:
    """package_sqls(mode="pred"): the SQL of each entry in file order (a non-string is " ",
    an entry without the separator its stripped text)."""
    clean = []
    for _, sql_str in json.loads(path.read_text(encoding="utf-8")).items():
        if isinstance(sql_str, str):
            try:
                sql, _db = sql_str.split("\t----- bird -----\t")
            except ValueError:
                sql = sql_str.strip()
        else:
            sql = " "
        clean.append(sql)
    return clean
