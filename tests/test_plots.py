"""Tests for jury.results.plots.figures: files written, skipped charts, sizes, and no overlapping text."""

from __future__ import annotations

import itertools
import random

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import pytest

from jury.results.plots import figures as plots
from jury.stats import core

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ALL = ["columns.png", "rank_slope.png", "miss_composition.png", "defect_share_vs_strength.png"]
COMP_KEYS = ["gold_defect", "format_equivalence", "genuine_error", "ambiguous", "no_majority"]


# --------------------------------------------------------------------------- report builders


def _model(name, n, k_strict, k_clean, k_adj, comp, routed=None):
    strict = core.wilson(k_strict, n).as_dict()
    clean = core.wilson(k_clean, n).as_dict()
    adj = core.wilson(k_adj, n).as_dict() if k_adj is not None else None
    total = sum(comp.values())
    return {
        "model": name,
        "families": [name.split("/")[0]],
        "routed": routed or 0,
        "routing_accuracy": None,
        "strict": strict,
        "gold_clean": clean,
        "adjudicated": adj,
        "composition": comp,
        "composition_pct": {k: (100 * v / total if total else None) for k, v in comp.items()},
        "jury_reached": total,
        "near_miss": 0,
        "not_executed": 0,
        "gold_defect_share": (comp["gold_defect"] / total if total and adj else None),
    }


def _finish(models, strength=None):
    """Fill ranks exactly as jury does (competition ranks over present values)."""
    for col in ("strict", "gold_clean", "adjudicated"):
        rk = core.ranks([(m[col] or {}).get("value") for m in models])
        for m, r in zip(models, rk):
            m[f"{col}_rank"] = r
    for m in models:
        m["rank_shift"] = core.rank_shift(m["strict_rank"], m["adjudicated_rank"])
        m["rank_delta"] = core.rank_delta(m["strict_rank"], m["adjudicated_rank"])
    settings = {} if strength is None else {"strength": strength}
    n_pairs = sum(m["gold_defect_share"] is not None for m in models)
    corr = {
        "method": "spearman",
        "r": -0.42,
        "p_value": 0.0123,
        "n": n_pairs,
        "ci_low": -0.66,
        "ci_high": -0.1,
        "strength": "adjudicated",
    }
    return {"settings": settings, "models": models, "correlations": {"gold_defect_share_vs_strength": corr}}


def report3():
    return _finish(
        [
            _model(
                "openai/gpt-x",
                200,
                120,
                130,
                150,
                dict(gold_defect=20, format_equivalence=10, genuine_error=15, ambiguous=3, no_majority=2),
            ),
            _model(
                "acme/tiny",
                200,
                60,
                66,
                70,
                dict(gold_defect=5, format_equivalence=2, genuine_error=110, ambiguous=8, no_majority=5),
            ),
            _model(
                "mistral/mid",
                200,
                100,
                104,
                118,
                dict(gold_defect=12, format_equivalence=6, genuine_error=50, ambiguous=8, no_majority=6),
            ),
        ]
    )


def report36(seed=17):
    rng = random.Random(seed)
    models = []
    for i in range(36):
        name = f"provider{i % 5}/model-name-with-a-long-suffix-{i}"
        if i == 7:  # no scored questions at all
            models.append(_model(name, 0, 0, 0, 0, dict.fromkeys(COMP_KEYS, 0)))
            continue
        n = 500
        # deliberate ties: models 10-13 share strict and adjudicated scores
        k = 250 if 10 <= i <= 13 else rng.randint(100, 420)
        clean = k + (15 if 10 <= i <= 13 else rng.randint(0, 30))
        adj = clean + (20 if 10 <= i <= 13 else rng.randint(0, 40))
        comp = {c: rng.randint(0, 40) for c in COMP_KEYS}
        models.append(_model(name, n, k, clean, adj, comp))
    rep = _finish(models)
    ranks = [m["strict_rank"] for m in models if m["strict_rank"] is not None]
    assert len(ranks) != len(set(ranks))  # the fixture really has ties
    return rep


def no_adjudicated(rep):
    for m in rep["models"]:
        m["adjudicated"] = None
        m["adjudicated_rank"] = None
        m["gold_defect_share"] = None
        m["rank_shift"], m["rank_delta"] = "—", None
    return rep


# --------------------------------------------------------------------------- overlap helper


def _axes_texts(ax):
    texts = list(ax.texts) + [ax.title, ax.xaxis.label, ax.yaxis.label]
    for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        lo, hi = sorted(lim)
        for tick in axis.get_major_ticks():
            if lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                texts += [tick.label1, tick.label2]
    if ax.get_legend() is not None:
        texts += list(ax.get_legend().get_texts()) + [ax.get_legend().get_title()]
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def text_boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        out += [(t, t.get_window_extent(renderer)) for t in _axes_texts(ax)]
    out += [(t, t.get_window_extent(renderer)) for t in fig.texts if t.get_text().strip()]
    return out


def overlapping_texts(fig, tol=1.0):
    bad = []
    for (ta, a), (tb, b) in itertools.combinations(text_boxes(fig), 2):
        if min(a.x1, b.x1) - max(a.x0, b.x0) > tol and min(a.y1, b.y1) - max(a.y0, b.y0) > tol:
            bad.append((ta.get_text(), tb.get_text()))
    return bad


BUILDERS = [plots.columns_figure, plots.rank_slope_figure, plots.miss_composition_figure, plots.defect_share_vs_strength_figure]


# --------------------------------------------------------------------------- tests


def _check_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 8_000


@pytest.mark.parametrize("make", [report3, pytest.param(report36, marks=pytest.mark.slow)])
def test_write_plots_writes_all_four(tmp_path, make):
    paths = plots.write_plots(make(), tmp_path / "out")
    assert [p.name for p in paths] == ALL
    for p in paths:
        assert p.parent == tmp_path / "out"
        _check_png(p)


@pytest.mark.slow
def test_height_grows_with_model_count(tmp_path):
    small = plots.write_plots(report3(), tmp_path / "s")
    big = plots.write_plots(report36(), tmp_path / "b")
    for name in ("columns.png", "miss_composition.png", "rank_slope.png"):
        h3 = mpimg.imread(tmp_path / "s" / name).shape[0]
        h36 = mpimg.imread(tmp_path / "b" / name).shape[0]
        assert h36 > 2.5 * h3, name
        # at least ~0.25 in per model row at 150 dpi
        assert h36 >= 36 * 0.25 * plots.DPI, name
    assert len(small) == len(big) == 4


def test_no_adjudicated_column_writes_only_columns(tmp_path):
    paths = plots.write_plots(no_adjudicated(report3()), tmp_path)
    assert [p.name for p in paths] == ["columns.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["columns.png"]
    _check_png(paths[0])


def test_empty_report_writes_nothing(tmp_path):
    assert plots.write_plots({"settings": {}, "models": []}, tmp_path) == []
    assert plots.write_plots({}, tmp_path / "x") == []


# the 36-model reports take the label placer tens of seconds per figure: the second CI step
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "make",
    [report3, pytest.param(report36, marks=SLOW), pytest.param(lambda: no_adjudicated(report36()), marks=SLOW)],
)
@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_no_overlapping_text_and_fixed_fonts(make, build):
    fig = build(make())
    if fig is None:
        assert build is not plots.columns_figure
        return
    boxes = text_boxes(fig)
    assert len(boxes) >= 5
    assert all(t.get_fontsize() >= 8 for t, _ in boxes)
    assert overlapping_texts(fig) == []
    fig.clear()


def test_overlap_helper_detects_overlap():
    fig = plots.new_figure(4, 3)
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, "some label")
    ax.text(0.52, 0.5, "another label")
    assert overlapping_texts(fig) == [("some label", "another label")]


def test_slope_chart_tied_ranks_get_distinct_labels():
    rep = report3()
    for m in rep["models"]:
        m["strict_rank"], m["adjudicated_rank"] = 1, 2  # all tied on both sides
    fig = plots.rank_slope_figure(rep)
    labels = [t for t in fig.axes[0].texts]
    assert len(labels) == 6
    ys = sorted(t.get_position()[1] for t in labels if t.get_position()[0] < 0.5)
    assert len(set(ys)) == 3
    assert overlapping_texts(fig) == []
    ax = fig.axes[0]
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # inverted: rank 1 on top


def test_columns_sorted_best_adjudicated_on_top():
    fig = plots.columns_figure(report3())
    ax = fig.axes[0]
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "openai/gpt-x"  # highest y = top row
    assert labels[0] == "acme/tiny"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["strict", "gold-clean", "adjudicated"]


def test_long_names_inside_saved_image(tmp_path):
    rep = report36()
    path = plots.plot_columns(rep, tmp_path / "c.png")
    width_in = mpimg.imread(path).shape[1] / plots.DPI
    fig = plots.columns_figure(rep)
    fig.canvas.draw()
    tight = fig.get_tightbbox(fig.canvas.get_renderer())
    assert width_in >= tight.width - 0.05  # bbox_inches="tight": nothing cut off


def test_scatter_title_has_spearman_n_and_p():
    """The title shows the report's Spearman figure; here it is scipy's over the fixture's own
    points (the first 13 models of report36 but model 7, which scored nothing), and the points
    drawn are the ones it was computed on."""
    import math

    from scipy.stats import spearmanr

    rep = report36()
    rep["models"] = rep["models"][:13]  # fewer names to place: the title is the same code
    pts = [(m["adjudicated"]["value"], m["gold_defect_share"]) for m in rep["models"] if m["gold_defect_share"] is not None]
    rho, p = spearmanr(*zip(*pts))
    half = 1.96 / math.sqrt(len(pts) - 3)  # the Fisher-z interval, by hand: tanh(atanh(ρ) ± 1.96/√(n-3))
    low, high = math.tanh(math.atanh(rho) - half), math.tanh(math.atanh(rho) + half)
    corr = rep["correlations"]["gold_defect_share_vs_strength"]
    corr.update(r=float(rho), p_value=float(p), n=len(pts), ci_low=low, ci_high=high)
    fig = plots.defect_share_vs_strength_figure(rep)
    title = fig.axes[0].get_title()
    shown_p = "<0.001" if p < 0.001 else f"{p:.3f}"
    assert f"ρ = {rho:.2f} [{low:.2f}, {high:.2f}], n = 12, p = {shown_p}" in title, title
    drawn = fig.axes[0].collections[0].get_offsets()
    assert len(drawn) == 12 and spearmanr(drawn[:, 0], drawn[:, 1])[0] == pytest.approx(rho)
    assert "adjudicated accuracy" in fig.axes[0].get_xlabel()


def test_scatter_strength_setting_picks_column():
    rep = report3()
    rep["settings"]["strength"] = "strict"
    fig = plots.defect_share_vs_strength_figure(rep)
    xs = sorted(fig.axes[0].collections[0].get_offsets()[:, 0])
    assert xs == pytest.approx(sorted(m["strict"]["value"] for m in rep["models"]))
    assert "strict" in fig.axes[0].get_xlabel()


def test_composition_bars_sum_to_100_percent():
    fig = plots.miss_composition_figure(report3())
    ax = fig.axes[0]
    widths = {}
    for container in ax.containers:
        for i, patch in enumerate(container.patches):
            widths[i] = widths.get(i, 0.0) + patch.get_width()
    assert len(ax.containers) == 5
    assert all(w == pytest.approx(100.0) for w in widths.values())


def test_figures_are_not_left_open(tmp_path):
    before = list(plt.get_fignums())
    plots.write_plots(report3(), tmp_path)  # a figure left open shows after one call
    assert plt.get_fignums() == before
