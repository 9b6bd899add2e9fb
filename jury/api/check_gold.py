"""``jury.check_gold``: the deterministic checks of the gold queries (no model involved).

>>> import jury
>>> checks = jury.check_gold("dev.json", db_root="databases")  # doctest: +SKIP
>>> print(checks.render("md"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.api.result import Result
from jury.compare.gold_checks import GoldCheckResult
from jury.pipeline.project import PathLike, Project

if TYPE_CHECKING:
    from jury.progress import ProgressFactory


class GoldCheck(Result):
    """The findings of ``jury.check_gold``: one result per gold query (``results``), how many
    queries each check flags (``counts``) and the settings they were found with; ``render``
    is what ``jury check-gold`` prints (JSON: every item, with its executions)."""

    results: list[GoldCheckResult]
    counts: dict[str, int]
    settings: dict[str, Any]
    privileged_logins: list[str] = []  # engine databases run through a login allowed to do more than read
    reversed_run: bool = True  # a database was a SQLite file: its extra run with reversed unordered scans
    cross_engine: dict[str, Any] | None = None  # {"against", "differ": comparator -> question ids}: check_gold(against_gold=...)

    @property
    def flagged(self) -> list[GoldCheckResult]:
        """The gold queries at least one check flags."""
        return [r for r in self.results if r.checks]

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        from jury.results.gold_check_report import render_gold_checks

        return render_gold_checks(
            self.results,
            self.counts,
            self.settings,
            fmt,
            width=width,
            reversed_run=self.reversed_run,
            cross_engine=self.cross_engine,
            privileged_logins=self.privileged_logins,
        )


def _strings(value: str | int | Sequence[Any] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | int):
        return [str(value)]
    return [str(v) for v in value]


def check_gold(
    gold: PathLike | None = None,
    *,
    db_root: PathLike | None = None,
    db_url: str | None = None,
    allow_privileged_login: bool = False,
    passes: str | Sequence[int] = "5,10,10,10",
    db: str | Sequence[str] | None = None,
    question_id: str | int | Sequence[str | int] | None = None,
    comparator: str | None = None,
    timeout: float | None = None,
    store: PathLike | None = None,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    against_gold: PathLike | None = None,
    against_db_url: str | None = None,
    against_db_root: PathLike | None = None,
    windows: int = 1,
    window_gap: float | None = None,
    workers: int | None = None,
) -> GoldCheck:
    """Check every gold query without a model.

    Each query runs in ``passes`` and once with reversed unordered scans; then the LIMIT-tie and
    bare-column probes and the result's shape. Nothing is cached: every check runs afresh (on
    ``workers`` processes) and is written to the store, where ``jury.audit`` reuses it.

    Args:
        gold: the gold file (BIRD's dev.json). Default: jury.toml's ``gold``.
        db_root: the folder of ``<db_id>/<db_id>.sqlite`` databases. Default: jury.toml's
            ``db_root``.
        db_url: run on an engine (PostgreSQL, MySQL/MariaDB, DuckDB) at this URL instead of SQLite
            files. Default: jury.toml's ``[databases]``.
        allow_privileged_login: run on an engine through a login that can do more than read (refused
            by default; recorded in the provenance).
        passes: executions per pass, comma-separated (default Spider 2.0-AIFunc's ``"5,10,10,10"``).
        db: only these db_ids.
        question_id: only these questions.
        comparator: the comparator that compares the passes' results (default jury.toml's, else
            strict).
        timeout: each execution's timeout in seconds (default jury.toml's, else 30).
        store: the store file. Default: jury.toml's ``store``, else ``.jury/store.db``.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress factory: called with a task's name, returns a context manager giving a
            ``(done, total)`` callback or None (default: no progress shown).
        outputs: files the caller will write: refused before any work when one is an input, the
            store, a database or a locked verdict file.
        against_gold: the same questions' gold for another engine (BIRD's mini_dev_postgresql.json),
            executed there once and compared with the execution here: the ``cross_engine`` check.
        against_db_url: the other engine's URL (with ``against_gold``).
        against_db_root: the other engine's SQLite files (with ``against_gold``).
        windows: Spider 2.0-AIFunc's final stability check: the last pass repeated in each of this
            many separate time windows (jury.compare.gold_windows; each item's ``windows``).
        window_gap: seconds between two windows (required with more than one window).
        workers: processes checking gold queries in parallel (default jury.toml's, else the CPU
            count); the results are those of one process, in the same order.

    Returns:
        A GoldCheck: one result per gold query with its checks, and ``cross_engine``: the questions
        that differ under each comparator.

    Raises:
        InputError: a bad input, named in one line.
    """
    from jury.compare.comparators import get_comparator
    from jury.compare.gold_check_store import stored_gold_checks
    from jury.compare.gold_checks import parse_passes, select_items
    from jury.compare.outcomes import resolve_databases
    from jury.errors import InputError
    from jury.inputs.io import load_gold
    from jury.pipeline.outputs import guard_outputs
    from jury.progress import no_progress
    from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

    project = project or Project.load()
    gold_file = project.path("gold", gold)
    if gold_file is None:
        raise InputError("no gold file: give the gold file or set gold in jury.toml")
    root, store_path = project.db_root(db_root), project.store_path(store)
    guard_outputs(outputs, [gold_file], store=store_path, db_root=root)
    pass_counts = parse_passes(passes)
    from jury.compare.gold_windows import check_windows

    check_windows(windows, window_gap)
    name = project.get("comparator", comparator, DEFAULT_COMPARATOR)
    timeout_s = project.get("timeout", timeout, DEFAULT_TIMEOUT_S)  # checked: positive
    get_comparator(name)
    items = select_items(list(load_gold(gold_file).values()), _strings(db), _strings(question_id), gold_file, "check")
    from jury.compare.gold_checks import cross_engine_side

    chosen_workers = project.get("workers", workers)
    n_workers = int(chosen_workers) if chosen_workers is not None else os.cpu_count() or 1
    if n_workers < 1:
        raise InputError(f"workers must be at least 1, got {n_workers}")
    against = None
    with project.open_store(store) as st:
        urls = project.db_urls(db_url, allow_privileged_login)
        databases = resolve_databases([i for i in items if not i.has_recording], root, st, urls)
        if against_gold is not None:
            there = project.engine_url(against_db_url, "--against-db-url", allow_privileged_login)
            against = cross_engine_side(items, Path(against_gold), there, against_db_root, st, root)
        from jury.compare.gold_windows import now_utc

        started_at = now_utc()
        with (progress or no_progress)("checking gold SQL") as bar:
            results = stored_gold_checks(
                st, items, databases, passes=pass_counts, comparator=name, timeout_s=timeout_s, row_cap=DEFAULT_ROW_CAP,
                progress=bar, against=against, workers=n_workers, reuse=False,
            ).results  # fmt: skip
    settings: dict[str, Any] = {"passes": list(pass_counts), "comparator": name, "timeout_s": timeout_s}
    if windows > 1:
        from jury.compare.gold_windows import run_windows

        assert window_gap is not None  # check_windows
        with (progress or no_progress)(f"windows 2-{windows}, {window_gap:g} s apart") as bar:
            run_windows(
                items, databases, results, windows=windows, window_gap_s=window_gap, comparator=name,
                timeout_s=timeout_s, row_cap=DEFAULT_ROW_CAP, started_at=started_at, progress=bar,
            )  # fmt: skip
        settings.update({"windows": windows, "window_gap_s": window_gap})
    return _result(results, settings, databases, against, inputs=[gold_file], store_path=store_path, db_root=root)


def _result(results: list[Any], settings: dict[str, Any], databases: dict[str, Any], against: Any, **where: Any) -> GoldCheck:
    """The GoldCheck of the checks' results: the counts, the cross-engine differences, the
    privileged logins used and whether a database was run from a file here."""
    from jury.compare.gold_checks import check_counts
    from jury.execution.engine_urls import is_url, privileged_logins

    cross = None
    if against is not None:
        from jury.compare.gold_checks import cross_engine_lists

        cross = {"against": against.label, "differ": cross_engine_lists(results)}
    return GoldCheck(
        results=results,
        counts=check_counts(results, cross_engine=against is not None),
        cross_engine=cross,
        settings=settings,
        privileged_logins=privileged_logins(
            path for dbs in (databases, against.databases if against else {}) for path, _sha in dbs.values()
        ),
        reversed_run=any(not is_url(path) for path, _ in databases.values()),
        **where,
    )
