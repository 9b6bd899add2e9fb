"""PNG charts of a jury report (the ``ReportDocument`` of ``build_report``, or its JSON dict).

``write_plots(report, out_dir)`` writes columns.png, rank_slope.png,
miss_composition.png, defect_share_vs_strength.png, position_bias.png
(jury.results.plots.bias) and error_categories.png (jury.results.plots.taxonomy), skipping (never failing on) a chart whose data is absent. Each chart has a ``*_figure(report)`` builder
returning the Figure (or None) and a ``plot_*(report, path)`` wrapper that
saves and frees it. Figures are ``matplotlib.figure.Figure`` objects on an Agg
canvas: no pyplot, no display, no global backend switch, nothing left open.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import extra_imports

with extra_imports("matplotlib", "plots", "writing plots"):
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator, PercentFormatter

import io

from jury.results.plots.bias import position_bias_figure
from jury.results.plots.labels import DPI, FONT, TABLE_LINE_PT, label_points, new_figure, number_table, style_axes
from jury.results.plots.taxonomy import error_categories_figure
from jury.vocab import COLUMNS, COMPOSITION, Column, Verdict

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from jury.results.report.model import ReportDocument

__all__ = [
    "write_plots",
    "plot_columns",
    "plot_rank_slope",
    "plot_miss_composition",
    "plot_defect_share_vs_strength",
    "plot_position_bias",
    "columns_figure",
    "rank_slope_figure",
    "miss_composition_figure",
    "defect_share_vs_strength_figure",
]

TITLE_FONT = 10.5
ROW_IN = 0.3  # figure height per model row (inches)
MARGIN_IN = 1.3  # title, axis and tick labels

COLUMN_STYLE = {  # colour-blind-safe (Okabe-Ito) colours + distinct markers
    Column.STRICT: dict(color="#0072B2", marker="o"),
    Column.GOLD_CLEAN: dict(color="#E69F00", marker="s"),
    Column.ADJUDICATED: dict(color="#009E73", marker="D"),
}
SLOPE_COLOURS = (("#009E73", "rose"), ("#D55E00", "fell"), ("#7f7f7f", "unchanged"))
COMPOSITION_COLOUR = {
    Verdict.GOLD_DEFECT: "#D55E00",
    Verdict.FORMAT_EQUIVALENCE: "#E69F00",
    Verdict.GENUINE_ERROR: "#0072B2",
    Verdict.AMBIGUOUS: "#CC79A7",
    Verdict.NO_MAJORITY: "#999999",
}
# (verdict, legend label, colour) per bar segment, in vocab.COMPOSITION's order
COMPOSITION_BARS = tuple((v, v.replace("_", " "), COMPOSITION_COLOUR[v]) for v in COMPOSITION)


# --------------------------------------------------------------------------- helpers


def _num(v: Any) -> float | None:
    """float(v), or None for None/NaN/inf/non-numbers."""
    if v is None or isinstance(v, bool):
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _value(model: dict[str, Any], col: str) -> float | None:
    """The accuracy of one column for one model, or None."""
    prop = model.get(col)
    return _num(prop.get("value")) if isinstance(prop, dict) else None


def _as_dict(report: ReportDocument | dict[str, Any]) -> dict[str, Any]:
    """A ReportDocument as its JSON dict; a dict as it is (read defensively: a partial one still plots)."""
    return report if isinstance(report, dict) else report.model_dump(mode="json")


def _models(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's model rows (dicts only)."""
    return [m for m in (report.get("models") or []) if isinstance(m, dict)]


def _present_columns(models: list[dict[str, Any]]) -> list[Column]:
    """Columns with a value for at least one model, in strict -> adjudicated order."""
    return [c for c in COLUMNS if any(_value(m, c) is not None for m in models)]


def _rows_height(n_rows: int) -> float:
    return MARGIN_IN + ROW_IN * max(n_rows, 3)


def _save(fig: Figure | None, path: str | Path) -> Path | None:
    """Save at DPI with a tight bounding box (long labels are never clipped): rendered to PNG
    bytes, then written by jury's one writer (jury.inputs.writer), never by matplotlib itself."""
    if fig is None:
        return None

    from jury.inputs.writer import write_output

    path = Path(path)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.15, facecolor="white")
    finally:
        fig.clear()  # no pyplot registry is involved; this frees the artists now
    write_output(path, buf.getvalue())
    return path


# --------------------------------------------------------------------------- 1. columns


def _column_points(order: list[dict[str, Any]], c: Column, offset: float) -> list[tuple[float, float, float, float]]:
    """Column c's point of each model that has one: (y, value, low, high), the row's y moved by ``offset``."""
    pts = []  # (y, value, low, high)
    for i, m in enumerate(order):
        raw = m.get(c)
        prop = raw if isinstance(raw, dict) else {}
        v, lo, hi = _num(prop.get("value")), _num(prop.get("low")), _num(prop.get("high"))
        if v is not None:
            pts.append((i + offset, v, v if lo is None else lo, v if hi is None else hi))
    return pts


def _model_rows(ax: Axes, order: list[dict[str, Any]]) -> None:
    """The y axis: one zebra-striped row per model, named (``(no data)`` when it has no column)."""
    n = len(order)
    for i in range(0, n, 2):  # zebra rows help follow a model across the chart
        ax.axhspan(i - 0.5, i + 0.5, color="#f0f0f0", zorder=0, linewidth=0)
    ax.set_yticks(range(n))
    ax.set_yticklabels(
        [_name(m) + ("  (no data)" if all(_value(m, c) is None for c in COLUMNS) else "") for m in order], fontsize=FONT
    )
    ax.set_ylim(-0.6, n - 0.4)


def columns_figure(report: ReportDocument | dict[str, Any]) -> Figure | None:
    """Accuracy per model for each present column, with Wilson 95% error bars."""
    report = _as_dict(report)
    models = _models(report)
    cols = _present_columns(models)
    if not models:
        return None
    best = cols[-1] if cols else Column.STRICT
    # best at the top: y = 0 is the bottom row, so sort ascending; missing go last (bottom)
    order = sorted(models, key=lambda m: (_value(m, best) is not None, _value(m, best) or 0.0, str(m.get("model", ""))))
    n = len(order)
    fig = new_figure(9.0, _rows_height(n))
    ax = fig.add_subplot()
    style_axes(ax)
    lows, highs = [], []
    for j, c in enumerate(cols):  # first column drawn highest within its model's row
        offset = ((len(cols) - 1) / 2 - j) * 0.22
        pts = _column_points(order, c, offset)
        ys, xs = [p[0] for p in pts], [p[1] for p in pts]
        lows += [p[2] for p in pts]
        highs += [p[3] for p in pts]
        err = [[max(p[1] - p[2], 0.0) for p in pts], [max(p[3] - p[1], 0.0) for p in pts]]
        ax.errorbar(
            xs,
            ys,
            xerr=err,
            linestyle="none",
            markersize=4.5,
            elinewidth=1.1,
            capsize=2,
            label=c.label,
            color=COLUMN_STYLE[c]["color"],
            marker=COLUMN_STYLE[c]["marker"],
        )
    _model_rows(ax, order)
    lo = min(lows, default=0.0)
    hi = max(highs, default=1.0)
    pad = max(0.02, 0.05 * (hi - lo))
    ax.set_xlim(max(-0.02, lo - pad), min(1.02, max(hi + pad, lo + 0.1)))  # 0%/100% stay whole
    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.xaxis.set_major_locator(MaxNLocator(nbins=8, steps=[1, 2, 5, 10]))
    ax.grid(axis="x", color="#d0d0d0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("execution accuracy (Wilson 95% interval)", fontsize=FONT + 0.5)
    ax.set_title(f"Accuracy by column, sorted by {best.label} (best at top)", fontsize=TITLE_FONT)
    if cols:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT, frameon=False, title="column", title_fontsize=FONT)
    fig.tight_layout()
    return fig


def _name(m: dict[str, Any]) -> str:
    return str(m.get("model", "?"))


# --------------------------------------------------------------------------- 2. rank slope


def _label_positions(items: list[tuple[float, str]], gap: float = 1.0) -> dict[str, float]:
    """Place labels at their rank, pushing tied/crowded ones down so they sit `gap` apart."""
    out: dict[str, float] = {}
    prev = -math.inf
    for rank, key in sorted(items):
        y = max(float(rank), prev + gap)
        out[key] = y
        prev = y
    return out


def rank_slope_figure(report: ReportDocument | dict[str, Any]) -> Figure | None:
    """Slope chart of strict rank (left) to adjudicated rank (right); rank 1 on top."""
    report = _as_dict(report)
    ranked = [
        (m, r0, r1)
        for m in _models(report)  # (model row, strict rank, adjudicated rank)
        if (r0 := _num(m.get("strict_rank"))) is not None and (r1 := _num(m.get("adjudicated_rank"))) is not None
    ]
    models = [m for m, _, _ in ranked]
    if not models:
        return None
    keys = [f"{i}\x00{_name(m)}" for i, m in enumerate(models)]  # unique even for duplicate names
    left = _label_positions([(r0, k) for (_, r0, _), k in zip(ranked, keys)])
    right = _label_positions([(r1, k) for (_, _, r1), k in zip(ranked, keys)])
    bottom = max(max(left.values()), max(right.values()))
    fig = new_figure(5.5, MARGIN_IN + ROW_IN * max(bottom, 3))
    ax = fig.add_subplot()
    x0, x1, lab = 0.0, 1.0, 0.04
    for (m, r0, r1), k in zip(ranked, keys):
        colour = SLOPE_COLOURS[0][0] if r1 < r0 else SLOPE_COLOURS[1][0] if r1 > r0 else SLOPE_COLOURS[2][0]
        ax.plot([x0, x1], [r0, r1], color=colour, linewidth=1.3, marker="o", markersize=3.5, alpha=0.9)
        for x, r, y, ha, sign, text in (
            (x0, r0, left[k], "right", -1, f"{_name(m)}  {int(r0)}"),
            (x1, r1, right[k], "left", 1, f"{int(r1)}  {_name(m)}"),
        ):
            if y != r:  # tied or crowded: a thin leader from the point to the shifted label
                ax.plot([x, x + sign * lab * 0.8], [r, y], color="#b0b0b0", linewidth=0.6)
            ax.text(x + sign * lab, y, text, ha=ha, va="center", fontsize=FONT, color=colour)
    ax.set_xlim(x0 - 0.02, x1 + 0.02)
    ax.set_ylim(bottom + 0.7, 0.3)  # inverted: rank 1 at the top
    ax.set_yticks([])
    ax.set_xticks([x0, x1])
    ax.set_xticklabels(["strict rank", "adjudicated rank"], fontsize=FONT + 0.5)
    ax.xaxis.tick_top()
    ax.tick_params(axis="x", length=0, pad=6)
    for side in ("left", "right", "bottom", "top"):
        ax.spines[side].set_visible(False)
    for x in (x0, x1):
        ax.axvline(x, color="#d0d0d0", linewidth=0.8, zorder=0)
    omitted = len(_models(report)) - len(models)
    note = f" ({omitted} model(s) without both ranks omitted)" if omitted else ""
    ax.set_title("Rank: strict → adjudicated" + note, fontsize=TITLE_FONT, pad=22)
    handles = [
        Line2D([], [], color=colour, linewidth=1.3, marker="o", markersize=3.5, label=label) for colour, label in SLOPE_COLOURS
    ]
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=3,
        fontsize=FONT,
        frameon=False,
        title="adjudicated rank vs strict",
        title_fontsize=FONT,
    )
    return fig


# --------------------------------------------------------------------------- 3. miss composition


def _composition(m: dict[str, Any]) -> tuple[dict[str, float], int] | None:
    comp = m.get("composition")
    if not isinstance(comp, dict):
        return None
    counts = {k: max(_num(comp.get(k)) or 0.0, 0.0) for k in COMPOSITION}
    total = sum(counts.values())
    return {k: 100.0 * v / total if total else 0.0 for k, v in counts.items()}, int(total)


def miss_composition_figure(report: ReportDocument | dict[str, Any]) -> Figure | None:
    """Stacked horizontal bars: percent of each model's jury-reached misses by verdict.
    Title and axis name the same thing: "jury-reached misses"."""
    report = _as_dict(report)
    found = [(m, _composition(m)) for m in _models(report) if m.get(Column.ADJUDICATED) is not None]
    rows = sorted(((m, c) for m, c in found if c is not None), key=lambda mc: (mc[1][0][Verdict.GOLD_DEFECT], _name(mc[0])))
    if not any(total > 0 for _, (_, total) in rows):
        return None
    n = len(rows)
    fig = new_figure(8.0, _rows_height(n))
    ax = fig.add_subplot()
    style_axes(ax)
    left = [0.0] * n
    for key, label, colour in COMPOSITION_BARS:
        widths = [pct[key] for _, (pct, _) in rows]
        ax.barh(range(n), widths, left=left, height=0.72, color=colour, label=label, edgecolor="white", linewidth=0.4)
        left = [a + b for a, b in zip(left, widths)]
    labels = [f"{_name(m)}  (n={t})" if t else f"{_name(m)}  (no misses)" for m, (_, t) in rows]
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize=FONT)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, 100)
    ax.xaxis.set_major_formatter(PercentFormatter(100, decimals=0))
    ax.set_xlabel("share of jury-reached misses (n = misses per model)", fontsize=FONT + 0.5)
    ax.set_title("Composition of jury-reached misses (sorted by gold-defect share, largest at top)", fontsize=TITLE_FONT)
    ax.legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT, frameon=False, title="jury verdict", title_fontsize=FONT
    )
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- 4. share vs strength


def _strength(report: dict[str, Any]) -> tuple[str, dict[int, float]]:
    """(axis label, {model index: strength}). The strength column is settings["strength"]
    (as jury.results.report.build writes it), else the correlation's "strength", else adjudicated."""
    corr = (report.get("correlations") or {}).get("gold_defect_share_vs_strength") or {}
    spec = (report.get("settings") or {}).get("strength") or corr.get("strength") or Column.ADJUDICATED
    spec = str(spec)
    vals = {}
    for i, m in enumerate(_models(report)):
        raw = m.get(spec)
        v = _num(raw.get("value")) if isinstance(raw, dict) else _num(raw)
        if v is not None:
            vals[i] = v
    return (f"{Column(spec).label} accuracy" if spec in COLUMNS else spec.replace("_", " ")), vals


def defect_share_vs_strength_figure(report: ReportDocument | dict[str, Any], max_labels: int | None = None) -> Figure | None:
    """Scatter of gold_defect_share (y) against model strength (x), Spearman in the title.

    Every point is identifiable: each is named beside it (with a leader line when the name
    has to sit further out), none covering another label or point; when the names do not
    all fit, each point gets a number instead and a table beside the chart lists the
    numbers with the model names. ``max_labels`` is accepted for compatibility and ignored.
    """
    report = _as_dict(report)
    models = _models(report)
    xlabel, strength = _strength(report)
    pts = [
        (strength[i], _num(m.get("gold_defect_share")), _name(m))
        for i, m in enumerate(models)
        if i in strength and m.get(Column.ADJUDICATED) is not None
    ]
    pts = [p for p in pts if p[1] is not None]
    if not pts:
        return None
    fig = _scatter_figure(report, pts, xlabel, numbered=False)
    if label_points(fig, fig.axes[0], pts, [p[2] for p in pts]):
        return fig
    fig.clear()
    # too dense for names: number the points (strongest first) and list the numbers beside
    order = sorted(range(len(pts)), key=lambda j: (-pts[j][0], pts[j][2]))
    number = {j: n for n, j in enumerate(order, 1)}
    fig = _scatter_figure(report, pts, xlabel, numbered=True)
    ax, table = fig.axes
    label_points(fig, ax, pts, [str(number[j]) for j in range(len(pts))], force=True)
    number_table(fig, table, [(number[j], pts[j][2]) for j in order])
    return fig


def _scatter_figure(report: dict[str, Any], pts: Sequence[tuple[Any, ...]], xlabel: str, numbered: bool) -> Figure:
    corr = (report.get("correlations") or {}).get("gold_defect_share_vs_strength") or {}
    height = max(5.5, 1.6 + len(pts) * TABLE_LINE_PT / 72) if numbered else 5.5
    fig = new_figure(10.5 if numbered else 7.5, height)
    if numbered:
        ax, table = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.6, 1.0]})
        table.set_axis_off()
    else:
        ax = fig.add_subplot()
    style_axes(ax)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    ax.scatter(xs, ys, s=28, color="#D55E00", alpha=0.8, edgecolor="white", linewidth=0.5, zorder=3)
    ax.margins(x=0.14, y=0.12)  # room for the labels of the outermost points
    if max(xs + [0]) <= 1.0 and min(xs + [0]) >= 0.0:
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    if max(ys) <= 1.0:
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.grid(color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(xlabel, fontsize=FONT + 0.5)
    ax.set_ylabel("gold-defect share of jury-reached misses", fontsize=FONT + 0.5)
    r = _num(corr.get("r"))
    rho = "n/a" if r is None else f"{r:.2f}"
    ci = ""
    if _num(corr.get("ci_low")) is not None and _num(corr.get("ci_high")) is not None:
        ci = f" [{corr['ci_low']:.2f}, {corr['ci_high']:.2f}]"
    p = _num(corr.get("p_value"))
    stats = (
        f"Spearman ρ = {rho}{ci}, n = {corr.get('n', len(pts))}, "
        f"p = {'n/a' if p is None else ('<0.001' if p < 0.001 else format(p, '.3f'))}"
    )
    ax.set_title(f"Gold-defect share vs {xlabel}\n{stats}", fontsize=TITLE_FONT)
    fig.tight_layout()
    return fig


# (file name, figure builder, the kinds of verdict file its data comes from)
FIGURES = (
    ("columns.png", columns_figure, ("audit", "adjudication")),
    ("rank_slope.png", rank_slope_figure, ("adjudication",)),
    ("miss_composition.png", miss_composition_figure, ("adjudication",)),
    ("defect_share_vs_strength.png", defect_share_vs_strength_figure, ("adjudication", "audit")),
    ("position_bias.png", position_bias_figure, ("adjudication",)),
    ("error_categories.png", error_categories_figure, ("adjudication",)),
)


def _writer(
    filename: str, build: Callable[[ReportDocument | dict[str, Any]], Figure | None]
) -> Callable[[ReportDocument | dict[str, Any], str | Path], Path | None]:
    def write(report: ReportDocument | dict[str, Any], path: str | Path) -> Path | None:
        return _save(build(report), path)

    write.__name__ = write.__qualname__ = f"plot_{build.__name__.removesuffix('_figure')}"
    write.__doc__ = f"Write the chart of {build.__name__} (as {filename}) to path; None, writing nothing, without its data."
    return write


# (file name, plot_*(report, path): the chart saved at path, or None without its data)
CHARTS = tuple((filename, _writer(filename, build)) for filename, build, _kinds in FIGURES)
plot_columns, plot_rank_slope, plot_miss_composition, plot_defect_share_vs_strength, plot_position_bias, plot_error_categories = (
    write for _name, write in CHARTS
)


def provenance_lines(report: ReportDocument | dict[str, Any], kinds: Sequence[str] = ("audit", "adjudication")) -> list[str]:
    """Where a chart's numbers come from: each verdict file of those kinds the report read
    (path, content hash, panel), or that it rests on the run files alone."""
    report = _as_dict(report)
    files = [f for f in report.get("verdict_files") or [] if isinstance(f, dict) and f.get("kind") in kinds]
    if not files:
        return ["from the run files alone (no verdict file)"]
    return [
        f"from {f['kind']} file {f.get('path') or '(path not given)'}, {f.get('content_sha256') or 'unlocked'}"
        + (f", panel {f['panel']}" if f.get("panel") else "")
        for f in files
    ]


def add_provenance(fig: Figure, lines: list[str]) -> None:
    """A small footer under the chart naming the verdict files (saved with bbox_inches="tight")."""
    fig.text(0.0, 0.0, "\n".join(lines), ha="left", va="top", fontsize=FONT - 2.5, color="#555555", transform=fig.transFigure)


def write_plots(report: ReportDocument | dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write every chart whose data is present into out_dir, each with a footer naming the
    verdict files (path, content hash, panel) it came from; return the written paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, build, kinds in FIGURES:
        fig = build(report)
        if fig is not None:
            add_provenance(fig, provenance_lines(report, kinds))
        path = _save(fig, out_dir / filename)
        if path is not None:
            written.append(path)
    return written
