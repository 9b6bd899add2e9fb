"""Render rows of dicts as a terminal table, CSV, Markdown or JSON."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence

FORMATS = ("table", "csv", "json", "md")
UNWRAPPED_WIDTH = 100_000
"""The width tables and consoles get without a terminal: lines are never wrapped, so a log
or a pipe keeps whole model names, intervals and paths."""

# C0 and C1 control characters (ESC starts terminal escape sequences), DEL, bidirectional
# overrides and isolates (they reorder what a reader sees) and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def safe(text, *, newlines: bool = False) -> str:
    """``text`` fit to print on a terminal: every control character, bidi override and lone
    surrogate shown as its escape (ESC as \\x1b), so input-derived text (model names, paths,
    question ids, error values) cannot move the cursor, recolour or retitle the terminal.
    Newlines and tabs are kept only with ``newlines=True`` (multi-line console text)."""
    text = str(text)
    pattern = _UNSAFE if newlines else _UNSAFE_LINE
    return pattern.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


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
        lines.append("| " + " | ".join(safe(cell(row.get(c))).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines) + "\n"


def to_rich_table(rows: Sequence[dict], columns: Sequence[str], headers: Sequence[str], title: str = ""):
    """A rich table whose cells are plain text (no markup), made safe to print."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(safe(title)) if title else None, show_lines=False)
    for h in headers:
        table.add_column(Text(safe(h)), overflow="fold")
    for row in rows:
        table.add_row(*(Text(safe(cell(row.get(c)))) for c in columns))
    return table


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"
