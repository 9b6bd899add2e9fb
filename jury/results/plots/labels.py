"""What every chart of the report shares: its figure on an Agg canvas, its axes' style, and
placing text on it so that every scatter point is labelled without overlap.

A label goes beside its point, trying growing radii in eight directions until it covers no
other label, point or axis text; when names cannot all fit, points are numbered and a
table beside the chart names them. matplotlib comes with the [plots] extra: without it,
importing a chart module is one line naming ``pip install 'jury-sql[plots]'``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

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


SHRINK_B = 2.5  # a leader line stops this short of its point: pixels when measured, points when drawn

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
        arrowprops=dict(arrowstyle="-", color="#909090", linewidth=0.6, shrinkA=0, shrinkB=SHRINK_B, relpos=rel),
    )


_Offset = tuple[float, float, str, str]  # (dx, dy, ha, va): a label's place beside its point


def _offsets() -> Iterator[_Offset]:
    """The places a label tries, nearest first: the 8 directions at each radius (a diagonal at
    three quarters of it), aligned so the label extends away from its point."""
    for radius in _RADII:
        for ux, uy in _DIRECTIONS:
            scale = radius if (ux == 0 or uy == 0) else radius * 0.75
            ha = "left" if ux > 0 else "right" if ux < 0 else "center"
            va = "bottom" if uy > 0 else "top" if uy < 0 else "center"
            yield ux * scale, uy * scale, ha, va


def _place(
    ax: Axes,
    label: str,
    xy: tuple[Any, Any],
    point: Any,
    dpi: float,
    measure: RendererAgg,
    frame: Any,
    taken: list[Any],
    others: list[Any],
    r: float,
) -> tuple[bool, _Offset | None]:
    """Label one point at its nearest free place (covering no text and no point; its box then
    joins ``taken``): (placed, the nearest place that covers only a point, None without one).

    A place whose text alone is refused needs no annotation: after the first place of each
    alignment, the text's box at another offset is matplotlib's own computation of it (the
    alignment's layout, cached by matplotlib, moved to the offset by the label's own
    offset-points transform, which depends on the point only), so the same box to the bit."""
    fallback = None
    layouts: dict[tuple[str, str], Any] = {}  # (ha, va) -> the text's layout box at the offset's origin
    to_display: Any = None  # the label's offset-points transform (the same for every offset)
    for dx, dy, ha, va in _offsets():
        layout = layouts.get((ha, va))
        ann = None
        if layout is None:
            ann = _annotate(ax, label, xy, dx, dy, ha, va)
            ann.update_positions(measure)
            text = _box(Text.get_window_extent(ann, measure))
            layouts[ha, va] = ann._get_layout(measure)[0]  # as Text.get_window_extent lays it out (matplotlib caches it)
            to_display = ann.get_transform()
        else:
            x, y = to_display.transform((float(dx), float(dy)))
            text = _box(layout.translated(x, y))
        if _text_refused(text, frame, taken, others, r, fallback is not None):
            if ann is not None:
                ann.remove()
            continue
        known = _bounded(text, point, ha, va, dpi, frame, taken, others, r)
        if known is not None and not (known[0] and not known[1]):  # refused without laying out the line
            if known[0] and fallback is None:
                fallback = (dx, dy, ha, va)
            if ann is not None:
                ann.remove()
            continue
        if ann is None:
            ann = _annotate(ax, label, xy, dx, dy, ha, va)
        box = _box(ann.get_window_extent(measure))  # the whole box: text and leader line
        free, hits_point = known if known is not None else (_free(box, frame, taken), _hits(box, others, r))
        if free and not hits_point:
            taken.append(box)
            return True, fallback
        if free and fallback is None:
            fallback = (dx, dy, ha, va)
        ann.remove()
    return False, fallback


def label_points(fig: Figure, ax: Axes, pts: Sequence[tuple[Any, Any, Any]], labels: list[str], force: bool = False) -> bool:
    """Place ``labels[j]`` beside point j, each inside the axes, covering no other text and
    no other point, with a leader line to its point; the most crowded points go first.
    Returns whether every point got its label; without ``force`` it stops at the first label
    with no free place (the caller numbers the points instead); with ``force``, such a label
    still goes at its nearest place inside the axes (uncovered points first)."""
    measure = renderer(fig)
    fig.draw_without_rendering()  # lays the figure out (tick labels placed) without rasterising it
    taken = [_box(t.get_window_extent(measure)) for t in _visible_texts(ax)]
    frame = _box(ax.get_window_extent(measure))
    pix = ax.transData.transform([(x, y) for x, y, _ in pts])
    r = 4.0 * fig.dpi / 72  # marker radius plus a little air, in pixels

    def crowd(j: int) -> float:
        px, py = pix[j]
        return -sum(1 for qx, qy in pix if abs(qx - px) < 80 and abs(qy - py) < 40)

    every = True
    for j in sorted(range(len(pts)), key=lambda j: (crowd(j), pts[j][2])):
        x, y, _ = pts[j]
        others = [(px, py) for i, (px, py) in enumerate(pix) if i != j and tuple(pix[i]) != tuple(pix[j])]
        placed, fallback = _place(ax, labels[j], (x, y), pix[j], fig.dpi, measure, frame, taken, others, r)
        if placed:
            continue
        every = False
        if not force:
            return False  # the caller numbers the points instead: the other labels need no place
        if fallback and fallback is not None:  # covers a point but no text
            dx, dy, ha, va = fallback
            ann = _annotate(ax, labels[j], (x, y), dx, dy, ha, va)
            taken.append(_box(ann.get_window_extent(measure)))
    return every


def _text_refused(box: _Box, frame: Any, taken: list[Any], others: list[Any], r: float, have_fallback: bool) -> bool:
    """Whether a label is refused on its text's box alone, before its leader line is laid out
    (matplotlib clips the line against the text's padded box by bisection: most of the cost).
    The annotation's box is the union of the text's and the line's, so it holds the text's: a
    text outside the frame, or over a label taken, makes the whole box so too (never free), and
    a text over a point makes it cover that point (refused, and no fallback once one is held).
    So this refuses exactly the places the whole box would refuse, only sooner."""
    return not _free(box, frame, taken) or (have_fallback and _hits(box, others, r))


def _free(box: Any, frame: Any, taken: list[Any]) -> bool:
    """Whether a box (anything with x0, y0, x1, y1) is inside the frame and over no label taken."""
    inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
    return inside and not any(_overlaps(box, b) for b in taken)


def _overlaps(a: Any, b: Any) -> bool:
    """matplotlib's Bbox.overlaps (edges touching overlap; a box's corners in either order)."""
    ax0, ax1, ay0, ay1 = min(a.x0, a.x1), max(a.x0, a.x1), min(a.y0, a.y1), max(a.y0, a.y1)
    bx0, bx1, by0, by1 = min(b.x0, b.x1), max(b.x0, b.x1), min(b.y0, b.y1), max(b.y0, b.y1)
    return bool(ax0 <= bx1 and bx0 <= ax1 and ay0 <= by1 and by0 <= ay1)


def _hits(box: Any, others: list[Any], r: float) -> bool:
    """Whether a point lies within r of the box."""
    return any(box.x0 - r < px < box.x1 + r and box.y0 - r < py < box.y1 + r for px, py in others)


class _Box(NamedTuple):
    x0: float
    y0: float
    x1: float
    y1: float


def _box(bbox: Any) -> _Box:
    """A matplotlib Bbox's corners as plain floats (the same numbers): the placement compares
    each candidate with every label taken, and a Bbox's corner is a numpy look-up per read."""
    (x0, y0), (x1, y1) = bbox.get_points().tolist()
    return _Box(x0, y0, x1, y1)


_AIR = 1.0  # pixels: far more than the bisection's tolerance (0.01) or any rounding


def _bounded(
    text: Any, point: Any, ha: str, va: str, dpi: float, frame: Any, taken: list[Any], others: list[Any], r: float
) -> tuple[bool, bool] | None:
    """(free, hits a point) of a label's whole box (text and leader line), from boxes known to
    hold it and to lie within it, without laying out the line; None when they disagree.

    The line runs straight from the text box's anchor (its ``relpos``: the corner or edge
    middle facing the point) towards the point; matplotlib clips its start at the text's box
    padded by 2 points (so 2 to 2√2 points out) and stops it SHRINK_B short of the point. So
    the whole box lies within ``outer`` (the text's box and the part of the segment the line
    can reach, widened by _AIR) and holds ``inner`` (the text's box and the part it surely
    covers). Both tests are monotone in the box: the whole box is inside the frame, over no
    label and near no point when ``outer`` is, and not inside or over a label when ``inner``
    is not, nor clear of the points when ``inner`` is not. Only a box near a bound needs
    matplotlib's layout of the line (checked place by place against it on the benchmark's
    charts and on random ones: the same answers)."""
    px, py = float(point[0]), float(point[1])
    if not (frame.x0 + _AIR < px < frame.x1 - _AIR and frame.y0 + _AIR < py < frame.y1 - _AIR):
        return None  # an annotated point outside the axes has no line (matplotlib's _check_xy)
    ax_ = text.x0 + (text.x1 - text.x0) * {"left": 0.0, "right": 1.0, "center": 0.5}[ha]
    ay_ = text.y0 + (text.y1 - text.y0) * {"bottom": 0.0, "top": 1.0, "center": 0.5}[va]
    length = math.hypot(ax_ - px, ay_ - py)
    pt = dpi / 72
    # the line's start is 2 points (the pad) to 2√2 points (from a corner) from the anchor, its
    # end 2.5 pixels (before a draw) to 2.5 points from the point: each bound with _AIR to spare
    start_near, start_far = 2 * pt - _AIR, 2 * math.sqrt(2) * pt + _AIR
    end_near, end_far = SHRINK_B - _AIR, SHRINK_B * pt + _AIR
    if length <= start_far + end_far + _AIR:
        return None

    def box(from_anchor: float, from_point: float) -> _Box:
        sx, sy = ax_ + (px - ax_) * from_anchor / length, ay_ + (py - ay_) * from_anchor / length
        ex, ey = px + (ax_ - px) * from_point / length, py + (ay_ - py) * from_point / length
        return _Box(min(text.x0, sx, ex), min(text.y0, sy, ey), max(text.x1, sx, ex), max(text.y1, sy, ey))

    outer = box(start_near, end_near)
    outer = _Box(outer.x0 - _AIR, outer.y0 - _AIR, outer.x1 + _AIR, outer.y1 + _AIR)
    free, hits = _free(outer, frame, taken), _hits(outer, others, r)
    if free and not hits:
        return True, False
    inner = box(start_far, end_far)
    if not _free(inner, frame, taken):
        return False, _hits(inner, others, r)  # hits only matters when free: any answer will do
    if free and _hits(inner, others, r):
        return True, True
    return None


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
