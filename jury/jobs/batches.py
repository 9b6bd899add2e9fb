"""Batches sent through providers' batch APIs: the store's batches and their collection
(``jury batch status|collect``)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from jury.jobs.result import Result, console_text
from jury.options import job_options
from jury.options.batch import BatchOptions
from jury.pipeline.project import Project

BATCH_COLUMNS = ["provider", "batch", "juror", "requests", "pending", "answered", "used", "failed", "age", "state"]
BATCH_HEADS = ["provider", "batch", "juror", "ballots", "pending", "collected", "voted", "failed", "age", "state"]


class BatchStatus(Result):
    """The store's batches: provider, batch id, juror, ballots by state, age and state."""

    rows: list[dict[str, Any]]

    @property
    def pending(self) -> int:
        """Requests still waiting in a provider's batch, over every batch listed."""
        return sum(r["pending"] for r in self.rows)

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.jobs.store import table_and_lines
        from jury.results.render import to_csv, to_json, to_markdown

        if fmt == "csv":
            return to_csv(self.rows, BATCH_COLUMNS)
        if fmt == "json":
            return to_json(self.rows)
        if fmt == "md":
            return to_markdown(self.rows, BATCH_COLUMNS, BATCH_HEADS) + "\n"
        if not self.rows:
            return console_text(width, table_and_lines(None, ["no batches in this store"]))
        waiting = self.pending
        line = f"{len(self.rows)} batches; {waiting} ballots pending at the providers" + (
            "; rerun the command that sent them (or `jury batch collect`) to collect" if waiting else ""
        )
        notes = [f"batch {r['batch']}: {r['note']}" for r in self.rows if r.get("note")]
        return console_text(width, table_and_lines((self.rows, BATCH_COLUMNS, BATCH_HEADS, "batches"), [*notes, line]))


def batch_status(options: BatchOptions | None = None, *, project: Project | None = None, **overrides: Any) -> BatchStatus:
    """List the store's batches (ballots pending at the provider, collected and not yet a vote,
    voted, failed). Calls nothing.

    ``options``: a ``BatchOptions`` (jury.options.batch: the store), or none; ``overrides``: its
    fields as keyword arguments (``store=``), over ``options``'."""
    from jury.judging.batch import status_rows

    store = job_options(BatchOptions, "batch_status", options, overrides).store
    project = project or Project.load()
    with project.open_store(store) as st:
        rows = status_rows(st)
    return BatchStatus(rows=rows, store_path=project.store_path(store))


class BatchCollection(BatchStatus):
    """What ``collect_batches`` left: the batches after polling, and the ones it could not poll."""

    FORMATS: ClassVar[tuple[str, ...]] = ("table", "json", "md")

    notes: list[str] = Field(default_factory=list)  # "Warning: ..." per batch that could not be polled

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.jobs.store import table_and_lines

        if fmt == "json":
            return super()._render(fmt, width=width, wide=wide)
        line = (
            f"{sum(r['answered'] for r in self.rows)} replies collected and waiting to become votes; "
            f"{self.pending} ballots still pending; {sum(r['failed'] for r in self.rows)} failed"
        )
        return line + "\n" if fmt == "md" else console_text(width, table_and_lines(None, [line]))


def collect_batches(options: BatchOptions | None = None, *, project: Project | None = None, **overrides: Any) -> BatchCollection:
    """Poll every open batch and store the replies of those that ended (they become votes when
    the job that sent them runs again). Needs each juror's key variable; sends no ballot.

    ``options``: a ``BatchOptions`` (jury.options.batch: the store), or none; ``overrides``: its
    fields as keyword arguments (``store=``), over ``options``'."""
    import asyncio

    from jury.judging.batch import collect, status_rows

    store = job_options(BatchOptions, "collect_batches", options, overrides).store
    project = project or Project.load()
    with project.open_store(store) as st:
        problems = asyncio.run(collect(st))
        rows = status_rows(st)
    return BatchCollection(rows=rows, notes=[f"Warning: {p}" for p in problems], store_path=project.store_path(store))
