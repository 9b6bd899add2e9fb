"""What every chart of the report shares: its figure on an Agg canvas, its axes' style, and
placing text on it so that every scatter point is labelled without overlap.

A label goes beside its point, trying growing radii in eight directions until it covers no
other label, point or axis text; when names cannot all fit, points are numbered and a
table beside the chart names them. matplotlib comes with the [plots] extra: without it,
importing a chart module is one line naming ``pip install 'jury-sql[plots]'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jury.errors import extra_imports

if TYPE_CHECKING:
    from matplotlib.axes import Axes


with extra_imports("matplotlib", "plots", "writing plots"):
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

DPI = 150
FONT = 8.5  # tick labels, annotations, legends of every chart (pt)


def new_figure(width: float, height: float) -> Figure:
    """A figure of width x height inches at DPI on its own Agg canvas (no pyplot, no global backend)."""
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def style_axes(ax: Axes) -> None:
    """Tick labels at FONT, no top or right spine: the charts' common look."""
    ax.tick_params(labelsize=FONT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def renderer(fig: Figure) -> RendererAgg:
    """The Agg renderer of a chart's figure (made on an Agg canvas), for measuring text extents."""
    canvas = fig.canvas
    assert isinstance(canvas, FigureCanvasAgg)
    return canvas.get_renderer()  # type: ignore[no-untyped-call, no-any-return]  # matplotlib leaves it untyped


TABLE_LINE_PT = FONT * 1.45  # line pitch of the number table


def number_table(fig: Figure, table: Axes, entries: list[tuple[int, str]]) -> None:
    """The key of a numbered scatter: one line per point, "n  model", top to bottom."""
    height_pt = table.get_window_extent(renderer(fig)).height * 72 / fig.dpi
    step = TABLE_LINE_PT / max(height_pt, 1.0)

    def line(y: float, text: str, **style: Any) -> None:
        table.text(0.0, y, text, transform=table.transAxes, ha="left", va="top", fontsize=FONT, **style)

    line(1.0, "model (number on the chart)", fontweight="bold", color="#202020")
    width = len(str(max((n for n, _ in entries), default=1)))
    for i, (n, name) in enumerate(entries, 1):
        line(1.0 - i * step, f"{n:>{width}}  {name}", family="monospace", color="#404040")


# offsets (points) tried for a label, nearest first: 8 directions at growing distances
_RADII = (7, 13, 21, 31, 44, 60)
_DIRECTIONS = ((1, 1), (-1, 1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))


def _annotate(ax: Axes, text: str, xy: tuple[float, float], dx: float, dy: float, ha: str, va: str) -> Any:
    """A label offset (dx, dy) points from xy, its leader line leaving from the label's
    edge nearest the point."""
    rel = ({"left": 0.0, "right": 1.0, "center": 0.5}[ha], {"bottom": 0.0, "top": 1.0, "center": 0.5}[va])
    return ax.annotate(
        text,
        xy,
        xytext=(dx, dy),
        textcoords="offset points",
        ha=ha,
        va=va,
        fontsize=FONT,
        color="#404040",
        zorder=4,
        arrowprops=dict(arrowstyle="-", color="#909090", linewidth=0.6, shrinkA=0, shrinkB=2.5, relpos=rel),
    )


def label_points(fig: Figure, ax: Axes, pts: Sequence[tuple[Any, Any, Any]], labels: list[str], force: bool = False) -> bool:
    """Place ``labels[j]`` beside point j, each inside the axes, covering no other text and
    no other point, with a leader line to its point; the most crowded points go first.
    Returns whether every point got its label; without ``force`` it stops at the first label
    with no free place (the caller numbers the points instead); with ``force``, such a label
    still goes at its nearest place inside the axes (uncovered points first)."""
    measure = renderer(fig)
    fig.canvas.draw()
    taken = [t.get_window_extent(measure) for t in _visible_texts(ax)]
    frame = ax.get_window_extent(measure)
    pix = ax.transData.transform([(x, y) for x, y, _ in pts])
    r = 4.0 * fig.dpi / 72  # marker radius plus a little air, in pixels

    def crowd(j: int) -> float:
        px, py = pix[j]
        return -sum(1 for qx, qy in pix if abs(qx - px) < 80 and abs(qy - py) < 40)

    every = True
    for j in sorted(range(len(pts)), key=lambda j: (crowd(j), pts[j][2])):
        x, y, _ = pts[j]
        others = [(px, py) for i, (px, py) in enumerate(pix) if i != j and tuple(pix[i]) != tuple(pix[j])]
        fallback = None
        placed = False
        for radius in _RADII:
            for ux, uy in _DIRECTIONS:
                scale = radius if (ux == 0 or uy == 0) else radius * 0.75
                dx, dy = ux * scale, uy * scale
                ha = "left" if ux > 0 else "right" if ux < 0 else "center"
                va = "bottom" if uy > 0 else "top" if uy < 0 else "center"
                ann = _annotate(ax, labels[j], (x, y), dx, dy, ha, va)
                if _rejected_by_text(ann, measure, frame, taken, others, r, fallback is not None):
                    ann.remove()
                    continue
                box = ann.get_window_extent(measure)
                inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
                free = inside and not any(box.overlaps(b) for b in taken)
                hits_point = any(box.x0 - r < px < box.x1 + r and box.y0 - r < py < box.y1 + r for px, py in others)
                if free and not hits_point:
                    taken.append(box)
                    placed = True
                    break
                if free and fallback is None:
                    fallback = (dx, dy, ha, va)
                ann.remove()
            if placed:
                break
        if placed:
            continue
        every = False
        if not force:
            return False  # the caller numbers the points instead: the other labels need no place
        if fallback and fallback is not None:  # covers a point but no text
            dx, dy, ha, va = fallback
            ann = _annotate(ax, labels[j], (x, y), dx, dy, ha, va)
            taken.append(ann.get_window_extent(measure))
    return every


def _rejected_by_text(
    ann: Any, measure: RendererAgg, frame: Any, taken: list[Any], others: list[Any], r: float, have_fallback: bool
) -> bool:
    """Whether a label is refused on its text's box alone, before its leader line is laid out
    (matplotlib clips the line against the text's padded box by bisection: most of the cost).
    The annotation's box is the union of the text's and the line's, so it holds the text's: a
    text outside the frame, or over a label taken, makes the whole box so too (never free), and
    a text over a point makes it cover that point (refused, and no fallback once one is held).
    So this refuses exactly the places the whole box would refuse, only sooner."""
    ann.update_positions(measure)
    box = Text.get_window_extent(ann, measure)
    inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
    if not inside or any(box.overlaps(b) for b in taken):
        return True
    return have_fallback and any(box.x0 - r < px < box.x1 + r and box.y0 - r < py < box.y1 + r for px, py in others)


def _visible_texts(ax: Axes) -> list[Any]:
    """Visible, non-empty texts of an axes (tick labels within the view, titles, annotations)."""
    out = list(ax.texts) + [ax.title, ax.xaxis.label, ax.yaxis.label]
    for axis, (lo, hi) in ((ax.xaxis, sorted(ax.get_xlim())), (ax.yaxis, sorted(ax.get_ylim()))):
        for tick in axis.get_major_ticks():
            if lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                out += [tick.label1, tick.label2]
    leg = ax.get_legend()
    if leg is not None:
        out += list(leg.get_texts()) + [leg.get_title()]
    return [t for t in out if t.get_visible() and t.get_text().strip()]
