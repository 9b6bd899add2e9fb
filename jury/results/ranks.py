"""Rank stability: how sure is a model's rank? A seeded bootstrap over questions.

The report ranks models on point estimates. Here the questions are resampled with
replacement (each resample as many questions as there are), every model's accuracy in
each column is recomputed on the resample, exactly as the report computes it (over the
model's routed questions, gold errors left out, gold-clean without the audit's flagged
questions, adjudicated with the jury's credited failures), and the models are ranked as
the report ranks them (``scipy.stats.rankdata(method="min")`` on accuracy, best = 1, as
``jury.stats.core.ranks``). A model with no question in a resample has no rank there; that
resample is left out of its distribution and counted.

Per model and column: the rank interval (the 2.5th and 97.5th percentiles of its bootstrap
ranks by the inverted empirical CDF, ``numpy.quantile(method="inverted_cdf")`` at the exact
levels: the p-th percentile of N ranks is the ceil(p N)-th smallest, so both ends are ranks a
resample gave: :func:`jury.stats.core.rank_interval`, the positions in exact arithmetic) and
the probability of each rank (the share of defined resamples giving it).

Seed scheme (so an independent implementation draws the same resamples): the questions in
order of first appearance in the evaluation's pairs (gold errors left out), Q of them;
resample b (0-based) is ``numpy.random.default_rng([seed, b]).integers(0, Q, size=Q)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from jury.stats.core import rank_interval
from jury.vocab import JURY_ELIGIBLE, Column, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.verdicts.documents import AdjudicationRecord


DEFAULT_RESAMPLES = 1000
MIN_RESAMPLES = 1000
CONFIDENCE = 0.95
_CHUNK = 200  # resamples per matrix product: memory stays bounded


def question_order(pairs: Iterable[PairResult]) -> list[Any]:
    """The questions resampled, in order of first appearance (gold errors left out)."""
    return list(dict.fromkeys(p.question_id for p in pairs if not p.excluded))


def column_matrices(
    pairs: Sequence[PairResult],
    models: list[str],
    questions: list[Any],
    flagged: set[Any] | None,
    index: Mapping[tuple[Any, ...], AdjudicationRecord] | None,
) -> dict[Column, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """{column: (successes, included)}, each a models x questions 0/1 array, for the columns
    the report computes (gold-clean with an audit, adjudicated with verdicts)."""
    m_at = {m: i for i, m in enumerate(models)}
    q_at = {q: j for j, q in enumerate(questions)}
    shape = (len(models), len(questions))
    wanted = (
        [Column.STRICT]
        + ([Column.GOLD_CLEAN] if flagged is not None else [])
        + ([Column.ADJUDICATED] if index is not None else [])
    )
    out = {c: (np.zeros(shape), np.zeros(shape)) for c in wanted}
    for p in pairs:
        if p.excluded or not p.routed:
            continue
        i, j = m_at[p.model], q_at[p.question_id]
        match = p.outcome == Outcome.MATCH
        for c, (succ, incl) in out.items():
            if c == Column.GOLD_CLEAN and p.question_id in (flagged or ()):
                continue
            incl[i, j] = 1.0
            if match:
                succ[i, j] = 1.0
            elif c == Column.ADJUDICATED and p.outcome == JURY_ELIGIBLE:
                rec = (index or {}).get((p.model, p.question_id))
                succ[i, j] = 1.0 if rec is not None and rec.credited else 0.0
    return out


def resample_counts(seed: int, start: int, stop: int, q: int) -> np.ndarray:
    """(stop - start) x q: how often each question is drawn in resamples start..stop-1."""
    counts = np.zeros((stop - start, q))
    for row, b in enumerate(range(start, stop)):
        idx = np.random.default_rng([seed, b]).integers(0, q, size=q)
        counts[row] = np.bincount(idx, minlength=q)
    return counts


def bootstrap_ranks(successes: np.ndarray, included: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """resamples x models: each model's rank (1 = best, "min" ties) per resample; NaN where
    the model has no question in the resample."""
    from scipy.stats import rankdata

    m, q = successes.shape
    out = np.full((resamples, m), np.nan)
    if q == 0 or m == 0:
        return out
    # whole numbers (0/1 matrices): numpy's integer matmul, exact as the float one, without
    # BLAS, whose threads spin on such small products (CPU time; issue 46)
    whole = all(np.array_equal(a, np.trunc(a)) and np.all(np.abs(a) < 2**31) for a in (successes, included))
    if whole:
        successes, included = successes.astype(np.int64), included.astype(np.int64)
    for start in range(0, resamples, _CHUNK):
        stop = min(start + _CHUNK, resamples)
        counts = resample_counts(seed, start, stop, q)
        if whole:
            counts = counts.astype(np.int64)
        k, n = (counts @ successes.T).astype(float), (counts @ included.T).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(n > 0, k / np.where(n > 0, n, 1.0), np.nan)
        out[start:stop] = rankdata(-acc, method="min", axis=1, nan_policy="omit")
    return out


def summarise(
    ranks: np.ndarray, point: list[int | None], models: list[str], confidence: float = CONFIDENCE
) -> list[dict[str, Any]]:
    """Per model: its point rank, rank interval, rank probabilities (index r-1 = rank r) over
    the resamples where it had a rank, and how many resamples it had none."""
    ranked = sum(r is not None for r in point)
    rows: list[dict[str, Any]] = []
    for i, model in enumerate(models):
        col = ranks[:, i]
        defined = col[np.isfinite(col)].astype(int)
        if point[i] is None or not defined.size:
            rows.append(
                {
                    "model": model,
                    "rank": point[i],
                    "low": None,
                    "high": None,
                    "probabilities": [],
                    "undefined_resamples": int(col.size - defined.size),
                }
            )
            continue
        low, high = rank_interval(defined, confidence)
        freq = np.bincount(defined, minlength=ranked + 1)[1 : ranked + 1] / defined.size
        rows.append(
            {
                "model": model,
                "rank": point[i],
                "low": int(low),
                "high": int(high),
                "probabilities": [float(x) for x in freq],
                "undefined_resamples": int(col.size - defined.size),
            }
        )
    return rows


def rank_stability(
    pairs: Sequence[PairResult],
    models: list[str],
    point_ranks: dict[str, dict[str, Any]],
    *,
    flagged: set[Any] | None,
    index: Mapping[tuple[Any, ...], AdjudicationRecord] | None,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The report's ``rank_stability`` block. ``point_ranks``: column -> {model: rank} (the report's ranks)."""
    if resamples < MIN_RESAMPLES:
        from jury.errors import InputError

        raise InputError(f"rank_resamples {resamples}: at least {MIN_RESAMPLES:,} resamples are needed for a 95% rank interval")
    questions = question_order(pairs)
    columns = {}
    for c, (succ, incl) in column_matrices(pairs, models, questions, flagged, index).items():
        ranks = bootstrap_ranks(succ, incl, resamples, seed)
        columns[str(c)] = summarise(ranks, [point_ranks.get(str(c), {}).get(m) for m in models], models)
    return {
        "method": "bootstrap over questions (percentile rank interval, scipy rankdata min ties)",
        "resamples": resamples,
        "seed": seed,
        "confidence": CONFIDENCE,
        "questions": len(questions),
        "columns": columns,
    }
