"""Deterministic checks of gold queries (no model involved): `jury check-gold` and the first
stage of `jury audit-gold`.

Per gold query: executed in passes (default 5 + 10 + 10 + 10, as Spider 2.0-AIFunc) and once
more with ``PRAGMA reverse_unordered_selects=ON``; a result that differs from the first
under the comparator the item is scored with (rows ordered when the item's order matters)
is ``row_order``. Then the probes of :mod:`jury.compare.gold_probes` (``limit_tie``,
``bare_column``) and the shape of the result (``empty_result``, ``all_null``,
``null_value``); a gold that fails or times out is ``gold_fails`` / ``gold_timeout``.
Every finding carries a one-line evidence a person can confirm in seconds.

With a second engine and gold (``against``: :class:`CrossEngine`), each question's gold there
runs once too and the first result here is compared with it under every comparator of
CROSS_ENGINE_COMPARATORS: a difference under any is ``cross_engine``, its evidence naming the
comparators and both results (BIRD's PostgreSQL gold of mini-dev question 788 computes another
share than its SQLite gold). A difference under ``bird`` alone is the drivers' types, not the
values: equal once both are read as SQLite returns them (a DECIMAL against a float).

On an engine URL (jury.execution.engines) the passes run on that engine, the probes are
written in its dialect, and two checks do not apply: the reversed run (SQLite's pragma; the
passes alone test determinism) and ``bare_column`` on PostgreSQL and DuckDB (they refuse a
bare column, so such a gold is ``gold_fails``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from pydantic import BaseModel, Field

from jury.compare import comparators as compare
from jury.compare.gold_probes import bare_column_probes, limit_probe
from jury.errors import InputError, did_you_mean
from jury.execution.engine_urls import MYSQL, Databases, DatabaseURLs, check_url, engine_of, is_url, redact
from jury.execution.engines import dialect_of
from jury.execution.engines import execute_any as execute
from jury.execution.repeat import run_passes
from jury.inputs.records import ExecResult, GoldItem, QuestionId
from jury.vocab import (
    CROSS_ENGINE_COMPARATORS,
    DEFAULT_COMPARATOR,
    DEFAULT_GOLD_PASSES,
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    GOLD_CHECKS,
    Comparator,
    GoldCheck,
)

if TYPE_CHECKING:
    from jury.execution.store import Store

_SHOWN_ROWS = 3


class CheckFinding(BaseModel):
    """One check that flagged a gold query, with what shows it."""

    name: GoldCheck
    evidence: str


class GoldCheckResult(BaseModel):
    question_id: QuestionId
    db_id: str
    executions: int
    checks: list[CheckFinding] = []
    cross_engine_differs: list[str] | None = Field(default=None, exclude=True)  # the cross-engine check's comparators
    # the first execution and the final pass's executions that agree with it (jury.compare.gold_windows)
    reference: ExecResult | None = Field(default=None, exclude=True)
    final_pass: tuple[int, int] | None = Field(default=None, exclude=True)  # (executions, agreeing with the first)
    # each time window's passes (jury.compare.gold_windows.run_windows): window, started_at, executions, agree, failed
    windows: list[dict[str, int | str]] | None = Field(default=None, exclude=True)


def parse_passes(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"5,10,10,10"`` (or the numbers themselves) -> (5, 10, 10, 10); each a positive integer.

    >>> parse_passes("5, 10")
    (5, 10)
    """
    try:
        passes = tuple(int(p) for p in (text.split(",") if isinstance(text, str) else text))
    except (TypeError, ValueError):
        passes = ()
    if not passes or any(p < 1 for p in passes):
        raise InputError(f"passes must be comma-separated positive integers, got {text!r}")
    return passes


def select_items(
    items: Sequence[GoldItem], dbs: Sequence[str], question_ids: Sequence[QuestionId], source: str | Path, what: str
) -> list[GoldItem]:
    """The gold items of the db_ids ``dbs`` and the questions ``question_ids`` (none given: every
    item); a question not among them, or no item left, is refused (``what``: the job, "check")."""
    chosen = [i for i in items if not dbs or i.db_id in set(dbs)]
    wanted = {str(q) for q in question_ids}
    missing = sorted(wanted - {str(i.question_id) for i in chosen})
    if missing:
        raise InputError(f"{source}: no question {missing[0]} (after the db filter)")
    chosen = [i for i in chosen if not wanted or str(i.question_id) in wanted]
    if not chosen:
        have = {i.db_id for i in items}
        unknown = [db for db in dbs if db not in have]
        why = f" (no db_id {unknown[0]!r} in it{did_you_mean(unknown[0], sorted(have))})" if unknown else ""
        raise InputError(f"{source}: no questions to {what} after the filters{why}")
    return chosen


def _rows_text(rows: Sequence[Sequence[object]], limit: int = _SHOWN_ROWS) -> str:
    shown = ", ".join(repr(tuple(r)) for r in rows[:limit])
    more = f", … ({len(rows)} rows)" if len(rows) > limit else ""
    return f"[{shown}{more}]"


def result_text(result: ExecResult) -> str:
    """A result as evidence shows it: its first rows, or its row count when over the cap."""
    return _rows_text(result.rows) if not result.truncated else f"{result.row_count} rows (over the row cap)"


def same_result(
    a: ExecResult,
    b: ExecResult,
    comparator: str,
    order_matters: bool,
    options: compare.NormalizeOptions = compare.NormalizeOptions(),
) -> bool:
    """Whether ``comparator`` counts ``b`` equal to ``a`` (digests when a result is over the cap;
    ``bird`` on an engine's results: the driver's values, compare.bird_results)."""
    if comparator == Comparator.BIRD:
        decided = compare.bird_results(a, b, options)
        if decided is not None:
            return decided
    if a.truncated or b.truncated:
        return (a.ordered_sha256 == b.ordered_sha256) if order_matters else (a.result_sha256 == b.result_sha256)
    fn = compare.get_comparator(comparator)
    return bool(fn(a.rows, b.rows, order_matters=order_matters, options=options)) and bool(
        fn(b.rows, a.rows, order_matters=order_matters, options=options)
    )


def determinism_finding(
    passes: list[list[ExecResult]], reverse: ExecResult | None, comparator: str, order_matters: bool
) -> CheckFinding | None:
    """``row_order`` when any execution (or the reversed-scan one) differs from the first."""
    first = passes[0][0]
    for p, results in enumerate(passes, start=1):
        for i, result in enumerate(results, start=1):
            if result.ok and not same_result(first, result, comparator, order_matters):
                return CheckFinding(
                    name=GoldCheck.ROW_ORDER,
                    evidence=f"pass {p} execution {i} gave {result_text(result)}; the first gave {result_text(first)}",
                )
    if reverse is not None and reverse.ok and not same_result(first, reverse, comparator, order_matters):
        return CheckFinding(
            name=GoldCheck.ROW_ORDER,
            evidence=(f"with PRAGMA reverse_unordered_selects=ON it gives {result_text(reverse)}; normally {result_text(first)}"),
        )
    return None


def shape_findings(result: ExecResult) -> list[CheckFinding]:
    """``empty_result``, ``null_value`` (one row, one column, NULL) and ``all_null`` (other shapes)."""
    if result.row_count == 0:
        return [CheckFinding(name=GoldCheck.EMPTY_RESULT, evidence=f"0 rows (columns {result.columns})")]
    if result.truncated or any(v is not None for row in result.rows for v in row):
        return []
    if result.row_count == 1 and len(result.columns) == 1:
        return [CheckFinding(name=GoldCheck.NULL_VALUE, evidence=f"one value, NULL (column {result.columns[0]!r})")]
    return [
        CheckFinding(name=GoldCheck.ALL_NULL, evidence=f"{result.row_count} rows, every value NULL: {_rows_text(result.rows)}")
    ]


def tie_finding(sql: str, db_path: Path | str, width: int, *, timeout_s: float, row_cap: int) -> CheckFinding | None:
    """``limit_tie`` when rows on both sides of the LIMIT (or OFFSET) cut tie on the sort key
    and differ in what the query returns."""
    probe = limit_probe(sql, width, dialect_of(db_path))
    if probe is None:
        return None
    result = execute(db_path, probe.sql, timeout_s=timeout_s, row_cap=row_cap)
    end = probe.offset + probe.limit
    if not result.ok or (result.truncated and len(result.rows) <= end):
        return None
    rows = result.rows

    def key(row: Sequence[object]) -> tuple[object, ...]:
        return tuple(row[i] for i in probe.key_columns)

    for cut, where in ((end, f"LIMIT {probe.limit}"), (probe.offset, f"OFFSET {probe.offset}")):
        if cut < 1 or cut >= len(rows) or key(rows[cut - 1]) != key(rows[cut]):
            continue
        tied = [(i, r) for i, r in enumerate(rows) if key(r) == key(rows[cut - 1])]
        kept = [r[:width] for i, r in tied if (probe.offset <= i < end)]
        cut_off = [r[:width] for i, r in tied if not (probe.offset <= i < end)]
        if len({*kept, *cut_off}) < 2:
            continue  # the tied rows return the same values: the cut changes nothing
        return CheckFinding(
            name=GoldCheck.LIMIT_TIE,
            evidence=(
                f"{len(tied)} rows tie on {probe.order_text} key {key(rows[cut - 1])!r} across the {where} cut: "
                f"kept {_rows_text(kept)}, cut {_rows_text(cut_off)}"
            ),
        )
    return None


def bare_column_finding(sql: str, db_path: Path | str, *, timeout_s: float, row_cap: int) -> CheckFinding | None:
    """``bare_column`` when a column neither grouped nor aggregated takes several values in a group."""
    if is_url(db_path) and engine_of(str(db_path)) != MYSQL:
        return None  # PostgreSQL and DuckDB refuse a bare column: the query fails instead
    for probe in bare_column_probes(sql, dialect_of(db_path)):
        result = execute(db_path, probe.sql, timeout_s=timeout_s, row_cap=row_cap)
        if result.ok and result.rows:
            first = result.rows[0]
            group = first[: probe.group_width]
            counts = ", ".join(f"{b} has {n} values" for b, n in zip(probe.bare, first[probe.group_width :]))
            return CheckFinding(
                name=GoldCheck.BARE_COLUMN,
                evidence=f"GROUP BY key {group!r}: {counts} (the engine returns one of them, unspecified)",
            )
    return None


@dataclass(frozen=True)
class CrossEngine:
    """The other side of the cross-engine check: the same questions' gold (question_id -> item)
    and the databases it runs on (db_id -> (path or URL, sha256)), with a name for reports."""

    gold: dict[QuestionId, GoldItem]
    databases: Databases
    label: str


def _where(db: Path | str) -> str:
    return redact(str(db)) if is_url(db) else "SQLite"


def cross_engine_finding(
    item: GoldItem, here: ExecResult, against: CrossEngine, *, timeout_s: float, row_cap: int
) -> tuple[CheckFinding | None, list[str]]:
    """``cross_engine`` when the question's gold on the other engine gives another result under
    any comparator of CROSS_ENGINE_COMPARATORS: (the finding, the comparators that tell the two apart)."""
    other_item = against.gold[item.question_id]
    other_db = against.databases[other_item.db_id][0]
    there = execute(other_db, other_item.sql, timeout_s=timeout_s, row_cap=row_cap)
    order_matters = item.order_matters if item.order_matters is not None else compare.gold_orders_rows(item.sql)
    if not there.ok:
        differ: list[str] = [str(c) for c in CROSS_ENGINE_COMPARATORS]
        shown = f"{there.status}: {there.error}"
    else:
        differ = [str(c) for c in CROSS_ENGINE_COMPARATORS if not same_result(here, there, c, order_matters)]
        shown = result_text(there)
    if not differ:
        return None, []
    types = " (the same values as SQLite returns them: the drivers' types differ, a DECIMAL against a float)"
    evidence = (
        f"differs under {', '.join(differ)}{types if differ == [Comparator.BIRD] else ''}: "
        f"here {result_text(here)}; {against.label} on {_where(other_db)} {shown}"
    )
    return CheckFinding(name=GoldCheck.CROSS_ENGINE, evidence=evidence), differ


def check_gold_item(
    item: GoldItem,
    db_path: Path | str,
    *,
    passes: Sequence[int] = DEFAULT_GOLD_PASSES,
    comparator: str = DEFAULT_COMPARATOR,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    against: CrossEngine | None = None,
) -> GoldCheckResult:
    """Every check on one gold query (executed here, read-only, never from the cache); with
    ``against``, the cross-engine check too (its comparators in ``cross_engine_differs``)."""
    runs, reverse = run_passes(db_path, item.sql, passes, timeout_s=timeout_s, row_cap=row_cap)
    executions = sum(len(p) for p in runs) + (reverse is not None)
    out = GoldCheckResult(question_id=item.question_id, db_id=item.db_id, executions=executions)
    last = runs[-1][-1]
    if not last.ok:
        name = GoldCheck.GOLD_TIMEOUT if last.status == "timeout" else GoldCheck.GOLD_FAILS
        where = "" if executions == 1 else f" (execution {executions}; the earlier ones succeeded)"
        out.checks.append(CheckFinding(name=name, evidence=f"{last.status}: {last.error}{where}"))
        return out
    order_matters = item.order_matters if item.order_matters is not None else compare.gold_orders_rows(item.sql)
    first = runs[0][0]
    out.reference = first
    out.final_pass = (len(runs[-1]), sum(same_result(first, r, comparator, order_matters) for r in runs[-1]))
    found = [
        determinism_finding(runs, reverse, comparator, order_matters),
        tie_finding(item.sql, db_path, len(first.columns), timeout_s=timeout_s, row_cap=row_cap),
        bare_column_finding(item.sql, db_path, timeout_s=timeout_s, row_cap=row_cap),
    ]
    out.checks.extend(f for f in found if f is not None)
    out.checks.extend(shape_findings(first))
    out.checks.sort(key=lambda f: GOLD_CHECKS.index(f.name))
    if against is not None:
        finding, out.cross_engine_differs = cross_engine_finding(item, first, against, timeout_s=timeout_s, row_cap=row_cap)
        out.checks.extend([finding] if finding is not None else [])
    return out


class CheckOptions(TypedDict):
    """:func:`check_gold_item`'s keyword arguments, the same for every item of a job."""

    passes: tuple[int, ...]
    comparator: str
    timeout_s: float
    row_cap: int
    against: CrossEngine | None


def check_gold(
    items: Sequence[GoldItem],
    databases: Databases,
    *,
    passes: Sequence[int] = DEFAULT_GOLD_PASSES,
    comparator: str = DEFAULT_COMPARATOR,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    progress: Callable[[int, int], None] | None = None,
    against: CrossEngine | None = None,
    workers: int = 1,
) -> list[GoldCheckResult]:
    """The checks of every gold item that has SQL to execute (items with a recorded result are
    skipped: there is nothing to execute); with ``against``, the cross-engine check too.

    With ``workers`` > 1 the items are checked in chunks on a process pool of that many
    processes (chunked as jury.execution.backends chunks executions); the results are those of
    one worker, in the items' order."""
    todo = [i for i in items if not i.has_recording]
    paths: dict[str, Path | str] = {i.db_id: databases[i.db_id][0] for i in todo}
    options = CheckOptions(passes=tuple(passes), comparator=comparator, timeout_s=timeout_s, row_cap=row_cap, against=against)
    if workers <= 1 or len(todo) <= 4:
        results = []
        for n, item in enumerate(todo, start=1):
            results.append(check_gold_item(item, paths[item.db_id], **options))
            if progress:
                progress(n, len(todo))
        return results
    return _check_in_pool(todo, paths, options, min(workers, len(todo)), progress)


def check_chunk(chunk: Sequence[GoldItem], paths: Mapping[str, Path | str], options: CheckOptions) -> list[GoldCheckResult]:
    """A pool worker's part of check_gold: every check on each item of ``chunk``, in order."""
    return [check_gold_item(item, paths[item.db_id], **options) for item in chunk]


def _check_in_pool(
    todo: list[GoldItem],
    paths: Mapping[str, Path | str],
    options: CheckOptions,
    workers: int,
    progress: Callable[[int, int], None] | None,
) -> list[GoldCheckResult]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from jury.execution.backends import chunk_size

    size = chunk_size(len(todo), workers)
    starts = range(0, len(todo), size)
    done: dict[int, list[GoldCheckResult]] = {}
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        futures = {pool.submit(check_chunk, todo[s : s + size], paths, options): s for s in starts}
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            if progress:
                progress(sum(map(len, done.values())), len(todo))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return [r for s in starts for r in done[s]]


def check_counts(results: Sequence[GoldCheckResult], *, cross_engine: bool = False) -> dict[str, int]:
    """How many gold queries each check flags, every check run listed (cross_engine when it ran)."""
    names = GOLD_CHECKS + ((GoldCheck.CROSS_ENGINE,) if cross_engine else ())
    return {name: sum(any(f.name == name for f in r.checks) for r in results) for name in names}


def cross_engine_lists(results: Sequence[GoldCheckResult]) -> dict[str, list[QuestionId]]:
    """comparator -> the questions whose results differ across the engines under it."""
    return {c: [r.question_id for r in results if c in (r.cross_engine_differs or [])] for c in CROSS_ENGINE_COMPARATORS}


def cross_engine_side(
    items: Sequence[GoldItem],
    gold_path: Path,
    db_url: str | None,
    db_root: str | Path | None,
    store: Store,
    root: str | Path | None,
) -> CrossEngine:
    """The other side of the cross-engine check: that gold's items for the same questions, and
    the databases they run on (the URL's, else SQLite files under ``db_root``, else this root)."""
    from jury.compare.outcomes import resolve_databases
    from jury.inputs.io import load_gold

    other = load_gold(gold_path)
    todo = [i for i in items if not i.has_recording]
    missing = [i.question_id for i in todo if i.question_id not in other]
    if missing:
        raise InputError(f"{gold_path}: no question {missing[0]!r} (the cross-engine check compares the same questions)")
    mine = [other[i.question_id] for i in todo]
    recorded = [g.question_id for g in mine if g.has_recording]
    if recorded:
        raise InputError(f"{gold_path}: question {recorded[0]!r} has a recorded result, nothing to execute there")
    urls = DatabaseURLs(check_url(db_url, "--against-db-url")) if db_url else DatabaseURLs()
    databases = resolve_databases(mine, Path(db_root) if db_root else root, store, urls)
    label = gold_path.name
    return CrossEngine(gold={g.question_id: g for g in mine}, databases=databases, label=label)
