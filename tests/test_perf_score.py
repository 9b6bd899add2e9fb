"""Issue 12 (performance), the scoring side: no scipy/litellm/matplotlib on the `jury score`
path, the closed-form Wilson interval and ranks pinned against scipy, linear grouping by model.

No timing assertions: what is pinned is what the fast path computes and what it imports.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from scipy import stats as sps

import jury.results.scoring
from jury.results.scoring import score_all
from jury.stats import agreement, core
from tests.support.jurytest import make_project

HEAVY = ("scipy", "litellm", "matplotlib")


# --------------------------------------------------------------------------- Wilson vs scipy


def _wilson_cases():
    rng = random.Random(12)
    cases = [(0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (0, 129), (129, 129), (88, 129), (1, 1000), (999, 1000)]
    cases += [(0, 10**7), (10**7, 10**7), (1, 10**7), (5_000_001, 10**7), (123_456_789, 987_654_321)]
    for _ in range(300):
        n = rng.choice([rng.randint(1, 50), rng.randint(51, 5000), rng.randint(5001, 10**9)])
        cases.append((rng.randint(0, n), n))
    return cases


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.999999])
def test_wilson_agrees_with_scipy_binomtest(confidence):
    for k, n in _wilson_cases():
        ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        got = core.wilson(k, n, confidence)
        assert got.k == k and got.n == n and got.value == k / n
        assert abs(got.low - float(ci.low)) < 1e-12, (k, n, confidence, got.low, float(ci.low))
        assert abs(got.high - float(ci.high)) < 1e-12, (k, n, confidence, got.high, float(ci.high))
        assert 0.0 <= got.low <= got.value <= got.high <= 1.0


def test_wilson_ends_are_exact_as_scipy_gives_them():
    for n in (1, 7, 129, 10**6):
        assert core.wilson(0, n).low == 0.0 and core.wilson(n, n).high == 1.0
    assert core.wilson(0, 0).as_dict() == {"k": 0, "n": 0, "value": None, "low": None, "high": None}
    for bad in ((-1, 3), (4, 3), (0, -1)):
        with pytest.raises(ValueError):
            core.wilson(*bad)
    for conf in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            core.wilson(1, 2, conf)


# --------------------------------------------------------------------------- ranks vs scipy


def _scipy_ranks(values, descending):
    present = [(i, v) for i, v in enumerate(values) if v is not None and v == v]
    out = [None] * len(values)
    if present:
        arr = [-v if descending else v for _, v in present]
        for (i, _), r in zip(present, sps.rankdata(arr, method="min")):
            out[i] = int(r)
    return out


def test_ranks_agree_with_scipy_rankdata():
    rng = random.Random(7)
    cases = [[], [None], [float("nan")], [0.5], [1.0, 1.0, 1.0], [0.0, -0.0, 0.0], [3, 1, 2]]
    for _ in range(400):
        size = rng.randint(1, 60)
        pool = [rng.random() for _ in range(rng.randint(1, 8))]  # few distinct values: many ties
        values = [rng.choice([*pool, None, float("nan")]) if rng.random() < 0.2 else rng.choice(pool) for _ in range(size)]
        cases.append(values)
    cases.append([k / 129 for k in range(130)] * 3)
    for values in cases:
        for descending in (True, False):
            assert core.ranks(values, descending=descending) == _scipy_ranks(values, descending), values


# --------------------------------------------------------------------------- linear grouping


def test_score_all_groups_linearly_with_the_same_scores_as_per_model_scans():
    rng = random.Random(3)
    outcomes = ["match", "near_miss", "mismatch", "error", "timeout", "missing", "misrouted", "gold_error"]
    pairs = []
    for q in range(40):
        for m in range(25):
            outcome = rng.choice(outcomes)
            pairs.append(
                SimpleNamespace(
                    model=f"m{m:02d}",
                    question_id=q,
                    outcome=outcome,
                    routed=outcome != "misrouted",
                    excluded=outcome == "gold_error",  # PairResult.excluded under the default rule
                    comparator_matches={name: rng.random() < 0.6 for name in ("bird", "strict", "relaxed", "subset")},
                )
            )
    rng.shuffle(pairs)  # models interleaved: grouping must not depend on pairs being sorted
    fast = score_all(pairs)
    order = list(dict.fromkeys(p.model for p in pairs))
    assert [s.model for s in fast] == order
    for s in fast:
        [slow] = score_all([p for p in pairs if p.model == s.model])  # the per-model rescan of every pair
        assert s.model_dump(exclude={"strict_rank", "comparator_ranks"}) == slow.model_dump(
            exclude={"strict_rank", "comparator_ranks"}
        )
    values = [s.strict["value"] for s in fast]
    assert [s.strict_rank for s in fast] == _scipy_ranks(values, True)


# --------------------------------------------------------------------------- what `jury score` imports


def _env() -> dict:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("PYTHONWARNINGS", None)
    return env


def test_jury_score_imports_no_scipy_litellm_or_matplotlib(tmp_path):
    """`python -X importtime -m jury score` on a real project: the import log names none of them."""
    project = make_project(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "jury", "score", "run.jsonl", "-f", "json"],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["models"], proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "jury.results.scoring" in imported and "jury.stats.core" in imported  # the log is the real one
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY)
    assert not heavy, heavy[:10]


def test_scoring_in_process_leaves_scipy_unimported(tmp_path):
    """The library path too: evaluate + score_all + render in a fresh interpreter, then sys.modules."""
    project = make_project(tmp_path)
    code = """
import sys
from pathlib import Path
from jury import load_gold, load_runs, evaluate, Settings, Store
from jury.results.scoring import score_all
from jury.results.score_table import render_scores
gold = load_gold(Path("gold.json"))
runs = load_runs([Path("run.jsonl")], gold)
with Store(Path("store.db")) as st:
    ev = evaluate(gold, runs, Path("dbs"), st, Settings(workers=1))
scores = score_all(ev.pairs)
for fmt in ("table", "csv", "json", "md"):
    render_scores(scores, ev, fmt)
assert scores and scores[0].strict["low"] is not None
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("scipy", "litellm", "matplotlib"))))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == ""


def test_stats_functions_that_need_scipy_still_work_after_lazy_import():
    assert core.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], bootstrap_resamples=50).r == pytest.approx(0.8)
    assert core.pearson([1, 2, 3, 4], [2, 4, 6, 8.5]).r == pytest.approx(sps.pearsonr([1, 2, 3, 4], [2, 4, 6, 8.5])[0])
    assert core.position_bias(30, 40)["p_value"] == pytest.approx(sps.binomtest(30, 40, 0.5).pvalue)
    assert agreement.fleiss_kappa([[2, 0], [0, 2], [1, 1]]) is not None


# --------------------------------------------------------------------------- the score benchmark


@pytest.mark.slow
def test_bench_runs_on_the_bundled_example_without_shared(tmp_path):
    from tests.support.helpers import REPO

    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "score_bench.py"), "--workers", "1", "--anchor", str(tmp_path / "absent"),
         "--skip-scaling"],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "15 systems x 129 questions = 1935 pairs from" in proc.stdout and "examples/bird-superhero" in proc.stdout
    assert "jury cold" in proc.stdout and "jury warm" in proc.stdout
    assert "BIRD's script: not run" in proc.stdout


# --------------------------------------------------------------------------- many models, one question


class _CountingPair:
    """A scored pair whose `model` reads are counted (a rescan per model shows up as N^2 reads)."""

    reads = 0

    def __init__(self, model: str, outcome: str):
        self._model, self.outcome, self.routed, self.excluded = model, outcome, True, False
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
