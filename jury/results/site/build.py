"""`jury report -f html -o DIR`: a static, self-contained site of a report.

Everything comes from files already read and checked by `jury report`: the ``Report`` that
``-f json`` writes (the front page's numbers are read from it, never recomputed, and it is
written beside the pages as report.json), the evaluation (outcomes and result previews), the
gold and run files, the locked verdict files and an optional review file. Pages:

- ``index.html``: headline findings (jury.results.site.headlines), the three columns with their
  Wilson intervals drawn, ranks, rank shifts and the composition of the misses in a
  sortable table, rank stability, correlations, family shares, the negative control, oracle
  routing, the charts as inline SVG (each captioned with the verdict files it came from) and
  a verification block (versions, hashes, signatures, the commands that rebuild the page);
- ``models/<model>.html``: every answer of one model, filterable by outcome and verdict;
- ``jurors/<juror>.html``: one juror of an adjudication file: its votes, latent-class accuracy
  and confusion matrix, agreement with the other jurors and with people, and its votes by
  the order the answers were shown (jury.results.site.jurors);
- ``questions/<question>.html``: the question, evidence, gold SQL and preview, the audit's
  votes on the gold, and each model's SQL, preview, juror votes and reasoning, and the
  human review decisions.

Every count on the front page links to the model page filtered to exactly the answers it
counts. Templates autoescape everything; the pages carry a strict Content-Security-Policy
and load only the site's own CSS and JS (no inline script, style or event handler); the
charts are rewritten so that they style nothing through CSS. The folder gets a marker
(``.jury-site.json``, listing the files written with their sha256); a later build writes over
a folder only when it holds that marker, writes only regular files inside it (jury's one
writer, jury.inputs.writer, with the folder as its bound: no symlink, device or folder link is
followed out), and removes only the files an earlier build listed whose content is unchanged
(see jury.results.site.folder).

This module renders and writes the pages; the parts are beside it: ``site_folder`` (the
inputs, the output folder, the verification block), ``site_front`` (the front page's
numbers), ``site_answers`` (the model and question pages' data) and ``site_charts`` (the SVG).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.errors import InputError, need_extra
from jury.inputs.writer import check_output, write_output, write_outputs
from jury.results.corrected import corrected_lines
from jury.results.panel_comparison import site_section
from jury.results.report.render import as_report, render_report
from jury.results.site.answers import CELL_CHARS, FILTERS, PREVIEW_CHARS, PREVIEW_ROWS, preview, question_pages, slugs
from jury.results.site.charts import CHART_TITLES, chart_data, clean_svg, figure_svg
from jury.results.site.folder import (
    MARKER,
    SiteSources,
    SiteSummary,
    check_site_dir,
    sha256_of,
    site_command,
    stale_files,
    verification_data,
)
from jury.results.site.front import FORMATS, Numbers, fmt_float3, fmt_int, fmt_pct, fmt_rank, front_page, pointer, resolve
from jury.results.site.jurors import juror_index, juror_pages
from jury.results.site.uncertainty import uncertainty_section
from jury.version import __version__
from jury.vocab import Column

if TYPE_CHECKING:
    from jinja2 import Environment

    from jury.results.report.model import ReportDocument


__all__ = ["build_site", "SiteSources", "SiteSummary", "check_site_dir", "site_command", "sha256_of", "MARKER", "CSP"]
__all__ += ["FORMATS", "Numbers", "pointer", "resolve", "FILTERS", "slugs", "preview", "clean_svg", "figure_svg"]
__all__ += ["CHART_TITLES", "PREVIEW_ROWS", "PREVIEW_CHARS", "CELL_CHARS"]

CSP = "default-src 'none'; img-src data: 'self'; style-src 'self'; script-src 'self'"

# The templates need jinja2 (the [web] extra) and the charts matplotlib (the [plots] extra):
# checked when this module is imported, so a site without them is one line before any work.
for _module in ("jinja2", "matplotlib"):
    need_extra(_module, "plots,web", "the html site")


# ------------------------------------------------------------------ building


_DICT_ATTRIBUTES = frozenset(dir(dict))  # what getattr finds on a plain dict


def _environment() -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    class SiteEnvironment(Environment):
        """jinja's ``x.name`` on a plain dict without the failed attribute look-up first: the
        pages' data are dicts, and that AttributeError was most of their rendering. The same
        value as jinja's getattr (an attribute of dict still wins, a missing key is undefined)."""

        def getattr(self, obj: Any, attribute: str) -> Any:
            if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
                try:
                    return obj[attribute]
                except KeyError:
                    return self.undefined(obj=obj, name=attribute)
            return super().getattr(obj, attribute)

    env = SiteEnvironment(
        loader=PackageLoader("jury.results.site", "templates"),
        autoescape=True,  # every template, whatever its name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = fmt_pct
    env.filters["count"] = fmt_int
    env.filters["float3"] = fmt_float3
    env.filters["rank"] = fmt_rank
    env.filters["label"] = lambda c: Column(c).label
    return env


def build_site(sources: SiteSources, out: str | Path) -> SiteSummary:
    """Write the site into ``out`` (see the module's docstring); refuses a folder that is not
    empty and not an earlier jury site."""
    out = Path(out)
    check_site_dir(out, [p for _role, p in sources.inputs])
    return _write_site(out, _site_files(sources))


def _page(env: Environment, name: str, template: str, **ctx: Any) -> bytes:
    """One page of the site (``name``: its path inside the site) rendered from ``template``.

    The model and question pages render their ``main`` block into a ``{% set %}`` buffer
    and output it once: jinja then extends a list with each stretch of the page's pieces instead
    of yielding every piece through the three generators of the page, its block and base.html (the same
    text; at the benchmark's size 27,324 answers, each a row and an entry, ~1.2 million pieces)."""
    root = "../" * name.count("/")
    return env.get_template(template).render(root=root, csp=CSP, version=__version__, **ctx).encode("utf-8")


def _site_files(sources: SiteSources) -> dict[str, bytes]:
    """Every file of the site (path inside the site -> its bytes) but the marker: the front
    page, a page per model, juror and question, report.json and the assets."""
    typed = as_report(sources.report)
    report = typed.model_dump(mode="json")  # what the pages' cells point into
    env = _environment()
    models = [r["model"] for r in report["models"]]
    model_slug = slugs(models)
    qids, data = question_pages(sources, model_slug)
    written: dict[str, bytes] = {}
    front = front_page(report, typed, model_slug)
    jurors = juror_pages(report)
    written["index.html"] = _index_page(env, sources, typed, report, front, jurors, model_slug, qids)
    for r in report["models"]:
        rows = data["models"].get(r["model"], [])
        counts = Counter(t for row in rows for t in row["tags"].split())
        name = f"models/{model_slug[r['model']]}.html"
        written[name] = _page(
            env,
            name,
            "model.html",
            title=f"{r['model']} — jury report",
            row=r,
            answers=rows,
            filters=[(key, label, counts.get(key, 0)) for key, label in FILTERS if counts.get(key) or key == "all"],
        )
    for p in jurors:
        name = f"jurors/{p['slug']}.html"
        written[name] = _page(env, name, "juror.html", title=f"juror {p['juror']['juror']} — jury report", p=p)
    for q in qids:
        d = data["pages"][q]
        name = f"questions/{d['slug']}.html"
        written[name] = _page(env, name, "question.html", title=f"question {q} — jury report", q=d)
    written["report.json"] = render_report(typed, "json").encode("utf-8")
    for asset in ("site.css", "site.js"):
        written[f"assets/{asset}"] = resources.files("jury.results.site").joinpath("templates", asset).read_bytes()
    return written


def _index_page(
    env: Environment,
    sources: SiteSources,
    typed: ReportDocument,
    report: dict[str, Any],
    front: dict[str, Any],
    jurors: list[dict[str, Any]],
    model_slug: dict[str, str],
    qids: list[Any],
) -> bytes:
    """The front page: the report's tables and charts, its verification, the panels compared,
    the corrected accuracies, the jurors and the uncertainty section."""

    return _page(
        env,
        "index.html",
        "index.html",
        title="jury report",
        report=report,
        front=front,
        charts=chart_data(report),
        verification=verification_data(report, sources),
        n_questions=len(qids),
        panels=site_section(sources.panels) if sources.panels else None,
        corrected=corrected_lines(typed.corrected) if typed.corrected is not None else None,
        jurors=juror_index(jurors),
        uncertainty=uncertainty_section(report, typed, model_slug, slugs(qids)),
    )


def _write_site(out: Path, written: dict[str, bytes]) -> SiteSummary:
    """Write the files and the marker (its manifest of their hashes) into ``out``, removing the
    files of an earlier build this one does not write."""
    # everything is checked before anything is written or removed: the manifest's entries
    # (stale_files), and every name this build writes (nothing but a regular file inside)
    remove, kept = stale_files(out, set(written)) if out.is_dir() else ([], [])
    for name in [*written, MARKER]:
        check_output(out / name, within=out)
    total = sum(len(body) for body in written.values())
    try:
        for name in written:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
        write_outputs(((out / name, body) for name, body in written.items()), within=out)  # one fsync per folder
        for target in remove:
            target.unlink(missing_ok=True)
    except OSError as exc:
        raise InputError(f"-o {out}: cannot write the site: {exc.strerror or exc}") from None
    hashes = {name: hashlib.sha256(body).hexdigest() for name, body in sorted(written.items())}
    marker = json.dumps({"generator": f"jury {__version__}", "files": hashes}, indent=1).encode()
    write_output(out / MARKER, marker, within=out)
    return SiteSummary(out, len(written) + 1, total + len(marker), kept)
