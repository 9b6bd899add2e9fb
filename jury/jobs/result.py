"""What every job of the public API returns: a typed result that renders itself.

A result is a pydantic model. ``render(fmt)`` gives the text the command line prints
(``table``, ``csv``, ``json`` or ``md``; some results know more), ``to_json()``,
``to_csv()`` and ``to_markdown()`` are shorthands, ``str(result)`` is the table, and a
notebook shows the Markdown. ``write(path)`` writes a rendering to a file after the check
that an output never overwrites one of the job's inputs (``jury.pipeline.outputs``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from jury.errors import InputError, did_you_mean

if TYPE_CHECKING:
    from rich.console import Console

SUFFIX_FORMATS = {".csv": "csv", ".json": "json", ".md": "md"}


def console_text(width: int | None, draw: Callable[[Console], None]) -> str:
    """What ``draw`` prints on a console ``width`` wide (None: unwrapped, as in a pipe or a log):
    a result's table rendering, as the command line prints it."""
    from rich.console import Console

    from jury.results.render import UNWRAPPED_WIDTH

    buffer = io.StringIO()
    draw(Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False))
    return buffer.getvalue()


class Result(BaseModel):
    """Base class of the jobs' results. A subclass implements ``_render``."""

    # defer_build: a result's validator and serializer are built on first use, not at import
    # (a `jury score` table builds none of them; issue 46)
    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "csv", "json", "md")

    # What the job read: an output written through ``write`` may be none of these.
    inputs: list[Path] = Field(default_factory=list, exclude=True, repr=False)
    store_path: Path | None = Field(default=None, exclude=True, repr=False)
    db_root: Path | None = Field(default=None, exclude=True, repr=False)

    def render(self, fmt: str = "table", *, width: int | None = None, wide: bool = False) -> str:
        """The result as text in ``fmt``. ``width``: a table's width (None: unwrapped);
        ``wide``: the table's and Markdown's optional columns (CSV and JSON hold every column)."""
        if fmt not in self.FORMATS:
            hint = did_you_mean(fmt, self.FORMATS) or ";"
            raise InputError(f"unknown format {fmt!r}{hint} choose one of: {', '.join(self.FORMATS)}")
        return self._render(fmt, width=width, wide=wide)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        raise NotImplementedError(f"{type(self).__name__} must implement _render")

    def to_json(self) -> str:
        """The result as JSON: ``render("json")``."""
        return self.render("json")

    def to_csv(self) -> str:
        """The result as CSV: ``render("csv")``."""
        return self.render("csv")

    def to_markdown(self) -> str:
        """The result as Markdown: ``render("md")``."""
        return self.render("md")

    def __str__(self) -> str:
        return self.render("table")

    def _repr_markdown_(self) -> str:  # a notebook shows the Markdown
        return self.render("md")

    def write(self, path: str | Path, fmt: str | None = None, *, wide: bool = False) -> Path:
        """Write the rendering in ``fmt`` (default: by the file's suffix, else the table) to
        ``path``, refused when ``path`` is one of the job's inputs, the store, a database file
        or a locked verdict file. Returns the path written."""
        from jury.inputs.writer import write_output
        from jury.pipeline.outputs import guard_outputs

        path = Path(path)
        fmt = fmt or SUFFIX_FORMATS.get(path.suffix.lower(), "table")
        text = self.render(fmt, wide=wide)
        guard_outputs([path], self.inputs, store=self.store_path, db_root=self.db_root)
        write_output(path, text)
        return path
