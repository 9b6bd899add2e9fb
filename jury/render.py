"""Render rows of dicts as a terminal table, CSV, Markdown or JSON."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

FORMATS = ("table", "csv", "json", "md")


def cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def interval(p: dict | None) -> str:
    """A proportion dict as "0.845 [0.773, 0.897]"; "—" when it has no value."""
    if not p or p.get("value") is None:
        return "—"
    return f"{p['value']:.3f} [{p['low']:.3f}, {p['high']:.3f}]"


def to_csv(rows: Sequence[dict], columns: Sequence[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: "" if row.get(c) is None else row.get(c) for c in columns})
    return buf.getvalue()


def to_markdown(rows: Sequence[dict], columns: Sequence[str], headers: Sequence[str]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines) + "\n"


def to_rich_table(rows: Sequence[dict], columns: Sequence[str], headers: Sequence[str], title: str = ""):
    from rich.table import Table

    table = Table(title=title or None, show_lines=False)
    for h in headers:
        table.add_column(h, overflow="fold")
    for row in rows:
        table.add_row(*(cell(row.get(c)) for c in columns))
    return table


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"
