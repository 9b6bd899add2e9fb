"""The report's error-category chart: per model, its genuine errors split by the category of
the taxonomy (``report["error_categories"]``, adjudication files made with --taxonomy).

One horizontal bar per model, stacked by category (counts, the total at the bar's end);
``jury.results.plots.figures.write_plots`` saves it as error_categories.png. No chart (None)
without a taxonomy or without a genuine error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jury.errors import extra_imports

with extra_imports("matplotlib", "plots", "writing plots"):
    from matplotlib.ticker import MaxNLocator

from jury.results.plots.labels import FONT, new_figure, style_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from jury.results.report.model import ReportDocument

# Okabe-Ito (colour-blind safe), as the other charts; grey for "no majority"
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
NO_PICK_COLOUR = "#BBBBBB"


def error_categories_figure(report: ReportDocument | dict[str, Any]) -> Figure | None:
    """Stacked bars of each model's genuine errors by category; None without any."""
    report = report if isinstance(report, dict) else report.model_dump(mode="json")
    counts = report.get("error_categories")
    if not counts or not any(sum(row.values()) for row in counts["models"].values()):
        return None
    from jury.results.report.taxonomy import NO_PICK

    models = list(counts["models"])
    keys = [*counts["categories"], NO_PICK]
    colours = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(counts["categories"])} | {NO_PICK: NO_PICK_COLOUR}
    n = len(models)
    fig = new_figure(8.0, 1.6 + 0.35 * max(n, 3))
    ax = fig.add_subplot()
    style_axes(ax)
    ys = list(range(n - 1, -1, -1))  # first model on top
    left = [0] * n
    for key in keys:
        widths = [counts["models"][m].get(key, 0) for m in models]
        if not any(widths):
            continue
        ax.barh(ys, widths, left=left, height=0.6, color=colours[key], label=key, edgecolor="white", linewidth=0.5)
        left = [a + b for a, b in zip(left, widths)]
    for y, total in zip(ys, left):
        ax.annotate(f"{total}", (total, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=FONT)
    ax.set_yticks(ys)
    ax.set_yticklabels(models, fontsize=FONT)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, max(left) * 1.12 + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("genuine-error verdicts (category: the majority pick of the genuine-error votes)", fontsize=FONT + 0.5)
    ax.set_title(f"Error categories per model ({counts['taxonomy']})", fontsize=10.5)
    ax.legend(fontsize=FONT, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig
