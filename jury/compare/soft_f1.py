"""BIRD mini-dev's Soft-F1: a partial credit per answer from matching its rows to the gold's.

The definition is mini-dev's ``evaluation/evaluation_f1.py`` (bird-bench/mini_dev), quirks
included, so that a column of jury reproduces its per-question scores exactly:

1. Both results empty: 1.0.
2. Duplicate rows are dropped, **keeping the first of each** in the order the database returned
   them (``list(dict.fromkeys(rows))``; an earlier version of the script went through
   ``set()``, whose order is arbitrary for text). Python equality decides what a duplicate is:
   ``1``, ``1.0`` and ``True`` are one value.
3. Rows are matched **by position** after that: the i-th gold row against the i-th predicted
   row, whatever their content (so the same rows in another order can score below 1).
4. Within a pair, with ``w`` the gold row's width: each predicted value found anywhere in the
   gold row (``in``: a NULL finds a NULL) adds 1/w to the true positives, any other 1/w to the
   false positives; each gold value not found in the predicted row adds 1/w to the false
   negatives. Values are not consumed: a predicted row ``(1, 1)`` against a gold row ``(1,)``
   scores 2/1 true positives.
5. A gold row with no predicted row at its position adds 1 false negative; a predicted row
   beyond the gold's adds 1 false positive.
6. precision = tp/(tp+fp), recall = tp/(tp+fn) (0 when the sum is 0), F1 their harmonic mean
   (0 when both are 0).

A query that fails or times out scores 0 (the script's ``except``), and so does a pair the
script's arithmetic cannot score (a gold row of width 0). The column is the mean over the
questions a model routed to the right database (gold errors left out, as everywhere in jury);
mini-dev's script averages over every row of its file, which is the same when every model
answers every question with the right database.

mini-dev's README works this example by hand to 0.8, leaving its blank (NULL) cells out; the
script counts a NULL as a value like any other (a predicted NULL not in the gold row is a false
positive, a gold NULL not in the predicted row a false negative) and gets 2/3; jury follows the
script:

>>> soft_f1([("Apple", 325), ("Orange", None), ("Banana", 119)], [(325, "Apple"), (191, "Orange"), (None, "Banana")])
0.6666666666666666
>>> soft_f1([], [])
1.0
>>> soft_f1([(1,), (2,)], [(2,), (1,)])  # the same rows in another order
0.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation, PairResult
    from jury.inputs.records import ExecResult, GoldItem, QuestionId, RunRecord

#: One row made a tuple, as the script's ``dict.fromkeys`` keeps it.
Row = tuple[object, ...]


def _row_counts(pred: Row, gold: Row) -> tuple[float, float, float]:
    """(true positives, false positives, false negatives) of one predicted row against one gold row."""
    width = len(gold)
    found = sum(1 for v in pred if v in gold)
    return found / width, (len(pred) - found) / width, sum(1 for v in gold if v not in pred) / width


def soft_f1(gold_rows: Sequence[Sequence[object]], pred_rows: Sequence[Sequence[object]]) -> float:
    """mini-dev's Soft-F1 of ``pred_rows`` against ``gold_rows`` (each in the order returned)."""
    if not gold_rows and not pred_rows:
        return 1.0
    try:
        gold = list(dict.fromkeys(tuple(r) for r in gold_rows))
        pred = list(dict.fromkeys(tuple(r) for r in pred_rows))
    except TypeError:  # a value Python cannot hash (an engine's JSON or array): the script's exception, scored 0
        return 0.0
    tp = fp = fn = 0.0
    try:
        for g, p in zip(gold, pred):
            t, f, n = _row_counts(p, g)
            tp, fp, fn = tp + t, fp + f, fn + n
    except ZeroDivisionError:  # a gold row of width 0: the script's exception, scored 0
        return 0.0
    for _ in range(len(gold) - len(pred)):  # one at a time: the script's float sums, bit for bit
        fn += 1
    for _ in range(len(pred) - len(gold)):
        fp += 1
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def pair_soft_f1(pair: PairResult, results: Mapping[str, ExecResult], raw: RawRows | None = None) -> float | None:
    """One scored answer's Soft-F1 (a jury.compare.outcomes.PairResult with the evaluation's
    results): 0 for an answer that did not execute (error, timeout, missing), None when its or
    the gold's rows are not all known here (over the row cap, or recorded as preview text) and
    for an answer outside every denominator (misrouted, a gold error left out); a gold error
    counted (--gold-errors fail) scores 0, as in mini-dev's script (its ``except``).

    With ``raw`` the rows of a result on an engine are the driver's values (:class:`RawRows`),
    None when they cannot be fetched again."""
    from jury.vocab import NOT_EXECUTED, Outcome

    if pair.excluded or pair.outcome == Outcome.MISROUTED:
        return None
    if pair.outcome == Outcome.GOLD_ERROR:
        return 0.0
    if pair.outcome in NOT_EXECUTED:
        return 0.0
    gold = results.get(pair.gold_key) if pair.gold_key is not None else None
    pred = results.get(pair.pred_key) if pair.pred_key is not None else None
    if gold is None or pred is None or not (gold.ok and pred.ok):
        return None
    if gold.truncated or pred.truncated or gold.recorded_preview is not None or pred.recorded_preview is not None:
        return None
    gold_rows = gold.rows if raw is None else raw.rows(pair.gold_key, gold)
    pred_rows = pred.rows if raw is None else raw.rows(pair.pred_key, pred)
    if gold_rows is None or pred_rows is None:
        return None
    return soft_f1(gold_rows, pred_rows)


class RawRows:
    """The rows of each result executed on an engine as its driver returns them, which is what
    mini-dev's script scores: the stored rows are normalised (Decimal made int or float, dates
    made text: jury.execution.engine_values.normalise), and Python's ``==`` tells apart what
    normalising merges (``Decimal('31.2000') != 31.2``, ``date(2020, 1, 2) != '2020-01-02'``).

    A result whose raw set digest is its normalised one (``raw_sha256 == result_sha256``: every
    value one SQLite has a type for, or a Decimal equal to its int or float) has its stored rows
    as they are: a row whose driver values differ from their normalised ones holds a Token no
    normalised row holds, so equal digests mean every row is the same either way. Any other
    result on an engine is executed again (jury.execution.engines.execute with ``raw_rows``: the
    same read-only login, statement check, timeout and row cap), once per (database, SQL) in the
    run; its rows are never stored. SQLite's and recorded results are their stored rows."""

    def __init__(
        self, ev: Evaluation, gold_items: Mapping[QuestionId, GoldItem] | None = None, records: Sequence[RunRecord] | None = None
    ) -> None:
        from jury.execution.engine_urls import is_url
        from jury.execution.store import execution_key

        self.settings = ev.settings
        self.jobs: dict[str, tuple[str, str]] = {}  # execution key -> (URL, SQL)
        self.fetched: dict[str, list[Row] | None] = {}
        urls = {db_id: (str(path), fp) for db_id, (path, fp) in ev.databases.items() if is_url(str(path))}
        if not urls:
            return
        for item in (gold_items or {}).values():
            if item.db_id in urls and not item.has_recording and item.sql is not None:
                url, fp = urls[item.db_id]
                self.jobs[execution_key(fp, item.sql)] = (url, item.sql)
        for r in records or []:
            g = (gold_items or {}).get(r.question_id)
            if g is not None and g.db_id in urls and not r.has_recording and r.sql is not None:
                url, fp = urls[g.db_id]
                self.jobs[execution_key(fp, r.sql)] = (url, r.sql)

    def rows(self, key: str | None, result: ExecResult) -> list[Row] | None:
        """The rows of the result at ``key`` as mini-dev's script sees them; None when fetching
        them again does not return them all."""
        if key is None or key not in self.jobs or (result.raw_sha256 is not None and result.raw_sha256 == result.result_sha256):
            return result.rows
        if key not in self.fetched:
            from jury.execution import engines

            url, sql = self.jobs[key]
            again = engines.execute(
                url, sql, timeout_s=self.settings.timeout_s, row_cap=self.settings.row_cap, cached=True, raw_rows=True
            )
            self.fetched[key] = again.rows if again.ok and not again.truncated else None
        return self.fetched[key]

    def close(self) -> None:
        if self.fetched:
            from jury.execution import engines

            engines.close_connections()


def soft_f1_by_pair(
    ev: Evaluation, gold_items: Mapping[QuestionId, GoldItem] | None = None, records: Sequence[RunRecord] | None = None
) -> dict[tuple[str, QuestionId], float | None]:
    """(model, question_id) -> pair_soft_f1 for every pair of a jury.compare.outcomes.Evaluation;
    with the gold items (question_id -> GoldItem) and run records the evaluation was made of,
    results on an engine are scored on the driver's values (:class:`RawRows`)."""
    raw = RawRows(ev, gold_items, records)
    try:
        return {(p.model, p.question_id): pair_soft_f1(p, ev.results, raw) for p in ev.pairs}
    finally:
        raw.close()
