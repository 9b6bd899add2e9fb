"""Rendering a calibration (jury/results/calibration/compute.py): JSON, CSV (one row per figure),
Markdown tables and the rich tables `jury calibrate` prints."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from jury.results.calibration.model import CalibrationDocument, Figure
from jury.results.render import UNWRAPPED_WIDTH, safe, to_csv, to_json, to_markdown, to_rich_table

if TYPE_CHECKING:
    from rich.console import Console


CSV_COLUMNS = ("section", "subject", "reference", "metric", "value", "low", "high", "n")

# (title, sections, whether rows are per reference too, [(metric, header)])
TABLES: tuple[tuple[str, tuple[str, ...], bool, tuple[tuple[str, str], ...]], ...] = (
    (
        "Human annotators: agreement with each other",
        ("annotators",),
        False,
        (("kappa", "Cohen's κ"), ("alpha", "Krippendorff's α"), ("category_alpha", "category α")),
    ),
    (
        "Agreement with the reference label (credited = judged correct)",
        ("comparator", "juror", "panel"),
        False,
        (
            ("accuracy", "accuracy"),
            ("kappa", "Cohen's κ"),
            ("category_accuracy", "category accuracy"),
            ("category_kappa", "category κ"),
            ("precision (credited)", "precision on strict failures"),
            ("recall (credited)", "recall on strict failures"),
        ),
    ),
    (
        "Recorded judges (other tools' verdicts, never annotators): agreement with the reference label",
        ("judge",),
        False,
        (
            ("accuracy", "accuracy"),
            ("kappa", "Cohen's κ"),
            ("category_accuracy", "category accuracy"),
            ("precision (credited)", "precision on strict failures"),
            ("recall (credited)", "recall on strict failures"),
            ("first_pick_share", "picks the first-shown answer"),
        ),
    ),
    (
        "Gold audit: flags against each label source",
        ("audit",),
        True,
        (("precision (flagged)", "precision"), ("recall (flagged)", "recall"), ("f1 (flagged)", "F1")),
    ),
    (
        "Published anchors on FLEX's agreement set, beside jury's figures on the same items",
        ("anchor",),
        False,
        (("kappa", "Cohen's κ"),),
    ),
)


def figure_text(f: Figure | None) -> str:
    """ "0.620 [0.512, 0.718] n=200"; "— n=0" without a value; a bootstrap interval that left out
    degenerate resamples says how many ("... n=12, 31/2000 degenerate"), or why it is missing."""
    if f is None:
        return ""
    value = "—" if f.value is None else f"{f.value:.3f}"
    interval = f" [{f.low:.3f}, {f.high:.3f}]" if f.low is not None and f.high is not None else ""
    text = f"{value}{interval} n={f.n}"
    if f.resamples and f.degenerate_resamples:
        text += f", {'no CI: ' if not interval else ''}{f.degenerate_resamples}/{f.resamples} degenerate"
    return text


def table_rows(
    cal: CalibrationDocument, sections: tuple[str, ...], by_reference: bool, metrics: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for f in cal.figures:
        if f.section not in sections or f.metric not in dict(metrics):
            continue
        key = (f.section, f.subject, f.reference if by_reference else "")
        row = rows.setdefault(key, {"subject": f.subject, "reference": f.reference})
        row[f.metric] = figure_text(f)
    return list(rows.values())


def _tables(cal: CalibrationDocument) -> Iterator[tuple[str, list[dict[str, Any]], list[str], list[str]]]:
    for title, sections, by_reference, metrics in TABLES:
        rows = table_rows(cal, sections, by_reference, metrics)
        if not rows:
            continue
        columns = ["subject", *(["reference"] if by_reference else []), *(m for m, _ in metrics)]
        headers = ["", *(["reference"] if by_reference else []), *(h for _, h in metrics)]
        yield title, rows, columns, headers


def header_lines(cal: CalibrationDocument) -> list[str]:
    lines = [
        f"Reference: {cal.reference}.",
        f"Labelled candidates: {cal.labelled} (sources: {', '.join(cal.sources) or 'none'}); "
        f"split evenly, left out: {cal.ties}; matched to the runs or verdicts: {cal.matched}.",
    ]
    if cal.unmatched:
        more = f" (first: {cal.unmatched[0]})"
        lines.append(f"Unmatched labelled candidates: {len(cal.unmatched)}{more}.")
    return lines


def render_markdown(cal: CalibrationDocument) -> str:
    parts = ["# Calibration against human labels\n", *(f"{line}\n" for line in header_lines(cal)), ""]
    for title, rows, columns, headers in _tables(cal):
        parts += [f"## {title}\n", to_markdown(rows, columns, headers)]
    if cal.confusions:
        parts.append("## Confusion matrices (rows: reference, columns: subject)\n")
        for c in cal.confusions:
            rows = [
                {"label": label, **{lab: count for lab, count in zip(c.labels, row)}} for label, row in zip(c.labels, c.matrix)
            ]
            parts += [
                f"**{safe(c.subject)}** vs {safe(c.reference)} (n={c.n})\n",
                to_markdown(rows, ["label", *c.labels], ["", *c.labels]),
            ]
    if cal.unmatched:
        parts += ["## Unmatched labelled candidates\n", "".join(f"- {safe(u)}\n" for u in cal.unmatched)]
    if cal.notes:
        parts += ["## Notes\n", "".join(f"- {safe(n)}\n" for n in cal.notes)]
    return "\n".join(parts)


def render_csv(cal: CalibrationDocument) -> str:
    return to_csv([f.model_dump() for f in cal.figures], CSV_COLUMNS)


def render_json(cal: CalibrationDocument) -> str:
    return to_json(cal.model_dump(mode="json"))


def print_calibration(cal: CalibrationDocument, console: Console) -> None:
    """The main tables on a rich console."""
    from rich.text import Text

    for line in header_lines(cal):
        console.print(Text(safe(line)))
    for title, rows, columns, headers in _tables(cal):
        console.print(to_rich_table(rows, columns, headers, title=title))
    for note in cal.notes:
        console.print(Text(safe("Note: " + note)))


def render_table(cal: CalibrationDocument, *, width: int | None = None) -> str:
    """The main tables as `jury calibrate` prints them, ``width`` columns wide (None: unwrapped)."""

    from rich.console import Console

    buffer = io.StringIO()
    print_calibration(cal, Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None))
    return buffer.getvalue()
