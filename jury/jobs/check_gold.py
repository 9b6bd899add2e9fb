"""``jury.check_gold``: the deterministic checks of the gold queries (no model involved).

>>> import jury
>>> checks = jury.check_gold("dev.json", db_root="databases")  # doctest: +SKIP
>>> print(checks.render("md"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.compare.comparators import get_comparator
from jury.compare.gold_checks import (
    GoldCheckResult,
    check_counts,
    cross_engine_lists,
    cross_engine_side,
    parse_passes,
    select_items,
)
from jury.errors import InputError
from jury.execution.engine_urls import is_url, privileged_logins
from jury.inputs.records import QuestionId
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.check_gold import CheckGoldOptions
from jury.pipeline.project import PathLike, Project
from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

if TYPE_CHECKING:
    from jury.execution.engine_urls import Databases
    from jury.execution.store import Store
    from jury.inputs.records import GoldItem
    from jury.progress import ProgressFactory


class GoldCheckSettings(TypedDict):
    """The settings the findings were found with: the passes, the comparator, the per-query
    timeout (as given: jury.toml may give an int) and, with more than one window, the windows and
    the gap between them."""

    passes: list[int]
    comparator: str
    timeout_s: int | float
    windows: NotRequired[int]
    window_gap_s: NotRequired[float | None]


class CrossEngineDiffers(TypedDict):
    """check_gold(against_gold=...): the other engine's label and, per comparator, the questions
    whose results differ across the engines under it."""

    against: str
    differ: dict[str, list[QuestionId]]


class GoldCheck(Result):
    """The findings of ``jury.check_gold``: one result per gold query (``results``), how many
    queries each check flags (``counts``) and the settings they were found with; ``render``
    is what ``jury check-gold`` prints (JSON: every item, with its executions)."""

    results: list[GoldCheckResult]
    counts: dict[str, int]
    settings: GoldCheckSettings
    privileged_logins: list[str] = []  # engine databases run through a login allowed to do more than read
    reversed_run: bool = True  # a database was a SQLite file: its extra run with reversed unordered scans
    cross_engine: CrossEngineDiffers | None = None  # check_gold(against_gold=...)

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


def check_gold(
    gold: PathLike | None = None,
    options: CheckGoldOptions | None = None,
    *,
    project: Project | None = None,
    progress: ProgressFactory | None = None,
    outputs: Sequence[PathLike | None] = (),
    **overrides: Any,
) -> GoldCheck:
    """Check every gold query without a model.

    Each query runs in ``passes`` and once with reversed unordered scans; then the LIMIT-tie and
    bare-column probes and the result's shape, afresh (nothing reused) and into the store.

    Args:
        gold: the gold file (BIRD's dev.json). Default: jury.toml's ``gold``.
        options: a ``CheckGoldOptions`` (jury.options.check_gold: every option of ``jury check-gold``
            but the gold file and how it shows the findings, each documented there), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        progress: a progress-bar factory (jury.progress; default: no progress shown).
        outputs: files the caller will write: refused before any work when one is an input, the
            store, a database or a locked verdict file.
        overrides: CheckGoldOptions' fields as keyword arguments (``db_root=``, ``passes=``,
            ``question_id=``, ...), over ``options``'.

    Returns:
        A GoldCheck: one result per gold query with its checks, and ``cross_engine``: the questions
        that differ under each comparator.

    Raises:
        InputError: a bad input, named in one line.
    """
    from jury.compare.gold_windows import now_utc
    from jury.compare.outcomes import resolve_databases
    from jury.inputs.io import load_gold
    from jury.pipeline.outputs import guard_outputs
    from jury.progress import no_progress

    o = job_options(CheckGoldOptions, "check_gold", options, overrides)
    project, progress = project or Project.load(), progress or no_progress
    gold_file = project.path("gold", gold)
    if gold_file is None:
        raise InputError("no gold file: give the gold file or set gold in jury.toml")
    root, store_path = project.db_root(o.db_root), project.store_path(o.store)
    guard_outputs(outputs, [gold_file], store=store_path, db_root=root)
    how = _How.of(project, o)
    items = select_items(list(load_gold(gold_file).values()), o.db, o.question_id, gold_file, "check")
    with project.open_store(o.store) as st:
        urls = project.db_urls(o.db_url, o.allow_privileged_login)
        databases = resolve_databases([i for i in items if not i.has_recording], root, st, urls)
        against = _against(project, o, items, st, root)
        started_at = now_utc()
        with progress("checking gold SQL") as bar:
            results = how.check(st, items, databases, against, bar)
    if o.windows > 1:
        with progress(f"windows 2-{o.windows}, {o.window_gap:g} s apart") as bar:
            _more_windows(o, items, databases, results, how, started_at, bar)
    return _result(results, how.settings(o), databases, against, inputs=[gold_file], store_path=store_path, db_root=root)


@dataclass(frozen=True)
class _How:
    """How each gold query is checked: the options over jury.toml's, each checked before any work."""

    passes: tuple[int, ...]
    comparator: str
    timeout_s: float
    workers: int

    @classmethod
    def of(cls, project: Project, o: CheckGoldOptions) -> _How:
        from jury.compare.gold_windows import check_windows

        passes = tuple(parse_passes(o.passes))
        check_windows(o.windows, o.window_gap)
        name = project.get("comparator", o.comparator, DEFAULT_COMPARATOR)
        timeout_s = project.get("timeout", o.timeout, DEFAULT_TIMEOUT_S)  # checked: positive
        get_comparator(name)
        return cls(passes, name, timeout_s, project.get("workers", o.workers) or os.cpu_count() or 1)  # workers >= 1

    def check(self, st: Store, items: list[GoldItem], databases: Databases, against: Any, bar: Any) -> list[GoldCheckResult]:
        """Every gold query checked afresh (nothing reused) and written to the store."""
        from jury.compare.gold_check_store import CheckSettings, stored_gold_checks

        settings = CheckSettings(
            passes=self.passes, comparator=self.comparator, timeout_s=self.timeout_s, row_cap=DEFAULT_ROW_CAP
        )
        return stored_gold_checks(
            st, items, databases, settings, progress=bar, against=against, workers=self.workers, reuse=False
        ).results

    def settings(self, o: CheckGoldOptions) -> GoldCheckSettings:
        """The settings the findings were found with (the windows' when more than one)."""
        out: GoldCheckSettings = {"passes": list(self.passes), "comparator": self.comparator, "timeout_s": self.timeout_s}
        if o.windows > 1:
            out |= {"windows": o.windows, "window_gap_s": o.window_gap}
        return out


def _against(project: Project, o: CheckGoldOptions, items: list[GoldItem], st: Store, root: Path | None) -> Any:
    """The other engine's side (``against_gold=``): its gold and databases, else None."""

    if o.against_gold is None:
        return None
    there = project.engine_url(o.against_db_url, "--against-db-url", o.allow_privileged_login)
    return cross_engine_side(items, o.against_gold, there, o.against_db_root, st, root)


def _result(results: list[Any], settings: GoldCheckSettings, databases: dict[str, Any], against: Any, **where: Any) -> GoldCheck:
    """The GoldCheck of the checks' results: the counts, the cross-engine differences, the
    privileged logins used and whether a database was run from a file here."""

    cross: CrossEngineDiffers | None = None
    if against is not None:
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


def _more_windows(
    o: CheckGoldOptions,
    items: list[GoldItem],
    databases: Databases,
    results: list[GoldCheckResult],
    how: _How,
    started_at: str,
    bar: Any,
) -> None:
    """``--windows`` beyond the first: every gold query run again in windows 2..N, ``window_gap`` apart
    (jury.compare.gold_windows), its findings added to ``results``."""
    from jury.compare.gold_windows import run_windows

    assert o.window_gap is not None  # check_windows
    run_windows(
        items, databases, results, windows=o.windows, window_gap_s=o.window_gap, comparator=how.comparator,
        timeout_s=how.timeout_s, row_cap=DEFAULT_ROW_CAP, started_at=started_at, progress=bar,
    )  # fmt: skip
