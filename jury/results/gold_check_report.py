"""`jury check-gold` output: one row per finding (table, CSV, Markdown) or every item (JSON)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jury.results.render import UNWRAPPED_WIDTH, safe, to_csv, to_json, to_markdown, to_rich_table
from jury.version import __version__, provenance

if TYPE_CHECKING:
    from jury.compare.gold_checks import GoldCheckResult

_COLUMNS = ["question_id", "db_id", "check", "evidence"]


def _gold_checks_json(
    results: Sequence[Any],
    counts: dict[str, int],
    settings: Mapping[str, Any],
    cross_engine: Mapping[str, Any] | None,
    privileged_logins: Sequence[str],
) -> str:
    """The JSON report: provenance, settings, the counts and one item per gold query."""
    logins = {"privileged_logins": list(privileged_logins)} if privileged_logins else {}
    return to_json(
        {
            "jury_version": __version__,
            "provenance": {**provenance(), **logins},
            "settings": settings,
            "gold_queries": len(results),
            "flagged": sum(bool(r.checks) for r in results),
            "counts": counts,
            **({"cross_engine": cross_engine} if cross_engine is not None else {}),
            "items": [_item(r) for r in results],
        }
    )


def _summary(
    results: Sequence[Any],
    counts: dict[str, int],
    settings: Mapping[str, Any],
    reversed_run: bool,
    cross_engine: Mapping[str, Any] | None,
) -> str:
    """The lines under the table: queries flagged, the runs and comparator, the counts per
    check, the window functions' line and the results that differ on the other engine."""
    flagged = sum(bool(r.checks) for r in results)
    summary = (
        f"{flagged} of {len(results)} gold queries flagged; passes {settings['passes']}"
        + (" + 1 with PRAGMA reverse_unordered_selects=ON" if reversed_run else "")
        + f", comparator {settings['comparator']}\n"
        + "; ".join(f"{name} {n}" for name, n in counts.items())
    )
    if "windows" in settings:
        summary += "\n" + windows_line(results, settings)
    if cross_engine is not None:
        differ = cross_engine["differ"]
        summary += f"\nresults that differ from {cross_engine['against']}, by comparator: " + "; ".join(
            f"{name} {len(qs)}" + (f" ({', '.join(map(str, qs))})" if qs else "") for name, qs in differ.items()
        )
    return summary


def render_gold_checks(
    results: Sequence[Any],
    counts: dict[str, int],
    settings: Mapping[str, Any],
    fmt: str,
    *,
    width: int | None = None,
    reversed_run: bool = True,
    cross_engine: Mapping[str, Any] | None = None,
    privileged_logins: Sequence[str] = (),
) -> str:
    """The report of :func:`jury.compare.gold_checks.check_gold` in format ``fmt``; ``reversed_run``:
    whether a database was a SQLite file, whose extra run with reversed unordered scans is said;
    ``privileged_logins``: the engine databases run through a login allowed to do more than read,
    in the JSON's provenance."""
    if fmt == "json":
        return _gold_checks_json(results, counts, settings, cross_engine, privileged_logins)
    rows = [
        {"question_id": r.question_id, "db_id": r.db_id, "check": f.name, "evidence": f.evidence}
        for r in results
        for f in r.checks
    ]
    if fmt == "csv":
        return to_csv(rows, _COLUMNS)
    summary = _summary(results, counts, settings, reversed_run, cross_engine)
    headers = ["question", "db_id", "check", "evidence"]
    if fmt == "md":
        return to_markdown(rows, _COLUMNS, headers) + "\n" + safe(summary, newlines=True) + "\n"
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    if rows:
        console.print(to_rich_table(rows, _COLUMNS, headers, title="gold checks"))
    console.print(safe(summary, newlines=True), markup=False)
    return buffer.getvalue()


def _item(result: GoldCheckResult) -> dict[str, Any]:
    """One item of the JSON: the result, and each time window's passes when windows ran."""
    item = result.model_dump(mode="json")
    return item if result.windows is None else {**item, "windows": result.windows}


def windows_line(results: Sequence[Any], settings: Mapping[str, Any]) -> str:
    """The summary line of ``check-gold --windows``: how many golds gave their first result in
    every execution of every window, and each window's agreeing executions over all golds."""
    timed = [r for r in results if r.windows]
    stable = sum(all(w["agree"] == w["executions"] for w in r.windows) for r in timed)
    per_window = []
    for w in range(settings["windows"]):
        agree = sum(r.windows[w]["agree"] for r in timed)
        total = sum(r.windows[w]["executions"] for r in timed)
        per_window.append(f"window {w + 1} {agree}/{total}")
    return (
        f"windows: {settings['windows']}, {settings['window_gap_s']:g} s apart, the last pass in each; "
        f"{stable} of {len(timed)} golds gave their first result in every execution of every window; "
        "executions agreeing: " + ", ".join(per_window)
    )
