"""Render rows of dicts as a terminal table, CSV, Markdown or JSON."""

from __future__ import annotations

import csv
import io
import json
import numbers
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.text import Text
from typing import Any

Cell = str | int | float | None
"""A value in a rendered row (a row is a dict of column name -> Cell)."""

FORMATS = ("table", "csv", "json", "md")
UNWRAPPED_WIDTH = 100_000
"""The width tables and consoles get without a terminal: lines are never wrapped, so a log
or a pipe keeps whole model names, intervals and paths."""

# C0 and C1 control characters (ESC starts terminal escape sequences), DEL, bidirectional
# overrides and isolates (they reorder what a reader sees) and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def safe(text: object, *, newlines: bool = False) -> str:
    """``text`` fit to print on a terminal: every control character, bidi override and lone
    surrogate shown as its escape (ESC as \\x1b), so input-derived text (model names, paths,
    question ids, error values) cannot move the cursor, recolour or retitle the terminal.
    Newlines and tabs are kept only with ``newlines=True`` (multi-line console text)."""
    text = str(text)
    pattern = _UNSAFE if newlines else _UNSAFE_LINE
    return pattern.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def cell(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def interval(p: Mapping[str, Any] | None) -> str:
    """A proportion dict as "0.845 [0.773, 0.897]"; "—" when it has no value."""
    if not p or p.get("value") is None:
        return "—"
    return f"{p['value']:.3f} [{p['low']:.3f}, {p['high']:.3f}]"


# What makes a spreadsheet read a cell as a formula (OWASP's CSV injection list): =, +, -, @,
# a tab and a carriage return, first in the cell.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """One CSV cell that a spreadsheet cannot run: a text starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's rule against CSV injection:
    a model name ``=HYPERLINK(...)`` stays text). Numbers are kept as they are (a negative
    number stays a number) and None is an empty cell. A prefix the rule does not list (a
    full-width ``＝``, a leading space) is left as it is.

    >>> [csv_cell(v) for v in ("=1+1", "-1+cmd", "@SUM(A1)", "gpt-4o", -1, -0.5, None)]
    ["'=1+1", "'-1+cmd", "'@SUM(A1)", 'gpt-4o', -1, -0.5, '']
    """
    if value is None:
        return ""
    if isinstance(value, numbers.Number):  # int, float, bool, numpy's numbers: written as numbers
        return value
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """``rows`` as CSV under a header of ``columns`` (keys a row lacks are empty cells, keys not
    in ``columns`` are left out). jury's one CSV writer: every cell, the header's too, goes
    through :func:`csv_cell`, so no input-derived text reaches a spreadsheet as a formula
    (tests/test_csv_injection.py fails when another csv writer appears in jury/)."""
    buf = io.StringIO()
    # The csv module quotes a cell holding a character of the line terminator: with "\r\n" a
    # cell's lone "\r" is quoted too (with "\n" it was not, and a reader split the row there).
    # Each record's own "\r\n" then becomes the "\n" jury's CSV has always ended lines with.
    writer = csv.writer(buf, lineterminator="\r\n")
    lines = []
    for cells in [columns, *([row.get(c) for c in columns] for row in rows)]:
        writer.writerow([csv_cell(c) for c in cells])
        lines.append(buf.getvalue().removesuffix("\r\n") + "\n")
        buf.seek(0)
        buf.truncate()
    return "".join(lines)


def to_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str], headers: Sequence[str]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(safe(cell(row.get(c))).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines) + "\n"


def to_rich_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], headers: Sequence[str], title: str = "") -> FittedTable:
    """A table whose cells are plain text (no markup), made safe to print, that never splits a
    word (a model name, a header word, an interval bound) across lines: see FittedTable."""
    return FittedTable(
        [safe(h) for h in headers], [[safe(cell(row.get(c))) for c in columns] for row in rows], safe(title) if title else ""
    )


class FittedTable:
    """A rich renderable: the table fitted to the width it is printed at, words kept whole.

    Tried in turn: the table at its natural width; each column at least as wide as its longest
    word (header or cell), the room left going to unwrap the cells, then the headers, the
    columns nearest to whole first; the same without the outer edges; and, when even that is
    wider than the terminal, one block per row ("header: value" lines under the first
    column's value), so no identifier is ever cut."""

    def __init__(self, headers: list[str], rows: list[list[str]], title: str = "") -> None:
        self.headers, self.rows, self.title = headers, rows, title

    def _extent(self, i: int) -> tuple[int, int, int]:
        """(longest word, longest line, longest cell line) of column i, the first two header
        included, in terminal cells."""
        from rich.cells import cell_len

        texts = [self.headers[i], *(r[i] for r in self.rows)]
        lines = [cell_len(line) for t in texts for line in t.splitlines()]
        words = [w for t in texts for w in t.split()]
        return max((cell_len(w) for w in words), default=1), max(lines, default=1), max(lines[1:], default=1)

    def widths(self, max_width: int) -> tuple[list[int] | None, bool] | None:
        """(column widths or None for natural, show the outer edge) at max_width; None: stack rows."""
        n = len(self.headers)
        if not n:
            return None, True
        extents = [self._extent(i) for i in range(n)]
        least, most = [e[0] for e in extents], [e[1] for e in extents]
        cells = [max(e[0], e[2]) for e in extents]
        for edge in (True, False):
            room = max_width - (3 * n + 1 if edge else 3 * n - 1)  # padding 1 each side and the rules
            if sum(most) <= room:
                return (None if edge else most), edge
            if sum(least) <= room:
                width = list(least)
                spare = room - sum(least)
                for target in (cells, most):  # unwrap the cells first, then the headers
                    for i in sorted(range(n), key=lambda j: target[j] - width[j]):  # nearest to whole first
                        grow = max(0, min(spare, target[i] - width[i]))
                        width[i] += grow
                        spare -= grow
                return width, edge
        return None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.table import Table
        from rich.text import Text

        fitted = self.widths(options.max_width)
        if fitted is None:
            yield from self._stacked()
            return
        width, edge = fitted
        table = Table(title=Text(self.title) if self.title else None, show_lines=False, show_edge=edge)
        for i, h in enumerate(self.headers):
            table.add_column(Text(h), overflow="fold", width=None if width is None else width[i])
        for row in self.rows:
            table.add_row(*(Text(v) for v in row))
        yield table

    def _stacked(self) -> Iterator[Text]:
        from rich.text import Text

        if self.title:
            yield Text(self.title, style="bold")
        for row in self.rows:
            yield Text(f"{self.headers[0]}: {row[0]}", style="bold")
            for h, v in zip(self.headers[1:], row[1:]):
                yield Text(f"  {h}: {v}")


def to_json(obj: object) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"
