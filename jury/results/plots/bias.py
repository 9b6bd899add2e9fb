"""The report's position-bias chart: per juror, the share of single-answer ballots that
picked the answer shown first, with its Wilson 95% interval and a line at 0.5.

One row per juror of every blind adjudication file in the report (``report["agreement"]``),
then the panel of that file; ``jury.results.plots.figures.write_plots`` saves it as
position_bias.png. No chart (None) when no blind file has a single-answer ballot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jury.errors import extra_imports

with extra_imports("matplotlib", "plots", "writing plots"):
    from matplotlib.ticker import PercentFormatter

from jury.results.plots.labels import FONT, new_figure, style_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from jury.results.report.model import ReportDocument

JUROR_COLOUR, PANEL_COLOUR = "#0072B2", "#D55E00"  # Okabe-Ito, as the other charts


def _rows(report: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """(label, position bias, is the panel) per row, top to bottom."""
    sets = [a for a in (report.get("agreement") or []) if isinstance(a, dict) and isinstance(a.get("position_bias"), dict)]
    out = []
    for a in sets:
        bias = a["position_bias"]
        suffix = f"  ({a.get('path')})" if len(sets) > 1 else ""
        for name, b in (bias.get("jurors") or {}).items():
            if b.get("n"):
                out.append((f"{name}  (n={b['n']}){suffix}", b, False))
        panel = bias.get("panel") or {}
        if panel.get("n"):
            out.append((f"panel  (n={panel['n']}){suffix}", panel, True))
    return out


def position_bias_figure(report: ReportDocument | dict[str, Any]) -> Figure | None:
    """Share picking the first-shown answer per juror and panel, Wilson 95% intervals, 0.5 marked."""
    report = report if isinstance(report, dict) else report.model_dump(mode="json")
    rows = _rows(report)
    if not rows:
        return None
    n = len(rows)
    fig = new_figure(8.0, 1.3 + 0.3 * max(n, 3))
    ax = fig.add_subplot()
    style_axes(ax)
    for y, (_label, b, panel) in zip(range(n - 1, -1, -1), rows):  # first row on top
        share, low, high = b["share"], b["low"], b["high"]
        ax.errorbar(
            [share],
            [y],
            xerr=[[max(share - low, 0.0)], [max(high - share, 0.0)]],
            linestyle="none",
            marker="D" if panel else "o",
            markersize=5.5 if panel else 4.5,
            elinewidth=1.1,
            capsize=2,
            color=PANEL_COLOUR if panel else JUROR_COLOUR,
        )
        p = b.get("p_value")
        ax.annotate(
            "p < 0.001" if p is not None and p < 0.001 else f"p = {p:.3f}" if p is not None else "",
            (1.0, y),
            xytext=(6, 0),
            textcoords="offset points",
            xycoords=("axes fraction", "data"),
            va="center",
            fontsize=FONT,
            color="#404040",
        )
    ax.axvline(0.5, color="#7f7f7f", linestyle="--", linewidth=1.0, zorder=0)
    ax.set_yticks(range(n))
    ax.set_yticklabels([r[0] for r in reversed(rows)], fontsize=FONT)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(-0.02, 1.02)  # 0% and 100% stay whole
    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("share of single-answer ballots picking the answer shown first (Wilson 95% interval)", fontsize=FONT + 0.5)
    ax.set_title(
        "Position bias per juror (dashed: no bias, 50%; p: two-sided binomial test vs 0.5)",
        fontsize=10.5,
    )
    fig.tight_layout()
    return fig
