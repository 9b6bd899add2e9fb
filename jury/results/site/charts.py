"""The site's charts: the report's figures as inline SVG fit for the pages' Content-Security-Policy.

matplotlib's SVG is rewritten so that it styles nothing through CSS (style attributes and
``<style>`` become presentation attributes), its ids are made unique per chart, and each chart
is captioned with the verdict files it came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

import io
import re
import xml.etree.ElementTree as ET
from typing import Any

CHART_TITLES = {
    "columns.png": "Accuracy by column with Wilson 95% intervals",
    "rank_slope.png": "Rank: strict → adjudicated",
    "miss_composition.png": "Composition of the jury-reached misses",
    "defect_share_vs_strength.png": "Gold-defect share against strength",
    "position_bias.png": "Position bias of the jurors",
    "error_categories.png": "Genuine errors by category",
}

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_URL = re.compile(r"url\(#([^)]+)\)")


def clean_svg(text: str, prefix: str) -> str:
    """matplotlib's SVG made fit to inline under the page's CSP: style attributes and <style>
    become presentation attributes (no CSS), comments and metadata go, ids get ``prefix``."""
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    root = ET.fromstring(text)
    for parent in root.iter():
        for child in list(parent):
            if child.tag in (f"{{{_SVG}}}style", f"{{{_SVG}}}metadata"):
                parent.remove(child)
    for el in root.iter():
        style = el.attrib.pop("style", None)
        if style:
            for decl in style.split(";"):
                if ":" in decl:
                    prop, value = (s.strip() for s in decl.split(":", 1))
                    if re.fullmatch(r"[a-z-]+", prop) and prop != "font":
                        el.attrib.setdefault(prop, value)
        if "id" in el.attrib:
            el.attrib["id"] = prefix + el.attrib["id"]
        for key, value in list(el.attrib.items()):
            if key in ("href", f"{{{_XLINK}}}href") and value.startswith("#"):
                el.attrib[key] = "#" + prefix + value[1:]
            elif "url(#" in value:
                el.attrib[key] = _URL.sub(lambda m: f"url(#{prefix}{m.group(1)})", value)
    root.attrib.update({"stroke-linejoin": "round", "stroke-linecap": "butt", "class": "chart", "role": "img"})
    return ET.tostring(root, encoding="unicode")


def figure_svg(fig: Figure, prefix: str) -> str:
    """``fig`` as inline SVG (clean_svg), the same bytes for the same figure: matplotlib names
    its clip paths and markers from a hash salted with ``svg.hashsalt``, a random one unless set."""
    from matplotlib import rc_context

    buf = io.StringIO()
    try:
        with rc_context({"svg.hashsalt": "jury"}):
            fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.1, facecolor="white", metadata={"Date": None})
    finally:
        fig.clear()
    return clean_svg(buf.getvalue(), prefix)


def chart_data(report: dict[str, Any]) -> list[dict[str, Any]]:
    from jury.results.plots.figures import FIGURES, provenance_lines  # matplotlib: jury.results.site.build checked it is there

    out = []
    for n, (filename, build, kinds) in enumerate(FIGURES):
        fig = build(report)
        if fig is None:
            continue
        out.append(
            {
                "id": filename.removesuffix(".png"),
                "title": CHART_TITLES.get(filename, filename),
                "svg": figure_svg(fig, f"c{n}-"),
                "sources": provenance_lines(report, kinds),
            }
        )
    return out
