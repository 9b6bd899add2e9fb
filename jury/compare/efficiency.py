"""Efficiency of matched answers: BIRD's VES and R-VES, and Spider 2.0-AIFunc's time ratio.

Each matched pair's candidate and gold run ``repeats`` times, interleaved (candidate, then
gold, as BIRD's ``evaluation_ves.py``), on one read-only connection, one pair at a time (no
parallel executions skew the clock). Timings are cached in the store with the CPU model they
were measured on and reused only on a machine with the same CPU model.

- **VES** (BIRD): per pair the ratios gold time / candidate time of each repetition, cleaned
  of outliers by BIRD's ``clean_abnormal`` (keep x with mean − 3σ < x < mean + 3σ, σ the
  population standard deviation), averaged; an item scores sqrt(that mean) × 100 when it
  matches, 0 otherwise; VES is the mean over the model's routed questions (strict's
  denominator) less the matches never timed (recorded outcomes: left out and counted). A
  match whose timing fails scores 0, as in BIRD. When every ratio is equal (σ = 0) BIRD's
  rule keeps nothing, its script divides by zero and its error handler scores the item 0;
  here every ratio is kept (the item scores sqrt(ratio) × 100). With n values none can lie
  beyond sqrt(n − 1) σ (Samuelson's inequality), so the rule drops nothing below 11
  repetitions: BIRD's script runs 100, the default here.
- **R-VES** (BIRD mini-dev): the same items, each scoring sqrt(reward) × 100 where the reward
  buckets that time ratio: ≥ 2 → 1.25, ≥ 1 → 1, ≥ 0.5 → 0.75, ≥ 0.25 → 0.5, else 0.25 (0 when
  not a match).
- **time ratio** (Spider 2.0-AIFunc): per matched pair the cleaned mean candidate time over
  the cleaned mean gold time; its mean and its median over the model's timed matches, and
  the share of those where the candidate is faster (ratio < 1). The paper's controlled
  comparison: the same mean and median over the questions *every* model solved (matched and
  timed), so each model's ratio covers the same questions (:func:`all_solved_time_ratios`).

BIRD times only ``cursor.execute`` (SQLite's first step); jury times executing and stepping
through every row, which is what the answer costs. On PostgreSQL, MySQL/MariaDB and DuckDB the
same clock (this process's monotonic one) runs from sending the statement to its last row
fetched, on one kept read-only connection (jury.execution.engines.timed_runs); the read-only
transaction around each run is not timed.
"""

from __future__ import annotations

import math
import platform
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.inputs.records import GoldItem, QuestionId, RunRecord
from jury.vocab import DEFAULT_EFFICIENCY_REPEATS, Outcome

if TYPE_CHECKING:
    from jury.compare.outcomes import Evaluation, PairResult
    from jury.execution.store import Store


def clean_abnormal(values: Sequence[float]) -> list[float]:
    """BIRD's outlier rule: the values strictly within 3 population standard deviations of the
    mean (all of them when they are all equal).

    >>> clean_abnormal([1.0] * 20 + [100.0])
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> clean_abnormal([2.0, 2.0])
    [2.0, 2.0]
    """
    n = len(values)
    if n == 0:
        return []
    mean = sum(values) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in values) / n)
    kept = [x for x in values if mean - 3 * std < x < mean + 3 * std]
    return kept or list(values)


def ves_ratio(gold_times: Sequence[float], pred_times: Sequence[float]) -> float:
    """BIRD's per-item time ratio: the cleaned mean of gold/candidate per repetition."""
    kept = clean_abnormal([g / p for g, p in zip(gold_times, pred_times, strict=True)])
    return sum(kept) / len(kept)


def r_ves_reward(time_ratio: float) -> float:
    """BIRD mini-dev's R-VES reward of a matched item's time ratio (gold / candidate).

    >>> [r_ves_reward(x) for x in (3.0, 1.0, 0.5, 0.25, 0.1)]
    [1.25, 1.0, 0.75, 0.5, 0.25]
    """
    if time_ratio >= 2:
        return 1.25
    if time_ratio >= 1:
        return 1.0
    if time_ratio >= 0.5:
        return 0.75
    if time_ratio >= 0.25:
        return 0.5
    return 0.25


def pred_gold_ratio(gold_times: Sequence[float], pred_times: Sequence[float]) -> float:
    """Spider 2.0-AIFunc's t_pred / t_gold, each time the cleaned mean of its repetitions."""
    g, p = clean_abnormal(list(gold_times)), clean_abnormal(list(pred_times))
    return (sum(p) / len(p)) / (sum(g) / len(g))


def cpu_model() -> str:
    """This machine's CPU model (the first `model name` of /proc/cpuinfo, else platform's)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


@dataclass
class PairTiming:
    gold_times: list[float] | None
    pred_times: list[float] | None
    measured_at: str
    cached: bool

    @property
    def ok(self) -> bool:
        return bool(self.gold_times) and bool(self.pred_times) and all(t > 0 for t in self.pred_times or [])


def time_matches(
    ev: Evaluation,
    records: Sequence[RunRecord],
    gold: Mapping[QuestionId, GoldItem],
    store: Store,
    *,
    repeats: int = DEFAULT_EFFICIENCY_REPEATS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[int, PairTiming]:
    """Index of each executed matched pair -> its timings (measured now, or reused)."""
    # the engines load here, not when jury.results.scoring imports this module's TypedDicts
    from jury.execution.repeat import timed_runs
    from jury.execution.timings import get_timing, put_timing, timing_key

    cpu = cpu_model()
    wanted: dict[str, tuple[str, str, str]] = {}  # timing key -> (db_id, gold sql, candidate sql)
    index: dict[int, str] = {}
    for i, (pair, record) in enumerate(zip(ev.pairs, records, strict=True)):
        if pair.outcome != Outcome.MATCH or pair.recorded or record.sql is None:
            continue
        g = gold[record.question_id]
        key = timing_key(ev.databases[g.db_id][1], g.sql, record.sql, repeats)
        wanted.setdefault(key, (g.db_id, g.sql, record.sql))
        index[i] = key
    timings: dict[str, PairTiming] = {}
    for key in wanted:
        found = get_timing(store, key, cpu)
        if found is not None:
            timings[key] = PairTiming(found[0], found[1], found[2], True)
    todo = [k for k in wanted if k not in timings]
    if progress:
        progress(0, len(todo))
    for done, key in enumerate(todo, start=1):
        db_id, gold_sql, pred_sql = wanted[key]
        path, sha = ev.databases[db_id]
        pred_times, gold_times = timed_runs(path, [pred_sql, gold_sql], repeats, timeout_s=ev.settings.timeout_s)
        stamp = put_timing(store, key, sha, gold_sql, pred_sql, repeats, (gold_times, pred_times), cpu)
        timings[key] = PairTiming(gold_times, pred_times, stamp, False)
        if progress:
            progress(done, len(todo))
    return {i: timings[k] for i, k in index.items()}


class EfficiencyScore(TypedDict):
    """One model's efficiency columns (:func:`efficiency_scores`)."""

    ves: float | None
    r_ves: float | None
    ves_n: int
    time_ratio: float | None
    time_ratio_median: float | None
    faster_share: float | None
    timed_matches: int
    untimed_matches: int
    failed_timings: int
    repeats: int
    cpu: str
    measured_from: str | None
    measured_to: str | None


class _Tally(TypedDict):
    """One model's sums while :func:`efficiency_scores` walks the pairs."""

    _ves: float
    _r_ves: float
    n: int
    ratios: list[float]
    untimed: int
    failed: int
    stamps: list[str]


class AllSolvedRatios(TypedDict):
    """One model's time ratio over the questions every model solved (:func:`all_solved_time_ratios`)."""

    all_solved_questions: int
    time_ratio_all_solved: float | None
    time_ratio_all_solved_median: float | None


def efficiency_scores(
    pairs: Sequence[PairResult], timings: Mapping[int, PairTiming], repeats: int, cpu: str
) -> dict[str, EfficiencyScore]:
    """model -> {ves, r_ves, ves_n, time_ratio, faster_share, timed_matches, untimed_matches,
    failed_timings, ...}.

    The denominator of VES and R-VES (``ves_n``) is the model's routed questions less its matches
    never timed (``untimed_matches``: an outcome recorded elsewhere, with nothing to execute
    here); a match whose timing failed (an error or a timeout in a repetition,
    ``failed_timings``) scores 0, as BIRD's script scores it.
    """
    out: dict[str, _Tally] = {}
    for i, pair in enumerate(pairs):
        if pair.excluded or not pair.routed:
            continue
        m = out.setdefault(
            pair.model, {"_ves": 0.0, "_r_ves": 0.0, "n": 0, "ratios": [], "untimed": 0, "failed": 0, "stamps": []}
        )
        if pair.outcome != Outcome.MATCH:
            m["n"] += 1
            continue
        t = timings.get(i)
        if t is None:
            m["untimed"] += 1  # never timed: left out of the denominator
            continue
        m["n"] += 1
        if not t.ok:
            m["failed"] += 1
            continue
        assert t.gold_times is not None and t.pred_times is not None
        ratio = ves_ratio(t.gold_times, t.pred_times)
        m["_ves"] += math.sqrt(ratio) * 100
        m["_r_ves"] += math.sqrt(r_ves_reward(ratio)) * 100
        m["ratios"].append(pred_gold_ratio(t.gold_times, t.pred_times))
        m["stamps"].append(t.measured_at)
    result: dict[str, EfficiencyScore] = {}
    for model, m in out.items():
        ratios = m["ratios"]
        result[model] = {
            "ves": m["_ves"] / m["n"] if m["n"] else None,
            "r_ves": m["_r_ves"] / m["n"] if m["n"] else None,
            "ves_n": m["n"],
            "time_ratio": sum(ratios) / len(ratios) if ratios else None,
            "time_ratio_median": statistics.median(ratios) if ratios else None,
            "faster_share": sum(r < 1 for r in ratios) / len(ratios) if ratios else None,
            "timed_matches": len(ratios),
            "untimed_matches": m["untimed"],
            "failed_timings": m["failed"],
            "repeats": repeats,
            "cpu": cpu,
            "measured_from": min(m["stamps"]) if m["stamps"] else None,
            "measured_to": max(m["stamps"]) if m["stamps"] else None,
        }
    return result


def all_solved_time_ratios(pairs: Sequence[PairResult], timings: Mapping[int, PairTiming]) -> dict[str, AllSolvedRatios]:
    """model -> {all_solved_questions, time_ratio_all_solved, time_ratio_all_solved_median}:
    Spider 2.0-AIFunc's controlled time ratio, t_pred/t_gold (:func:`pred_gold_ratio`) over the
    questions every model of ``pairs`` matched with a successful timing (a model without a
    pair for a question, a misrouted pair or a gold error leaves it out). The same questions
    for every model; ratios None when there are none."""
    ratios: dict[QuestionId, dict[str, float]] = {}  # question -> model -> ratio
    models = list(dict.fromkeys(p.model for p in pairs))
    for i, pair in enumerate(pairs):
        t = timings.get(i)
        if pair.outcome != Outcome.MATCH or not pair.routed or t is None or not t.ok:
            continue
        assert t.gold_times is not None and t.pred_times is not None
        ratios.setdefault(pair.question_id, {})[pair.model] = pred_gold_ratio(t.gold_times, t.pred_times)
    solved = [q for q, by_model in ratios.items() if len(by_model) == len(models)]
    out: dict[str, AllSolvedRatios] = {}
    for model in models:
        values = [ratios[q][model] for q in solved]
        out[model] = {
            "all_solved_questions": len(values),
            "time_ratio_all_solved": sum(values) / len(values) if values else None,
            "time_ratio_all_solved_median": statistics.median(values) if values else None,
        }
    return out
