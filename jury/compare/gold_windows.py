"""The final stability check of Spider 2.0-AIFunc: the last pass of `jury check-gold` repeated
in separate time windows (``check-gold --windows 3 --window-gap SECONDS``).

A gold whose result comes from a model inside the query (an AI function) can be stable for
ten executions in a row and drift an hour later, when the provider's model or load changes.
Window 1 is the ordinary check (its final pass, ``passes[-1]`` executions, is window 1's
record); each later window starts ``window_gap_s`` seconds after the previous one ended and
executes every gold that has a first result ``passes[-1]`` times again, fresh (never from
the store). Every window's record names its start time, its executions, how many gave the
first result of window 1 under the item's comparator, and how many failed. A gold whose
later window disagrees gets the ``row_order`` finding (unless it has one already), its
evidence naming the window and the execution.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from time import sleep

from jury.compare import comparators as compare
from jury.compare.gold_checks import CheckFinding, GoldCheckResult, result_text, same_result
from jury.errors import InputError
from jury.execution.engine_urls import Databases
from jury.execution.engines import execute_any as execute
from jury.inputs.records import GoldItem
from jury.vocab import GOLD_CHECKS, GoldCheck


def check_windows(windows: int, window_gap_s: float | None) -> None:
    """Refuse a window count below 1, a negative gap, or several windows without a gap."""
    if windows < 1:
        raise InputError(f"windows must be at least 1, got {windows}")
    if window_gap_s is not None and window_gap_s < 0:
        raise InputError(f"window gap must be zero or more seconds, got {window_gap_s:g}")
    if windows > 1 and window_gap_s is None:
        raise InputError(f"--windows {windows} needs --window-gap SECONDS (the pause between two windows)")


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_windows(
    items: Sequence[GoldItem],
    databases: Databases,
    results: list[GoldCheckResult],
    *,
    windows: int,
    window_gap_s: float,
    comparator: str,
    timeout_s: float,
    row_cap: int,
    started_at: str,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Windows 2..``windows`` of every result that has a first result (a gold that failed in
    window 1 has none): fills each result's ``windows`` and adds the drift findings."""
    by_id = {i.question_id: i for i in items}
    todo = [r for r in results if r.reference is not None and r.reference.ok and r.final_pass is not None]
    for r in todo:
        assert r.final_pass is not None
        r.windows = [
            {"window": 1, "started_at": started_at, "executions": r.final_pass[0], "agree": r.final_pass[1], "failed": 0}
        ]
    total = (windows - 1) * len(todo)
    done = 0
    for w in range(2, windows + 1):
        sleep(window_gap_s)
        started = now_utc()
        for r in todo:
            item = by_id[r.question_id]
            assert r.reference is not None and r.final_pass is not None and r.windows is not None
            order_matters = item.order_matters if item.order_matters is not None else compare.gold_orders_rows(item.sql)
            agree = failed = 0
            first_other = None
            for i in range(1, r.final_pass[0] + 1):
                got = execute(databases[item.db_id][0], item.sql, timeout_s=timeout_s, row_cap=row_cap)
                if not got.ok:
                    failed += 1
                elif same_result(r.reference, got, comparator, order_matters):
                    agree += 1
                elif first_other is None:
                    first_other = (i, got)
            r.windows.append(
                {"window": w, "started_at": started, "executions": r.final_pass[0], "agree": agree, "failed": failed}
            )
            if first_other is not None and not any(f.name == GoldCheck.ROW_ORDER for f in r.checks):
                i, got = first_other
                r.checks.append(
                    CheckFinding(
                        name=GoldCheck.ROW_ORDER,
                        evidence=f"window {w} execution {i} gave {result_text(got)}; window 1's first gave "
                        f"{result_text(r.reference)} ({agree} of {r.final_pass[0]} agreed in window {w})",
                    )
                )
                r.checks.sort(key=lambda f: GOLD_CHECKS.index(f.name) if f.name in GOLD_CHECKS else len(GOLD_CHECKS))
            done += 1
            if progress:
                progress(done, total)
