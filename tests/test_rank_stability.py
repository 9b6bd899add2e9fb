"""Rank stability (jury.results.ranks): the bootstrap over questions pinned against an
independent, loop-by-loop bootstrap written here, reproducible with a seed, and shown in
the JSON report and the text report."""

from __future__ import annotations

import numpy as np
import pytest

from jury.errors import InputError
from jury.results.report.build import build_report, render_report
from jury.stats.core import ranks as competition_ranks
from tests.test_report import GOLD, audit_doc, make_eval, verdict_docs


def accuracies(ev, flagged, credited, column, draw):
    """Per model (in the pairs' order): its accuracy over the questions drawn (indexes into the
    scored questions, repeats counted), None where it had no question."""
    questions = list(dict.fromkeys(p.question_id for p in ev.pairs if p.outcome != "gold_error"))
    models = list(dict.fromkeys(p.model for p in ev.pairs))
    by = {(p.model, p.question_id): p for p in ev.pairs}
    acc = []
    for m in models:
        k = n = 0
        for j in draw:
            q = questions[j]
            p = by.get((m, q))
            if p is None or p.outcome == "gold_error" or not p.routed:
                continue
            if column == "gold_clean" and q in flagged:
                continue
            n += 1
            if p.outcome == "match" or (column == "adjudicated" and (m, q) in credited):
                k += 1
        acc.append(k / n if n else None)
    return models, acc


def independent_bootstrap(ev, flagged, credited, column, resamples, seed):
    """Per model: the list of its ranks over the resamples (None where it had no question),
    computed one resample and one model at a time from the pairs."""
    n_questions = len({p.question_id for p in ev.pairs if p.outcome != "gold_error"})
    models = list(dict.fromkeys(p.model for p in ev.pairs))
    out = {m: [] for m in models}
    for b in range(resamples):
        draw = np.random.default_rng([seed, b]).integers(0, n_questions, size=n_questions)
        models, acc = accuracies(ev, flagged, credited, column, draw)
        for m, r in zip(models, competition_ranks(acc)):
            out[m].append(r)
    return out


def summary(rank_list, n_models):
    defined = sorted(r for r in rank_list if r is not None)

    # inverted-CDF percentiles: the smallest rank whose cumulative share reaches 2.5% / 97.5%
    def pct(share):
        for i, r in enumerate(defined, 1):
            if i / len(defined) >= share - 1e-12:
                return r

    probs = [defined.count(r) / len(defined) for r in range(1, n_models + 1)]
    return pct(0.025), pct(0.975), probs


@pytest.fixture(scope="module")
def report():
    return build_report(
        make_eval(), GOLD, audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), rank_resamples=1000, seed=7
    ).model_dump(mode="json")


def test_rank_intervals_equal_an_independent_bootstrap(report):
    ev = make_eval()
    credited = {(r.model, r.question_id) for _p, d in verdict_docs() for r in d.records if r.credited}
    rs = report["rank_stability"]
    assert (rs["resamples"], rs["seed"], rs["questions"]) == (1000, 7, 6)  # q7, a gold error, is left out
    for column in ("strict", "gold_clean", "adjudicated"):
        mine = independent_bootstrap(ev, {2, 6}, credited, column, 1000, 7)
        ranked = sum(m[f"{column}_rank"] is not None for m in report["models"])
        for entry, row in zip(rs["columns"][column], report["models"]):
            assert entry["model"] == row["model"] and entry["rank"] == row[f"{column}_rank"]
            low, high, probs = summary(mine[row["model"]], ranked)
            assert (entry["low"], entry["high"]) == (low, high), (column, row["model"])
            assert entry["probabilities"] == pytest.approx(probs, abs=1e-12)
            assert entry["undefined_resamples"] == sum(r is None for r in mine[row["model"]])
            assert entry["low"] <= entry["high"] and sum(entry["probabilities"]) == pytest.approx(1.0)


def test_same_seed_same_intervals_other_seed_other_draws(report):
    again = build_report(make_eval(), GOLD, audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), rank_resamples=1000, seed=7)
    assert again.model_dump(mode="json")["rank_stability"] == report["rank_stability"]
    other = build_report(make_eval(), GOLD, audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), rank_resamples=1000, seed=8)
    probs = lambda rs: [e["probabilities"] for c in rs["columns"].values() for e in c]  # noqa: E731
    assert probs(other.model_dump(mode="json")["rank_stability"]) != probs(report["rank_stability"])


def test_too_few_resamples_is_an_input_error():
    with pytest.raises(InputError, match="at least 1,000"):
        build_report(make_eval(), GOLD, strength=None, rank_resamples=999)


def test_columns_follow_the_verdicts_given():
    rep = build_report(make_eval(), GOLD, strength=None).model_dump(mode="json")
    assert list(rep["rank_stability"]["columns"]) == ["strict"]
    assert "rank_stability" not in build_report(make_eval(), GOLD, strength=None, rank_resamples=None).model_dump(mode="json")


def test_text_and_markdown_show_the_rank_intervals(report):
    """Every model's cell, "rank [low–high]", from the independent bootstrap above and ranks of
    the full-sample accuracies computed here, in the markdown and the table."""
    from jury.stats.core import ordinal

    ev = make_eval()
    credited = {(r.model, r.question_id) for _p, d in verdict_docs() for r in d.records if r.credited}
    n_questions = len({p.question_id for p in ev.pairs if p.outcome != "gold_error"})
    models, acc = accuracies(ev, {2, 6}, credited, "adjudicated", range(n_questions))
    full_rank = dict(zip(models, competition_ranks(acc)))
    mine = independent_bootstrap(ev, {2, 6}, credited, "adjudicated", 1000, 7)
    cells = []
    for m in models:
        if full_rank[m] is None:
            continue
        low, high, _ = summary(mine[m], sum(r is not None for r in full_rank.values()))
        cells.append(f"{ordinal(full_rank[m])} [{ordinal(low)}–{ordinal(high)}]")
    assert cells
    md = render_report(report, "md")
    table = render_report(report, "table")
    assert "### rank stability: 1,000 bootstrap resamples" in md and "rank stability" in table
    assert [c for c in cells if c not in md] == [] and [c for c in cells if c not in table] == []


def test_rank_interval_ends_are_the_exact_inverted_cdf_percentiles():
    """1,000 resamples: rank 1 in exactly 25 (2.5%), rank 2 in 950, rank 3 in 25. By the
    inverted empirical CDF the 2.5th percentile is the 25th smallest rank (F(1) = 25/1000
    reaches 0.025), so 1, and the 97.5th the 975th smallest (F(2) = 975/1000), so 2: the
    interval is [1, 2]. In floats (1 - 0.95)/2 exceeds 0.025, which once took the 26th smallest
    (2) as the low end: the interval left out 26 resamples below and 25 above."""
    from jury.results.ranks import summarise

    ranks = np.array([1.0] * 25 + [2.0] * 950 + [3.0] * 25)[:, None]
    (row,) = summarise(ranks, [2], ["m"])
    assert (row["low"], row["high"]) == (1, 2)
    # and the mirror image: 25 resamples at the worst rank reach the 97.5th percentile's tail exactly
    mirror = np.array([1.0] * 26 + [2.0] * 949 + [3.0] * 25)[:, None]
    (row,) = summarise(mirror, [2], ["m"])
    assert (row["low"], row["high"]) == (1, 2)
