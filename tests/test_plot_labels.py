"""The report's figures name what they show: every scatter point is labelled (directly or through
a numbered key) without overlap, the rank slope's colours have a legend, and the composition
chart's title and axis name the same misses."""

import pytest
from test_plots import overlapping_texts, report3, report36

from jury.results.plots import figures as plots

# (adjudicated accuracy, gold-defect share) of the bundled example's 15 systems as the
# scripted loopback panel of tests/test_notebook.py judges them (test doubles, not real numbers)
EXAMPLE15 = {
    "codes-15b-evidence": (0.8760, 0.1053),
    "codes-15b": (0.7519, 0.0303),
    "codes-1b-evidence": (0.7907, 0.0370),
    "codes-1b": (0.6899, 0.0943),
    "codes-3b-evidence": (0.8605, 0.0),
    "codes-3b": (0.7597, 0.025),
    "codes-7b-evidence": (0.8682, 0.2),
    "codes-7b": (0.7984, 0.09375),
    "dail-sql-7shot-presklsim-th0.8": (0.5969, 0.1429),
    "dail-sql-7shot-presklsim-th0.85": (0.6202, 0.0455),
    "dail-sql-7shot-questionmask": (0.6899, 0.1364),
    "dail-sql-9shot-presklsim": (0.7752, 0.0769),
    "dail-sql-9shot-questionmask": (0.7752, 0.16),
    "gsr": (0.9302, 0.2222),
    "ta-sql-gpt4": (0.8682, 0.2),
}


def example15():
    models = [{"model": m, "adjudicated": {"value": x}, "gold_defect_share": y} for m, (x, y) in EXAMPLE15.items()]
    corr = {"method": "spearman", "r": 0.33, "p_value": 0.23, "n": 15, "ci_low": -0.33, "ci_high": 0.76}
    return {"settings": {"strength": "adjudicated"}, "models": models, "correlations": {"gold_defect_share_vs_strength": corr}}


def labelled_points(fig) -> dict[str, tuple[float, float]]:
    """model name -> the point its label (or its number in the key table) points at."""
    ax = fig.axes[0]
    anns = [t for t in ax.texts if hasattr(t, "xy")]
    if len(fig.axes) == 1:
        return {a.get_text(): tuple(a.xy) for a in anns}
    key = {}
    for t in fig.axes[1].texts:
        number, _, name = t.get_text().strip().partition("  ")
        if number.isdigit():
            key[number] = name.strip()
    assert len(key) == len(anns)
    return {key[a.get_text()]: tuple(a.xy) for a in anns}


def scatter_points(report):
    return {
        m["model"]: (m["adjudicated"]["value"], m["gold_defect_share"])
        for m in report["models"]
        if m.get("adjudicated") is not None and m.get("gold_defect_share") is not None
    }


@pytest.mark.slow
@pytest.mark.parametrize("make", [example15, report36], ids=["15-bundled-example", "36-models"])
def test_scatter_labels_every_point_without_overlap(make):
    rep = make()
    fig = plots.defect_share_vs_strength_figure(rep)
    want = scatter_points(rep)
    got = labelled_points(fig)
    assert set(got) == set(want), set(want) - set(got)  # every point is identifiable
    for name, xy in got.items():
        assert xy == pytest.approx(want[name]), name
    assert overlapping_texts(fig) == []
    # no label covers another point's marker
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    for t in ax.texts:
        if not hasattr(t, "xy"):
            continue
        box = t.get_window_extent(renderer)
        own = tuple(t.xy)
        for other in {v for v in want.values() if tuple(v) != own}:
            px, py = ax.transData.transform(other)
            assert not (box.x0 < px < box.x1 and box.y0 < py < box.y1), (t.get_text(), other)
    fig.clear()


def test_bundled_example_names_its_points_directly():
    fig = plots.defect_share_vs_strength_figure(example15())
    assert len(fig.axes) == 1  # 15 names fit: no numbered key needed
    assert {"codes-1b", "codes-3b", "codes-15b", "codes-15b-evidence", "ta-sql-gpt4"} <= set(labelled_points(fig))


def test_rank_slope_has_a_legend_for_its_colours():
    fig = plots.rank_slope_figure(report36())
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    entries = {t.get_text(): h.get_color() for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert set(entries) == {"rose", "fell", "unchanged"}
    line_colours = {
        line.get_color() for line in ax.get_lines() if len(line.get_xdata()) == 2 and tuple(line.get_xdata()) == (0.0, 1.0)
    }
    assert line_colours <= set(entries.values())  # every slope's colour is explained
    assert overlapping_texts(fig) == [] and overlapping_texts(plots.rank_slope_figure(report3())) == []


def test_composition_title_and_axis_name_the_same_misses():
    ax = plots.miss_composition_figure(report3()).axes[0]
    assert "jury-reached misses" in ax.get_title() and "jury-reached misses" in ax.get_xlabel()
    assert "adjudicated misses" not in ax.get_title()


def _reference_place(ax, label, xy, point, dpi, measure, frame, taken, others, r):
    """labels._place by its definition: an annotation at every place tried, its whole box measured."""
    from matplotlib.text import Text

    from jury.results.plots import labels

    fallback = None
    for dx, dy, ha, va in labels._offsets():
        ann = labels._annotate(ax, label, xy, dx, dy, ha, va)
        ann.update_positions(measure)
        if labels._text_refused(labels._box(Text.get_window_extent(ann, measure)), frame, taken, others, r, fallback is not None):
            ann.remove()
            continue
        box = labels._box(ann.get_window_extent(measure))
        free, hits = labels._free(box, frame, taken), labels._hits(box, others, r)
        if free and not hits:
            taken.append(box)
            return True, fallback
        if free and fallback is None:
            fallback = (dx, dy, ha, va)
        ann.remove()
    return False, fallback


def _placed(fig):
    return len(fig.axes), [
        (t.get_text(), tuple(t.xy), tuple(t.xyann), t.get_ha(), t.get_va()) for t in fig.axes[0].texts if hasattr(t, "xy")
    ]


@pytest.mark.parametrize(
    "make", [example15, pytest.param(report36, marks=pytest.mark.slow)], ids=["15-bundled-example", "36-models"]
)
def test_label_places_are_those_of_an_annotation_at_every_place(make, monkeypatch):
    """Issue 46: _place moves the text's layout to each place and decides most places without the
    leader line; every label lands where measuring a whole annotation at every place puts it."""
    from jury.results.plots import labels

    fig = plots.defect_share_vs_strength_figure(make())
    got = _placed(fig)
    fig.clear()
    monkeypatch.setattr(labels, "_place", _reference_place)
    fig = plots.defect_share_vs_strength_figure(make())
    assert got == _placed(fig)
    fig.clear()
